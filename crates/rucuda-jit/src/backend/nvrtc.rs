//! One NVRTC compilation: the program made, compiled and read (its output, log and
//! lowered names), a [`CompileError`] when NVRTC rejects the source, and the files kept
//! when asked.

use std::path::PathBuf;

use super::program::Program;
use super::raw::RawOutput;
use crate::error::{CompileError, Error, Result};
use crate::nvrtc::bindings::nvrtcResult;
use crate::nvrtc::{result_name, Nvrtc};
use crate::options::CompileOptions;
use crate::output::OutputKind;
use crate::scratch::scratch_dir;

/// One NVRTC compilation of the prepared source (`source` is the user's, for error
/// excerpts: the `#line` directive keeps the compiler's line numbers the user's), with
/// the in-memory `headers` (name, text) an `#include` of that name reads.
pub(crate) fn compile(
    prepared: &str,
    source: &str,
    options: &CompileOptions,
    args: &[String],
    headers: &[(&str, &str)],
) -> Result<RawOutput> {
    let nvrtc = Nvrtc::get()?;
    let mut program = Program::new(nvrtc, prepared, &options.program_name, headers)?;
    for expression in &options.name_expressions {
        program.add_name_expression(expression)?;
    }
    let code = program.compile(args)?;
    let log = program.log()?;
    let (major, minor) = nvrtc.version();
    let kept = if options.keep {
        Some(keep_nvrtc_files(prepared, args, &log, headers)?)
    } else {
        None
    };
    if code != nvrtcResult::NVRTC_SUCCESS {
        return Err(CompileError::new(
            format!("NVRTC {major}.{minor}"),
            result_name(code),
            args.to_vec(),
            log,
            "",
            "",
            source,
            &options.program_name,
        )
        .into());
    }
    let image = match options.output {
        OutputKind::Cubin => program.cubin()?,
        OutputKind::Ptx => program.ptx()?,
        OutputKind::LtoIr => program.lto_ir()?,
        OutputKind::Fatbin => return Err(Error::nvrtc_fatbin()),
    };
    let mut lowered_names = Vec::with_capacity(options.name_expressions.len());
    for expression in &options.name_expressions {
        lowered_names.push((expression.clone(), program.lowered_name(expression)?));
    }
    if let Some(dir) = &kept {
        let out = dir.join(format!("kernel.{}", options.output.extension()));
        std::fs::write(&out, &image)
            .map_err(|e| Error::io(format!("writing {}", out.display()), e))?;
    }
    Ok(RawOutput {
        image,
        lowered_names,
        log,
        kept,
    })
}

/// Writes the source, options, log and in-memory headers (under `headers/`) of an NVRTC
/// compile to a kept folder.
fn keep_nvrtc_files(
    prepared: &str,
    args: &[String],
    log: &str,
    headers: &[(&str, &str)],
) -> Result<PathBuf> {
    let dir = scratch_dir("nvrtc")
        .map_err(|e| Error::io("creating a folder to keep NVRTC's files", e))?;
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).map_err(|e| Error::io(format!("writing {}", p.display()), e))
    };
    write("kernel.cu", prepared)?;
    write("options.txt", &args.join("\n"))?;
    write("log.txt", log)?;
    if !headers.is_empty() {
        let folder = dir.path().join("headers");
        std::fs::create_dir_all(&folder)
            .map_err(|e| Error::io(format!("creating {}", folder.display()), e))?;
        for (name, text) in headers {
            // Built-in header names are plain file names (no folders).
            write(&format!("headers/{name}"), text)?;
        }
    }
    let path = dir.keep();
    log::info!("rucuda-jit: kept NVRTC's files in {}", path.display());
    Ok(path)
}
