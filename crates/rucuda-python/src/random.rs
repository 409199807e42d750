//! `RandomGenerator`: rucuda-rand's generators (cuRAND's device-API sequences, our own
//! kernels) behind PyCUDA's `pycuda.curandom` classes.
//!
//! Python (`pycuda/curandom.py`) keeps PyCUDA's class names and argument handling; the
//! states, the fills and the skip-aheads are rucuda-rand's.

use pyo3::prelude::*;
use rucuda_rand::{
    Distribution, ElementKind, GeneratorOptions, Mrg32k3a, Philox4x32_10, RandomGenerator,
    ScrambledSobol32, ScrambledSobol64, Seeds, Sobol32, Sobol64, Xorwow,
};

use crate::context::{current, with_pushed};
use crate::errors::raise;

/// One of rucuda-rand's generators.
enum Gen {
    Xorwow(Xorwow),
    Mrg32k3a(Mrg32k3a),
    Philox(Philox4x32_10),
    Sobol32(Sobol32),
    ScrambledSobol32(ScrambledSobol32),
    Sobol64(Sobol64),
    ScrambledSobol64(ScrambledSobol64),
}

/// Runs `$body` with `$g` bound to the generator inside `$gen`, whatever its type.
macro_rules! each_gen {
    ($gen:expr, $g:ident => $body:expr) => {
        match $gen {
            Gen::Xorwow($g) => $body,
            Gen::Mrg32k3a($g) => $body,
            Gen::Philox($g) => $body,
            Gen::Sobol32($g) => $body,
            Gen::ScrambledSobol32($g) => $body,
            Gen::Sobol64($g) => $body,
            Gen::ScrambledSobol64($g) => $body,
        }
    };
}

/// rucuda-rand's error as the Python exception PyCUDA users expect: bad arguments and
/// outputs a generator does not make are `ValueError`/`NotImplementedError`, the
/// driver's and compiler's errors keep their classes.
fn rand_err(e: rucuda_rand::Error) -> PyErr {
    use rucuda_rand::Error as E;
    match e {
        E::InvalidArgument(_) => pyo3::exceptions::PyValueError::new_err(e.to_string()),
        E::Unsupported { .. } => pyo3::exceptions::PyNotImplementedError::new_err(e.to_string()),
        E::Driver(d) => raise(crate::errors::class_of(d.kind()), d.to_string()),
        other => raise("Error", other.to_string()),
    }
}

fn kind_of(name: &str) -> PyResult<ElementKind> {
    Ok(match name {
        "f32" => ElementKind::F32,
        "f64" => ElementKind::F64,
        "u32" => ElementKind::U32,
        "u64" => ElementKind::U64,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "unknown element kind {other:?} (f32, f64, u32 or u64)"
            )))
        }
    })
}

fn dist_of(name: &str, a: f64, b: f64) -> PyResult<Distribution> {
    Ok(match name {
        "uniform" => Distribution::Uniform,
        "raw" => Distribution::Raw,
        "normal" => Distribution::Normal { mean: a, stddev: b },
        "log_normal" => Distribution::LogNormal { mean: a, stddev: b },
        "poisson" => Distribution::Poisson { lambda: a },
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "unknown distribution {other:?}"
            )))
        }
    })
}

/// A generator of rucuda-rand in the context current when it was made.
#[pyclass(module = "rucuda._native")]
pub struct RandomGeneratorCore {
    ctx: rucuda_driver::Context,
    /// Dropped with its context pushed (see `Drop`).
    gen: Option<Gen>,
    /// Bits of one raw output: 32, or 64 for the 64-bit Sobol generators.
    #[pyo3(get)]
    word_bits: u32,
}

impl Drop for RandomGeneratorCore {
    fn drop(&mut self) {
        let gen = self.gen.take();
        with_pushed(&self.ctx, move || drop(gen));
    }
}

impl RandomGeneratorCore {
    fn gen(&mut self) -> &mut Gen {
        // Only Drop takes it.
        self.gen.as_mut().expect("generator present until dropped")
    }

    fn stream(&self, handle: usize) -> rucuda_driver::Stream {
        if handle == 0 {
            rucuda_driver::Stream::null(&self.ctx)
        } else {
            // SAFETY: PyCUDA's contract: `handle` is a live stream of the generator's
            // context (the caller's `Stream` object); the wrapper does not destroy it.
            unsafe { rucuda_driver::Stream::from_raw(&self.ctx, handle as _) }
        }
    }
}

fn pseudo_options(seeds: Option<Vec<u64>>, states: Option<usize>, offset: u64) -> GeneratorOptions {
    GeneratorOptions {
        states,
        seeds: match seeds {
            Some(v) if !v.is_empty() => Seeds::PerState(v),
            _ => Seeds::default(),
        },
        offset,
        ..Default::default()
    }
}

#[pymethods]
impl RandomGeneratorCore {
    /// `kind`: `xorwow`, `mrg32k3a`, `philox`, `sobol32`, `scrambled_sobol32`, `sobol64`
    /// or `scrambled_sobol64`. The pseudo-random ones take per-state `seeds` (their count
    /// is the state count; none: one fresh seed for the default count) and `offset`; the
    /// Sobol ones take `dimensions` or explicit direction `vectors` (and, scrambled,
    /// `constants`, else a fresh `seed` draws them), and `offset`.
    #[new]
    #[pyo3(signature = (kind, seeds = None, offset = 0, dimensions = 0, vectors = None, constants = None, seed = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        kind: &str,
        seeds: Option<Vec<u64>>,
        offset: u64,
        dimensions: usize,
        vectors: Option<Vec<u64>>,
        constants: Option<Vec<u64>>,
        seed: Option<u64>,
    ) -> PyResult<RandomGeneratorCore> {
        let ctx = current()?;
        let states = seeds.as_ref().map(Vec::len).filter(|n| *n > 0);
        let seed = seed.unwrap_or_else(rucuda_rand::seed::entropy);
        let narrow = |v: Vec<u64>, what: &str| -> PyResult<Vec<u32>> {
            v.into_iter()
                .map(|x| {
                    u32::try_from(x).map_err(|_| {
                        pyo3::exceptions::PyValueError::new_err(format!(
                            "{what}: {x:#x} does not fit 32 bits"
                        ))
                    })
                })
                .collect()
        };
        let offset32 = || {
            u32::try_from(offset).map_err(|_| {
                pyo3::exceptions::PyValueError::new_err(format!(
                    "offset {offset}: a 32-bit Sobol generator's offset must fit 32 bits"
                ))
            })
        };
        let (gen, word_bits) = match kind {
            "xorwow" => (
                Gen::Xorwow(
                    Xorwow::with_options(&ctx, &pseudo_options(seeds, states, offset))
                        .map_err(rand_err)?,
                ),
                32,
            ),
            "mrg32k3a" => (
                Gen::Mrg32k3a(
                    Mrg32k3a::with_options(&ctx, &pseudo_options(seeds, states, offset))
                        .map_err(rand_err)?,
                ),
                32,
            ),
            "philox" => (
                Gen::Philox(
                    Philox4x32_10::with_options(&ctx, &pseudo_options(seeds, states, offset))
                        .map_err(rand_err)?,
                ),
                32,
            ),
            "sobol32" => (
                Gen::Sobol32(
                    match vectors {
                        Some(v) => {
                            Sobol32::from_vectors(&ctx, narrow(v, "direction vector")?, offset32()?)
                        }
                        None => Sobol32::new(&ctx, dimensions, offset32()?),
                    }
                    .map_err(rand_err)?,
                ),
                32,
            ),
            "scrambled_sobol32" => (
                Gen::ScrambledSobol32(
                    match (vectors, constants) {
                        (Some(v), Some(c)) => ScrambledSobol32::from_tables(
                            &ctx,
                            narrow(v, "direction vector")?,
                            narrow(c, "scramble constant")?,
                            offset32()?,
                        ),
                        _ => ScrambledSobol32::new(&ctx, dimensions, seed, offset32()?),
                    }
                    .map_err(rand_err)?,
                ),
                32,
            ),
            "sobol64" => (
                Gen::Sobol64(
                    match vectors {
                        Some(v) => Sobol64::from_vectors(&ctx, v, offset),
                        None => Sobol64::new(&ctx, dimensions, offset),
                    }
                    .map_err(rand_err)?,
                ),
                64,
            ),
            "scrambled_sobol64" => (
                Gen::ScrambledSobol64(
                    match (vectors, constants) {
                        (Some(v), Some(c)) => ScrambledSobol64::from_tables(&ctx, v, c, offset),
                        _ => ScrambledSobol64::new(&ctx, dimensions, seed, offset),
                    }
                    .map_err(rand_err)?,
                ),
                64,
            ),
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown generator {other:?}"
                )))
            }
        };
        Ok(RandomGeneratorCore {
            ctx,
            gen: Some(gen),
            word_bits,
        })
    }

    /// Number of states (for Sobol: dimensions).
    #[getter]
    fn state_count(&mut self) -> usize {
        each_gen!(self.gen(), g => g.state_count())
    }

    /// Fills `n` elements of `kind` (`f32`, `f64`, `u32`, `u64`) at device address `ptr`
    /// with `dist` (`uniform`, `raw`, `normal` with mean `a` and deviation `b`,
    /// `log_normal` likewise, `poisson` with mean `a`), queued on the stream `stream`
    /// (a raw handle; 0: the null stream).
    ///
    /// Like PyCUDA's, this trusts the address: `ptr` must hold `n` elements of `kind`
    /// that stay allocated until the fill has run.
    #[pyo3(signature = (ptr, n, kind, dist, a = 0.0, b = 1.0, stream = 0))]
    #[allow(clippy::too_many_arguments)]
    fn fill(
        &mut self,
        ptr: u64,
        n: usize,
        kind: &str,
        dist: &str,
        a: f64,
        b: f64,
        stream: usize,
    ) -> PyResult<()> {
        let kind = kind_of(kind)?;
        let dist = dist_of(dist, a, b)?;
        let s = self.stream(stream);
        let ctx = self.ctx.clone();
        let gen = self.gen();
        with_pushed(&ctx, || {
            // SAFETY: the Python face's contract (as PyCUDA's): the caller vouches that
            // `ptr` holds `n` elements of `kind` that outlive the queued fill.
            each_gen!(gen, g => unsafe { g.fill_ptr(ptr, n, kind, dist, &s) })
        })
        .map_err(rand_err)
    }

    /// `skipahead(n)` on every state (PyCUDA's `call_skip_ahead`).
    #[pyo3(signature = (n, stream = 0))]
    fn skip_ahead(&mut self, n: u64, stream: usize) -> PyResult<()> {
        let s = self.stream(stream);
        let ctx = self.ctx.clone();
        let too_big = || {
            pyo3::exceptions::PyValueError::new_err(format!(
                "skip {n}: a 32-bit Sobol generator skips at most 2^32 - 1 points"
            ))
        };
        let gen = self.gen();
        let r = with_pushed(&ctx, || match gen {
            Gen::Xorwow(g) => Ok(g.skip_ahead(n, &s)),
            Gen::Mrg32k3a(g) => Ok(g.skip_ahead(n, &s)),
            Gen::Philox(g) => Ok(g.skip_ahead(n, &s)),
            Gen::Sobol32(g) => u32::try_from(n).map(|n| g.skip_ahead(n, &s)),
            Gen::ScrambledSobol32(g) => u32::try_from(n).map(|n| g.skip_ahead(n, &s)),
            Gen::Sobol64(g) => Ok(g.skip_ahead(n, &s)),
            Gen::ScrambledSobol64(g) => Ok(g.skip_ahead(n, &s)),
        });
        r.map_err(|_| too_big())?.map_err(rand_err)
    }

    /// `skipahead_sequence(n)` on every state (XORWOW, MRG32k3a and Philox only).
    #[pyo3(signature = (n, stream = 0))]
    fn skip_ahead_sequence(&mut self, n: u64, stream: usize) -> PyResult<()> {
        let s = self.stream(stream);
        let ctx = self.ctx.clone();
        let gen = self.gen();
        with_pushed(&ctx, || match gen {
            Gen::Xorwow(g) => g.skip_ahead_sequence(n, &s).map_err(rand_err),
            Gen::Mrg32k3a(g) => g.skip_ahead_sequence(n, &s).map_err(rand_err),
            Gen::Philox(g) => g.skip_ahead_sequence(n, &s).map_err(rand_err),
            _ => Err(pyo3::exceptions::PyNotImplementedError::new_err(
                "quasi-random generators have no sequences to skip",
            )),
        })
    }
}

/// Sobol direction vectors (Joe and Kuo's numbers, as cuRAND's tables) of dimensions
/// `0..count`, `bits` (32 or 64) words each, flattened.
#[pyfunction]
pub fn sobol_direction_vectors(bits: u32, count: usize) -> PyResult<Vec<u64>> {
    let r = match bits {
        32 => rucuda_rand::sobol::direction::direction_vector_set_32(count)
            .map(|v| v.into_iter().map(u64::from).collect()),
        64 => rucuda_rand::sobol::direction::direction_vector_set_64(count),
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "direction vectors have 32 or 64 bits, not {bits}"
            )))
        }
    };
    r.map_err(rand_err)
}
