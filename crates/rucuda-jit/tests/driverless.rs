//! What SourceModule, libcudadevrt discovery and the default architecture do on a machine where no
//! CUDA context can be had (CI has no driver): typed errors, no panics.

use rucuda_jit::{compile, find_cudadevrt, CompileOptions, Error, SourceModule};

#[test]
fn source_module_without_a_context_is_an_error() {
    let err = SourceModule::new("__global__ void k() {}", &CompileOptions::new()).unwrap_err();
    // No driver (CI): the driver's error; a driver but no current context: NoContext.
    assert!(matches!(err, Error::Driver(_) | Error::NoContext), "{err}");
}

#[test]
fn compile_without_an_arch_or_a_context_says_what_to_do() {
    let err = compile("__global__ void k() {}", &CompileOptions::new()).unwrap_err();
    assert!(matches!(err, Error::NoArch), "{err}");
    assert!(err.to_string().contains("CompileOptions::arch"), "{err}");
}

#[test]
fn cudadevrt_is_found_or_the_error_says_what_to_install() {
    match find_cudadevrt() {
        Ok(path) => {
            assert!(path.is_file());
            assert_eq!(path.file_name().unwrap(), "libcudadevrt.a");
            println!("libcudadevrt.a: {}", path.display());
        }
        Err(err) => {
            let text = err.to_string();
            assert!(text.contains("nvidia-cuda-runtime==13.0.*"), "{text}");
            assert!(
                text.contains("/usr/local/cuda/lib64/libcudadevrt.a"),
                "{text}"
            );
        }
    }
}
