//! nvcc as a subprocess: finding it, its identity for the cache key, one compilation
//! in a scratch folder.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use rucuda_dylib::python_sites::dedup;
use rucuda_dylib::resolve_folders;

use super::raw::RawOutput;
use crate::error::{CompileError, Error, Result};
use crate::options::CompileOptions;
use crate::output::OutputKind;
use crate::scratch::scratch_dir;
use crate::toolkit;

const NVCC: &str = if cfg!(windows) { "nvcc.exe" } else { "nvcc" };

/// The places nvcc is looked for, in order: `explicit`, `CUDA_PATH/bin`, `CUDA_HOME/bin`
/// (absolute entries), every `PATH` folder, `/usr/local/cuda/bin`.
pub(crate) fn candidates(
    explicit: Option<&Path>,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Vec<PathBuf> {
    if let Some(p) = explicit {
        return vec![p.to_path_buf()];
    }
    let mut folders = resolve_folders(toolkit::BIN_FROM_ENV, env, &mut Vec::new());
    if let Some(path) = env("PATH") {
        folders.extend(std::env::split_paths(&path));
    }
    folders.push(PathBuf::from("/usr/local/cuda/bin"));
    dedup(folders.into_iter().map(|d| d.join(NVCC)).collect())
}

/// nvcc inside NVIDIA's pip wheel (`nvidia-cuda-nvcc`), in a site-packages folder.
const NVCC_IN_WHEEL: &str = if cfg!(windows) {
    "nvidia/cu13/bin/nvcc.exe"
} else {
    "nvidia/cu13/bin/nvcc"
};

/// The nvcc to run: [`candidates`], then NVIDIA's `nvidia-cuda-nvcc` wheel in Python's
/// site-packages (found without a subprocess first, then by asking `python3`).
///
/// An explicit path that is a bare name (`"nvcc-13"`) is searched on `PATH`.
pub(crate) fn locate(explicit: Option<&Path>) -> Result<PathBuf> {
    let env = toolkit::process_env;
    let explicit = explicit.map(|p| {
        if p.components().count() == 1 && !p.is_file() {
            candidates(None, &|n: &str| if n == "PATH" { env(n) } else { None })
                .into_iter()
                .map(|c| c.with_file_name(p))
                .find(|c| c.is_file())
                .unwrap_or_else(|| p.to_path_buf())
        } else {
            p.to_path_buf()
        }
    });
    let wheel_files: &[&str] = if explicit.is_none() {
        &[NVCC_IN_WHEEL]
    } else {
        &[]
    };
    toolkit::find_file(&env, candidates(explicit.as_deref(), &env), wheel_files)
        .map_err(|tried| Error::NvccNotFound { tried })
}

/// nvcc's `--version` output, run once per path and process.
pub(crate) fn version_output(nvcc: &Path) -> Result<String> {
    static IDS: OnceLock<Mutex<HashMap<PathBuf, String>>> = OnceLock::new();
    let ids = IDS.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(id) = ids.lock().ok().and_then(|m| m.get(nvcc).cloned()) {
        return Ok(id);
    }
    let out = Command::new(nvcc)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::io(format!("running {} --version", nvcc.display()), e))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() || stdout.trim().is_empty() {
        return Err(Error::InvalidInput(format!(
            "{} --version failed ({}): {}",
            nvcc.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    if let Ok(mut m) = ids.lock() {
        m.insert(nvcc.to_path_buf(), stdout.clone());
    }
    Ok(stdout)
}

/// nvcc's identity in the cache key: its `--version` output.
pub(crate) fn identity(nvcc: &Path) -> Result<String> {
    Ok(format!("nvcc {}", version_output(nvcc)?.trim()))
}

/// A file name safe to create in the scratch folder: the last component of
/// `program_name`, `kernel.cu` when it has none.
fn source_file_name(program_name: &str) -> String {
    let base = program_name.rsplit(['/', '\\']).next().unwrap_or("");
    if base.is_empty() || base == "." || base == ".." {
        "kernel.cu".into()
    } else if base.ends_with(".cu") {
        base.into()
    } else {
        format!("{base}.cu")
    }
}

/// Compiles the prepared source with nvcc in a scratch folder:
/// `nvcc <args> -o kernel.<ext> kernel.cu`. `user_source` is what error excerpts quote.
pub(crate) fn compile(
    nvcc: &Path,
    prepared: &str,
    user_source: &str,
    options: &CompileOptions,
    args: &[String],
) -> Result<RawOutput> {
    let (program_name, output, keep) = (&options.program_name, options.output, options.keep);
    let dir =
        scratch_dir("nvcc").map_err(|e| Error::io("creating a scratch folder for nvcc", e))?;
    let file = source_file_name(program_name);
    let src_path = dir.path().join(&file);
    std::fs::write(&src_path, prepared)
        .map_err(|e| Error::io(format!("writing {}", src_path.display()), e))?;
    let out_name = format!(
        "{}.{}",
        file.strip_suffix(".cu").unwrap_or(&file),
        output.extension()
    );
    let out_path = dir.path().join(&out_name);
    let mut command_line: Vec<String> = vec![nvcc.display().to_string()];
    command_line.extend(args.iter().cloned());
    command_line.extend(["-o".to_string(), out_name.clone(), file.clone()]);
    let run = Command::new(nvcc)
        .args(args)
        .args(["-o", &out_name, &file])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::io(format!("running {}", nvcc.display()), e))?;
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    let log = match (stderr.trim(), stdout.trim()) {
        ("", o) => o.to_string(),
        (e, "") => e.to_string(),
        (e, o) => format!("{e}\n{o}"),
    };
    let image = if run.status.success() {
        std::fs::read(&out_path).ok()
    } else {
        None
    };
    let kept = keep.then(|| dir.keep());
    if let Some(k) = &kept {
        log::info!("rucuda-jit: kept nvcc's files in {}", k.display());
    }
    let Some(mut image) = image else {
        let status = if run.status.success() {
            format!("{} (but it wrote no {out_name})", run.status)
        } else {
            run.status.to_string()
        };
        return Err(CompileError::new(
            nvcc.display().to_string(),
            status,
            command_line,
            log,
            stdout,
            stderr,
            user_source,
            &file,
        )
        .into());
    };
    if output == OutputKind::Ptx && image.last() != Some(&0) {
        image.push(0);
    }
    Ok(RawOutput {
        image,
        lowered_names: Vec::new(),
        log,
        kept,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn search_order() {
        let env = |n: &str| match n {
            "CUDA_PATH" => Some(OsString::from("/opt/cuda")),
            "PATH" => Some(OsString::from("/usr/bin:/opt/cuda/bin")),
            _ => None,
        };
        let c = candidates(None, &env);
        let want: Vec<PathBuf> = [
            "/opt/cuda/bin/nvcc",
            "/usr/bin/nvcc",
            "/usr/local/cuda/bin/nvcc",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(c, want);
        assert_eq!(
            candidates(Some(Path::new("/x/nvcc")), &env),
            [PathBuf::from("/x/nvcc")]
        );
    }

    #[test]
    fn missing_nvcc_says_what_to_install() {
        let e = locate(Some(Path::new("/surely/not/here/nvcc"))).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("/surely/not/here/nvcc"), "{text}");
        assert!(text.contains("CUDA toolkit"), "{text}");
    }

    #[test]
    fn source_file_names() {
        assert_eq!(source_file_name("kernel.cu"), "kernel.cu");
        assert_eq!(source_file_name("/a/b/saxpy.cu"), "saxpy.cu");
        assert_eq!(source_file_name("gen"), "gen.cu");
        assert_eq!(source_file_name(".."), "kernel.cu");
    }
}
