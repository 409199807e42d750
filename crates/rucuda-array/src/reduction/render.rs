//! CUDA source of a reduction: stage 1 in one of three variants plus stage 2, in one
//! module. Pure text: every variant is unit-tested here and compiled with NVRTC in CI.
//! The CUDA text is in `cuda/`: `reduction.cu` (helpers and both stages) and stage 1's
//! loop per variant.
//!
//! **Stage 1** runs on a persistent grid (a few blocks per multiprocessor). Each thread
//! folds many elements into a private accumulator, in a fixed order; the block combines
//! its threads' accumulators with warp shuffles (then one warp over the warps' results
//! from shared memory) and thread 0 writes the block's partial. A grid of one block
//! writes the final value instead. Variants differ in how elements are read:
//!
//! - **vectorized**: arrays used only as `x[i]` are read in groups of `K` consecutive
//!   elements (`K` = 16 bytes of the smallest such element type) with 16-byte
//!   read-only loads (`__ldg` of `uint4`), `U` groups per thread before any is used
//!   (`U` × 16 bytes × arrays in flight per thread: 8 loads, 128 bytes, for a sum or a
//!   dot; at least 4 of the widest array's chunks otherwise),
//!   the groups of one step `total_threads` apart so each warp load is 512 contiguous
//!   bytes; then single groups, then a scalar tail of `n % K`. Arrays used otherwise
//!   (`x[idx[i]]`) are read as written.
//! - **contiguous**: a plain grid-stride loop over `i` (unaligned views).
//! - **strided**: `i` is turned into each non-contiguous array's offset from the shape
//!   and its strides (kernel parameters, any sign, 0 for broadcast).
//!
//! **Stage 2** is one block that folds the partials (a few hundred) the same way and
//! writes the result, converted to the output type. Both stages fold in an order fixed
//! by the grid size and `n`, and never use atomics, so the same input on the same device
//! gives the same bits.

use crate::codegen::grid_dependency::WAIT_FOR_PREDECESSOR;
use crate::codegen::prelude::SHUFFLES;
use crate::codegen::strided::StridedIndexing;
use crate::codegen::template::{block, render};
use crate::codegen::{prelude_for, ArgSpec, CodegenError};
use crate::elementwise::Param;
use crate::error::Result;

use super::ReductionSpec;

pub use crate::codegen::strided::MAX_STRIDED_DIMS;

/// Threads per block of both stages.
pub const BLOCK_SIZE: u32 = 256;
/// Most groups (`U`) the vectorized variant loads per thread before using any.
const MAX_GROUPS_IN_FLIGHT: usize = 8;

const REDUCTION: &str = include_str!("cuda/reduction.cu");
const CONTIGUOUS: &str = include_str!("cuda/contiguous.cuh");
const VECTORIZED: &str = include_str!("cuda/vectorized.cuh");
const VECTORIZED_STEP: &str = include_str!("cuda/vectorized_step.cuh");
const VECTORIZED_TILE: &str = include_str!("cuda/vectorized_tile.cuh");
const VECTORIZED_LOAD: &str = include_str!("cuda/vectorized_load.cuh");
const STRIDED: &str = include_str!("cuda/strided.cuh");

/// Which loop stage 1 runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Plain grid-stride loop over `0..n`.
    Contiguous,
    /// 16-byte vector loads, several in flight per thread; scalar tail.
    Vectorized,
    /// Per-array strides over `ndim` axes; `strided[k]` says whether the k-th array
    /// argument is indexed through strides.
    Strided {
        /// Number of axes.
        ndim: usize,
        /// One flag per array argument, in argument order.
        strided: Vec<bool>,
    },
}

/// A generated reduction: both entry points, the source, and stage 1's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedReduction {
    /// Stage 1's `extern "C"` entry point.
    pub stage1: String,
    /// Stage 2's entry point (`partials, out, m`).
    pub stage2: String,
    /// The whole source (prelude, preamble, helpers, both kernels).
    pub source: String,
    /// Stage 1's parameters in order: the user's arguments, then `rucuda_partials`,
    /// `rucuda_out`, `n`, then shape and strides for the strided variant.
    pub params: Vec<Param>,
    /// Elements per vector group (`K`) of the vectorized variant, 1 otherwise.
    pub group_elements: usize,
    /// Groups loaded per thread before use (`U`) in the vectorized variant, 1 otherwise.
    pub groups_in_flight: usize,
}

/// How the vectorized variant reads: elements per group, groups per step, and the
/// arrays it tiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TilePlan {
    /// Elements per group.
    pub k: usize,
    /// Groups loaded before use.
    pub u: usize,
    /// Names of the tiled arrays.
    pub tiled: Vec<String>,
}

/// The vectorized variant's plan, or `None` when no array is used only as `x[i]`.
pub(crate) fn tile_plan(spec: &ReductionSpec) -> Option<TilePlan> {
    let analysis = spec.analysis();
    let tiled: Vec<&ArgSpec> = spec
        .args
        .iter()
        .filter(|a| a.is_vector())
        .filter(|a| {
            analysis
                .usage(a.name())
                .is_some_and(|u| u.only_at_i() && !u.indexed.is_empty())
        })
        .collect();
    // Tiles are whole loads of power-of-two sizes: a 12-byte `float3` is read per element.
    if tiled
        .iter()
        .any(|a| !a.dtype().size_bytes().is_power_of_two())
    {
        return None;
    }
    let min = tiled.iter().map(|a| a.dtype().size_bytes()).min()?;
    let max = tiled.iter().map(|a| a.dtype().size_bytes()).max()?;
    let k = (16 / min).min(64 / max).max(1);
    let max_chunks = (k * max).div_ceil(16);
    // Loads in flight per thread: at least 4 of the widest array's chunks, and up to 8
    // loads over all tiled arrays (one array: 8 × 16 bytes, as a two-array dot already
    // has; a one-array sum with only 4 × 16 bytes in flight stayed ~6% under it).
    let all_chunks: usize = tiled
        .iter()
        .map(|a| chunk_type(k * a.dtype().size_bytes()).1)
        .sum();
    let u = (4 / max_chunks)
        .max(8 / all_chunks.max(1))
        .clamp(1, MAX_GROUPS_IN_FLIGHT);
    Some(TilePlan {
        k,
        u,
        tiled: tiled.iter().map(|a| a.name().to_string()).collect(),
    })
}

/// The load type and count for `bytes` bytes of one array's group.
fn chunk_type(bytes: usize) -> (&'static str, usize) {
    match bytes {
        b if b >= 16 => ("uint4", b / 16),
        8 => ("uint2", 1),
        4 => ("unsigned int", 1),
        2 => ("unsigned short", 1),
        _ => ("unsigned char", 1),
    }
}

impl ReductionSpec {
    /// The source of stage 1 in `variant`, with stage 2, and stage 1's parameters.
    ///
    /// ```
    /// use rucuda_array::reduction::{ReductionSpec, Variant};
    /// use rucuda_array::DType;
    /// let s = ReductionSpec::parse(DType::F32, "0", "a+b", "x[i]", "const float *x", "total").unwrap();
    /// let k = s.render(&Variant::Vectorized).unwrap();
    /// assert_eq!((k.stage1.as_str(), k.stage2.as_str()), ("total_r1v", "total_r2"));
    /// assert_eq!((k.group_elements, k.groups_in_flight), (4, 8));
    /// assert!(k.source.contains("__ldg"));
    /// ```
    pub fn render(&self, variant: &Variant) -> Result<RenderedReduction> {
        let mut decls: Vec<String> = self.args.iter().map(ArgSpec::restrict_declarator).collect();
        decls.push("rucuda_acc_t *__restrict__ rucuda_partials".into());
        decls.push("rucuda_out_t *__restrict__ rucuda_out".into());
        decls.push("long long n".into());
        let mut extra: Vec<String> = ["rucuda_partials", "rucuda_out", "n"]
            .map(String::from)
            .to_vec();
        let (suffix, body, k, u) = match variant {
            Variant::Contiguous => (
                "r1c".to_string(),
                render(CONTIGUOUS, &[("MAP", &self.map_expr)])?,
                1,
                1,
            ),
            Variant::Vectorized => {
                let plan = tile_plan(self).ok_or_else(|| CodegenError::StridedUnsupported {
                    kernel: self.name.clone(),
                    name: "(every array)".into(),
                    usage: "no array is used only as `x[i]`, so none can be vectorized".into(),
                })?;
                (
                    "r1v".to_string(),
                    self.vectorized_body(&plan)?,
                    plan.k,
                    plan.u,
                )
            }
            Variant::Strided { ndim, strided } => {
                let analysis = self.analysis();
                let indexing =
                    StridedIndexing::new(&self.name, &self.args, &analysis, *ndim, strided)?;
                let body = render(
                    STRIDED,
                    &[
                        ("OFFSETS", &indexing.offsets()?),
                        ("MAP", &indexing.rewrite(&analysis)),
                    ],
                )?;
                for p in indexing.params() {
                    decls.push(format!("long long {p}"));
                    extra.push(p);
                }
                (format!("r1{}", indexing.suffix(strided)), body, 1, 1)
            }
        };
        let params = Param::layout(&self.args, extra);
        let stage1 = format!("{}_{suffix}", self.name);
        let stage2 = format!("{}_r2", self.name);
        let source = render(
            REDUCTION,
            &[
                ("PRELUDE", &prelude_for(self.dtypes())),
                ("PREAMBLE", &block(&self.preamble)),
                ("SHUFFLES", SHUFFLES),
                ("ACCUMULATOR", self.accumulator.c_type()),
                ("OUTPUT", self.output.c_type()),
                ("REDUCE", &self.reduce_expr),
                ("NEUTRAL", &self.neutral),
                ("BLOCK", &BLOCK_SIZE.to_string()),
                ("STAGE1", &stage1),
                ("WAIT_FOR_PREDECESSOR", WAIT_FOR_PREDECESSOR),
                ("PARAMS", &decls.join(", ")),
                ("BODY", &body),
                ("STAGE2", &stage2),
            ],
        )?;
        Ok(RenderedReduction {
            stage1,
            stage2,
            source,
            params,
            group_elements: k,
            groups_in_flight: u,
        })
    }

    fn vectorized_body(&self, plan: &TilePlan) -> Result<String> {
        let analysis = self.analysis();
        let (k, u) = (plan.k.to_string(), plan.u.to_string());
        let tiled: Vec<&ArgSpec> = self
            .args
            .iter()
            .filter(|a| plan.tiled.iter().any(|t| t == a.name()))
            .collect();
        let mapped = analysis.rewrite(|n| {
            plan.tiled
                .iter()
                .any(|t| t == n)
                .then(|| format!("rucuda_tile_{n}[rucuda_s].e[rucuda_k]"))
        });
        // `slots` groups per thread, group `s` of them being `group`: each array's tiles,
        // their loads, then the fold of every element.
        let step = |slots: usize, group: &str| -> Result<String> {
            let slots = slots.to_string();
            let (mut tiles, mut loads) = (String::new(), String::new());
            for a in &tiled {
                let (chunk, count) = chunk_type(plan.k * a.dtype().size_bytes());
                let count = count.to_string();
                tiles.push_str(&render(
                    VECTORIZED_TILE,
                    &[
                        ("CHUNK", chunk),
                        ("COUNT", &count),
                        ("T", a.dtype().c_type()),
                        ("K", &k),
                        ("NAME", a.name()),
                        ("SLOTS", &slots),
                    ],
                )?);
                loads.push_str(&render(
                    VECTORIZED_LOAD,
                    &[
                        ("CHUNK", chunk),
                        ("COUNT", &count),
                        ("NAME", a.name()),
                        ("GROUP", group),
                    ],
                )?);
            }
            Ok(render(
                VECTORIZED_STEP,
                &[
                    ("TILES", &tiles),
                    ("SLOTS", &slots),
                    ("LOADS", &loads),
                    ("K", &k),
                    ("GROUP", group),
                    ("TILED_MAP", &mapped),
                ],
            )?)
        };
        Ok(render(
            VECTORIZED,
            &[
                ("K", &k),
                ("U_MINUS_1", &(plan.u - 1).to_string()),
                ("U", &u),
                (
                    "STEP_OF_U",
                    &step(plan.u, "rucuda_g + rucuda_s * total_threads")?,
                ),
                ("STEP_OF_1", &step(1, "rucuda_g")?),
                ("MAP", &self.map_expr),
            ],
        )?)
    }
}
