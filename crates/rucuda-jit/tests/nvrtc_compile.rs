//! Real NVRTC compiles with no GPU: outputs, errors, options, name expressions,
//! includes and the cache. Needs NVRTC (`pip install nvidia-cuda-nvrtc==13.0.*`).

mod common;

use common::{is_elf, temp_dir, SAXPY};
use rucuda_jit::{compile, Arch, CacheStatus, CompileOptions, Error, OutputKind};

fn opts(cache: &tempfile::TempDir) -> CompileOptions {
    CompileOptions::new()
        .arch(Arch::SM_90)
        .cache_dir(Some(cache.path().to_path_buf()))
}

#[test]
fn cubins_for_every_supported_generation() {
    rucuda_testkit::nvrtc_or_skip!();
    let nvrtc = rucuda_jit::nvrtc::Nvrtc::get().expect("NVRTC");
    let supported = nvrtc.supported_archs().unwrap();
    assert!(supported.contains(&90), "{supported:?}");
    for arch in [Arch::SM_75, Arch::SM_80, Arch::SM_90, Arch::SM_120] {
        let o = CompileOptions::new().arch(arch).cache_dir(None);
        let c = compile(SAXPY, &o).unwrap();
        assert!(is_elf(&c.image), "{arch}");
        assert_eq!(c.output, OutputKind::Cubin);
        assert_eq!(c.arch, arch);
        assert_eq!(c.cache, CacheStatus::Off);
    }
}

#[test]
fn ptx_is_nul_terminated_text_for_the_virtual_arch() {
    rucuda_testkit::nvrtc_or_skip!();
    let dir = temp_dir("ptx");
    let c = compile(SAXPY, &opts(&dir).output(OutputKind::Ptx)).unwrap();
    assert_eq!(c.image.last(), Some(&0));
    let text = std::str::from_utf8(&c.image[..c.image.len() - 1]).unwrap();
    assert!(text.contains(".target sm_90"), "{text}");
    // extern "C" by default: the plain name.
    assert!(text.contains(".entry saxpy("), "{text}");
}

#[test]
fn lto_ir_is_produced() {
    rucuda_testkit::nvrtc_or_skip!();
    let dir = temp_dir("lto");
    let c = compile(SAXPY, &opts(&dir).output(OutputKind::LtoIr)).unwrap();
    assert!(!c.image.is_empty());
    assert!(!is_elf(&c.image));
    assert!(c.cache.path().is_some());
}

#[test]
fn syntax_error_shows_the_compiler_line_and_the_source() {
    rucuda_testkit::nvrtc_or_skip!();
    let src = "__global__ void k(float *x)\n{\n  x[0] = y;\n}\n";
    let err = compile(
        src,
        &CompileOptions::new().arch(Arch::SM_90).cache_dir(None),
    )
    .unwrap_err();
    let ce = err.as_compile_error().expect("a CompileError");
    assert_eq!(ce.status, "NVRTC_ERROR_COMPILATION");
    assert_eq!(
        ce.line,
        Some(3),
        "the #line directive keeps the user's numbering"
    );
    let first = ce.first_error.as_deref().unwrap();
    assert!(first.starts_with("kernel.cu(3): error"), "{first}");
    assert!(first.contains("\"y\""), "{first}");
    assert_eq!(ce.command[0], "--gpu-architecture=sm_90");
    let shown = err.to_string();
    assert!(
        shown.contains("kernel.cu(3): error: identifier \"y\" is undefined"),
        "{shown}"
    );
    assert!(shown.contains(">    3 |   x[0] = y;"), "{shown}");
    assert!(
        !shown.contains("extern"),
        "the wrapper is not shown: {shown}"
    );
}

#[test]
fn syntax_error_without_extern_c_wrapping() {
    rucuda_testkit::nvrtc_or_skip!();
    let src = "// line 1\n__global__ void k() { int z = ; }\n";
    let o = CompileOptions::new()
        .arch(Arch::SM_90)
        .cache_dir(None)
        .no_extern_c(true);
    let err = compile(src, &o).unwrap_err();
    let ce = err.as_compile_error().unwrap();
    assert_eq!(ce.line, Some(2));
}

#[test]
fn unknown_options_are_reported() {
    rucuda_testkit::nvrtc_or_skip!();
    let o = CompileOptions::new()
        .arch(Arch::SM_90)
        .cache_dir(None)
        .option("--no-such-option");
    let err = compile(SAXPY, &o).unwrap_err();
    let ce = err.as_compile_error().expect("NVRTC rejects it");
    assert_eq!(ce.status, "NVRTC_ERROR_INVALID_OPTION");
    assert!(ce.log.contains("--no-such-option"), "{}", ce.log);
    assert!(err.to_string().contains("--no-such-option"));
    // Options a typed field sets are refused before NVRTC runs.
    let err = compile(
        SAXPY,
        &CompileOptions::new()
            .arch(Arch::SM_90)
            .option("-arch=sm_80"),
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidOption { .. }), "{err}");
}

#[test]
fn an_arch_nvrtc_does_not_support_is_reported() {
    rucuda_testkit::nvrtc_or_skip!();
    let o = CompileOptions::new().arch(Arch::new(3, 5)).cache_dir(None);
    let err = compile(SAXPY, &o).unwrap_err();
    let ce = err.as_compile_error().expect("a CompileError");
    assert!(ce.to_string().contains("sm_35"), "{ce}");
}

#[test]
fn templated_kernels_get_their_lowered_names() {
    rucuda_testkit::nvrtc_or_skip!();
    let dir = temp_dir("names");
    let src = r#"
template <typename T, int N>
__global__ void scale(T *x, T a) { for (int i = 0; i < N; ++i) x[threadIdx.x * N + i] *= a; }
"#;
    let o = opts(&dir)
        .no_extern_c(true)
        .name_expression("scale<float, 4>")
        .name_expression("scale<double, 2>");
    let c = compile(src, &o).unwrap();
    assert_eq!(
        c.lowered_name("scale<float, 4>"),
        Some("_Z5scaleIfLi4EEvPT_S0_")
    );
    assert_eq!(
        c.lowered_name("scale<double, 2>"),
        Some("_Z5scaleIdLi2EEvPT_S0_")
    );
    assert_eq!(c.lowered_name("scale<int, 1>"), None);
    // The names come back from the cache too.
    let again = compile(src, &o).unwrap();
    assert!(again.cache.is_hit());
    assert_eq!(again.lowered_names, c.lowered_names);
    // A name expression that is not in the source is an error.
    let bad = opts(&dir).no_extern_c(true).name_expression("nope<int>");
    let err = compile(src, &bad).unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
}

#[test]
fn defines_and_include_dirs_and_header_edits() {
    rucuda_testkit::nvrtc_or_skip!();
    let cache = temp_dir("inc-cache");
    let inc = temp_dir("inc");
    std::fs::create_dir_all(inc.path().join("nested")).unwrap();
    std::fs::write(inc.path().join("params.h"), "#include \"nested/value.h\"\n").unwrap();
    std::fs::write(inc.path().join("nested/value.h"), "#define VALUE 3.0f\n").unwrap();
    let src = "#include <params.h>\n__global__ void k(float *x) { x[0] = VALUE * SCALE; }\n";
    let o = opts(&cache).include_dir(inc.path()).define("SCALE", "2.0f");
    let first = compile(src, &o).unwrap();
    assert!(
        matches!(first.cache, CacheStatus::Stored(_)),
        "{:?}",
        first.cache
    );
    let second = compile(src, &o).unwrap();
    assert_eq!(
        second.cache,
        CacheStatus::Hit(first.cache.path().unwrap().to_path_buf())
    );
    assert_eq!(second.image, first.image);
    // Editing the nested header changes the key: compiled and stored again.
    std::fs::write(
        inc.path().join("nested/value.h"),
        "#define VALUE 4.0f // new\n",
    )
    .unwrap();
    let third = compile(src, &o).unwrap();
    assert!(
        matches!(third.cache, CacheStatus::Stored(_)),
        "{:?}",
        third.cache
    );
    assert_ne!(third.key, first.key);
    // A different define is another key too.
    let fourth = compile(src, &o.clone().define("EXTRA", "1")).unwrap();
    assert_ne!(fourth.key, third.key);
    // A missing header is the compiler's error, with its line.
    let err = compile("#include \"absent.h\"\n", &opts(&cache)).unwrap_err();
    assert!(err.to_string().contains("absent.h"), "{err}");
}

#[test]
fn warnings_are_kept_in_the_log_and_the_cache() {
    rucuda_testkit::nvrtc_or_skip!();
    let dir = temp_dir("warn");
    let src = "__global__ void k(int *x) { int unused; x[0] = 1; }";
    let c = compile(src, &opts(&dir)).unwrap();
    assert!(c.log.contains("warning"), "{}", c.log);
    let again = compile(src, &opts(&dir)).unwrap();
    assert!(again.cache.is_hit());
    assert_eq!(again.log, c.log);
}

#[test]
fn keep_leaves_the_files_and_skips_the_cache() {
    rucuda_testkit::nvrtc_or_skip!();
    let dir = temp_dir("keep");
    let c = compile(SAXPY, &opts(&dir).keep(true)).unwrap();
    assert_eq!(c.cache, CacheStatus::Off);
    let kept = c.kept.expect("a kept folder");
    for f in ["kernel.cu", "options.txt", "log.txt", "kernel.cubin"] {
        assert!(kept.join(f).is_file(), "{f} in {}", kept.display());
    }
    assert_eq!(std::fs::read(kept.join("kernel.cubin")).unwrap(), c.image);
    std::fs::remove_dir_all(kept).unwrap();
}

#[test]
fn options_change_the_key_and_the_code() {
    rucuda_testkit::nvrtc_or_skip!();
    let dir = temp_dir("opts");
    let plain = compile(SAXPY, &opts(&dir)).unwrap();
    let fast = compile(SAXPY, &opts(&dir).fast_math(true).line_info(true)).unwrap();
    assert_ne!(plain.key, fast.key);
    let rdc = compile(SAXPY, &opts(&dir).relocatable(true)).unwrap();
    assert_ne!(plain.key, rdc.key);
    let other_arch = compile(SAXPY, &opts(&dir).arch(Arch::SM_80)).unwrap();
    assert_ne!(plain.key, other_arch.key);
    assert_ne!(plain.image, other_arch.image);
    assert_eq!(
        rucuda_jit::cache::DiskCache::new(dir.path(), u64::MAX)
            .stats()
            .unwrap()
            .entries,
        4
    );
}

#[test]
fn a_nul_in_the_source_is_an_input_error() {
    rucuda_testkit::nvrtc_or_skip!();
    let err = compile(
        "__global__ void k() {}\0",
        &CompileOptions::new().arch(Arch::SM_90).cache_dir(None),
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
}

#[test]
fn dynamic_parallelism_compiles_as_relocatable_code() {
    rucuda_testkit::nvrtc_or_skip!();
    let src = r#"
__global__ void child(float *x, int offset) { x[offset + threadIdx.x] *= 2.0f; }
__global__ void parent(float *x, int n, int per_child)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c * per_child < n) child<<<1, per_child>>>(x, c * per_child);
}
"#;
    let o = CompileOptions::new().arch(Arch::SM_90).cache_dir(None);
    // Without -rdc NVRTC refuses the device-side launch, naming the line.
    let err = compile(src, &o).unwrap_err();
    assert_eq!(
        err.as_compile_error().and_then(|c| c.line),
        Some(6),
        "{err}"
    );
    let c = compile(src, &o.relocatable(true)).unwrap();
    assert!(is_elf(&c.image));
}

#[test]
fn toolkit_headers_resolve_for_nvrtc() {
    rucuda_testkit::nvrtc_or_skip!();
    let nvrtc = rucuda_jit::nvrtc::Nvrtc::get().expect("NVRTC");
    let Some(dir) = nvrtc.toolkit_include_dir() else {
        println!("no CUDA headers beside NVRTC or in CUDA_PATH (pip install nvidia-cuda-runtime==13.0.*): skipped");
        return;
    };
    let cache = temp_dir("fp16");
    let src = "#include <cuda_fp16.h>\n__global__ void h(__half *x) { x[threadIdx.x] = __float2half(1.5f); }\n";
    let o = opts(&cache).no_extern_c(true);
    let c = compile(src, &o).unwrap();
    assert!(is_elf(&c.image));
    let include = format!("--include-path={}", dir.display());
    // Without the toolkit folder NVRTC cannot find the header (and nvcc, which would
    // find it, is not asked).
    let err = compile(src, &o.clone().toolkit_include(false).nvcc_fallback(false)).unwrap_err();
    let ce = err.as_compile_error().unwrap();
    assert!(ce.log.contains("cuda_fp16.h"), "{}", ce.log);
    assert!(!ce.command.contains(&include));
    // A hit the second time: the header scan covers the toolkit headers, quickly.
    assert!(compile(src, &o).unwrap().cache.is_hit());
}
