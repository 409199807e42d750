//! With `RUCUDA_NVRTC` naming a file that is not there, NVRTC is not found, nothing
//! else is tried, and the error says what to install. (One test: it sets the variable
//! for this whole process before NVRTC is first opened.)

use rucuda_jit::nvrtc::{Nvrtc, NvrtcLoadError, NVRTC_ENV};
use rucuda_jit::{compile, Arch, CompileOptions, Error};

#[test]
fn missing_nvrtc_is_an_error_that_says_what_to_install() {
    std::env::set_var(NVRTC_ENV, "/surely/not/here/libnvrtc.so.13");
    let err = Nvrtc::get().unwrap_err();
    let NvrtcLoadError::NotFound(not_found) = &err else {
        panic!("{err}");
    };
    let tried = &not_found.tried;
    assert_eq!(tried.len(), 1, "only the named file is tried: {tried:?}");
    let text = err.to_string();
    assert!(text.contains("/surely/not/here/libnvrtc.so.13"), "{text}");
    assert!(
        text.contains("pip install nvidia-cuda-nvrtc==13.0.*"),
        "{text}"
    );
    assert!(text.contains("CUDA toolkit"), "{text}");
    // compile() passes it on as a typed error.
    let err = compile(
        "__global__ void k() {}",
        &CompileOptions::new().arch(Arch::SM_90),
    )
    .unwrap_err();
    assert!(matches!(err, Error::NvrtcNotFound(_)), "{err}");
    assert!(!Nvrtc::is_present());
}
