//! Helpers shared by the integration tests.
#![allow(dead_code)]

/// A fresh folder under the system temporary folder (`rucuda-jit-test-{name}-…`), removed
/// when the returned `TempDir` drops.
pub fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("rucuda-jit-test-{name}-"))
        .tempdir()
        .expect("a temporary folder")
}

pub const SAXPY: &str = r#"
__global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;

/// True when the bytes are an ELF file (a cubin).
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}
