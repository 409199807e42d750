//! PyCUDA's `pycuda.characterize`: what the host and a device are like. The pointer
//! width of the host ([`platform_bits`]), whether a device has a call stack
//! ([`has_stack`]) and double precision ([`has_double_support`]), and the size of a C
//! type as the device compiler lays it out ([`sizeof`]).
//!
//! ```no_run
//! use rucuda::characterize;
//! use rucuda::driver::Device;
//! let ctx = Device::get(0)?.primary_context()?;
//! assert_eq!(characterize::platform_bits(), 64);
//! assert!(characterize::has_double_support(ctx.device())?);
//! assert_eq!(characterize::sizeof(&ctx, "double", "")?, 8);
//! let pair = "struct pair { char tag; double value; };";
//! assert_eq!(characterize::sizeof(&ctx, "struct pair", pair)?, 16);
//! # Ok::<(), rucuda::Error>(())
//! ```

use rucuda_array::codegen::template::render;
use rucuda_driver::{memcpy_dtoh, Context, Device};
use rucuda_jit::{CompileOptions, SourceModule};

use crate::error::Result;

/// The source `sizeof` compiles: the preamble, then a global holding the size.
const SIZEOF_TEMPLATE: &str = include_str!("cuda/sizeof.cu");

/// The global of [`SIZEOF_TEMPLATE`] that holds the size.
const SIZE_GLOBAL: &str = "rucuda_sizeof_value";

/// The width of a host pointer in bits: 64 on every platform CUDA supports now (PyCUDA's
/// `platform_bits`).
///
/// ```
/// assert_eq!(rucuda::characterize::platform_bits(), usize::BITS);
/// ```
pub fn platform_bits() -> u32 {
    usize::BITS
}

/// Whether `device` has a call stack: compute capability 2.0 or higher, so kernels may
/// recurse and call functions through pointers (PyCUDA's `has_stack`, which asks about
/// the current context's device).
///
/// ```no_run
/// let device = rucuda::driver::Device::get(0)?;
/// assert!(rucuda::characterize::has_stack(device)?);
/// # Ok::<(), rucuda::Error>(())
/// ```
pub fn has_stack(device: Device) -> Result<bool> {
    Ok(device.compute_capability()? >= (2, 0))
}

/// Whether `device` does double-precision arithmetic: compute capability 1.3 or higher
/// (PyCUDA's `has_double_support`, which asks about the current context's device).
///
/// ```no_run
/// let device = rucuda::driver::Device::get(0)?;
/// assert!(rucuda::characterize::has_double_support(device)?);
/// # Ok::<(), rucuda::Error>(())
/// ```
pub fn has_double_support(device: Device) -> Result<bool> {
    Ok(device.compute_capability()? >= (1, 3))
}

/// The size in bytes of the C type `type_name` on the device of `ctx`, as its compiler
/// lays it out (PyCUDA's `sizeof(type_name, preamble)`); `preamble` declares the type
/// when it is not built in (a `struct`, a `typedef`, an `#include`).
///
/// The two strings are compiled (through the kernel cache and the per-context memo, so
/// asking again is free) into a module whose global holds `sizeof(type_name)`, read back
/// after loading. No device code runs, so any text is safe to pass: a type that does not
/// compile is [`Error::Jit`](crate::Error::Jit) with the compiler's log
/// ([`as_compile_error`](rucuda_jit::Error::as_compile_error)). PyCUDA runs a one-thread
/// kernel that writes the size instead; the answer is the same.
///
/// ```no_run
/// use rucuda::driver::Device;
/// let ctx = Device::get(0)?.primary_context()?;
/// assert_eq!(rucuda::characterize::sizeof(&ctx, "float4", "")?, 16);
/// assert_eq!(rucuda::characterize::sizeof(&ctx, "uint8_t", "#include <stdint.h>")?, 1);
/// assert!(rucuda::characterize::sizeof(&ctx, "no_such_type", "").is_err());
/// # Ok::<(), rucuda::Error>(())
/// ```
pub fn sizeof(ctx: &Context, type_name: &str, preamble: &str) -> Result<usize> {
    let source = sizeof_source(type_name, preamble)?;
    let options = CompileOptions::new()
        .no_extern_c(true)
        .program_name("characterize_sizeof.cu");
    let module = SourceModule::for_context(ctx, &source, &options)?;
    let global = module.global(SIZE_GLOBAL)?;
    if global.bytes() != std::mem::size_of::<u64>() {
        return Err(rucuda_jit::Error::InvalidInput(format!(
            "sizeof({type_name}): the preamble changed the size global ({} bytes, not 8)",
            global.bytes()
        ))
        .into());
    }
    let mut size = [0u64];
    memcpy_dtoh(ctx, &mut size, &global)?;
    usize::try_from(size[0]).map_err(|_| {
        rucuda_jit::Error::InvalidInput(format!(
            "sizeof({type_name}) is {} bytes, more than this host can address",
            size[0]
        ))
        .into()
    })
}

/// The source [`sizeof`] compiles, after checking the type name.
fn sizeof_source(type_name: &str, preamble: &str) -> Result<String> {
    let name = type_name.trim();
    if name.is_empty() {
        return Err(rucuda_jit::Error::InvalidInput(
            "characterize::sizeof needs a type name (it was empty)".into(),
        )
        .into());
    }
    if name.contains(['\0', '\n', '\r']) || preamble.contains('\0') {
        return Err(rucuda_jit::Error::InvalidInput(format!(
            "characterize::sizeof: the type name {type_name:?} (or the preamble) contains a \
             NUL byte or a line break"
        ))
        .into());
    }
    let preamble = if preamble.is_empty() || preamble.ends_with('\n') {
        preamble.to_string()
    } else {
        format!("{preamble}\n")
    };
    Ok(render(
        SIZEOF_TEMPLATE,
        &[("PREAMBLE", &preamble), ("TYPE_NAME", name)],
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rucuda_jit::{compile, Arch, OutputKind};

    #[test]
    fn the_source_holds_the_preamble_and_the_type() {
        let s = sizeof_source(" struct pair ", "struct pair { char c; double d; };").unwrap();
        assert!(s.contains("struct pair { char c; double d; };\n"), "{s}");
        assert!(s.contains("= sizeof(struct pair);"), "{s}");
        let plain = sizeof_source("double", "").unwrap();
        assert!(plain.contains("= sizeof(double);"), "{plain}");
        assert!(!plain.contains("$PREAMBLE$"));
    }

    #[test]
    fn bad_type_names_are_typed_errors() {
        for bad in ["", "   ", "int\0", "int\nfloat"] {
            let e = sizeof_source(bad, "").unwrap_err();
            assert!(matches!(e, crate::Error::Jit(_)), "{bad:?}: {e}");
        }
        let e = sizeof_source("int", "\0").unwrap_err();
        assert!(e.to_string().contains("NUL"), "{e}");
    }

    #[test]
    fn platform_bits_is_the_pointer_width() {
        assert_eq!(platform_bits(), 8 * std::mem::size_of::<*const u8>() as u32);
    }

    /// The value the device compiler puts in the global, read from the PTX (NVRTC, no GPU).
    fn size_in_ptx(type_name: &str, preamble: &str) -> rucuda_jit::Result<u64> {
        let source = sizeof_source(type_name, preamble).expect("a type name");
        let options = CompileOptions::new()
            .no_extern_c(true)
            .arch(Arch::SM_90)
            .output(OutputKind::Ptx)
            .cache_dir(None);
        let ptx = compile(&source, &options)?;
        let text = String::from_utf8_lossy(&ptx.image).into_owned();
        let line = text
            .lines()
            .find(|l| l.contains(SIZE_GLOBAL) && l.contains('='))
            .unwrap_or_else(|| panic!("no initialized global in\n{text}"));
        let value = line
            .rsplit('=')
            .next()
            .unwrap()
            .trim()
            .trim_end_matches(';');
        Ok(value.parse().unwrap_or_else(|_| panic!("{line}")))
    }

    #[test]
    fn the_device_compiler_fills_in_the_size() {
        rucuda_testkit::nvrtc_or_skip!();
        assert_eq!(size_in_ptx("double", "").unwrap(), 8);
        assert_eq!(size_in_ptx("char", "").unwrap(), 1);
        assert_eq!(size_in_ptx("float3", "").unwrap(), 12);
        assert_eq!(size_in_ptx("double2", "").unwrap(), 16);
        assert_eq!(size_in_ptx("void *", "").unwrap(), 8);
        assert_eq!(size_in_ptx("long", "").unwrap(), 8);
        let pair = "struct pair { char tag; double value; };";
        assert_eq!(size_in_ptx("struct pair", pair).unwrap(), 16);
        assert_eq!(size_in_ptx("uint16_t", "#include <stdint.h>").unwrap(), 2);
        assert_eq!(
            size_in_ptx("std::int64_t", "#include <cstdint>").unwrap(),
            8
        );
        assert_eq!(size_in_ptx("size_t", "").unwrap(), 8);
        assert_eq!(size_in_ptx("int3", "").unwrap(), 12);
        let wide = "struct __align__(32) wide { float x; };";
        assert_eq!(size_in_ptx("wide", wide).unwrap(), 32);
        let small = "typedef struct { short a; char b; } small_t;";
        assert_eq!(size_in_ptx("small_t", small).unwrap(), 4);
        let e = size_in_ptx("no_such_type", "").unwrap_err();
        let ce = e.as_compile_error().expect("a compile error");
        assert!(ce.log.contains("no_such_type"), "{}", ce.log);
    }
}
