//! The C and C++ standard headers rucuda serves to NVRTC: each compiles alone and with
//! every other, inside and outside the `extern "C"` wrapping; a user's own header of
//! the same name wins; their text is in the cache key; a header NVRTC cannot open goes
//! to nvcc where it is installed and is a clear error where it is not. No GPU needed;
//! needs NVRTC (`cargo xtask test` installs it).

mod common;

use common::temp_dir;
use rucuda_jit::{compile, std_headers, Arch, Backend, CacheStatus, CompileOptions, OutputKind};

const EVERY_HEADER: &str = include_str!("kernels/std_headers.cu");

fn opts() -> CompileOptions {
    CompileOptions::new().arch(Arch::SM_90).cache_dir(None)
}

/// The PTX of `source`, as text.
fn ptx(source: &str, options: &CompileOptions) -> String {
    let c = compile(source, &options.clone().output(OutputKind::Ptx))
        .unwrap_or_else(|e| panic!("does not compile: {e}\n--- source ---\n{source}"));
    String::from_utf8_lossy(&c.image).into_owned()
}

#[test]
fn each_header_compiles_alone_wrapped_or_not() {
    rucuda_testkit::nvrtc_or_skip!();
    for name in std_headers::NAMES {
        let src = format!("#include <{name}>\n__global__ void k(int *x) {{ x[0] = 1; }}\n");
        for no_extern_c in [false, true] {
            let c = compile(&src, &opts().no_extern_c(no_extern_c))
                .unwrap_or_else(|e| panic!("<{name}> (no_extern_c {no_extern_c}): {e}"));
            assert!(c.std_headers.contains(name), "{name}: {:?}", c.std_headers);
            assert_eq!(c.compiler, Backend::Nvrtc);
        }
    }
}

#[test]
fn a_kernel_using_every_header_compiles() {
    rucuda_testkit::nvrtc_or_skip!();
    for std in [
        None,
        Some("c++11"),
        Some("c++14"),
        Some("c++17"),
        Some("c++20"),
    ] {
        let mut o = opts();
        if let Some(s) = std {
            o = o.std(s);
        }
        let c = compile(EVERY_HEADER, &o).unwrap_or_else(|e| panic!("{std:?}: {e}"));
        for name in std_headers::NAMES {
            assert!(c.std_headers.contains(name), "{name} not served");
        }
        assert!(c.log.is_empty() || !c.log.contains("error"), "{}", c.log);
    }
    let text = ptx(EVERY_HEADER, &opts());
    assert!(
        text.contains(".entry use_every_header("),
        "extern \"C\" name kept"
    );
    assert!(
        text.contains("vprintf"),
        "printf reaches the device's vprintf"
    );
    assert!(
        text.contains("__assertfail"),
        "assert calls the device assert"
    );
}

#[test]
fn each_name_means_what_the_c_library_says() {
    rucuda_testkit::nvrtc_or_skip!();
    // Compile-time checks of the values, with static_assert (constant expressions).
    let src = r#"
#include <climits>
#include <cfloat>
#include <cstdint>
#include <cstddef>
#include <cmath>
static_assert(CHAR_BIT == 8, "CHAR_BIT");
static_assert(INT_MAX == 2147483647 && INT_MIN == -INT_MAX - 1, "INT");
static_assert(UINT_MAX == 0xffffffffu, "UINT_MAX");
static_assert(LLONG_MAX == 0x7fffffffffffffffLL, "LLONG_MAX");
static_assert(ULLONG_MAX == 0xffffffffffffffffULL, "ULLONG_MAX");
static_assert(SHRT_MAX == 32767 && USHRT_MAX == 65535, "SHRT");
static_assert(LONG_MAX == (sizeof(long) == 8 ? LLONG_MAX : INT_MAX), "LONG_MAX");
static_assert(CHAR_MIN == ((char) -1 < 0 ? SCHAR_MIN : 0), "CHAR_MIN");
static_assert(sizeof(int8_t) == 1 && sizeof(int16_t) == 2 && sizeof(int32_t) == 4
              && sizeof(int64_t) == 8, "intN_t");
static_assert(sizeof(uint8_t) == 1 && sizeof(uint16_t) == 2 && sizeof(uint32_t) == 4
              && sizeof(uint64_t) == 8, "uintN_t");
static_assert((int8_t) -1 < 0 && (uint8_t) -1 > 0, "signedness");
static_assert(sizeof(intptr_t) == sizeof(void *) && sizeof(uintptr_t) == sizeof(void *), "intptr_t");
static_assert(INT32_MAX == INT_MAX && UINT16_MAX == 65535 && INT64_MIN < 0, "limits");
static_assert(SIZE_MAX == (size_t) -1, "SIZE_MAX");
static_assert(UINT64_C(1) << 63 != 0 && INT64_C(-1) < 0, "constant macros");
static_assert(sizeof(std::size_t) == sizeof(void *) && sizeof(std::nullptr_t) == sizeof(void *), "cstddef");
static_assert(FLT_MANT_DIG == 24 && DBL_MANT_DIG == 53 && FLT_RADIX == 2, "mantissas");
static_assert(FLT_MAX > 3.4e38f && FLT_MAX / 2 < 1.71e38f, "FLT_MAX");
static_assert(DBL_MAX > 1.79e308 && DBL_MAX / 2 < 0.9e308, "DBL_MAX");
static_assert(1.0f + FLT_EPSILON > 1.0f && 1.0f + FLT_EPSILON / 2 == 1.0f, "FLT_EPSILON");
static_assert(1.0 + DBL_EPSILON > 1.0 && 1.0 + DBL_EPSILON / 2 == 1.0, "DBL_EPSILON");
static_assert(FLT_MIN > 0.0f && FLT_MIN / 2 > 0.0f && FLT_TRUE_MIN > 0.0f, "FLT_MIN");
static_assert(FLT_TRUE_MIN < FLT_MIN / 4194304 && DBL_TRUE_MIN > 0.0, "TRUE_MIN");
static_assert(M_PI > 3.14159 && M_PI < 3.1416 && M_SQRT2 * M_SQRT2 > 1.9999, "M_ constants");
static_assert(HUGE_VALF > FLT_MAX && HUGE_VAL > DBL_MAX && INFINITY > FLT_MAX, "infinities");
static_assert(NAN != NAN, "NAN");
__global__ void k() {}
"#;
    compile(src, &opts().no_extern_c(true)).unwrap_or_else(|e| panic!("{e}"));
    compile(src, &opts()).unwrap_or_else(|e| panic!("wrapped: {e}"));
}

#[test]
fn std_functions_from_cmath_have_float_and_double_overloads() {
    rucuda_testkit::nvrtc_or_skip!();
    let src = r#"
#include <cmath>
template <typename A, typename B> struct same { static const bool value = false; };
template <typename A> struct same<A, A> { static const bool value = true; };
__global__ void k(float *f, double *d)
{
    static_assert(same<decltype(std::sqrt(1.0f)), float>::value, "sqrt(float)");
    static_assert(same<decltype(std::sqrt(1.0)), double>::value, "sqrt(double)");
    static_assert(same<decltype(std::abs(1.0f)), float>::value, "abs(float)");
    f[0] = std::exp(f[1]) + std::floor(f[2]) + std::fmax(f[3], f[4]) + std::atan2(f[5], f[6]);
    d[0] = std::exp(d[1]) + std::floor(d[2]) + std::fmax(d[3], d[4]) + std::pow(d[5], 2.0);
    f[7] = std::isnan(f[8]) + std::signbit(d[9]) + std::isfinite(f[10]);
}
"#;
    let text = ptx(src, &opts().no_extern_c(true));
    assert!(
        text.contains("sqrt.rn.f32") || text.contains("ex2.approx"),
        "{text}"
    );
}

#[test]
fn ndebug_turns_assert_off() {
    rucuda_testkit::nvrtc_or_skip!();
    let src = "#include <assert.h>\n__global__ void k(int *x) { assert(x[0] == 1); }\n";
    assert!(ptx(src, &opts()).contains("__assertfail"));
    let off = ptx(src, &opts().define_flag("NDEBUG"));
    assert!(!off.contains("__assertfail"), "{off}");
}

#[test]
fn a_users_header_of_the_same_name_wins() {
    rucuda_testkit::nvrtc_or_skip!();
    let dir = temp_dir("std-shadow");
    std::fs::write(
        dir.path().join("stdint.h"),
        "#pragma once\ntypedef int users_own_int;\n",
    )
    .unwrap();
    let src = "#include <stdint.h>\n__global__ void k(users_own_int *x) { x[0] = 1; }\n";
    let c = compile(src, &opts().include_dir(dir.path())).unwrap_or_else(|e| panic!("{e}"));
    assert!(c.std_headers.is_empty(), "{:?}", c.std_headers);
    // Without the folder, rucuda's <stdint.h> has no users_own_int.
    let e = compile(src, &opts().nvcc_fallback(false)).unwrap_err();
    assert!(e.to_string().contains("users_own_int"), "{e}");
    // <climits> is rucuda's, and its #include <limits.h> finds the user's.
    std::fs::write(dir.path().join("limits.h"), "#define USERS_OWN_LIMIT 7\n").unwrap();
    let both = "#include <climits>\n__global__ void k(int *x) { x[0] = USERS_OWN_LIMIT; }\n";
    let c = compile(both, &opts().include_dir(dir.path())).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.std_headers, ["climits"]);
}

#[test]
fn the_headers_are_in_the_cache_key() {
    rucuda_testkit::nvrtc_or_skip!();
    let cache = temp_dir("std-cache");
    let o = opts().cache_dir(Some(cache.path().to_path_buf()));
    let src = "#include <cstdio>\n__global__ void k() { printf(\"hi\\n\"); }\n";
    let first = compile(src, &o).unwrap();
    assert!(matches!(first.cache, CacheStatus::Stored(_)));
    let again = compile(src, &o).unwrap();
    assert!(again.cache.is_hit());
    assert_eq!(again.std_headers, first.std_headers);
    assert_eq!(again.compiler, Backend::Nvrtc);
    assert_eq!(again.image, first.image);
    // Without the built-in headers the same source is another key (and fails).
    let e = compile(src, &o.clone().std_headers(false).nvcc_fallback(false)).unwrap_err();
    let ce = e.as_compile_error().expect("a compile error");
    assert!(ce.log.contains("open source file \"cstdio\""), "{}", ce.log);
}

#[test]
fn without_the_built_in_headers_the_error_says_what_to_do() {
    rucuda_testkit::nvrtc_or_skip!();
    let src = "#include <stdio.h>\n__global__ void k() { }\n";
    let e = compile(src, &opts().std_headers(false).nvcc_fallback(false)).unwrap_err();
    let ce = e.as_compile_error().expect("a compile error");
    assert_eq!(ce.status, "NVRTC_ERROR_COMPILATION");
    assert_eq!(ce.notes.len(), 1, "{:?}", ce.notes);
    let shown = e.to_string();
    assert!(
        shown.contains("note: NVRTC cannot open \"stdio.h\""),
        "{shown}"
    );
    assert!(shown.contains("nvcc_fallback"), "{shown}");
}

/// Whether nvcc can be run here.
fn nvcc_present() -> bool {
    rucuda_jit::get_nvcc_version(None).is_ok()
}

#[test]
fn a_host_header_goes_to_nvcc_or_says_nvcc_is_missing() {
    rucuda_testkit::nvrtc_or_skip!();
    let cache = temp_dir("std-fallback");
    let o = opts().cache_dir(Some(cache.path().to_path_buf()));
    // <type_traits> is a C++ host header that NVRTC does not have and rucuda does not serve.
    let src = "#include <type_traits>\n#include <cstdio>\n\
               __global__ void k(float *x) { static_assert(std::is_same<float, float>::value, \"\"); \
               printf(\"%f\\n\", x[0]); }\n";
    match compile(src, &o) {
        Ok(c) => {
            assert!(nvcc_present(), "only nvcc can compile this");
            assert_eq!(c.compiler, Backend::Nvcc);
            assert!(c.std_headers.is_empty(), "nvcc uses its own headers");
            assert!(common::is_elf(&c.image));
            // The nvcc entry is nvcc's key: the same as asking for nvcc directly.
            let direct = compile(src, &o.clone().backend(Backend::Nvcc)).unwrap();
            assert_eq!(direct.key, c.key);
            assert!(direct.cache.is_hit());
            // Asked again (the process remembers it needs nvcc): a hit of the same key.
            let again = compile(src, &o).unwrap();
            assert_eq!(again.compiler, Backend::Nvcc);
            assert_eq!(again.key, c.key);
            assert!(again.cache.is_hit());
        }
        Err(e) => {
            assert!(!nvcc_present(), "nvcc is here but did not compile it: {e}");
            let ce = e.as_compile_error().expect("NVRTC's compile error");
            assert!(ce.compiler.starts_with("NVRTC"), "{}", ce.compiler);
            let shown = e.to_string();
            assert!(
                shown.contains("NVRTC cannot open \"type_traits\""),
                "{shown}"
            );
            assert!(shown.contains("nvcc was not found"), "{shown}");
        }
    }
    // Name expressions keep NVRTC: no fallback, and the note says why.
    let named =
        "#include <type_traits>\ntemplate <typename T> __global__ void t(T *x) { x[0] = 1; }\n";
    let e = compile(named, &opts().no_extern_c(true).name_expression("t<float>")).unwrap_err();
    assert!(e.to_string().contains("name expressions need NVRTC"), "{e}");
}

#[test]
fn a_missing_header_of_ones_own_fails_in_both_compilers() {
    rucuda_testkit::nvrtc_or_skip!();
    let src = "#include \"no_such_header_rucuda.h\"\n__global__ void k() {}\n";
    let e = compile(src, &opts()).unwrap_err();
    let shown = e.to_string();
    assert!(shown.contains("no_such_header_rucuda.h"), "{shown}");
    let ce = e.as_compile_error().expect("a compile error");
    if nvcc_present() {
        assert!(!ce.compiler.starts_with("NVRTC"), "nvcc tried: {shown}");
        assert!(
            shown.contains("compiled with nvcc because NVRTC cannot open"),
            "{shown}"
        );
    } else {
        assert!(shown.contains("nvcc was not found"), "{shown}");
    }
}

#[test]
fn libcu_headers_and_ours_compile_together_quietly() {
    rucuda_testkit::nvrtc_or_skip!();
    let nvrtc_only = opts().nvcc_fallback(false).no_extern_c(true);
    let probe = "#include <cuda/std/cstdint>\n__global__ void k() {}\n";
    if compile(probe, &nvrtc_only).is_err() {
        eprintln!("no libcu++ headers (cuda/std) beside this NVRTC: nothing to check");
        return;
    }
    let src = r#"
#include <cuda/std/cstdint>
#include <cuda/std/climits>
#include <cstdint>
#include <climits>
#include <cmath>
#include <cfloat>
__global__ void k(float *x)
{
    uint32_t a = UINT32_MAX;
    cuda::std::uint32_t b = a;
    x[0] = std::sqrt(x[1]) + (float) INT_MAX + (float) b + FLT_MAX;
}
"#;
    let c = compile(src, &nvrtc_only).unwrap_or_else(|e| panic!("{e}"));
    assert!(!c.log.contains("redefinition"), "{}", c.log);
}

#[test]
fn a_users_file_beside_a_quoted_include_is_never_hidden() {
    rucuda_testkit::nvrtc_or_skip!();
    // base/sub/a.h includes "stdint.h", which is base/sub/stdint.h (the user's), while
    // the source's own <stdint.h> is found in no folder. NVRTC would give a served
    // stdint.h to both includes, hiding the user's file: rucuda serves none, so NVRTC
    // cannot open <stdint.h> (and nvcc, which can do both, compiles it where installed).
    let base = temp_dir("std-beside");
    let sub = base.path().join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("a.h"), "#include \"stdint.h\"\n").unwrap();
    std::fs::write(sub.join("stdint.h"), "#define USERS_BESIDE 5\n").unwrap();
    let src = "#include <stdint.h>\n#include \"sub/a.h\"\n\
               __global__ void k(int *x) { x[0] = USERS_BESIDE; }\n";
    let e = compile(src, &opts().include_dir(base.path()).nvcc_fallback(false)).unwrap_err();
    let ce = e.as_compile_error().expect("NVRTC's compile error");
    assert!(
        ce.log.contains("open source file \"stdint.h\""),
        "{}",
        ce.log
    );
    // Without the source's own <stdint.h>, the user's file is found as usual.
    let alone = "#include \"sub/a.h\"\n__global__ void k(int *x) { x[0] = USERS_BESIDE; }\n";
    let c = compile(alone, &opts().include_dir(base.path())).unwrap_or_else(|e| panic!("{e}"));
    assert!(c.std_headers.is_empty());
    assert_eq!(c.compiler, Backend::Nvrtc);
}
