//! Real nvcc compiles with no GPU. nvcc comes from the CUDA toolkit or NVIDIA's wheels
//! (`pip install "nvidia-cuda-nvcc==13.0.*" "nvidia-nvvm==13.0.*"
//! "nvidia-cuda-runtime==13.0.*" "nvidia-cuda-crt==13.0.*"`). Without nvcc each test
//! says so and passes, unless `RUCUDA_REQUIRE_NVCC=1`, where a missing nvcc fails.

mod common;

use common::{is_elf, temp_dir, SAXPY};
use rucuda_jit::{
    compile, Arch, Backend, CacheStatus, CompileOptions, Compiled, Error, OutputKind,
};

fn nvcc_opts(cache: Option<&tempfile::TempDir>) -> CompileOptions {
    CompileOptions::new()
        .backend(Backend::Nvcc)
        .arch(Arch::SM_90)
        .cache_dir(cache.map(|c| c.path().to_path_buf()))
}

/// Compiles, or returns `None` (after saying why) when there is no nvcc and it is not
/// required.
fn try_compile(src: &str, o: &CompileOptions) -> Option<Result<Compiled, Error>> {
    match compile(src, o) {
        Err(Error::NvccNotFound { tried }) => {
            let required = std::env::var_os("RUCUDA_REQUIRE_NVCC").is_some_and(|v| v != "0");
            assert!(
                !required,
                "RUCUDA_REQUIRE_NVCC is set but nvcc was not found (tried {tried:?})"
            );
            eprintln!("nvcc not found: skipping this nvcc test (set RUCUDA_REQUIRE_NVCC=1 to fail instead)");
            None
        }
        other => Some(other),
    }
}

#[test]
fn nvcc_cubin_ptx_fatbin_and_lto() {
    let dir = temp_dir("nvcc-out");
    let Some(cubin) = try_compile(SAXPY, &nvcc_opts(Some(&dir))) else {
        return;
    };
    let cubin = cubin.unwrap();
    assert!(is_elf(&cubin.image));
    assert!(matches!(cubin.cache, CacheStatus::Stored(_)));
    let again = compile(SAXPY, &nvcc_opts(Some(&dir))).unwrap();
    assert!(again.cache.is_hit());
    assert_eq!(again.image, cubin.image);

    let ptx = compile(SAXPY, &nvcc_opts(None).output(OutputKind::Ptx)).unwrap();
    assert_eq!(ptx.image.last(), Some(&0));
    let text = String::from_utf8_lossy(&ptx.image);
    assert!(text.contains(".entry saxpy("), "{text}");

    let fat = nvcc_opts(None)
        .output(OutputKind::Fatbin)
        .code("sm_90,compute_90");
    let fat = compile(SAXPY, &fat).unwrap();
    assert!(fat.image.len() > cubin.image.len() / 2);

    let lto = compile(SAXPY, &nvcc_opts(None).output(OutputKind::LtoIr)).unwrap();
    assert!(!lto.image.is_empty());
}

#[test]
fn nvcc_and_nvrtc_keys_differ() {
    let dir = temp_dir("nvcc-keys");
    let Some(n) = try_compile(SAXPY, &nvcc_opts(Some(&dir))) else {
        return;
    };
    let r = compile(SAXPY, &nvcc_opts(Some(&dir)).backend(Backend::Nvrtc)).unwrap();
    assert_ne!(n.unwrap().key, r.key);
}

#[test]
fn nvcc_syntax_error_shows_its_line() {
    let src = "__global__ void k(float *x)\n{\n  x[0] = y;\n}\n";
    let Some(result) = try_compile(src, &nvcc_opts(None)) else {
        return;
    };
    let err = result.unwrap_err();
    let ce = err.as_compile_error().expect("a CompileError");
    assert_eq!(ce.line, Some(3));
    assert!(ce.status.contains("exit status"), "{}", ce.status);
    assert!(ce.command[0].ends_with("nvcc"), "{:?}", ce.command);
    assert!(
        ce.command.iter().any(|a| a == "-arch=sm_90"),
        "{:?}",
        ce.command
    );
    let shown = err.to_string();
    assert!(
        shown.contains("kernel.cu(3): error: identifier \"y\" is undefined"),
        "{shown}"
    );
    assert!(shown.contains(">    3 |   x[0] = y;"), "{shown}");
}

#[test]
fn nvcc_unknown_option_is_reported() {
    let o = nvcc_opts(None).option("--no-such-option");
    let Some(result) = try_compile(SAXPY, &o) else {
        return;
    };
    let err = result.unwrap_err();
    let ce = err.as_compile_error().expect("a CompileError");
    assert!(ce.stderr.contains("--no-such-option"), "{}", ce.stderr);
    assert!(err.to_string().contains("Unknown option"), "{err}");
}

#[test]
fn nvcc_keep_and_include_dirs() {
    let inc = temp_dir("nvcc-inc");
    std::fs::write(inc.path().join("v.h"), "#define V 5\n").unwrap();
    let o = nvcc_opts(None).include_dir(inc.path()).keep(true);
    let Some(result) = try_compile(
        "#include \"v.h\"\n__global__ void k(int *x) { x[0] = V; }\n",
        &o,
    ) else {
        return;
    };
    let c = result.unwrap();
    let kept = c.kept.expect("kept folder");
    assert!(kept.join("kernel.cu").is_file());
    assert!(kept.join("kernel.cubin").is_file());
    std::fs::remove_dir_all(kept).unwrap();
}

#[test]
fn name_expressions_need_nvrtc() {
    let o = nvcc_opts(None).name_expression("f<int>");
    let err = compile("", &o).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
}

#[test]
fn nvcc_version_and_preprocessing() {
    let version = match rucuda_jit::get_nvcc_version(None) {
        Err(Error::NvccNotFound { tried }) => {
            let required = std::env::var_os("RUCUDA_REQUIRE_NVCC").is_some_and(|v| v != "0");
            assert!(
                !required,
                "RUCUDA_REQUIRE_NVCC is set but nvcc was not found (tried {tried:?})"
            );
            eprintln!("nvcc not found: skipping this nvcc test");
            return;
        }
        other => other.unwrap(),
    };
    assert!(version.contains("Cuda compilation tools"), "{version}");
    let src =
        "#define N 4\n#include <stdio.h>\n__global__ void k(float *x) { x[0] = N + EXTRA; }\n";
    let text = rucuda_jit::preprocess_source(src, &["-DEXTRA=3"], None).unwrap();
    assert!(text.contains("x[0] = 4 + 3;"), "the macros are expanded");
    assert!(!text.contains("#define N"), "directives are gone");
    assert!(
        !text.lines().any(|l| l.starts_with("# ")),
        "no line markers (-P)"
    );
    assert!(text.contains("printf"), "<stdio.h> is included");
    let e = rucuda_jit::preprocess_source("#include \"no_such_header_rucuda.h\"\n", &[], None)
        .unwrap_err();
    let ce = e.as_compile_error().expect("a compile error");
    assert!(
        ce.stderr.contains("no_such_header_rucuda.h"),
        "{}",
        ce.stderr
    );
    assert!(
        ce.command.iter().any(|a| a == "--preprocess"),
        "{:?}",
        ce.command
    );
}
