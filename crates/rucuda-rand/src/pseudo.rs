//! The machinery the three pseudo-random generators share: states in device memory (48
//! bytes each), `curand_init` on the device, fills, skip-ahead, and reading states back
//! as CPU references.

use std::sync::Arc;

use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::{
    Access, ArgBuffer, Context, DeviceBuffer, DevicePointerArg, DevicePtr, Function, LaunchConfig,
    Stream,
};
use rucuda_jit::SourceModule;

use crate::error::{Error, Result};
use crate::generator::default_state_count;
use crate::kernels::{Family, PSEUDO_STATE_BYTES};
use crate::launch::{
    self, blocks, check_stream, read_or_null, skip_counts, Fill, FillKernel, FillKernels,
    GeneratorCore, BLOCK,
};
use crate::reference::BoxMullerCache;
use crate::seed::Seeds;

/// Words (u32) per state in device memory.
const STATE_WORDS: usize = PSEUDO_STATE_BYTES / 4;

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
    fills: FillKernels,
    skip: Function,
    /// Shared, so that a graph capturing a fill can keep it alive
    /// (`rucuda_driver::keep_alive_for_capture`).
    states: Arc<DeviceBuffer<u32>>,
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
            None => default_state_count(ctx)?,
        };
        if count == 0 {
            return Err(Error::invalid("a generator needs at least one state"));
        }
        let count32 = u32::try_from(count)
            .map_err(|_| Error::invalid(format!("{count} states: at most 2^32 - 1")))?;
        let module = launch::module(ctx, family)?;
        let prefix = family.prefix();
        let fills = FillKernels::load(&module, prefix, FillKernel::RawU32)?;
        let init = launch::function(&module, &format!("{prefix}_init"))?;
        let skip = launch::function(&module, &format!("{prefix}_skipahead"))?;
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
        let states = Arc::new(DeviceBuffer::<u32>::uninit(ctx, count * STATE_WORDS)?);
        let core = PseudoCore {
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
    fn init(&self, init: &Function, o: &GeneratorOptions) -> Result<()> {
        let n = self.count as usize;
        let (seed, seeds) = match &o.seeds {
            Seeds::Same(s) => (*s, None),
            Seeds::PerState(v) => (0, Some(v.clone())),
        };
        let seeds = upload_opt(&self.ctx, &seeds, n, "seeds")?;
        let subs = upload_opt(&self.ctx, &o.subsequences, n, "subsequences")?;
        let offs = upload_opt(&self.ctx, &o.offsets, n, "offsets")?;
        let stream = Stream::null(&self.ctx);
        let cfg = LaunchConfig::linear(blocks(n as u64)?, BLOCK);
        {
            let mut args = ArgBuffer::new();
            args.push_use(self.states.device_range().use_on(&stream, Access::Write)?)
                .push(self.count)
                .push_use(read_or_null(seeds.as_ref(), &stream)?)
                .push(seed)
                .push_use(read_or_null(subs.as_ref(), &stream)?)
                .push(o.subsequence)
                .push_use(read_or_null(offs.as_ref(), &stream)?)
                .push(o.offset);
            self.push_table(&mut args, &stream)?;
            // SAFETY: G_init(State*, unsigned n, const u64* seeds, u64, const u64* subs,
            // u64, const u64* offs, u64[, const u32* table, int powers]) writes
            // states[0..n); the arrays hold n values or are null, the table `powers`
            // matrices.
            unsafe { init.launch_args(cfg, &stream, &args)? };
        }
        stream.synchronize()?;
        Ok(())
    }

    /// Appends the jump table and its number of powers, the last arguments of the init
    /// and skip-ahead kernels of the generators that have one (XORWOW, MRG32k3a).
    fn push_table<'a>(&'a self, args: &mut ArgBuffer<'a>, stream: &Stream) -> Result<()> {
        if let Some((table, powers)) = &self.table {
            args.push_use(table.device_range().use_on(stream, Access::Read)?)
                .push(*powers);
        }
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
        let counts = skip_counts(counts, self.count as usize, "states", stream)?;
        let cfg = LaunchConfig::linear(blocks(u64::from(self.count))?, BLOCK);
        rucuda_driver::keep_alive_for_capture(&self.states);
        let mut args = ArgBuffer::new();
        args.push_use(self.states.device_range().use_on(stream, Access::Write)?)
            .push(self.count)
            .push_use(counts)
            .push(count)
            .push(kind);
        self.push_table(&mut args, stream)?;
        // SAFETY: G_skipahead(State*, unsigned n, const u64* counts, u64 count,
        // unsigned kind[, const u32* table, int powers]) updates states[0..n); counts
        // holds n values or is null.
        unsafe { self.skip.launch_args(cfg, stream, &args)? };
        Ok(())
    }

    /// The states, copied back (after the work queued so far on the null stream), each
    /// made a CPU reference by `make` from its words and its Box–Muller cache.
    pub(crate) fn references<S>(
        &self,
        make: impl Fn(&[u32], BoxMullerCache) -> S,
    ) -> Result<Vec<S>> {
        let words = self.states.to_vec()?;
        Ok(words
            .chunks_exact(STATE_WORDS)
            .map(|w| make(w, cache_from_words(w)))
            .collect())
    }

    pub(crate) fn family(&self) -> Family {
        self.family
    }
}

impl GeneratorCore for PseudoCore {
    const WORD_BITS: u32 = 32;

    fn name(&self) -> &'static str {
        self.name
    }

    fn context(&self) -> &Context {
        &self.ctx
    }

    fn state_count(&self) -> usize {
        self.count as usize
    }

    unsafe fn launch_fill(&mut self, ptr: CUdeviceptr, fill: &Fill, stream: &Stream) -> Result<()> {
        let f = self.fills.get(fill.kernel)?;
        rucuda_driver::keep_alive_for_capture(&self.states);
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
                    fill.words,
                    fill.mean,
                    fill.stddev,
                    fill.lambda,
                ),
            )?
        };
        Ok(())
    }
}

/// The Box–Muller cache of a state from its words 6..12.
fn cache_from_words(w: &[u32]) -> BoxMullerCache {
    BoxMullerCache {
        flag: w[6],
        extra: f32::from_bits(w[7]),
        flag_double: w[8],
        extra_double: f64::from_bits(u64::from(w[10]) | (u64::from(w[11]) << 32)),
    }
}
