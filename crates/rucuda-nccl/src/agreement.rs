//! The agreement check of a group: operations recorded on ranks of one communicator are
//! compared before anything is issued (same collectives in the same order with the same
//! types, counts, reductions and roots; each send matched by its receive).

use std::collections::BTreeMap;

use crate::pending::Pending;
use crate::signature::{OpKind, Signature};

/// The first disagreement between ranks of one communicator in `ops`, described.
pub(crate) fn disagreement(ops: &[Pending]) -> Option<String> {
    let mut by_clique: BTreeMap<u64, BTreeMap<usize, Vec<Signature>>> = BTreeMap::new();
    for op in ops {
        by_clique
            .entry(op.clique)
            .or_default()
            .entry(op.rank)
            .or_default()
            .push(op.plan.sig);
    }
    for ranks in by_clique.values() {
        if ranks.len() < 2 {
            continue;
        }
        // Collectives: the same sequence on every rank.
        let collectives: Vec<(usize, Vec<Signature>)> = ranks
            .iter()
            .map(|(r, sigs)| {
                let c = sigs
                    .iter()
                    .filter(|s| !matches!(s.kind, OpKind::Send | OpKind::Recv))
                    .copied()
                    .collect();
                (*r, c)
            })
            .collect();
        let (r0, first) = &collectives[0];
        for (r, sigs) in &collectives[1..] {
            for (i, (a, b)) in first.iter().zip(sigs).enumerate() {
                if a.encode() != b.encode() {
                    return Some(format!(
                        "collective {i}: rank {r0} issued {}, rank {r} {}",
                        a.describe(),
                        b.describe()
                    ));
                }
            }
            if first.len() != sigs.len() {
                return Some(format!(
                    "rank {r0} issued {} collectives, rank {r} {}",
                    first.len(),
                    sigs.len()
                ));
            }
        }
        // Point to point: sends from a to b match receives on b from a, in order.
        for (a, sigs) in ranks {
            for (b, other) in ranks {
                let sends: Vec<&Signature> = sigs
                    .iter()
                    .filter(|s| s.kind == OpKind::Send && s.peer == Some(*b))
                    .collect();
                let recvs: Vec<&Signature> = other
                    .iter()
                    .filter(|s| s.kind == OpKind::Recv && s.peer == Some(*a))
                    .collect();
                if sends.len() != recvs.len() {
                    return Some(format!(
                        "rank {a} sends {} time(s) to rank {b}, which receives {} time(s) from it",
                        sends.len(),
                        recvs.len()
                    ));
                }
                for (s, r) in sends.iter().zip(&recvs) {
                    if s.count * s.data_type.size_bytes() != r.count * r.data_type.size_bytes()
                        || s.data_type != r.data_type
                    {
                        return Some(format!(
                            "rank {a} issued {}, rank {b} {}",
                            s.describe(),
                            r.describe()
                        ));
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::{DataType, ReduceOp};
    use crate::pending::testing::rec;
    use crate::signature::testing::sig;

    #[test]
    fn agreeing_ranks_pass() {
        let s = sig(OpKind::AllReduce, 100, Some(ReduceOp::Sum), None);
        let ops = vec![
            rec(1, 0, s),
            rec(1, 1, s),
            rec(2, 0, sig(OpKind::AllGather, 3, None, None)),
        ];
        assert_eq!(disagreement(&ops), None);
    }

    #[test]
    fn counts_ops_and_roots_must_agree() {
        let a = sig(OpKind::AllReduce, 100, Some(ReduceOp::Sum), None);
        let b = sig(OpKind::AllReduce, 200, Some(ReduceOp::Sum), None);
        let m = disagreement(&[rec(1, 0, a), rec(1, 1, b)]).unwrap();
        assert!(m.contains("rank 0 issued all_reduce of 100"), "{m}");
        assert!(m.contains("rank 1 all_reduce of 200"), "{m}");
        let c = sig(OpKind::AllReduce, 100, Some(ReduceOp::Max), None);
        assert!(disagreement(&[rec(1, 0, a), rec(1, 1, c)]).is_some());
        let r0 = sig(OpKind::Broadcast, 8, None, Some(0));
        let r1 = sig(OpKind::Broadcast, 8, None, Some(1));
        assert!(disagreement(&[rec(1, 0, r0), rec(1, 1, r1)]).is_some());
        let m = disagreement(&[rec(1, 0, a), rec(1, 0, a), rec(1, 1, a)]).unwrap();
        assert!(m.contains("rank 0 issued 2 collectives, rank 1 1"), "{m}");
    }

    #[test]
    fn sends_need_matching_receives() {
        let send = |count, peer| Signature {
            kind: OpKind::Send,
            data_type: DataType::Int32,
            count,
            op: None,
            root: None,
            peer: Some(peer),
        };
        let recv = |count, peer| Signature {
            kind: OpKind::Recv,
            ..send(count, peer)
        };
        let ok = [rec(1, 0, send(5, 1)), rec(1, 1, recv(5, 0))];
        assert_eq!(disagreement(&ok), None);
        let short = [rec(1, 0, send(5, 1)), rec(1, 1, recv(4, 0))];
        assert!(disagreement(&short).is_some());
        let missing = [rec(1, 0, send(5, 1)), rec(1, 1, send(5, 0))];
        let m = disagreement(&missing).unwrap();
        assert!(m.contains("receives 0 time(s)"), "{m}");
    }

    #[test]
    fn one_rank_per_clique_is_not_compared() {
        let a = sig(OpKind::AllReduce, 100, Some(ReduceOp::Sum), None);
        let b = sig(OpKind::AllReduce, 7, Some(ReduceOp::Sum), None);
        assert_eq!(disagreement(&[rec(1, 0, a), rec(2, 1, b)]), None);
    }
}
