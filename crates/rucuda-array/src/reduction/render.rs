//! CUDA source of a reduction: stage 1 in one of three variants plus stage 2, in one
//! module. Pure text: every variant is unit-tested here and compiled with NVRTC in CI.
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

use crate::codegen::template::render;
use crate::codegen::{prelude_for, ArgSpec, CodegenError};
use crate::elementwise::Param;
use crate::error::Result;

use super::warp::SHUFFLES;
use super::ReductionSpec;

/// Threads per block of both stages.
pub const BLOCK_SIZE: u32 = 256;
/// Most groups (`U`) the vectorized variant loads per thread before using any.
const MAX_GROUPS_IN_FLIGHT: usize = 8;
/// Most axes (after merging contiguous ones) a strided variant is generated for.
pub const MAX_STRIDED_DIMS: usize = crate::elementwise::MAX_STRIDED_DIMS;

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

fn declarator(a: &ArgSpec) -> String {
    let d = a.declarator();
    if a.is_vector() {
        d.replacen(" *", " *__restrict__ ", 1)
    } else {
        d
    }
}

fn long_param(name: impl Into<String>) -> Param {
    Param {
        name: name.into(),
        size: 8,
    }
}

const BLOCK_REDUCE: &str = r#"__device__ __forceinline__ rucuda_acc_t rucuda_reduce_op(rucuda_acc_t a, rucuda_acc_t b)
{
  return ($REDUCE$);
}
__device__ __forceinline__ rucuda_acc_t rucuda_neutral_value()
{
  return (rucuda_acc_t)($NEUTRAL$);
}
// The block's fold of every thread's v, valid in thread 0 (blockDim.x a multiple of 32).
__device__ __forceinline__ rucuda_acc_t rucuda_block_reduce(rucuda_acc_t v)
{
  __shared__ __align__(16) unsigned char rucuda_smem[32 * sizeof(rucuda_acc_t)];
  rucuda_acc_t *rucuda_warp_values = reinterpret_cast<rucuda_acc_t *>(rucuda_smem);
  const unsigned int rucuda_lane = threadIdx.x & 31u, rucuda_warp = threadIdx.x >> 5;
#pragma unroll
  for (unsigned int o = 16; o > 0; o >>= 1) v = rucuda_reduce_op(v, rucuda_shfl_down(v, o));
  if (rucuda_lane == 0) rucuda_warp_values[rucuda_warp] = v;
  __syncthreads();
  if (rucuda_warp == 0) {
    v = rucuda_lane < (blockDim.x >> 5) ? rucuda_warp_values[rucuda_lane] : rucuda_neutral_value();
#pragma unroll
    for (unsigned int o = 16; o > 0; o >>= 1) v = rucuda_reduce_op(v, rucuda_shfl_down(v, o));
  }
  return v;
}
"#;

const STAGE2: &str = r#"extern "C" __global__ void __launch_bounds__($BLOCK$) $ENTRY$(const rucuda_acc_t *__restrict__ rucuda_partials, rucuda_out_t *__restrict__ rucuda_out, long long rucuda_m)
{
  rucuda_acc_t rucuda_acc = rucuda_neutral_value();
  for (long long rucuda_k = threadIdx.x; rucuda_k < rucuda_m; rucuda_k += blockDim.x)
    rucuda_acc = rucuda_reduce_op(rucuda_acc, rucuda_partials[rucuda_k]);
  rucuda_acc = rucuda_block_reduce(rucuda_acc);
  if (threadIdx.x == 0) rucuda_out[0] = (rucuda_out_t)rucuda_acc;
}
"#;

const STAGE1_HEAD: &str = r#"extern "C" __global__ void __launch_bounds__($BLOCK$) $ENTRY$($PARAMS$)
{
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long total_threads = (long long)gridDim.x * blockDim.x;
  (void)tid; (void)total_threads; (void)n;
  rucuda_acc_t rucuda_acc = rucuda_neutral_value();
"#;

const STAGE1_TAIL: &str = r#"  rucuda_acc = rucuda_block_reduce(rucuda_acc);
  if (threadIdx.x == 0) {
    if (gridDim.x == 1) rucuda_out[0] = (rucuda_out_t)rucuda_acc;
    else rucuda_partials[blockIdx.x] = rucuda_acc;
  }
}
"#;

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
        let mut params: Vec<Param> = self
            .args
            .iter()
            .map(|a| Param {
                name: a.name().to_string(),
                size: a.param_size(),
            })
            .collect();
        let mut decls: Vec<String> = self.args.iter().map(declarator).collect();
        decls.push("rucuda_acc_t *__restrict__ rucuda_partials".into());
        decls.push("rucuda_out_t *__restrict__ rucuda_out".into());
        decls.push("long long n".into());
        params.extend(["rucuda_partials", "rucuda_out", "n"].map(long_param));
        let (suffix, body, k, u) = match variant {
            Variant::Contiguous => ("r1c".to_string(), self.contiguous_body(), 1, 1),
            Variant::Vectorized => {
                let plan = tile_plan(self).ok_or_else(|| CodegenError::StridedUnsupported {
                    kernel: self.name.clone(),
                    name: "(every array)".into(),
                    usage: "no array is used only as `x[i]`, so none can be vectorized".into(),
                })?;
                (
                    "r1v".to_string(),
                    self.vectorized_body(&plan),
                    plan.k,
                    plan.u,
                )
            }
            Variant::Strided { ndim, strided } => {
                let (body, extra) = self.strided_body(*ndim, strided)?;
                for e in &extra {
                    decls.push(format!("long long {e}"));
                    params.push(long_param(e.clone()));
                }
                let mask: String = strided.iter().map(|&s| if s { '1' } else { '0' }).collect();
                (format!("r1s{ndim}_{mask}"), body, 1, 1)
            }
        };
        let stage1 = format!("{}_{suffix}", self.name);
        let stage2 = format!("{}_r2", self.name);
        let mut src = self.header()?;
        let block = BLOCK_SIZE.to_string();
        src.push_str(&render(
            STAGE1_HEAD,
            &[
                ("BLOCK", &block),
                ("ENTRY", &stage1),
                ("PARAMS", &decls.join(", ")),
            ],
        )?);
        src.push_str(&body);
        src.push_str(STAGE1_TAIL);
        src.push_str(&render(STAGE2, &[("BLOCK", &block), ("ENTRY", &stage2)])?);
        Ok(RenderedReduction {
            stage1,
            stage2,
            source: src,
            params,
            group_elements: k,
            groups_in_flight: u,
        })
    }

    fn header(&self) -> Result<String> {
        let mut s = String::from("// Generated by rucuda-array's reduction kernel generator.\n");
        s.push_str(&prelude_for(self.dtypes()));
        if !self.preamble.is_empty() {
            s.push_str(&self.preamble);
            s.push('\n');
        }
        s.push_str(SHUFFLES);
        s.push_str(&format!(
            "typedef {} rucuda_acc_t;\ntypedef {} rucuda_out_t;\n",
            self.accumulator.c_type(),
            self.output.c_type()
        ));
        s.push_str(&render(
            BLOCK_REDUCE,
            &[("REDUCE", &self.reduce_expr), ("NEUTRAL", &self.neutral)],
        )?);
        Ok(s)
    }

    fn fold(map: &str) -> String {
        format!("rucuda_acc = rucuda_reduce_op(rucuda_acc, (rucuda_acc_t)({map}));")
    }

    fn contiguous_body(&self) -> String {
        format!(
            "  for (long long i = tid; i < n; i += total_threads)\n    {}\n",
            Self::fold(&self.map_expr)
        )
    }

    fn vectorized_body(&self, plan: &TilePlan) -> String {
        let analysis = self.analysis();
        let (k, u) = (plan.k, plan.u);
        let tiled: Vec<&ArgSpec> = self
            .args
            .iter()
            .filter(|a| plan.tiled.iter().any(|t| t == a.name()))
            .collect();
        // One group's tile per array and the loads of group `g` into slot `s`.
        let mut tiles = String::new();
        let mut loads = String::new();
        for a in &tiled {
            let (name, t) = (a.name(), a.dtype().c_type());
            let (chunk, count) = chunk_type(k * a.dtype().size_bytes());
            tiles.push_str(&format!(
                "    union {{ {chunk} v[{count}]; {t} e[{k}]; }} rucuda_tile_{name}[RUCUDA_SLOTS];\n"
            ));
            loads.push_str(&format!(
                "#pragma unroll\n      for (int rucuda_c = 0; rucuda_c < {count}; ++rucuda_c) rucuda_tile_{name}[rucuda_s].v[rucuda_c] = __ldg(reinterpret_cast<const {chunk} *>({name}) + RUCUDA_GROUP * {count} + rucuda_c);\n"
            ));
        }
        let mapped = analysis.rewrite(|n| {
            plan.tiled
                .iter()
                .any(|t| t == n)
                .then(|| format!("rucuda_tile_{n}[rucuda_s].e[rucuda_k]"))
        });
        let step = |slots: usize, group: &str| {
            let mut s = String::from("  {\n");
            s.push_str(&tiles.replace("RUCUDA_SLOTS", &slots.to_string()));
            s.push_str(&format!(
                "#pragma unroll\n    for (int rucuda_s = 0; rucuda_s < {slots}; ++rucuda_s) {{\n"
            ));
            s.push_str(&loads.replace("RUCUDA_GROUP", &format!("({group})")));
            s.push_str("    }\n");
            s.push_str(&format!(
                "#pragma unroll\n    for (int rucuda_s = 0; rucuda_s < {slots}; ++rucuda_s) {{\n#pragma unroll\n      for (int rucuda_k = 0; rucuda_k < {k}; ++rucuda_k) {{\n        const long long i = ({group}) * {k} + rucuda_k;\n        (void)i;\n        {}\n      }}\n    }}\n  }}\n",
                Self::fold(&mapped)
            ));
            s
        };
        let mut body = format!(
            "  const long long rucuda_groups = n / {k};\n  long long rucuda_g = tid;\n  for (; rucuda_g + {um1} * total_threads < rucuda_groups; rucuda_g += {u} * total_threads)\n",
            um1 = u - 1
        );
        body.push_str(&step(u, "rucuda_g + rucuda_s * total_threads"));
        body.push_str("  for (; rucuda_g < rucuda_groups; rucuda_g += total_threads)\n");
        body.push_str(&step(1, "rucuda_g"));
        body.push_str(&format!(
            "  for (long long i = rucuda_groups * {k} + tid; i < n; i += total_threads)\n    {}\n",
            Self::fold(&self.map_expr)
        ));
        body
    }

    fn strided_body(&self, ndim: usize, strided: &[bool]) -> Result<(String, Vec<String>)> {
        let vectors: Vec<&ArgSpec> = self.args.iter().filter(|a| a.is_vector()).collect();
        if ndim == 0 || ndim > MAX_STRIDED_DIMS {
            return Err(CodegenError::TooManyDimensions {
                kernel: self.name.clone(),
                ndim,
                max: MAX_STRIDED_DIMS,
            }
            .into());
        }
        if strided.len() != vectors.len() {
            return Err(CodegenError::ArgumentCount {
                kernel: self.name.clone(),
                expected: vectors.len(),
                given: strided.len(),
            }
            .into());
        }
        let analysis = self.analysis();
        let names: Vec<&str> = vectors
            .iter()
            .zip(strided)
            .filter(|(_, &s)| s)
            .map(|(a, _)| a.name())
            .collect();
        for &n in &names {
            if let Some(usage) = analysis.usage(n).and_then(|u| u.other_use.clone()) {
                return Err(CodegenError::StridedUnsupported {
                    kernel: self.name.clone(),
                    name: n.to_string(),
                    usage,
                }
                .into());
            }
        }
        let mut extra: Vec<String> = (0..ndim).map(|d| format!("rucuda_shape_{d}")).collect();
        for &n in &names {
            extra.extend((0..ndim).map(|d| format!("rucuda_stride_{n}_{d}")));
        }
        let mut s = String::from(
            "  (void)rucuda_shape_0;\n  for (long long i = tid; i < n; i += total_threads)\n  {\n    long long rucuda_rest = i;\n",
        );
        for &n in &names {
            s.push_str(&format!("    long long rucuda_off_{n} = 0;\n"));
        }
        for d in (1..ndim).rev() {
            s.push_str(&format!(
                "    {{\n      const long long rucuda_c = rucuda_rest % rucuda_shape_{d};\n      rucuda_rest /= rucuda_shape_{d};\n"
            ));
            for &n in &names {
                s.push_str(&format!(
                    "      rucuda_off_{n} += rucuda_c * rucuda_stride_{n}_{d};\n"
                ));
            }
            s.push_str("    }\n");
        }
        for &n in &names {
            s.push_str(&format!(
                "    rucuda_off_{n} += rucuda_rest * rucuda_stride_{n}_0;\n"
            ));
        }
        if names.is_empty() {
            s.push_str("    (void)rucuda_rest;\n");
        }
        let mapped =
            analysis.rewrite(|n| names.contains(&n).then(|| format!("{n}[rucuda_off_{n}]")));
        s.push_str(&format!("    {}\n  }}\n", Self::fold(&mapped)));
        Ok((s, extra))
    }
}
