//! `cargo xtask wheel [--test] [--bundle]`: the `rucuda` Python wheel.
//!
//! 1. A virtual environment `<target>/python-venv` gets maturin and NumPy from PyPI
//!    (pip, once; nothing outside `target/` is touched).
//! 2. maturin builds `crates/rucuda-python` (release, the `extension-module` feature its
//!    pyproject.toml turns on) into `<target>/wheels/`.
//! 3. `--test`: the wheel is installed into that environment and the Python tests that
//!    need no GPU (`crates/rucuda-python/tests/`, stdlib unittest) run against it.
//! 4. `--bundle`: the wheel goes into the GPU bundle (`<target>/gpu-bundle/python/`) with
//!    PyCUDA 2026.1's own `test_driver.py`, `test_gpuarray.py` and `test_cumath.py`, taken
//!    from its source package (downloaded with pip into `<target>/pycuda-sdist/`, never
//!    committed), and the bench script `py_bench.py`; `run.sh pycuda-tests` runs the
//!    tests there against the wheel, `run.sh pycuda-bench` the bench cases.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bundle::{self, Workspace};
use crate::util::{run, XResult};

/// What `pip` installs into the build environment: maturin, NumPy, what `pip download`
/// of PyCUDA's source package needs, and NVIDIA's NVRTC wheel (the `rucuda[nvrtc]` extra,
/// at the version `cargo xtask test` uses) for the tests that compile the generated kernels.
const BUILD_REQUIREMENTS: &[&str] = &[
    "maturin>=1.7,<2",
    "numpy",
    "setuptools",
    "wheel",
    crate::test_all::WHEELS[0],
];

/// PyCUDA's release whose tests the bundle carries.
pub const PYCUDA_VERSION: &str = "2026.1";

/// The test files of PyCUDA's source package the bundle carries.
pub const PYCUDA_TEST_FILES: &[&str] = &["test_driver.py", "test_gpuarray.py", "test_cumath.py"];

/// Options of `cargo xtask wheel`.
#[derive(Debug, clap::Args)]
pub struct WheelArgs {
    /// Install the wheel into the build environment and run the Python tests that need
    /// no GPU.
    #[arg(long)]
    pub test: bool,
    /// Put the wheel and PyCUDA's test files into the GPU bundle (target/gpu-bundle).
    #[arg(long)]
    pub bundle: bool,
    /// The Python that creates the build environment.
    #[arg(long, env = "PYTHON", default_value = "python3")]
    pub python: String,
}

/// `<venv>/bin/python`.
fn venv_python(venv: &Path) -> PathBuf {
    venv.join("bin").join("python")
}

/// Creates the environment and installs [`BUILD_REQUIREMENTS`] once (a stamp file).
fn build_env(python: &str, venv: &Path) -> XResult<PathBuf> {
    let py = venv_python(venv);
    let stamp = venv.join(".rucuda-build-env");
    let want = BUILD_REQUIREMENTS.join("\n");
    if py.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == want) {
        return Ok(py);
    }
    eprintln!("xtask wheel: creating {}", venv.display());
    run(Command::new(python).args(["-m", "venv"]).arg(venv))?;
    run(Command::new(&py)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(BUILD_REQUIREMENTS))?;
    std::fs::write(stamp, want)?;
    Ok(py)
}

/// The newest `rucuda-*.whl` in `dir`.
fn newest_wheel(dir: &Path) -> XResult<PathBuf> {
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        if name.starts_with("rucuda-") && name.ends_with(".whl") {
            let t = std::fs::metadata(&path)?.modified()?;
            if best.as_ref().is_none_or(|(bt, _)| t > *bt) {
                best = Some((t, path));
            }
        }
    }
    best.map(|(_, p)| p)
        .ok_or_else(|| format!("no rucuda wheel in {}", dir.display()).into())
}

/// Downloads PyCUDA's source package (once) and copies its test files into `to`.
fn pycuda_tests(py: &Path, target: &Path, to: &Path) -> XResult<()> {
    let sdist_dir = target.join("pycuda-sdist");
    let tarball = sdist_dir.join(format!("pycuda-{PYCUDA_VERSION}.tar.gz"));
    if !tarball.is_file() {
        std::fs::create_dir_all(&sdist_dir)?;
        // --no-build-isolation: otherwise pip builds CMake from source to read metadata.
        run(Command::new(py)
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
            ])
            .args(["--no-build-isolation", "-d"])
            .arg(&sdist_dir)
            .arg(format!("pycuda=={PYCUDA_VERSION}")))?;
    }
    std::fs::create_dir_all(to)?;
    let members: Vec<String> = PYCUDA_TEST_FILES
        .iter()
        .map(|f| format!("pycuda-{PYCUDA_VERSION}/test/{f}"))
        .collect();
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&tarball)
        .arg("-C")
        .arg(to)
        .arg("--strip-components=2")
        .args(&members))
}

/// Pure-Python packages PyCUDA's tests import besides pycuda (`pytools`, with its
/// dependencies), what a PyCUDA build for the control run needs (`mako`, `setuptools`),
/// and NumPy, the one package `run.sh pycuda-fresh` installs beside the wheel.
pub const TEST_EXTRAS: &[&str] = &["pytools", "mako", "setuptools", "numpy"];

/// Downloads [`TEST_EXTRAS`] and their dependencies as wheels for the GPU machine
/// (CPython 3.12, manylinux x86-64) into `to`; `run.sh pycuda-tests` installs them with
/// no network. A failed download is reported, not fatal: the tests that import them fail.
fn test_extras(py: &Path, to: &Path) {
    let result = std::fs::create_dir_all(to)
        .map_err(Into::into)
        .and_then(|()| {
            run(Command::new(py)
                .args([
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .args(["--only-binary", ":all:", "--python-version", "3.12"])
                .args([
                    "--implementation",
                    "cp",
                    "--platform",
                    "manylinux_2_17_x86_64",
                ])
                .args([
                    "--platform",
                    "manylinux2014_x86_64",
                    "--platform",
                    "manylinux_2_28_x86_64",
                    "--platform",
                    "any",
                    "--dest",
                ])
                .arg(to)
                .args(TEST_EXTRAS))
        });
    if let Err(e) = result {
        eprintln!(
            "xtask wheel: could not download {}: {e}",
            TEST_EXTRAS.join(", ")
        );
    }
}

/// Entry point.
pub fn main(args: WheelArgs) -> XResult<()> {
    let ws = Workspace::load()?;
    let venv = ws.target_dir.join("python-venv");
    let py = build_env(&args.python, &venv)?;
    let wheels = ws.target_dir.join("wheels");
    let manifest = ws.root.join("crates/rucuda-python/Cargo.toml");
    run(Command::new(&py)
        .args(["-m", "maturin", "build", "--release", "--manifest-path"])
        .arg(&manifest)
        .arg("--out")
        .arg(&wheels)
        .arg("--interpreter")
        .arg(&py)
        .env("CARGO_TARGET_DIR", &ws.target_dir))?;
    let wheel = newest_wheel(&wheels)?;
    println!("wheel: {}", wheel.display());

    if args.test {
        run(Command::new(&py)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["--force-reinstall", "--no-deps"])
            .arg(&wheel))?;
        run(Command::new(&py)
            .args(["-m", "unittest", "discover", "-v", "-s"])
            .arg(ws.root.join("crates/rucuda-python/tests"))
            // The installed wheel, not the source tree, is what is tested.
            .current_dir(&ws.target_dir))?;
    }

    if args.bundle {
        let dir = ws.bundle_dir().join("python");
        bundle::clear_dir(&dir)?;
        let name = wheel.file_name().ok_or("wheel path has no file name")?;
        std::fs::copy(&wheel, dir.join(name))?;
        pycuda_tests(&py, &ws.target_dir, &dir.join("pycuda-tests"))?;
        // The source package itself, for the control run (`run.sh pycuda-control` builds
        // PyCUDA from it there and runs the same tests).
        let sdist = format!("pycuda-{PYCUDA_VERSION}.tar.gz");
        std::fs::copy(
            ws.target_dir.join("pycuda-sdist").join(&sdist),
            dir.join(&sdist),
        )?;
        test_extras(&py, &dir.join("extra"));
        // rucuda's own GPU tests of the Python face (run after PyCUDA's).
        let face = dir.join("face-tests");
        std::fs::create_dir_all(&face)?;
        for entry in std::fs::read_dir(ws.root.join("crates/rucuda-python/tests_gpu"))? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "py") {
                let name = path.file_name().ok_or("test file without a name")?;
                std::fs::copy(&path, face.join(name))?;
            }
        }
        std::fs::copy(
            ws.root.join("crates/rucuda-python/bench/py_bench.py"),
            dir.join("py_bench.py"),
        )?;
        bundle::finish(&ws)?;
        println!("run it on the GPU machine: bash target/gpu-bundle/run.sh pycuda-tests");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_wheel_is_found() {
        let dir = std::env::temp_dir().join(format!("xtask-wheels-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(newest_wheel(&dir).is_err());
        std::fs::write(
            dir.join("rucuda-0.1.0-cp39-abi3-manylinux_2_34_x86_64.whl"),
            b"",
        )
        .unwrap();
        std::fs::write(dir.join("other-1.0-py3-none-any.whl"), b"").unwrap();
        let w = newest_wheel(&dir).unwrap();
        assert!(w.ends_with("rucuda-0.1.0-cp39-abi3-manylinux_2_34_x86_64.whl"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
