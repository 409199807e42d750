//! Which architecture and output to compile for on a device: [`device_arch`] reads the
//! device's, and `target_for` settles what to ask of the compiler (the options' own
//! arch, else the device's, else PTX for the newest architecture NVRTC knows when the
//! device is newer than NVRTC).

use rucuda_driver::Context;

use crate::arch::Arch;
use crate::error::{Error, Result};
use crate::nvrtc::Nvrtc;
use crate::options::{Backend, CompileOptions};
use crate::output::OutputKind;

/// The architecture of `ctx`'s device.
///
/// ```no_run
/// let ctx = rucuda_driver::Device::get(0)?.primary_context()?;
/// println!("{}", rucuda_jit::device_arch(&ctx)?);
/// # Ok::<(), rucuda_jit::Error>(())
/// ```
pub fn device_arch(ctx: &Context) -> Result<Arch> {
    let (major, minor) = ctx.device().compute_capability()?;
    Ok(Arch::new(
        u32::try_from(major).unwrap_or(0),
        u32::try_from(minor).unwrap_or(0),
    ))
}

/// What to compile for on a device of architecture `device`: the options' own arch when
/// given; else the device's. NVRTC asked for a cubin of an architecture it does not know
/// (a device newer than the compiler) gets PTX for the newest architecture it knows below
/// the device's, which the driver compiles when loading.
pub(crate) fn target_for(options: &CompileOptions, device: Arch) -> Result<(Arch, OutputKind)> {
    if let Some(arch) = options.arch {
        return Ok((arch, options.output));
    }
    if options.backend != Backend::Nvrtc || options.output != OutputKind::Cubin {
        return Ok((device, options.output));
    }
    let supported = Nvrtc::get()?.supported_archs()?;
    let number = (device.major * 10 + device.minor) as i32;
    if supported.is_empty() || supported.contains(&number) {
        return Ok((device, OutputKind::Cubin));
    }
    match supported.iter().filter(|&&a| a < number).max() {
        Some(&older) => {
            let older = u32::try_from(older).unwrap_or(0);
            Ok((Arch::new(older / 10, older % 10), OutputKind::Ptx))
        }
        None => Err(Error::Unsupported(format!(
            "the device ({device}) is older than every architecture this NVRTC supports \
             ({supported:?})"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_arch_wins() {
        let o = CompileOptions::new().arch(Arch::SM_80);
        assert_eq!(
            target_for(&o, Arch::SM_90).unwrap(),
            (Arch::SM_80, OutputKind::Cubin)
        );
        let ptx = CompileOptions::new().output(OutputKind::Ptx);
        assert_eq!(
            target_for(&ptx, Arch::SM_90).unwrap(),
            (Arch::SM_90, OutputKind::Ptx)
        );
        let nvcc = CompileOptions::new().backend(Backend::Nvcc);
        assert_eq!(
            target_for(&nvcc, Arch::new(15, 0)).unwrap(),
            (Arch::new(15, 0), OutputKind::Cubin)
        );
    }

    #[test]
    fn the_device_decides_when_no_arch_is_given() {
        rucuda_testkit::nvrtc_or_skip!();
        // Needs NVRTC (CI installs it): its list of supported architectures.
        let o = CompileOptions::new();
        assert_eq!(
            target_for(&o, Arch::SM_90).unwrap(),
            (Arch::SM_90, OutputKind::Cubin)
        );
        let supported = Nvrtc::get().unwrap().supported_archs().unwrap();
        let newest = *supported.iter().max().unwrap() as u32;
        // A device newer than NVRTC: PTX for the newest architecture NVRTC knows.
        let future = Arch::new(newest / 10 + 5, 0);
        assert_eq!(
            target_for(&o, future).unwrap(),
            (Arch::new(newest / 10, newest % 10), OutputKind::Ptx)
        );
        // Older than anything NVRTC supports: a clear error.
        let err = target_for(&o, Arch::new(3, 0)).unwrap_err();
        assert!(err.to_string().contains("older"), "{err}");
    }
}
