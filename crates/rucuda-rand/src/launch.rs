//! What the GPU generators share under their public types: compiling and loading a
//! family's module, the fill kernels and how a fill picks one, launch shapes, optional
//! array arguments, and [`GeneratorCore`], the state of a generator on the device, with
//! [`impl_random_generator!`], which makes a [`RandomGenerator`] of a type holding one.

use std::sync::Arc;

use rucuda_driver::sys::CUdeviceptr;
use rucuda_driver::{
    Access, Context, DeviceBuffer, DevicePtr, DeviceRepr, Function, InUse, Stream,
};
use rucuda_jit::{CompileOptions, SourceModule};

use crate::distributions::Distribution;
use crate::error::{Error, Result};
use crate::generator::ElementKind;
#[cfg(doc)]
use crate::generator::RandomGenerator;
use crate::kernels::{source, Family};

/// Our fill kernels, by what they compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FillKernel {
    RawU32,
    RawU64,
    UniformF32,
    UniformF64,
    NormalF32,
    NormalF64,
    LogNormalF32,
    LogNormalF64,
    PoissonU32,
}

impl FillKernel {
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            FillKernel::RawU32 => "raw_u32",
            FillKernel::RawU64 => "raw_u64",
            FillKernel::UniformF32 => "uniform_f32",
            FillKernel::UniformF64 => "uniform_f64",
            FillKernel::NormalF32 => "normal_f32",
            FillKernel::NormalF64 => "normal_f64",
            FillKernel::LogNormalF32 => "log_normal_f32",
            FillKernel::LogNormalF64 => "log_normal_f64",
            FillKernel::PoissonU32 => "poisson_u32",
        }
    }

    /// The kernel for `dist` into `kind`, given the generator's raw word size (32 or 64
    /// bits), or why there is none.
    pub(crate) fn select(
        generator: &'static str,
        dist: Distribution,
        kind: ElementKind,
        word_bits: u32,
    ) -> Result<FillKernel> {
        use ElementKind::*;
        let unsupported = |what: &str| Error::Unsupported {
            generator,
            what: format!("{what} into {kind:?} elements"),
        };
        Ok(match (dist, kind) {
            (Distribution::Uniform, F32) => FillKernel::UniformF32,
            (Distribution::Uniform, F64) => FillKernel::UniformF64,
            (Distribution::Uniform | Distribution::Raw, U32) if word_bits == 32 => {
                FillKernel::RawU32
            }
            (Distribution::Uniform | Distribution::Raw, U64) => {
                if word_bits == 64 {
                    FillKernel::RawU64
                } else {
                    FillKernel::RawU32
                }
            }
            (Distribution::Uniform | Distribution::Raw, U32) => {
                return Err(unsupported("32-bit raw outputs (its outputs are 64-bit)"))
            }
            (Distribution::Normal { .. }, F32) => FillKernel::NormalF32,
            (Distribution::Normal { .. }, F64) => FillKernel::NormalF64,
            (Distribution::LogNormal { .. }, F32) => FillKernel::LogNormalF32,
            (Distribution::LogNormal { .. }, F64) => FillKernel::LogNormalF64,
            (Distribution::Poisson { .. }, U32) => FillKernel::PoissonU32,
            (Distribution::Raw, _) => return Err(unsupported("raw bits")),
            (Distribution::Normal { .. }, _) => return Err(unsupported("normal values")),
            (Distribution::LogNormal { .. }, _) => return Err(unsupported("log-normal values")),
            (Distribution::Poisson { .. }, _) => {
                return Err(unsupported("Poisson counts (they are 32-bit integers)"))
            }
        })
    }
}

/// The fill kernels of one generator, looked up once.
pub(crate) struct FillKernels(Vec<(FillKernel, Function)>);

impl FillKernels {
    /// `{prefix}_{suffix}` for every distribution, raw outputs by `raw` (the generator's
    /// word size: [`FillKernel::RawU32`] or [`FillKernel::RawU64`]).
    pub(crate) fn load(
        module: &SourceModule,
        prefix: &str,
        raw: FillKernel,
    ) -> Result<FillKernels> {
        let kinds = [
            raw,
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
            fills.push((k, function(module, &format!("{prefix}_{}", k.suffix()))?));
        }
        Ok(FillKernels(fills))
    }

    /// The kernel `kernel`.
    pub(crate) fn get(&self, kernel: FillKernel) -> Result<&Function> {
        self.0
            .iter()
            .find(|(k, _)| *k == kernel)
            .map(|(_, f)| f)
            .ok_or_else(|| Error::invalid("no such kernel"))
    }
}

/// A fill that passed every check, and what its kernel takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Fill {
    /// The kernel.
    pub(crate) kernel: FillKernel,
    /// Elements the kernel writes: `n`, or `2n` outputs for 64-bit raw elements of a
    /// 32-bit generator (its pairs of outputs, in the 32-bit layout, which is the 64-bit
    /// one).
    pub(crate) words: u64,
    /// Elements per 16-byte chunk, as the kernel writes them.
    pub(crate) chunk: u64,
    /// The kernel's `mean`, `stddev` and `lambda` arguments.
    pub(crate) mean: f64,
    pub(crate) stddev: f64,
    pub(crate) lambda: f64,
}

impl Fill {
    /// Checks a fill of `n` elements of `kind` with `dist` on `stream` by `core` and
    /// picks its kernel; `None` when there is nothing to write.
    pub(crate) fn plan<C: GeneratorCore>(
        core: &C,
        n: usize,
        kind: ElementKind,
        dist: Distribution,
        stream: &Stream,
    ) -> Result<Option<Fill>> {
        dist.validate()?;
        check_stream(core.context(), stream)?;
        let kernel = FillKernel::select(core.name(), dist, kind, C::WORD_BITS)?;
        if n == 0 {
            return Ok(None);
        }
        let (words, chunk) = if kernel == FillKernel::RawU32 && kind == ElementKind::U64 {
            (n as u64 * 2, ElementKind::U32.chunk() as u64)
        } else {
            (n as u64, kind.chunk() as u64)
        };
        let (mean, stddev, lambda) = match dist {
            Distribution::Normal { mean, stddev } | Distribution::LogNormal { mean, stddev } => {
                (mean, stddev, 0.0)
            }
            Distribution::Poisson { lambda } => (0.0, 1.0, lambda),
            Distribution::Uniform | Distribution::Raw => (0.0, 1.0, 0.0),
        };
        Ok(Some(Fill {
            kernel,
            words,
            chunk,
            mean,
            stddev,
            lambda,
        }))
    }
}

/// A generator's state on the device, behind its public type.
pub(crate) trait GeneratorCore {
    /// Bits of one raw output (32; 64 for the 64-bit Sobol generators).
    const WORD_BITS: u32;
    /// The generator's name.
    fn name(&self) -> &'static str;
    /// The context its states live in.
    fn context(&self) -> &Context;
    /// Number of states (for Sobol: dimensions).
    fn state_count(&self) -> usize;
    /// Queues `fill` into `ptr` on `stream`.
    ///
    /// # Safety
    /// `ptr` holds `fill.words` elements of the kernel's type, under the contract of
    /// [`RandomGenerator::fill_ptr`].
    unsafe fn launch_fill(&mut self, ptr: CUdeviceptr, fill: &Fill, stream: &Stream) -> Result<()>;
}

/// [`RandomGenerator`] for a type whose `core` field is a [`GeneratorCore`].
macro_rules! impl_random_generator {
    ($t:ty) => {
        impl $crate::generator::RandomGenerator for $t {
            fn name(&self) -> &'static str {
                $crate::launch::GeneratorCore::name(&self.core)
            }
            fn context(&self) -> &rucuda_driver::Context {
                $crate::launch::GeneratorCore::context(&self.core)
            }
            fn state_count(&self) -> usize {
                $crate::launch::GeneratorCore::state_count(&self.core)
            }
            unsafe fn fill_ptr(
                &mut self,
                ptr: rucuda_driver::sys::CUdeviceptr,
                n: usize,
                kind: $crate::generator::ElementKind,
                dist: $crate::distributions::Distribution,
                stream: &rucuda_driver::Stream,
            ) -> $crate::error::Result<()> {
                match $crate::launch::Fill::plan(&self.core, n, kind, dist, stream)? {
                    None => Ok(()),
                    // SAFETY: the caller vouches for the `n` elements at `ptr`, which are
                    // what the plan's words cover.
                    Some(fill) => unsafe {
                        $crate::launch::GeneratorCore::launch_fill(
                            &mut self.core,
                            ptr,
                            &fill,
                            stream,
                        )
                    },
                }
            }
        }
    };
}

pub(crate) use impl_random_generator;

/// The options every module of ours is compiled with: the compiler's defaults (so
/// `-fmad=true`), our own `extern "C"` names, no headers.
pub(crate) fn compile_options() -> CompileOptions {
    CompileOptions::new()
        .no_extern_c(true)
        .toolkit_include(false)
        .program_name("rucuda_rand.cu")
}

/// The compiled module of `family` on `ctx` (memoized per context by rucuda-jit).
pub(crate) fn module(ctx: &Context, family: Family) -> Result<Arc<SourceModule>> {
    Ok(SourceModule::for_context(
        ctx,
        &source(family)?,
        &compile_options(),
    )?)
}

/// Looks up kernels by name.
pub(crate) fn function(module: &SourceModule, name: &str) -> Result<Function> {
    Ok(module.function(name)?)
}

/// Threads per block of every kernel of ours.
pub(crate) const BLOCK: u32 = 256;

/// Blocks of [`BLOCK`] threads covering `threads`.
pub(crate) fn blocks(threads: u64) -> Result<u32> {
    u32::try_from(threads.div_ceil(u64::from(BLOCK)).max(1))
        .map_err(|_| Error::invalid(format!("{threads} threads do not fit one launch")))
}

pub(crate) fn check_stream(ctx: &Context, stream: &Stream) -> Result<()> {
    if stream.context() != ctx {
        return Err(Error::ContextMismatch("stream"));
    }
    Ok(())
}

/// An optional input array's use for a launch on `stream` (address 0 when absent).
pub(crate) fn read_or_null<'a, T: DeviceRepr>(
    array: Option<&'a DeviceBuffer<T>>,
    stream: &Stream,
) -> Result<InUse<'a>> {
    Ok(match array {
        Some(a) => a.device_range().use_on(stream, Access::Read)?,
        None => InUse::null(),
    })
}

/// Per-state skip counts for a launch on `stream`: one for each of `states` states
/// (`unit`: what a state is, for the error), or none (address 0).
pub(crate) fn skip_counts<'a, T: DeviceRepr>(
    counts: Option<&'a DeviceBuffer<T>>,
    states: usize,
    unit: &str,
    stream: &Stream,
) -> Result<InUse<'a>> {
    if let Some(c) = counts {
        if c.len() != states {
            return Err(Error::invalid(format!(
                "{} skip counts for {states} {unit}",
                c.len()
            )));
        }
    }
    read_or_null(counts, stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_selection() {
        let n = Distribution::STANDARD_NORMAL;
        assert_eq!(
            FillKernel::select("x", n, ElementKind::F64, 32).unwrap(),
            FillKernel::NormalF64
        );
        assert_eq!(
            FillKernel::select("x", Distribution::Raw, ElementKind::U64, 32).unwrap(),
            FillKernel::RawU32
        );
        assert_eq!(
            FillKernel::select("x", Distribution::Raw, ElementKind::U64, 64).unwrap(),
            FillKernel::RawU64
        );
        assert!(FillKernel::select("x", Distribution::Raw, ElementKind::U32, 64).is_err());
        assert!(FillKernel::select("x", n, ElementKind::U32, 32).is_err());
        assert!(FillKernel::select(
            "x",
            Distribution::Poisson { lambda: 1.0 },
            ElementKind::F32,
            32
        )
        .is_err());
    }
}
