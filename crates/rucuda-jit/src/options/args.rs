//! Checking [`CompileOptions`] before a compiler runs, and the option strings NVRTC and
//! nvcc get from them.

use std::path::PathBuf;

use super::{Backend, CompileOptions};
use crate::arch::Arch;
use crate::error::{Error, Result};
use crate::output::OutputKind;

/// Options the backends must not see in [`CompileOptions::options`], because a typed
/// field sets them, with the field to use instead.
const RESERVED: &[(&str, &str)] = &[
    ("-arch", "CompileOptions::arch"),
    ("--gpu-architecture", "CompileOptions::arch"),
    ("-code", "CompileOptions::code"),
    ("--gpu-code", "CompileOptions::code"),
    ("-o", "the returned bytes"),
    ("--output-file", "the returned bytes"),
    ("-ptx", "CompileOptions::output"),
    ("--ptx", "CompileOptions::output"),
    ("-cubin", "CompileOptions::output"),
    ("--cubin", "CompileOptions::output"),
    ("-fatbin", "CompileOptions::output"),
    ("--fatbin", "CompileOptions::output"),
    ("-dlto", "CompileOptions::output = OutputKind::LtoIr"),
    ("--dlto", "CompileOptions::output = OutputKind::LtoIr"),
    ("-c", "CompileOptions::output"),
    ("--compile", "CompileOptions::output"),
];

impl CompileOptions {
    /// Checks what can be checked before running a compiler: options that a typed
    /// field sets, NUL bytes, and combinations a backend cannot do.
    ///
    /// ```
    /// use rucuda_jit::CompileOptions;
    /// let err = CompileOptions::new().option("-arch=sm_80").validate().unwrap_err();
    /// assert!(err.to_string().contains("CompileOptions::arch"));
    /// ```
    pub fn validate(&self) -> Result<()> {
        self.validate_for(self.backend)
    }

    fn validate_for(&self, backend: Backend) -> Result<()> {
        for option in &self.options {
            if option.contains('\0') {
                return Err(Error::InvalidOption {
                    option: option.clone(),
                    reason: "contains a NUL byte".into(),
                });
            }
            let flag = option.split('=').next().unwrap_or(option);
            if let Some((_, field)) = RESERVED.iter().find(|(r, _)| *r == flag) {
                return Err(Error::InvalidOption {
                    option: option.clone(),
                    reason: format!("set it with {field} instead"),
                });
            }
            if backend == Backend::Nvrtc && !option.starts_with('-') {
                return Err(Error::InvalidOption {
                    option: option.clone(),
                    reason: "NVRTC options are single strings starting with '-' \
                             (write -I/dir or --include-path=/dir, not two strings)"
                        .into(),
                });
            }
        }
        for (name, _) in &self.defines {
            if name.is_empty() || name.contains(['=', '\0', ' ']) {
                return Err(Error::InvalidOption {
                    option: format!("-D{name}"),
                    reason: "a macro name must be non-empty, without '=', spaces or NUL".into(),
                });
            }
        }
        if backend == Backend::Nvrtc {
            if self.output == OutputKind::Fatbin {
                return Err(Error::nvrtc_fatbin());
            }
            if self.code.is_some() {
                return Err(Error::Unsupported(
                    "`code` (nvcc's -code) needs Backend::Nvcc; NVRTC takes one arch".into(),
                ));
            }
        } else if !self.name_expressions.is_empty() {
            return Err(Error::Unsupported(
                "name expressions need NVRTC (nvcc has no lowered-name API); compile \
                 templated kernels with Backend::Nvrtc, or give them extern \"C\" wrappers"
                    .into(),
            ));
        }
        Ok(())
    }

    fn switch_args(&self, nvcc: bool) -> Vec<String> {
        let mut args = Vec::new();
        for (name, value) in &self.defines {
            args.push(match value {
                Some(v) => format!("-D{name}={v}"),
                None => format!("-D{name}"),
            });
        }
        for dir in &self.include_dirs {
            args.push(if nvcc {
                format!("-I{}", dir.display())
            } else {
                format!("--include-path={}", dir.display())
            });
        }
        if self.fast_math {
            args.push("--use_fast_math".into());
        }
        if self.debug {
            args.push(if nvcc { "-G" } else { "--device-debug" }.into());
        }
        if self.line_info {
            args.push(
                if nvcc {
                    "-lineinfo"
                } else {
                    "--generate-line-info"
                }
                .into(),
            );
        }
        if self.relocatable {
            args.push("--relocatable-device-code=true".into());
        }
        if let Some(std) = &self.std {
            args.push(format!("--std={std}"));
        }
        if let Some(r) = self.max_registers {
            args.push(format!("--maxrregcount={r}"));
        }
        args.extend(self.options.iter().cloned());
        args
    }

    /// The options NVRTC gets for `arch`: the target first, then ours, then
    /// [`options`](Self::options). ([`compile`](crate::compile) appends the CUDA
    /// headers' folder when [`toolkit_include`](Self::toolkit_include) is on.)
    ///
    /// ```
    /// use rucuda_jit::{Arch, CompileOptions, OutputKind};
    /// let o = CompileOptions::new().output(OutputKind::LtoIr).relocatable(true);
    /// assert_eq!(
    ///     o.nvrtc_args(Arch::SM_90)?,
    ///     ["--gpu-architecture=sm_90", "-dlto", "--relocatable-device-code=true"]
    /// );
    /// # Ok::<(), rucuda_jit::Error>(())
    /// ```
    pub fn nvrtc_args(&self, arch: Arch) -> Result<Vec<String>> {
        self.validate_for(Backend::Nvrtc)?;
        let mut args = match self.output {
            OutputKind::Cubin => vec![format!("--gpu-architecture={}", arch.real())],
            OutputKind::Ptx => vec![format!("--gpu-architecture={}", arch.virtual_arch())],
            OutputKind::LtoIr => vec![
                format!("--gpu-architecture={}", arch.real()),
                "-dlto".into(),
            ],
            OutputKind::Fatbin => return Err(Error::nvrtc_fatbin()),
        };
        args.extend(self.switch_args(false));
        Ok(args)
    }

    /// The options nvcc gets for `arch`, without the input and output file names:
    /// the output mode and target first, then ours, then [`options`](Self::options).
    ///
    /// ```
    /// use rucuda_jit::{Arch, CompileOptions, OutputKind};
    /// let o = CompileOptions::new().include_dir("/inc").debug(true);
    /// assert_eq!(o.nvcc_args(Arch::SM_90)?, ["-cubin", "-arch=sm_90", "-I/inc", "-G"]);
    /// let fat = CompileOptions::new().output(OutputKind::Fatbin).code("sm_90,compute_90");
    /// assert_eq!(
    ///     fat.nvcc_args(Arch::SM_90)?,
    ///     ["-fatbin", "-arch=compute_90", "-code=sm_90,compute_90"]
    /// );
    /// # Ok::<(), rucuda_jit::Error>(())
    /// ```
    pub fn nvcc_args(&self, arch: Arch) -> Result<Vec<String>> {
        self.validate_for(Backend::Nvcc)?;
        let mut args: Vec<String> = Vec::new();
        match self.output {
            OutputKind::Cubin => {
                args.push("-cubin".into());
                args.push(format!("-arch={}", arch.real()));
            }
            OutputKind::Ptx => {
                args.push("-ptx".into());
                args.push(format!("-arch={}", arch.virtual_arch()));
            }
            OutputKind::Fatbin => {
                args.push("-fatbin".into());
                if self.code.is_some() {
                    args.push(format!("-arch={}", arch.virtual_arch()));
                } else {
                    args.push(format!("-arch={}", arch.real()));
                }
            }
            OutputKind::LtoIr => {
                // A fatbin holding only LTO-IR for `arch` (`-arch=lto_XY`), which cuLink
                // and nvJitLink accept.
                args.push("-fatbin".into());
                args.push(format!(
                    "-arch=lto_{}",
                    arch.real().trim_start_matches("sm_")
                ));
            }
        }
        if let Some(code) = &self.code {
            args.push(format!("-code={code}"));
        }
        args.extend(self.switch_args(true));
        Ok(args)
    }

    /// The header folders the include scan of the cache key searches: the
    /// [`include_dirs`](Self::include_dirs) and every `-I` or `--include-path` in the
    /// raw [`options`](Self::options).
    ///
    /// ```
    /// use rucuda_jit::CompileOptions;
    /// let o = CompileOptions::new()
    ///     .include_dir("/a")
    ///     .options(["-I/b", "--include-path=/c", "-I", "/d"]);
    /// let dirs: Vec<_> = o.header_dirs().into_iter().map(|d| d.display().to_string()).collect();
    /// assert_eq!(dirs, ["/a", "/b", "/c", "/d"]);
    /// ```
    pub fn header_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = self.include_dirs.clone();
        let mut it = self.options.iter().peekable();
        while let Some(option) = it.next() {
            let value = if option == "-I" || option == "--include-path" {
                it.next().cloned()
            } else if let Some(v) = option.strip_prefix("--include-path=") {
                Some(v.to_string())
            } else {
                option.strip_prefix("-I").map(str::to_string)
            };
            if let Some(v) = value.filter(|v| !v.is_empty()) {
                dirs.push(PathBuf::from(v));
            }
        }
        dirs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvrtc_strings() {
        let o = CompileOptions::new()
            .define("N", "4")
            .define_flag("FAST")
            .include_dir("/inc")
            .fast_math(true)
            .debug(true)
            .line_info(true)
            .relocatable(true)
            .std("c++20")
            .max_registers(64)
            .option("--extra-device-vectorization");
        assert_eq!(
            o.nvrtc_args(Arch::SM_90).unwrap(),
            [
                "--gpu-architecture=sm_90",
                "-DN=4",
                "-DFAST",
                "--include-path=/inc",
                "--use_fast_math",
                "--device-debug",
                "--generate-line-info",
                "--relocatable-device-code=true",
                "--std=c++20",
                "--maxrregcount=64",
                "--extra-device-vectorization",
            ]
        );
        let ptx = CompileOptions::new().output(OutputKind::Ptx);
        assert_eq!(
            ptx.nvrtc_args(Arch::SM_75).unwrap(),
            ["--gpu-architecture=compute_75"]
        );
    }

    #[test]
    fn nvcc_strings() {
        let o = CompileOptions::new()
            .define("N", "4")
            .include_dir("/inc")
            .fast_math(true)
            .debug(true)
            .line_info(true)
            .relocatable(true)
            .option("-Xptxas=-v");
        assert_eq!(
            o.nvcc_args(Arch::SM_90).unwrap(),
            [
                "-cubin",
                "-arch=sm_90",
                "-DN=4",
                "-I/inc",
                "--use_fast_math",
                "-G",
                "-lineinfo",
                "--relocatable-device-code=true",
                "-Xptxas=-v",
            ]
        );
        let ptx = CompileOptions::new().output(OutputKind::Ptx);
        assert_eq!(
            ptx.nvcc_args(Arch::SM_80).unwrap(),
            ["-ptx", "-arch=compute_80"]
        );
        let lto = CompileOptions::new().output(OutputKind::LtoIr);
        assert_eq!(
            lto.nvcc_args(Arch::SM_90).unwrap(),
            ["-fatbin", "-arch=lto_90"]
        );
        let fat = CompileOptions::new().output(OutputKind::Fatbin);
        assert_eq!(
            fat.nvcc_args(Arch::SM_90).unwrap(),
            ["-fatbin", "-arch=sm_90"]
        );
    }

    #[test]
    fn reserved_and_malformed_options_are_reported() {
        for bad in [
            "-arch=sm_80",
            "--gpu-architecture=sm_80",
            "-o",
            "-ptx",
            "-dlto",
            "-c",
        ] {
            let e = CompileOptions::new().option(bad).validate().unwrap_err();
            assert!(matches!(e, Error::InvalidOption { .. }), "{bad}: {e}");
        }
        let e = CompileOptions::new().option("O3").validate().unwrap_err();
        assert!(e.to_string().contains("starting with '-'"), "{e}");
        let e = CompileOptions::new()
            .option("-DX\0")
            .validate()
            .unwrap_err();
        assert!(e.to_string().contains("NUL"), "{e}");
        let e = CompileOptions::new()
            .define("A=B", "1")
            .validate()
            .unwrap_err();
        assert!(e.to_string().contains("macro name"), "{e}");
        // nvcc takes option values as separate strings.
        CompileOptions::new()
            .backend(Backend::Nvcc)
            .options(["-Xptxas", "-v"])
            .validate()
            .unwrap();
    }

    #[test]
    fn backend_limits() {
        let e = CompileOptions::new()
            .output(OutputKind::Fatbin)
            .validate()
            .unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)));
        let e = CompileOptions::new().code("sm_90").validate().unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)));
        let e = CompileOptions::new()
            .backend(Backend::Nvcc)
            .name_expression("f<int>")
            .validate()
            .unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)));
    }

    #[test]
    fn nvcc_setter_picks_the_backend() {
        let o = CompileOptions::new().nvcc("/opt/cuda/bin/nvcc");
        assert_eq!(o.backend, Backend::Nvcc);
    }
}
