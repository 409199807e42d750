//! `pycuda.compiler`'s work: CUDA C++ to a cubin (or PTX) through rucuda-jit.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rucuda_jit::{Arch, Backend, CompileOptions, OutputKind};

use crate::errors::{raise, OrRaise};

fn parse_arch(what: &str, text: &str) -> PyResult<Arch> {
    text.parse::<Arch>()
        .map_err(|e| raise("LogicError", format!("{what}={text:?}: {e}")))
}

/// Compiles `source`; returns the image's bytes. `arch` (`sm_90`) defaults to the
/// current context's device; `target` is `cubin` or `ptx`; `nvcc` picks the nvcc
/// backend (PyCUDA's behaviour) instead of NVRTC. The GIL is released while it runs.
#[pyfunction]
#[pyo3(signature = (
    source, options = Vec::new(), arch = None, code = None, target = "cubin",
    include_dirs = Vec::new(), no_extern_c = false, keep = false, cache_dir = None,
    use_cache = true, nvcc = None
))]
#[allow(clippy::too_many_arguments)]
pub fn compile<'py>(
    py: Python<'py>,
    source: &str,
    options: Vec<String>,
    arch: Option<String>,
    code: Option<String>,
    target: &str,
    include_dirs: Vec<PathBuf>,
    no_extern_c: bool,
    keep: bool,
    cache_dir: Option<PathBuf>,
    use_cache: bool,
    nvcc: Option<PathBuf>,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut opts = CompileOptions::new()
        .options(options)
        .no_extern_c(no_extern_c)
        .keep(keep)
        .output(match target {
            "cubin" => OutputKind::Cubin,
            "ptx" => OutputKind::Ptx,
            "fatbin" => OutputKind::Fatbin,
            other => {
                return Err(raise(
                    "LogicError",
                    format!("target={other:?}: expected 'cubin', 'ptx' or 'fatbin'"),
                ))
            }
        });
    if let Some(a) = arch {
        opts = opts.arch(parse_arch("arch", &a)?);
    }
    if let Some(c) = code {
        opts = opts.code(c);
    }
    for d in include_dirs {
        opts = opts.include_dir(d);
    }
    if !use_cache {
        opts = opts.cache_dir(None);
    } else if let Some(d) = cache_dir {
        opts = opts.cache_dir(Some(d));
    }
    if let Some(n) = nvcc {
        opts = opts.backend(Backend::Nvcc).nvcc(n);
    }
    let source = source.to_string();
    let out = py
        .allow_threads(|| rucuda_jit::compile(&source, &opts))
        .or_raise()?;
    Ok(PyBytes::new(py, &out.image))
}

/// Whether NVRTC can be loaded, and if not the message saying what to install.
#[pyfunction]
pub fn nvrtc_status() -> (bool, String) {
    match rucuda_jit::nvrtc::Nvrtc::get() {
        Ok(n) => (true, {
            let (ma, mi) = n.version();
            format!("NVRTC {ma}.{mi}")
        }),
        Err(e) => (false, e.to_string()),
    }
}
