//! From an [`Expr`] to one kernel: the structural key (nodes, types, which leaves are the
//! same array; never scalar values), its interning to a small id for the engine's memo,
//! the generated source, and evaluation.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};

use rucuda_driver::Stream;

use super::expr::{Expr, Leaf, NodeKind};
use crate::codegen::ArgSpec;
use crate::convert::check_writable;
use crate::dtype::{DType, Element};
use crate::elementwise::ElementwiseSpec;
use crate::error::{ArrayError, Result};
use crate::layout::{broadcast_shapes, broadcast_shapes_many};
use crate::ops::apply::can_store;
use crate::ops::device_code::{binary_c, cast_expr, preamble, unary_c};
use crate::ops::engine::{after_on, before_on, run, Arg};
use crate::ops::operand::ArrayRef;
use crate::ops::typing::{arith_type, binary_types, unary_types};
use crate::ops::OpKey;
use crate::GpuArray;

/// A kernel argument slot: an array (deduplicated by identity) or a scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Slot {
    dtype: DType,
    scalar: bool,
}

/// One node of a key: kind (leaves as slot numbers), type, weak (scalars only below).
type KeyNode = (NodeKind, DType, bool);

/// The structure of a fused kernel: everything its source depends on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct FusedKey {
    /// Nodes with leaves replaced by slot numbers: kind, type, weak (scalars only).
    nodes: Vec<KeyNode>,
    slots: Vec<Slot>,
    /// The stored type.
    out: DType,
    /// The output is array slot `k` itself (read and written through one pointer).
    out_slot: Option<u32>,
}

struct Interner {
    ids: HashMap<FusedKey, u64>,
    keys: Vec<Arc<FusedKey>>,
}

fn interner() -> &'static Mutex<Interner> {
    static I: OnceLock<Mutex<Interner>> = OnceLock::new();
    I.get_or_init(|| {
        Mutex::new(Interner {
            ids: HashMap::new(),
            keys: Vec::new(),
        })
    })
}

fn intern(key: FusedKey) -> u64 {
    let mut i = interner().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&id) = i.ids.get(&key) {
        return id;
    }
    let id = i.keys.len() as u64;
    i.keys.push(Arc::new(key.clone()));
    i.ids.insert(key, id);
    id
}

/// The spec of interned expression `id` (what [`OpKey::Fused`] builds).
pub(crate) fn spec_of_id(id: u64) -> Result<ElementwiseSpec> {
    let key = {
        let i = interner().lock().unwrap_or_else(|p| p.into_inner());
        i.keys.get(id as usize).cloned()
    };
    match key {
        Some(k) => spec_of(&k),
        None => Err(ArrayError::InvalidArgument(format!(
            "no fused expression has id {id}"
        ))),
    }
}

fn slot_name(k: usize, s: &Slot) -> String {
    if s.scalar {
        format!("s{k}")
    } else {
        format!("x{k}")
    }
}

/// The kernel source of a fused expression: one `const` local per node, in order, each
/// computed exactly as the corresponding single operation, then the store.
fn spec_of(key: &FusedKey) -> Result<ElementwiseSpec> {
    let mut args: Vec<ArgSpec> = Vec::new();
    for (k, s) in key.slots.iter().enumerate() {
        let name = slot_name(k, s);
        args.push(if s.scalar {
            ArgSpec::scalar(name, s.dtype)
        } else if key.out_slot == Some(k as u32) {
            ArgSpec::vector(name, s.dtype)
        } else {
            ArgSpec::const_vector(name, s.dtype)
        });
    }
    let out_name = match key.out_slot {
        Some(k) => format!("x{k}"),
        None => {
            args.push(ArgSpec::vector("out", key.out));
            "out".to_string()
        }
    };
    let mut used: Vec<DType> = vec![key.out];
    let mut op = String::new();
    let v = |k: u32| format!("rucuda_v{k}");
    for (k, &(kind, dtype, _)) in key.nodes.iter().enumerate() {
        used.push(dtype);
        used.push(arith_type(dtype));
        let t = |i: u32| key.nodes[i as usize].1;
        let weak = |i: u32| key.nodes[i as usize].2;
        let e = match kind {
            NodeKind::Leaf(s) => {
                let slot = key.slots[s as usize];
                if slot.scalar {
                    format!("s{s}")
                } else {
                    format!("x{s}[i]")
                }
            }
            NodeKind::Binary(bop, a, b) => {
                // The same typing as the single operation (weak scalars included).
                let (compute, _) = binary_types(bop, t(a), t(b), weak(a), weak(b))?;
                used.push(compute);
                used.push(arith_type(compute));
                binary_c(bop, &v(a), t(a), &v(b), t(b), compute, dtype)
            }
            NodeKind::Unary(uop, a) => {
                let (compute, _) = unary_types(uop, t(a))?;
                unary_c(uop, &v(a), t(a), compute, dtype)
            }
            NodeKind::Where {
                cond,
                a,
                b,
                positive,
            } => {
                let c = t(cond);
                let test = if positive {
                    let at = arith_type(c);
                    format!("({} > ({})0)", cast_expr(&v(cond), c, at), at.c_type())
                } else {
                    cast_expr(&v(cond), c, DType::Bool)
                };
                used.push(arith_type(c));
                format!(
                    "rucuda_select<{}>({test}, {}, {})",
                    dtype.c_type(),
                    cast_expr(&v(a), t(a), dtype),
                    cast_expr(&v(b), t(b), dtype)
                )
            }
            NodeKind::Cast(a) => cast_expr(&v(a), t(a), dtype),
        };
        let _ = write!(op, "const {} {} = {e}; ", dtype.c_type(), v(k as u32));
    }
    let root = key.nodes.len().saturating_sub(1) as u32;
    let root_t = key.nodes.last().map_or(key.out, |n| n.1);
    let _ = write!(
        op,
        "{out_name}[i] = {}",
        cast_expr(&v(root), root_t, key.out)
    );
    let arg_types: Vec<DType> = args.iter().map(ArgSpec::dtype).collect();
    ElementwiseSpec::builder(format!("fused_{}", key.nodes.len()))
        .args(args)
        .operation(op)
        .preamble(preamble(used, arg_types))
        .build()
}

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
                    scalars.push((slots.len() - 1, *s));
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
        let out = GpuArray::<T>::empty(stream, &p.shape)?;
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
            args.push(Arg::Scalar(*s));
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

    #[test]
    fn interned_keys_are_stable_and_distinct() {
        let k = |out| FusedKey {
            nodes: vec![(NodeKind::Leaf(0), DType::F32, false)],
            slots: vec![Slot {
                dtype: DType::F32,
                scalar: false,
            }],
            out,
            out_slot: None,
        };
        let a = intern(k(DType::F32));
        assert_eq!(intern(k(DType::F32)), a);
        let b = intern(k(DType::F64));
        assert_ne!(a, b);
        assert!(spec_of_id(a).is_ok());
    }
}
