//! Evaluating an [`Expr`]: its leaves placed in kernel argument slots (one per distinct
//! array, one per scalar), its key interned (see `source.rs`), one launch.

use rucuda_driver::Stream;

use super::expr::{Expr, Leaf};
use super::source::{intern, spec_of, FusedKey, KeyNode, NodeKind, Slot};
use crate::convert::check_writable;
use crate::dtype::{DType, Element};
use crate::elementwise::ElementwiseSpec;
use crate::error::{ArrayError, Result};
use crate::layout::{broadcast_shapes, broadcast_shapes_many};
use crate::ops::apply::can_store;
use crate::ops::engine::{run, Arg};
use crate::ops::key::OpKey;
use crate::ops::operand::ArrayRef;
use crate::ordering::{after_on, before_on};
use crate::GpuArray;

/// A leaf array with the slot it was given.
struct Placed<'e> {
    slot: usize,
    array: ArrayRef<'e>,
}

/// Everything needed to launch an expression: the key's id, the slots' launch
/// arguments (arrays and scalars), the iteration shape, the streams involved.
struct Prepared<'e> {
    slots: Vec<Slot>,
    nodes: Vec<KeyNode>,
    arrays: Vec<Placed<'e>>,
    scalars: Vec<(usize, crate::elementwise::ScalarValue)>,
    shape: Vec<usize>,
    first_stream: &'e Stream,
}

impl<'a> Expr<'a> {
    fn prepare(&self) -> Result<Prepared<'_>> {
        if let Some((operation, dtype)) = self.error {
            return Err(ArrayError::UnsupportedType { operation, dtype });
        }
        let mut slots: Vec<Slot> = Vec::new();
        let mut arrays: Vec<Placed<'_>> = Vec::new();
        let mut scalars = Vec::new();
        let mut leaf_slot: Vec<usize> = Vec::with_capacity(self.leaves.len());
        for leaf in &self.leaves {
            match leaf {
                Leaf::Array(a) => {
                    let found = arrays
                        .iter()
                        .find(|p| p.array.same_elements(a))
                        .map(|p| p.slot);
                    let slot = match found {
                        Some(s) => s,
                        None => {
                            slots.push(Slot {
                                dtype: a.dtype,
                                scalar: false,
                            });
                            arrays.push(Placed {
                                slot: slots.len() - 1,
                                array: *a,
                            });
                            slots.len() - 1
                        }
                    };
                    leaf_slot.push(slot);
                }
                Leaf::Scalar(s) => {
                    slots.push(Slot {
                        dtype: s.dtype(),
                        scalar: true,
                    });
                    scalars.push((slots.len() - 1, s.clone()));
                    leaf_slot.push(slots.len() - 1);
                }
                Leaf::Symbol(_) => {
                    return Err(ArrayError::InvalidArgument(
                        "an expression with a symbol (Expr::symbol) cannot be evaluated".into(),
                    ))
                }
            }
        }
        let Some(first) = arrays.first() else {
            return Err(ArrayError::InvalidArgument(
                "a fused expression needs at least one array".into(),
            ));
        };
        let first_stream = first.array.stream;
        for p in &arrays {
            if p.array.stream.context() != first_stream.context() {
                return Err(ArrayError::ContextMismatch);
            }
        }
        let shapes: Vec<&[usize]> = arrays.iter().map(|p| p.array.layout.shape()).collect();
        let shape = broadcast_shapes_many(&shapes)?;
        let nodes = self
            .nodes
            .iter()
            .map(|n| {
                let kind = match n.kind {
                    NodeKind::Leaf(k) => NodeKind::Leaf(leaf_slot[k as usize] as u32),
                    other => other,
                };
                (kind, n.dtype, n.weak)
            })
            .collect();
        Ok(Prepared {
            slots,
            nodes,
            arrays,
            scalars,
            shape,
            first_stream,
        })
    }

    /// Evaluates the expression into a new array of type `T` (the expression's type,
    /// or one it can be stored in by NumPy's `same_kind` rule), on the first array's home
    /// stream: one kernel, one pass.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{fuse, GpuArray};
    /// let x = GpuArray::<f32>::arange(&stream, 0.0, 4.0, 1.0)?;
    /// let y = GpuArray::<f32>::ones(&stream, &[4])?;
    /// let z: GpuArray<f32> = fuse!(x, y => 2.0 * x + y).eval()?;
    /// assert_eq!(z.to_vec()?, vec![1.0, 3.0, 5.0, 7.0]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn eval<T: Element>(&self) -> Result<GpuArray<T>> {
        let p = self.prepare()?;
        let stream = p.first_stream.clone();
        self.eval_prepared_on(p, &stream)
    }

    /// Evaluates into a new array whose home stream is `stream`.
    pub fn eval_on<T: Element>(&self, stream: &Stream) -> Result<GpuArray<T>> {
        let p = self.prepare()?;
        if p.first_stream.context() != stream.context() {
            return Err(ArrayError::ContextMismatch);
        }
        self.eval_prepared_on(p, stream)
    }

    fn eval_prepared_on<T: Element>(
        &self,
        p: Prepared<'_>,
        stream: &Stream,
    ) -> Result<GpuArray<T>> {
        let layouts: Vec<&crate::layout::Layout> =
            p.arrays.iter().map(|a| a.array.layout).collect();
        let out = GpuArray::<T>::empty_for_operands(stream, &p.shape, &layouts)?;
        launch(p, &out, None, stream)?;
        Ok(out)
    }

    /// Evaluates into `out` (the expression broadcast to `out`'s shape; its type stored
    /// by the `same_kind` rule), on `out`'s home stream. `out` may be one of the
    /// expression's arrays (`x = 2*x + y` in place); other overlaps are refused.
    ///
    /// ```no_run
    /// # let stream = rucuda_driver::Stream::null(&rucuda_driver::Device::get(0)?.primary_context()?);
    /// use rucuda_array::{fusion::Expr, GpuArray};
    /// let mut x = GpuArray::from_slice(&stream, &[1.0f64, 2.0])?;
    /// let y = GpuArray::from_slice(&stream, &[0.5f64, 0.5])?;
    /// let e = (Expr::from(&x) * 2.0 + &y).sqrt();
    /// let mut z = GpuArray::<f64>::empty(&stream, &[2])?;
    /// e.eval_into(&mut z)?;
    /// assert_eq!(z.to_vec()?, vec![2.5f64.sqrt(), 4.5f64.sqrt()]);
    /// # Ok::<(), rucuda_array::ArrayError>(())
    /// ```
    pub fn eval_into<T: Element>(&self, out: &mut GpuArray<T>) -> Result<()> {
        let p = self.prepare()?;
        check_writable(out.layout())?;
        if broadcast_shapes(&p.shape, out.shape())? != out.shape() {
            return Err(crate::layout::LayoutError::BroadcastTo {
                from: p.shape.clone(),
                to: out.shape().to_vec(),
            }
            .into());
        }
        if p.first_stream.context() != out.context() {
            return Err(ArrayError::ContextMismatch);
        }
        let o = out.as_ref();
        let mut out_slot = None;
        for a in &p.arrays {
            if a.array.same_elements(&o) {
                out_slot = Some(a.slot);
            } else if a.array.overlaps(&o) {
                return Err(ArrayError::InvalidArgument(
                    "the output of a fused expression overlaps one of its arrays (other than \
                     being exactly that array): evaluate into a new array instead"
                        .into(),
                ));
            }
        }
        let stream = out.stream().clone();
        launch(p, out, out_slot, &stream)
    }

    /// The generated kernel definition of this expression stored as `out` (for
    /// inspection and compile tests).
    pub fn spec(&self, out: DType) -> Result<ElementwiseSpec> {
        let p = self.prepare_structure()?;
        spec_of(&FusedKey {
            nodes: p.0,
            slots: p.1,
            out,
            out_slot: None,
        })
    }

    /// Nodes and slots without needing an array leaf (for `spec`).
    fn prepare_structure(&self) -> Result<(Vec<KeyNode>, Vec<Slot>)> {
        if let Some((operation, dtype)) = self.error {
            return Err(ArrayError::UnsupportedType { operation, dtype });
        }
        let slots = self
            .leaves
            .iter()
            .map(|l| match l {
                Leaf::Array(ArrayRef { dtype, .. }) | Leaf::Symbol(dtype) => Slot {
                    dtype: *dtype,
                    scalar: false,
                },
                Leaf::Scalar(s) => Slot {
                    dtype: s.dtype(),
                    scalar: true,
                },
            })
            .collect();
        let nodes = self
            .nodes
            .iter()
            .map(|n| (n.kind, n.dtype, n.weak))
            .collect();
        Ok((nodes, slots))
    }
}

fn launch<T: Element>(
    p: Prepared<'_>,
    out: &GpuArray<T>,
    out_slot: Option<usize>,
    stream: &Stream,
) -> Result<()> {
    let root_t = p.nodes.last().map_or(T::DTYPE, |n| n.1);
    if !can_store(root_t, T::DTYPE) {
        return Err(ArrayError::Casting {
            operation: "fused expression",
            from: root_t,
            to: T::DTYPE,
        });
    }
    let key = FusedKey {
        nodes: p.nodes,
        slots: p.slots.clone(),
        out: T::DTYPE,
        out_slot: out_slot.map(|s| s as u32),
    };
    let id = intern(key);
    let o = out.as_ref();
    let mut args: Vec<Arg<'_>> = Vec::with_capacity(p.slots.len() + 1);
    for (k, _) in p.slots.iter().enumerate() {
        if let Some(a) = p.arrays.iter().find(|a| a.slot == k) {
            args.push(if out_slot == Some(k) {
                o.as_out()
            } else {
                a.array.as_in()
            });
        } else if let Some((_, s)) = p.scalars.iter().find(|(slot, _)| *slot == k) {
            args.push(Arg::Scalar(s.clone()));
        }
    }
    if out_slot.is_none() {
        args.push(o.as_out());
    }
    let mut homes: Vec<&Stream> = p.arrays.iter().map(|a| a.array.stream).collect();
    homes.push(out.stream());
    before_on(stream, &homes)?;
    run(stream, OpKey::Fused(id), out.shape(), &args)?;
    after_on(stream, &homes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elementwise::Variant;

    #[test]
    fn fused_axpy_reads_two_arrays_writes_one_and_takes_the_scalar_as_an_argument() {
        let e = 2.0f64 * Expr::symbol(DType::F32) + Expr::symbol(DType::F32);
        let spec = e.spec(DType::F32).unwrap();
        let names: Vec<String> = spec.args().iter().map(|a| a.declarator()).collect();
        assert_eq!(
            names,
            [
                "double s0",
                "const float *x1",
                "const float *x2",
                "float *out"
            ]
        );
        assert!(spec.vectorizable());
        let src = spec.render(&Variant::Vectorized).unwrap().source;
        assert!(!src.contains("reinterpret_cast<const uint4 *>(out"));
        assert!(src.contains("reinterpret_cast<uint4 *>(out + rucuda_base)"));
        assert!(src.contains("__fmul_rn") && src.contains("__fadd_rn"));
        // Another scalar value: the same source.
        let e2 = 7.25f64 * Expr::symbol(DType::F32) + Expr::symbol(DType::F32);
        assert_eq!(
            e2.spec(DType::F32)
                .unwrap()
                .render(&Variant::Vectorized)
                .unwrap()
                .source,
            src
        );
        // A scalar of another type is another kernel (its type is part of the key).
        let e3 = 2.0f32 * Expr::symbol(DType::F32) + Expr::symbol(DType::F32);
        assert_ne!(
            e3.spec(DType::F32)
                .unwrap()
                .render(&Variant::Vectorized)
                .unwrap()
                .source,
            src
        );
    }
}
