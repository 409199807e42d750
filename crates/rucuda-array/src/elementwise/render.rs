//! CUDA source for each variant of an elementwise kernel. Pure text: every variant and
//! its parameter layout is unit-tested here and compiled with NVRTC in CI. The CUDA text
//! is in `cuda/`: `kernel.cu` (the skeleton) and one loop per variant.
//!
//! All variants share one skeleton: `tid` and `total_threads` (64-bit), `i` declared
//! before the loop (so `after_loop` may use it), `loop_prep`, a grid-stride loop, then
//! `after_loop`. They differ in the loop:
//!
//! - **contiguous**: `for (i = tid; i < n; i += total_threads)`.
//! - **vectorized**: the same elements in tiles of `K` consecutive ones (`K` = 16 bytes
//!   of the smallest element type), each array moved between memory and a register tile
//!   with 16-byte loads and stores (`uint4` through a union), pointers `__restrict__`;
//!   `x[i]` becomes the tile's element; a scalar loop does the last `n % K`. Used when
//!   every array is contiguous and 16-byte aligned and only used as `x[i]`.
//! - **ranged**: `i` runs over `start, start + step, ...` before `stop` (either sign).
//! - **strided**: `ndim` axes; `shape` and each non-contiguous array's strides (in
//!   elements, any sign, 0 for broadcast) are kernel parameters, so one compiled kernel
//!   serves every shape of that rank; `x[i]` becomes `x[offset of i]`.

use crate::codegen::grid_dependency::WAIT_FOR_PREDECESSOR;
use crate::codegen::strided::StridedIndexing;
use crate::codegen::template::{block, render};
use crate::codegen::{prelude_for, ArgSpec};
use crate::error::Result;

use super::ElementwiseSpec;

pub use crate::codegen::strided::MAX_STRIDED_DIMS;

const KERNEL: &str = include_str!("cuda/kernel.cu");
const CONTIGUOUS: &str = include_str!("cuda/contiguous.cuh");
const RANGED: &str = include_str!("cuda/ranged.cuh");
const VECTORIZED: &str = include_str!("cuda/vectorized.cuh");
const VECTORIZED_TILE: &str = include_str!("cuda/vectorized_tile.cuh");
const VECTORIZED_LOAD: &str = include_str!("cuda/vectorized_load.cuh");
const VECTORIZED_STORE: &str = include_str!("cuda/vectorized_store.cuh");
const STRIDED: &str = include_str!("cuda/strided.cuh");

/// Which loop a generated kernel runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Plain grid-stride loop over `0..n`.
    Contiguous,
    /// Tiles of 16-byte vector loads and stores, scalar tail.
    Vectorized,
    /// `start..stop` by `step`.
    Ranged,
    /// Per-array strides over `ndim` axes; `strided[k]` says whether the k-th array
    /// argument is indexed through strides (the others are contiguous: `x[i]`).
    Strided {
        /// Number of axes.
        ndim: usize,
        /// One flag per array argument, in argument order.
        strided: Vec<bool>,
    },
}

/// One kernel parameter as the host packs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// Its C name.
    pub name: String,
    /// Its size in bytes.
    pub size: usize,
}

impl Param {
    /// The parameters of a generated kernel: `args` (pointers for arrays), then the
    /// generated `long long` ones named `extra`.
    pub(crate) fn layout(args: &[ArgSpec], extra: Vec<String>) -> Vec<Param> {
        let user = args.iter().map(|a| Param {
            name: a.name().to_string(),
            size: a.param_size(),
        });
        user.chain(extra.into_iter().map(|name| Param { name, size: 8 }))
            .collect()
    }
}

/// A generated kernel: entry point, full source and parameter layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedKernel {
    /// The `extern "C"` entry point.
    pub entry: String,
    /// The whole source (prelude, preamble, kernel).
    pub source: String,
    /// Parameters in order: the user's arguments, then the generated ones.
    pub params: Vec<Param>,
    /// Elements per tile for [`Variant::Vectorized`], 1 otherwise.
    pub elements_per_thread: usize,
}

/// Elements per tile of the vectorized variant: 16 bytes of the smallest array element.
pub(crate) fn tile_elements(spec: &ElementwiseSpec) -> usize {
    let min = spec
        .args
        .iter()
        .filter(|a| a.is_vector())
        .map(|a| a.dtype().size_bytes())
        .min()
        .unwrap_or(16);
    (16 / min.max(1)).max(1)
}

/// One variant's loop: entry point, the `long long` parameters it adds after the user's
/// arguments, the loop's text, and whether arrays are declared `__restrict__`.
struct Loop {
    entry: String,
    extra: Vec<String>,
    code: String,
    restrict: bool,
    elements_per_thread: usize,
}

impl ElementwiseSpec {
    /// The source and parameter layout of one variant.
    ///
    /// ```
    /// use rucuda_array::elementwise::{ElementwiseSpec, Variant};
    /// let s = ElementwiseSpec::parse("float a, const float *x, float *y", "y[i] = a * x[i]", "scale").unwrap();
    /// let k = s.render(&Variant::Contiguous).unwrap();
    /// assert_eq!(k.entry, "scale");
    /// assert!(k.source.contains("for (i = tid; i < n; i += total_threads)"));
    /// assert_eq!(k.params.iter().map(|p| p.size).collect::<Vec<_>>(), vec![4, 8, 8, 8]);
    /// ```
    pub fn render(&self, variant: &Variant) -> Result<RenderedKernel> {
        let l = match variant {
            Variant::Contiguous => Loop {
                entry: self.name.clone(),
                extra: vec!["n".into()],
                code: render(CONTIGUOUS, &[("OPERATION", &self.operation)])?,
                restrict: false,
                elements_per_thread: 1,
            },
            Variant::Vectorized => self.vectorized_loop()?,
            Variant::Ranged => Loop {
                entry: format!("{}_range", self.name),
                extra: ["n", "start", "stop", "step"].map(String::from).to_vec(),
                code: render(RANGED, &[("OPERATION", &self.operation)])?,
                restrict: false,
                elements_per_thread: 1,
            },
            Variant::Strided { ndim, strided } => self.strided_loop(*ndim, strided)?,
        };
        let mut decls: Vec<String> = self
            .args
            .iter()
            .map(|a| {
                if l.restrict {
                    a.restrict_declarator()
                } else {
                    a.declarator()
                }
            })
            .collect();
        decls.extend(l.extra.iter().map(|p| format!("long long {p}")));
        let params = Param::layout(&self.args, l.extra);
        let source = render(
            KERNEL,
            &[
                ("PRELUDE", &prelude_for(self.dtypes())),
                ("PREAMBLE", &block(&self.preamble)),
                ("ENTRY", &l.entry),
                ("PARAMS", &decls.join(", ")),
                ("WAIT_FOR_PREDECESSOR", WAIT_FOR_PREDECESSOR),
                ("LOOP_PREP", &self.loop_prep),
                ("LOOP", &l.code),
                ("AFTER_LOOP", &self.after_loop),
            ],
        )?;
        Ok(RenderedKernel {
            entry: l.entry,
            source,
            params,
            elements_per_thread: l.elements_per_thread,
        })
    }

    /// True when the vectorized variant exists: every array is used only as `x[i]`, and
    /// every array's element size is a power of two (so that a tile of 16 bytes of the
    /// smallest element is a whole number of 16-byte chunks of every array: not for
    /// 3-vectors such as `float3`, 12 bytes, which take the contiguous variant).
    pub fn vectorizable(&self) -> bool {
        let a = self.analysis();
        self.args.iter().filter(|x| x.is_vector()).all(|x| {
            a.usage(x.name()).is_none_or(|u| u.only_at_i())
                && x.dtype().size_bytes().is_power_of_two()
        })
    }

    fn vectorized_loop(&self) -> Result<Loop> {
        let analysis = self.analysis();
        let arrays = || self.args.iter().filter(|a| a.is_vector());
        analysis.require_only_at_i(&self.name, arrays().map(ArgSpec::name))?;
        let k = tile_elements(self);
        let k_text = k.to_string();
        let (mut tiles, mut stores) = (String::new(), String::new());
        for a in arrays() {
            let Some(usage) = analysis.usage(a.name()) else {
                continue;
            };
            if usage.indexed.is_empty() {
                continue;
            }
            let chunks = (k * a.dtype().size_bytes() / 16).to_string();
            let slots = [("CHUNKS", chunks.as_str()), ("NAME", a.name())];
            tiles.push_str(&render(
                VECTORIZED_TILE,
                &[
                    slots[0],
                    slots[1],
                    ("T", a.dtype().c_type()),
                    ("K", &k_text),
                ],
            )?);
            if usage.read || (usage.written && analysis.has_control_flow) {
                tiles.push_str(&render(VECTORIZED_LOAD, &slots)?);
            }
            if usage.written {
                stores.push_str(&render(VECTORIZED_STORE, &slots)?);
            }
        }
        let tiled = analysis.rewrite(|n| Some(format!("rucuda_tile_{n}.e[rucuda_k]")));
        Ok(Loop {
            entry: format!("{}_vec", self.name),
            extra: vec!["n".into()],
            code: render(
                VECTORIZED,
                &[
                    ("K", &k_text),
                    ("TILES", &tiles),
                    ("TILED_OPERATION", &tiled),
                    ("STORES", &stores),
                    ("OPERATION", &self.operation),
                ],
            )?,
            restrict: true,
            elements_per_thread: k,
        })
    }

    fn strided_loop(&self, ndim: usize, strided: &[bool]) -> Result<Loop> {
        let analysis = self.analysis();
        let indexing = StridedIndexing::new(&self.name, &self.args, &analysis, ndim, strided)?;
        let mut extra = vec!["n".to_string()];
        extra.extend(indexing.params());
        Ok(Loop {
            entry: format!("{}_{}", self.name, indexing.suffix(strided)),
            extra,
            code: render(
                STRIDED,
                &[
                    ("OFFSETS", &indexing.offsets()?),
                    ("OPERATION", &indexing.rewrite(&analysis)),
                ],
            )?,
            restrict: false,
            elements_per_thread: 1,
        })
    }
}
