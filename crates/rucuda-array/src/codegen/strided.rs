//! The index arithmetic of strided variants, shared by the elementwise and reduction
//! generators: the iteration index `i` becomes each strided array's element offset
//! `rucuda_off_NAME`, from the shape and that array's strides, which are kernel
//! parameters (`rucuda_shape_D`, `rucuda_stride_NAME_D`: in elements, any sign, 0 for a
//! broadcast axis), so one compiled kernel serves every shape of its rank. The CUDA text
//! is in `cuda/strided_*.cuh`.

use super::template::render;
use super::{ArgSpec, CodegenError, OperationAnalysis};

/// Most axes (after merging contiguous ones) a strided variant is generated for.
pub const MAX_STRIDED_DIMS: usize = 12;

const OFFSETS: &str = include_str!("cuda/strided_offsets.cuh");
const DECLARATION: &str = include_str!("cuda/strided_declaration.cuh");
const AXIS: &str = include_str!("cuda/strided_axis.cuh");
const AXIS_STEP: &str = include_str!("cuda/strided_axis_step.cuh");
const OUTERMOST_STEP: &str = include_str!("cuda/strided_outermost_step.cuh");
const NO_OFFSETS: &str = include_str!("cuda/strided_no_offsets.cuh");

/// A checked strided variant: its rank and the arrays it indexes through strides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StridedIndexing<'a> {
    ndim: usize,
    names: Vec<&'a str>,
}

impl<'a> StridedIndexing<'a> {
    /// The strided variant of `kernel` over `ndim` axes, where `strided[k]` says whether
    /// the k-th array of `args` is strided. Refused: no axis or more than
    /// [`MAX_STRIDED_DIMS`], a flag count other than the array count, and a strided
    /// array the operation (`analysis`) uses other than as `x[i]`.
    pub(crate) fn new(
        kernel: &str,
        args: &'a [ArgSpec],
        analysis: &OperationAnalysis,
        ndim: usize,
        strided: &[bool],
    ) -> Result<StridedIndexing<'a>, CodegenError> {
        if ndim == 0 || ndim > MAX_STRIDED_DIMS {
            return Err(CodegenError::TooManyDimensions {
                kernel: kernel.to_string(),
                ndim,
                max: MAX_STRIDED_DIMS,
            });
        }
        let arrays: Vec<&ArgSpec> = args.iter().filter(|a| a.is_vector()).collect();
        if strided.len() != arrays.len() {
            return Err(CodegenError::ArgumentCount {
                kernel: kernel.to_string(),
                expected: arrays.len(),
                given: strided.len(),
            });
        }
        let names: Vec<&str> = arrays
            .iter()
            .zip(strided)
            .filter(|(_, &s)| s)
            .map(|(a, _)| a.name())
            .collect();
        analysis.require_only_at_i(kernel, names.iter().copied())?;
        Ok(StridedIndexing { ndim, names })
    }

    /// The entry-point suffix of this variant: `s{ndim}_{one flag digit per array}`.
    pub(crate) fn suffix(&self, strided: &[bool]) -> String {
        let mask: String = strided.iter().map(|&s| if s { '1' } else { '0' }).collect();
        format!("s{}_{mask}", self.ndim)
    }

    /// The generated `long long` parameters that follow `n`: the shape, then each strided
    /// array's strides.
    pub(crate) fn params(&self) -> Vec<String> {
        let mut p: Vec<String> = (0..self.ndim)
            .map(|d| format!("rucuda_shape_{d}"))
            .collect();
        for n in &self.names {
            p.extend((0..self.ndim).map(|d| format!("rucuda_stride_{n}_{d}")));
        }
        p
    }

    /// Whole lines of a loop body over `i` that compute every `rucuda_off_NAME`.
    pub(crate) fn offsets(&self) -> Result<String, CodegenError> {
        // `template` rendered once per strided array, with `NAME` and `slots`.
        let per_array = |template: &str, slots: &[(&str, &str)]| {
            self.names
                .iter()
                .map(|n| {
                    let mut all = vec![("NAME", *n)];
                    all.extend_from_slice(slots);
                    render(template, &all)
                })
                .collect::<Result<String, CodegenError>>()
        };
        let mut axes = String::new();
        for d in (1..self.ndim).rev() {
            let d = d.to_string();
            axes.push_str(&render(
                AXIS,
                &[("D", &d), ("STEPS", &per_array(AXIS_STEP, &[("D", &d)])?)],
            )?);
        }
        let outermost = if self.names.is_empty() {
            NO_OFFSETS.to_string()
        } else {
            per_array(OUTERMOST_STEP, &[])?
        };
        render(
            OFFSETS,
            &[
                ("DECLARATIONS", &per_array(DECLARATION, &[])?),
                ("AXES", &axes),
                ("OUTERMOST", &outermost),
            ],
        )
    }

    /// The analysed text with each strided array's `x[i]` read at its offset.
    pub(crate) fn rewrite(&self, analysis: &OperationAnalysis) -> String {
        analysis.rewrite(|n| {
            self.names
                .contains(&n)
                .then(|| format!("{n}[rucuda_off_{n}]"))
        })
    }
}
