//! PyCUDA's nvcc helpers in `pycuda.compiler`: [`get_nvcc_version`] (what
//! `nvcc --version` says) and [`preprocess_source`] (`nvcc --preprocess`).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::backend::nvcc;
use crate::error::{CompileError, Error, Result};
use crate::scratch::scratch_dir;

/// What `nvcc --version` prints (PyCUDA's `get_nvcc_version`), for the nvcc at `nvcc`
/// or, with `None`, the one [`compile`](crate::compile) would run (`CUDA_PATH`,
/// `CUDA_HOME`, `PATH`, `/usr/local/cuda/bin`, NVIDIA's pip wheel). A bare name
/// (`"nvcc-13"`) is searched on `PATH`.
///
/// Without nvcc this is [`Error::NvccNotFound`], listing where it looked (PyCUDA warns
/// and returns `"nvcc unknown version"`).
///
/// ```no_run
/// let version = rucuda_jit::get_nvcc_version(None)?;
/// assert!(version.contains("Cuda compilation tools"));
/// # Ok::<(), rucuda_jit::Error>(())
/// ```
pub fn get_nvcc_version(nvcc: Option<&Path>) -> Result<String> {
    let path = nvcc::locate(nvcc)?;
    nvcc::version_output(&path)
}

/// Runs the C preprocessor over CUDA `source` through nvcc (PyCUDA's
/// `preprocess_source`): `nvcc --preprocess <options> kernel.cu --compiler-options -P`
/// (`-EP` on Windows), and returns what it prints, without line markers.
///
/// `options` are nvcc options as separate strings (`["-DN=4", "-I/my/include"]`);
/// `nvcc` as for [`get_nvcc_version`]. nvcc includes the CUDA runtime's headers, so the
/// text is long. A failing run is an [`Error::Compile`] with nvcc's command line and
/// stderr; without nvcc, [`Error::NvccNotFound`].
///
/// ```no_run
/// let text = rucuda_jit::preprocess_source(
///     "#define N 4\n__global__ void k(float *x) { x[0] = N; }\n",
///     &["-DEXTRA=1"],
///     None,
/// )?;
/// assert!(text.contains("x[0] = 4;"));
/// # Ok::<(), rucuda_jit::Error>(())
/// ```
pub fn preprocess_source(source: &str, options: &[&str], nvcc: Option<&Path>) -> Result<String> {
    if source.contains('\0') {
        return Err(Error::InvalidInput("the source contains a NUL byte".into()));
    }
    let path = nvcc::locate(nvcc)?;
    let dir = scratch_dir("nvcc-preprocess")
        .map_err(|e| Error::io("creating a scratch folder for nvcc --preprocess", e))?;
    let file = "kernel.cu";
    let src_path = dir.path().join(file);
    std::fs::write(&src_path, source)
        .map_err(|e| Error::io(format!("writing {}", src_path.display()), e))?;
    let host_flag = if cfg!(windows) { "-EP" } else { "-P" };
    let mut command_line: Vec<String> = vec![path.display().to_string(), "--preprocess".into()];
    command_line.extend(options.iter().map(|o| o.to_string()));
    command_line.extend([
        file.to_string(),
        "--compiler-options".into(),
        host_flag.into(),
    ]);
    let run = Command::new(&path)
        .args(&command_line[1..])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::io(format!("running {}", path.display()), e))?;
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    if !run.status.success() || stdout.trim().is_empty() {
        let status = if run.status.success() {
            format!("{} (but it printed nothing)", run.status)
        } else {
            run.status.to_string()
        };
        return Err(CompileError::new(
            format!("{} --preprocess", path.display()),
            status,
            command_line,
            stderr.clone(),
            "",
            stderr,
            source,
            file,
        )
        .into());
    }
    Ok(stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_nvcc_is_a_typed_error() {
        let missing = Path::new("/surely/not/here/nvcc");
        let e = get_nvcc_version(Some(missing)).unwrap_err();
        assert!(matches!(e, Error::NvccNotFound { .. }), "{e}");
        let e = preprocess_source("int x;", &[], Some(missing)).unwrap_err();
        assert!(matches!(e, Error::NvccNotFound { .. }), "{e}");
        let e = preprocess_source("int\0x;", &[], Some(missing)).unwrap_err();
        assert!(matches!(e, Error::InvalidInput(_)), "{e}");
    }
}
