//! The kernel of a fused expression: its structural key (nodes, types, which leaves are
//! the same array; never scalar values), the key's interning to a small id (what
//! [`OpKey::Fused`](crate::ops::OpKey::Fused) holds), and the generated source. Below the
//! engine: it imports nothing that launches.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};

use crate::codegen::ArgSpec;
use crate::dtype::DType;
use crate::elementwise::ElementwiseSpec;
use crate::error::{ArrayError, Result};
use crate::ops::device_code::{binary_c, cast_expr, preamble, unary_c};
use crate::ops::operations::BinaryOp;
use crate::ops::operations::UnaryOp;
use crate::ops::typing::{arith_type, binary_types, unary_types};

/// One node of an expression (children are indices of earlier nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum NodeKind {
    /// Leaf `k` of the expression's leaves.
    Leaf(u32),
    /// A binary operation.
    Binary(BinaryOp, u32, u32),
    /// A unary operation.
    Unary(UnaryOp, u32),
    /// `cond ? a : b` (`cond > 0` when `positive`).
    Where {
        /// The condition node.
        cond: u32,
        /// The node taken where the condition holds.
        a: u32,
        /// The other node.
        b: u32,
        /// Test `> 0` instead of `!= 0`.
        positive: bool,
    },
    /// A conversion to the node's type.
    Cast(u32),
}

/// A kernel argument slot: an array (deduplicated by identity) or a scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Slot {
    pub(crate) dtype: DType,
    pub(crate) scalar: bool,
}

/// One node of a key: kind (leaves as slot numbers), type, weak (scalars only below).
pub(crate) type KeyNode = (NodeKind, DType, bool);

/// The structure of a fused kernel: everything its source depends on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct FusedKey {
    /// Nodes with leaves replaced by slot numbers: kind, type, weak (scalars only).
    pub(crate) nodes: Vec<KeyNode>,
    pub(crate) slots: Vec<Slot>,
    /// The stored type.
    pub(crate) out: DType,
    /// The output is array slot `k` itself (read and written through one pointer).
    pub(crate) out_slot: Option<u32>,
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

pub(crate) fn intern(key: FusedKey) -> u64 {
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
pub(crate) fn spec_of(key: &FusedKey) -> Result<ElementwiseSpec> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
