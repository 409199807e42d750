//! [`Signature`]: one operation as every rank must see it (kind, type, count, reduction,
//! root or peer), with the words the cross-rank check compares and reads back.

use crate::dtype::{DataType, ReduceOp};

/// What kind of operation a [`Signature`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum OpKind {
    AllReduce,
    Broadcast,
    Reduce,
    AllGather,
    ReduceScatter,
    Send,
    Recv,
}

impl OpKind {
    /// Every kind, in the order of their discriminants (what [`Signature::encode`] writes).
    const ALL: [OpKind; 7] = [
        OpKind::AllReduce,
        OpKind::Broadcast,
        OpKind::Reduce,
        OpKind::AllGather,
        OpKind::ReduceScatter,
        OpKind::Send,
        OpKind::Recv,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            OpKind::AllReduce => "all_reduce",
            OpKind::Broadcast => "broadcast",
            OpKind::Reduce => "reduce",
            OpKind::AllGather => "all_gather",
            OpKind::ReduceScatter => "reduce_scatter",
            OpKind::Send => "send",
            OpKind::Recv => "recv",
        }
    }
}

/// One operation as every rank must see it (what NCCL is told, not the Rust types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Signature {
    pub kind: OpKind,
    pub data_type: DataType,
    /// The count NCCL is given (per rank for all-gather and reduce-scatter).
    pub count: usize,
    pub op: Option<ReduceOp>,
    pub root: Option<usize>,
    /// The other rank of a send or receive.
    pub peer: Option<usize>,
}

impl Signature {
    pub(crate) fn describe(&self) -> String {
        let mut s = format!(
            "{} of {} x {:?}",
            self.kind.name(),
            self.count,
            self.data_type
        );
        if let Some(op) = self.op {
            s.push_str(&format!(" ({})", op.name()));
        }
        if let Some(root) = self.root {
            s.push_str(&format!(" root {root}"));
        }
        if let Some(peer) = self.peer {
            s.push_str(&format!(" peer {peer}"));
        }
        s
    }

    /// Four words that are equal on two ranks exactly when their collectives agree
    /// (peers excepted: they differ by design).
    pub(crate) fn encode(&self) -> [u64; 4] {
        let op = self.op.map_or(0xff, |o| u64::from(o.raw().0));
        let root = self.root.map_or(u64::MAX, |r| r as u64);
        [
            0x7275_6375_6461_0000 | (self.kind as u64) << 8 | op,
            u64::from(self.data_type.raw().0),
            self.count as u64,
            root,
        ]
    }
}

/// Reads back what [`Signature::encode`] wrote, for messages.
pub(crate) fn describe_encoded(words: &[u64]) -> String {
    let kind = OpKind::ALL
        .get(((words[0] >> 8) & 0xff) as usize)
        .map_or("an unknown operation", |k| k.name());
    let op = match words[0] & 0xff {
        0xff => String::new(),
        o => ReduceOp::ALL
            .get(o as usize)
            .map_or(String::new(), |op| format!(" ({})", op.name())),
    };
    let root = if words[3] == u64::MAX {
        String::new()
    } else {
        format!(" root {}", words[3])
    };
    format!(
        "{kind} of {} elements of NCCL type {}{op}{root}",
        words[2], words[1]
    )
}

/// Signatures for the tests of the modules above.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A signature on `Float32` elements with no peer.
    pub(crate) fn sig(
        kind: OpKind,
        count: usize,
        op: Option<ReduceOp>,
        root: Option<usize>,
    ) -> Signature {
        Signature {
            kind,
            data_type: DataType::Float32,
            count,
            op,
            root,
            peer: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::sig;
    use super::*;

    #[test]
    fn kinds_are_listed_in_the_order_of_their_discriminants() {
        for (i, kind) in OpKind::ALL.into_iter().enumerate() {
            assert_eq!(kind as usize, i, "{kind:?}");
        }
    }

    #[test]
    fn encoded_descriptions_read_back() {
        let sig = sig(OpKind::Reduce, 12, Some(ReduceOp::Max), Some(1));
        assert_eq!(
            describe_encoded(&sig.encode()),
            "reduce of 12 elements of NCCL type 7 (max) root 1"
        );
        let sig = Signature {
            kind: OpKind::AllGather,
            op: None,
            root: None,
            ..sig
        };
        assert_eq!(
            describe_encoded(&sig.encode()),
            "all_gather of 12 elements of NCCL type 7"
        );
    }

    #[test]
    fn encodings_differ_where_signatures_do() {
        let a = sig(OpKind::Reduce, 10, Some(ReduceOp::Sum), Some(0));
        let mut b = a;
        b.root = Some(1);
        assert_ne!(a.encode(), b.encode());
        let mut c = a;
        c.peer = Some(3);
        assert_eq!(a.encode(), c.encode());
    }
}
