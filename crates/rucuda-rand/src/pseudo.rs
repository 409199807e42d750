//! The machinery the three pseudo-random generators share: states in device memory (48
//! bytes each), `curand_init` on the device, fills, skip-ahead, and reading states back
//! as CPU references.

use std::sync::Arc;

use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::{
    Access, Context, DeviceBuffer, DevicePointerArg, DevicePtr, Function, InUse, LaunchConfig,
    Stream,
};
use rucuda_jit::SourceModule;

use crate::distributions::Distribution;
use crate::error::{Error, Result};
use crate::generator::{self, blocks, check_stream, params, ElementKind, FillKernel, BLOCK};
use crate::kernels::{Family, PSEUDO_STATE_BYTES};
use crate::seed::Seeds;

/// Words (u32) per state in device memory.
pub(crate) const STATE_WORDS: usize = PSEUDO_STATE_BYTES / 4;

/// How a pseudo-random generator's states are initialised: state `i` gets
/// `curand_init(seed_i, subsequence_i, offset_i)`.
///
/// The default is PyCUDA's: [`crate::generator::default_state_count`] states, one seed for
/// all ([`Seeds::Same`]), subsequence `i` for state `i`, offset 0.
///
/// ```
/// use rucuda_rand::{GeneratorOptions, Seeds};
/// let o = GeneratorOptions { states: Some(4096), seeds: Seeds::Same(7), offset: 100, ..Default::default() };
/// assert_eq!(o.subsequence, 0);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GeneratorOptions {
    /// Number of states; `None`: the default for the device.
    pub states: Option<usize>,
    /// The seeds.
    pub seeds: Seeds,
    /// State `i` starts at subsequence `subsequence + i` (unless `subsequences` is given).
    pub subsequence: u64,
    /// One subsequence per state, instead of `subsequence + i`.
    pub subsequences: Option<Vec<u64>>,
    /// Every state starts `offset` outputs into its subsequence (unless `offsets` is
    /// given).
    pub offset: u64,
    /// One offset per state.
    pub offsets: Option<Vec<u64>>,
}

/// The state of one pseudo-random generator on the device.
pub(crate) struct PseudoCore {
    name: &'static str,
    family: Family,
    ctx: Context,
    _module: Arc<SourceModule>,
    fills: Vec<(FillKernel, Function)>,
    skip: Function,
    states: DeviceBuffer<u32>,
    count: u32,
    /// Jump table (XORWOW, MRG32k3a) and its number of powers.
    table: Option<(DeviceBuffer<u32>, i32)>,
}

fn upload_opt(
    ctx: &Context,
    v: &Option<Vec<u64>>,
    count: usize,
    what: &str,
) -> Result<Option<DeviceBuffer<u64>>> {
    match v {
        None => Ok(None),
        Some(v) if v.len() == count => Ok(Some(DeviceBuffer::from_slice(ctx, v)?)),
        Some(v) => Err(Error::invalid(format!(
            "{} {what} for {count} states",
            v.len()
        ))),
    }
}

/// An optional input table's use for a launch on `stream` (address 0 when absent).
fn arg<'b>(b: &'b Option<DeviceBuffer<u64>>, stream: &Stream) -> Result<InUse<'b>> {
    Ok(match b {
        Some(b) => b.device_range().use_on(stream, Access::Read)?,
        None => InUse::null(),
    })
}

impl PseudoCore {
    pub(crate) fn new(
        ctx: &Context,
        name: &'static str,
        family: Family,
        table: Option<Vec<u32>>,
        options: &GeneratorOptions,
    ) -> Result<PseudoCore> {
        let count = match options.states {
            Some(n) => n,
            None => generator::default_state_count(ctx)?,
        };
        if count == 0 {
            return Err(Error::invalid("a generator needs at least one state"));
        }
        let count32 = u32::try_from(count)
            .map_err(|_| Error::invalid(format!("{count} states: at most 2^32 - 1")))?;
        let module = generator::module(ctx, family)?;
        let prefix = family.prefix();
        let kinds = [
            FillKernel::RawU32,
            FillKernel::UniformF32,
            FillKernel::UniformF64,
            FillKernel::NormalF32,
            FillKernel::NormalF64,
            FillKernel::LogNormalF32,
            FillKernel::LogNormalF64,
            FillKernel::PoissonU32,
        ];
        let mut fills = Vec::with_capacity(kinds.len());
        for k in kinds {
            fills.push((
                k,
                generator::function(&module, &format!("{prefix}_{}", k.suffix()))?,
            ));
        }
        let init = generator::function(&module, &format!("{prefix}_init"))?;
        let skip = generator::function(&module, &format!("{prefix}_skipahead"))?;
        let table = match table {
            Some(words) => {
                let per = match family {
                    Family::Xorwow => 800,
                    _ => 18,
                };
                let powers = (words.len() / per) as i32;
                Some((DeviceBuffer::from_slice(ctx, &words)?, powers))
            }
            None => None,
        };
        let states = DeviceBuffer::<u32>::uninit(ctx, count * STATE_WORDS)?;
        let mut core = PseudoCore {
            name,
            family,
            ctx: ctx.clone(),
            _module: module,
            fills,
            skip,
            states,
            count: count32,
            table,
        };
        core.init(&init, options)?;
        Ok(core)
    }

    /// `curand_init` of every state, on the context's null stream (waited for).
    fn init(&mut self, init: &Function, o: &GeneratorOptions) -> Result<()> {
        let ctx = self.ctx.clone();
        let n = self.count as usize;
        let (seed, seeds) = match &o.seeds {
            Seeds::Same(s) => (*s, None),
            Seeds::PerState(v) => (0, Some(v.clone())),
        };
        let seeds = upload_opt(&ctx, &seeds, n, "seeds")?;
        let subs = upload_opt(&ctx, &o.subsequences, n, "subsequences")?;
        let offs = upload_opt(&ctx, &o.offsets, n, "offsets")?;
        let stream = Stream::null(&ctx);
        let cfg = LaunchConfig::linear(blocks(n as u64)?, BLOCK);
        let states = self.states.device_range().use_on(&stream, Access::Write)?;
        match &self.table {
            None => {
                // SAFETY: G_init(State*, unsigned n, const u64* seeds, u64, const u64* subs,
                // u64, const u64* offs, u64) writes states[0..n); the arrays hold n
                // values or are null.
                unsafe {
                    init.launch(
                        cfg,
                        &stream,
                        (
                            states,
                            self.count,
                            arg(&seeds, &stream)?,
                            seed,
                            arg(&subs, &stream)?,
                            o.subsequence,
                            arg(&offs, &stream)?,
                            o.offset,
                        ),
                    )?
                }
            }
            Some((table, powers)) => {
                // SAFETY: as above, plus the jump table of `powers` matrices.
                unsafe {
                    init.launch(
                        cfg,
                        &stream,
                        (
                            states,
                            self.count,
                            arg(&seeds, &stream)?,
                            seed,
                            arg(&subs, &stream)?,
                            o.subsequence,
                            arg(&offs, &stream)?,
                            o.offset,
                            table.device_range().use_on(&stream, Access::Read)?,
                            *powers,
                        ),
                    )?
                }
            }
        }
        stream.synchronize()?;
        Ok(())
    }

    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    pub(crate) fn context(&self) -> &Context {
        &self.ctx
    }

    pub(crate) fn count(&self) -> usize {
        self.count as usize
    }

    /// # Safety
    /// As [`crate::RandomGenerator::fill_ptr`].
    pub(crate) unsafe fn fill_ptr(
        &mut self,
        ptr: CUdeviceptr,
        n: usize,
        kind: ElementKind,
        dist: Distribution,
        stream: &Stream,
    ) -> Result<()> {
        dist.validate()?;
        check_stream(&self.ctx, stream)?;
        let which = FillKernel::select(self.name, dist, kind, 32)?;
        if n == 0 {
            return Ok(());
        }
        // 64-bit raw elements are pairs of 32-bit outputs, in the same layout.
        let words = if which == FillKernel::RawU32 && kind == ElementKind::U64 {
            n as u64 * 2
        } else {
            n as u64
        };
        let f = self
            .fills
            .iter()
            .find(|(k, _)| *k == which)
            .map(|(_, f)| f)
            .ok_or_else(|| Error::invalid("no such kernel"))?;
        let (mean, stddev, lambda) = params(dist);
        let cfg = LaunchConfig::linear(blocks(u64::from(self.count))?, BLOCK);
        // SAFETY: G_<fill>(State* states, unsigned nstates, T* out, u64 n, double mean,
        // double stddev, double lambda) reads and writes states[0..nstates) and writes
        // out[0..n); the caller vouches for `ptr`.
        unsafe {
            f.launch(
                cfg,
                stream,
                (
                    self.states.device_range().use_on(stream, Access::Write)?,
                    self.count,
                    DevicePointerArg(ptr),
                    words,
                    mean,
                    stddev,
                    lambda,
                ),
            )?
        };
        Ok(())
    }

    /// Skip-ahead of every state by `count` (or `counts[i]`), of kind `kind` (the
    /// family's: 0 offset, 1 subsequence/sequence, 2 MRG32k3a's sequence).
    pub(crate) fn skip(
        &mut self,
        kind: u32,
        count: u64,
        counts: Option<&DeviceBuffer<u64>>,
        stream: &Stream,
    ) -> Result<()> {
        check_stream(&self.ctx, stream)?;
        if let Some(c) = counts {
            if c.len() != self.count as usize {
                return Err(Error::invalid(format!(
                    "{} skip counts for {} states",
                    c.len(),
                    self.count
                )));
            }
        }
        let cfg = LaunchConfig::linear(blocks(u64::from(self.count))?, BLOCK);
        let states = self.states.device_range().use_on(stream, Access::Write)?;
        let counts = match counts {
            Some(c) => c.device_range().use_on(stream, Access::Read)?,
            None => InUse::null(),
        };
        match &self.table {
            // SAFETY: G_skipahead(State*, unsigned n, const u64* counts, u64 count,
            // unsigned kind) updates states[0..n); counts holds n values or is null.
            None => unsafe {
                self.skip
                    .launch(cfg, stream, (states, self.count, counts, count, kind))?
            },
            // SAFETY: as above, plus the jump table.
            Some((table, powers)) => unsafe {
                self.skip.launch(
                    cfg,
                    stream,
                    (
                        states,
                        self.count,
                        counts,
                        count,
                        kind,
                        table.device_range().use_on(stream, Access::Read)?,
                        *powers,
                    ),
                )?
            },
        }
        Ok(())
    }

    /// The states' words, copied back (after the work queued so far on the null stream).
    pub(crate) fn state_words(&self) -> Result<Vec<u32>> {
        Ok(self.states.to_vec()?)
    }

    pub(crate) fn family(&self) -> Family {
        self.family
    }
}

/// The Box–Muller cache of a state from its words 6..12.
pub(crate) fn cache_from_words(w: &[u32]) -> crate::reference::BoxMullerCache {
    crate::reference::BoxMullerCache {
        flag: w[6],
        extra: f32::from_bits(w[7]),
        flag_double: w[8],
        extra_double: f64::from_bits(u64::from(w[10]) | (u64::from(w[11]) << 32)),
    }
}
