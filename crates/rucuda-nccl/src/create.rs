//! Making [`Communicator`]s: one rank per call, several ranks of this process at once,
//! every GPU of this process, and splitting.

use std::collections::hash_map::DefaultHasher;
use std::ffi::c_int;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use rucuda_driver::Context;

use crate::comm::{query_rank_size, Communicator};
use crate::current::CurrentContextGuard;
use crate::error::{call, Error, Result};
use crate::group;
use crate::id::UniqueId;
use crate::issue::nccl_group;
use crate::sys::bindings::{ncclComm_t, NCCL_SPLIT_NOCOLOR};

/// A process-unique number for communicators made together by `init_all`.
static NEXT_CLIQUE: AtomicU64 = AtomicU64::new(1);

fn clique_of_id(id: &UniqueId) -> u64 {
    let mut h = DefaultHasher::new();
    id.as_bytes().hash(&mut h);
    h.finish()
}

fn to_c_int(value: usize, what: &str) -> Result<c_int> {
    c_int::try_from(value).map_err(|_| Error::invalid(format!("{what} {value} is too large")))
}

fn check_primary(ctx: &Context, call: &str) -> Result<()> {
    if ctx.is_primary() {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{call}: NCCL works in each device's primary context; device {} was given a \
             created context (use Device::primary_context)",
            ctx.device().ordinal()
        )))
    }
}

fn not_in_group(call: &str, instead: &str) -> Result<()> {
    if group::depth() > 0 {
        Err(Error::invalid(format!(
            "{call} cannot run inside group(): {instead}"
        )))
    } else {
        Ok(())
    }
}

fn check_distinct_devices(ctxs: &[Context], call: &str) -> Result<()> {
    for (i, a) in ctxs.iter().enumerate() {
        for b in &ctxs[..i] {
            if a.device() == b.device() {
                return Err(Error::invalid(format!(
                    "{call}: device {} appears twice; NCCL allows one rank per GPU in a communicator",
                    a.device().ordinal()
                )));
            }
        }
    }
    Ok(())
}

impl Communicator {
    /// Joins the communicator named by `id` as `rank` of `nranks`, on `ctx`'s device
    /// (`ncclCommInitRank`). Blocks until all `nranks` ranks have joined: each rank calls
    /// this from its own process or thread. Two ranks on one GPU are refused by NCCL
    /// (an [`Error::Nccl`] with `ncclInvalidUsage`).
    pub fn init_rank(ctx: &Context, nranks: usize, id: &UniqueId, rank: usize) -> Result<Self> {
        not_in_group(
            "Communicator::init_rank",
            "use Communicator::init_ranks for several ranks in one thread",
        )?;
        check_primary(ctx, "Communicator::init_rank")?;
        if nranks == 0 || rank >= nranks {
            return Err(Error::invalid(format!(
                "rank {rank} of {nranks}: a rank must be below the number of ranks"
            )));
        }
        let (n, r) = (to_c_int(nranks, "nranks")?, to_c_int(rank, "rank")?);
        ctx.bind()?;
        let _restore = CurrentContextGuard::new()?;
        let mut raw: ncclComm_t = std::ptr::null_mut();
        // SAFETY: writes one ncclComm_t; the id is passed by value.
        unsafe {
            call!(
                std::ptr::null_mut(),
                ncclCommInitRank(&mut raw, n, id.to_raw(), r)
            )?
        };
        Ok(Communicator::wrap(raw, ctx, rank, nranks, clique_of_id(id)))
    }

    /// Joins the communicator named by `id` with several ranks driven by this thread:
    /// `ranks[i]` on `ctxs[i]` (the ranks of one process in a layout of several GPUs per
    /// process; `ncclCommInitRank` for each, in one group). Returns them in the order given.
    pub fn init_ranks(
        ctxs: &[Context],
        nranks: usize,
        id: &UniqueId,
        ranks: &[usize],
    ) -> Result<Vec<Self>> {
        not_in_group("Communicator::init_ranks", "call it outside")?;
        if ctxs.len() != ranks.len() || ctxs.is_empty() {
            return Err(Error::invalid(format!(
                "init_ranks: {} contexts for {} ranks",
                ctxs.len(),
                ranks.len()
            )));
        }
        check_distinct_devices(ctxs, "init_ranks")?;
        for (ctx, &rank) in ctxs.iter().zip(ranks) {
            check_primary(ctx, "Communicator::init_ranks")?;
            if rank >= nranks {
                return Err(Error::invalid(format!(
                    "rank {rank} of {nranks}: a rank must be below the number of ranks"
                )));
            }
        }
        let n = to_c_int(nranks, "nranks")?;
        let clique = clique_of_id(id);
        let _restore = CurrentContextGuard::new()?;
        let mut made: Vec<Communicator> = Vec::with_capacity(ranks.len());
        nccl_group(|| {
            for (ctx, &rank) in ctxs.iter().zip(ranks) {
                ctx.bind()?;
                let mut raw: ncclComm_t = std::ptr::null_mut();
                let r = to_c_int(rank, "rank")?;
                // SAFETY: writes one ncclComm_t; initialised when the group ends.
                unsafe {
                    call!(
                        std::ptr::null_mut(),
                        ncclCommInitRank(&mut raw, n, id.to_raw(), r)
                    )?
                };
                made.push(Communicator::wrap(raw, ctx, rank, nranks, clique));
            }
            Ok(())
        })
        .inspect_err(|_| {
            // The group failed: NCCL cleans up what it began; the handles are not ours
            // to destroy.
            for c in &made {
                c.mark_aborted();
            }
        })?;
        Ok(made)
    }

    /// One communicator over the GPUs of `ctxs`, all driven by this process
    /// (`ncclCommInitAll`): rank `i` is on `ctxs[i]`'s device. Issue their collectives
    /// inside [`group`](crate::group()) when one thread drives them, or move each to a
    /// thread of its own.
    ///
    /// ```no_run
    /// use rucuda_driver::Device;
    /// let ctxs: Vec<_> = Device::all()?.into_iter()
    ///     .map(Device::primary_context).collect::<Result<_, _>>()?;
    /// let comms = rucuda_nccl::Communicator::init_all(&ctxs)?;
    /// assert_eq!(comms[0].size(), ctxs.len());
    /// # Ok::<(), rucuda_nccl::Error>(())
    /// ```
    pub fn init_all(ctxs: &[Context]) -> Result<Vec<Self>> {
        not_in_group("Communicator::init_all", "call it outside")?;
        if ctxs.is_empty() {
            return Err(Error::invalid("init_all needs at least one context"));
        }
        check_distinct_devices(ctxs, "init_all")?;
        let mut devices = Vec::with_capacity(ctxs.len());
        for ctx in ctxs {
            check_primary(ctx, "Communicator::init_all")?;
            devices.push(to_c_int(ctx.device().ordinal(), "device")?);
        }
        let n = to_c_int(ctxs.len(), "device count")?;
        let _restore = CurrentContextGuard::new()?;
        let mut raws: Vec<ncclComm_t> = vec![std::ptr::null_mut(); ctxs.len()];
        // SAFETY: `raws` has room for `n` handles and `devices` holds `n` ordinals.
        unsafe {
            call!(
                std::ptr::null_mut(),
                ncclCommInitAll(raws.as_mut_ptr(), n, devices.as_ptr())
            )?
        };
        let clique = NEXT_CLIQUE.fetch_add(1, Ordering::Relaxed) | (1 << 63);
        Ok(raws
            .into_iter()
            .zip(ctxs)
            .enumerate()
            .map(|(rank, (raw, ctx))| Communicator::wrap(raw, ctx, rank, ctxs.len(), clique))
            .collect())
    }

    /// Splits the communicator (`ncclCommSplit`): every rank of this one calls it; ranks
    /// with the same `color` form a new communicator, ordered by `key` (then by their
    /// rank here). `color: None` takes no part and gets `None`. Blocks until every rank
    /// has called it, so ranks driven by one thread use [`split_all`](Communicator::split_all).
    pub fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Communicator>> {
        not_in_group(
            "Communicator::split",
            "use Communicator::split_all for several ranks in one thread",
        )?;
        let mut out = Communicator::split_raw(&[(self, color, key)])?;
        Ok(out.pop().flatten())
    }

    /// [`split`](Communicator::split) for several ranks driven by this thread, in one
    /// group: `(communicator, color, key)` for each.
    pub fn split_all(
        parts: &[(&Communicator, Option<u32>, i32)],
    ) -> Result<Vec<Option<Communicator>>> {
        not_in_group("Communicator::split_all", "call it outside")?;
        Communicator::split_raw(parts)
    }

    fn split_raw(parts: &[(&Communicator, Option<u32>, i32)]) -> Result<Vec<Option<Communicator>>> {
        let _restore = CurrentContextGuard::new()?;
        let mut raws: Vec<ncclComm_t> = vec![std::ptr::null_mut(); parts.len()];
        let run = |raws: &mut Vec<ncclComm_t>| -> Result<()> {
            for ((comm, color, key), out) in parts.iter().zip(raws.iter_mut()) {
                comm.ensure_live("split")?;
                comm.context().bind()?;
                let c = match color {
                    Some(c) => to_c_int(*c as usize, "color")?,
                    None => NCCL_SPLIT_NOCOLOR,
                };
                // SAFETY: the parent is live; writes one handle (null for no color); a
                // null config takes the parent's.
                unsafe {
                    call!(
                        comm.handle(),
                        ncclCommSplit(comm.handle(), c, *key, out, std::ptr::null_mut())
                    )?
                };
            }
            Ok(())
        };
        if parts.len() == 1 {
            run(&mut raws)?;
        } else {
            nccl_group(|| run(&mut raws))?;
        }
        let mut out = Vec::with_capacity(parts.len());
        for ((parent, color, _), raw) in parts.iter().zip(raws) {
            if raw.is_null() {
                out.push(None);
                continue;
            }
            let mut h = DefaultHasher::new();
            (parent.clique(), color).hash(&mut h);
            let (rank, size) = query_rank_size(raw)?;
            out.push(Some(Communicator::wrap(
                raw,
                parent.context(),
                rank,
                size,
                h.finish(),
            )));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_cliques() {
        let a = UniqueId::from_bytes([1; 128]);
        let b = UniqueId::from_bytes([2; 128]);
        assert_eq!(clique_of_id(&a), clique_of_id(&a));
        assert_ne!(clique_of_id(&a), clique_of_id(&b));
    }
}
