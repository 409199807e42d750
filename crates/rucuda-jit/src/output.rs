//! [`OutputKind`]: what a compiler produces (cubin, PTX, fatbin, LTO-IR), its file
//! extension, and its code in a cache entry's header.

/// What the compiler produces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OutputKind {
    /// Machine code for one real architecture (`sm_XY`): loads with no JIT step. The
    /// default, so that a compiler newer than the driver still works.
    #[default]
    Cubin,
    /// PTX text for a virtual architecture (`compute_XY`), NUL-terminated; the driver
    /// JIT-compiles it when loading.
    Ptx,
    /// A fat binary (`nvcc -fatbin`), possibly with several architectures; nvcc only.
    Fatbin,
    /// LTO-IR for link-time optimisation (`-dlto`), for `cuLink` with LTO: raw LTO-IR
    /// from NVRTC, a fatbin holding LTO-IR from nvcc (`-fatbin -arch=lto_XY`).
    LtoIr,
}

impl OutputKind {
    /// The usual file extension: `cubin`, `ptx`, `fatbin`, `ltoir`.
    ///
    /// ```
    /// assert_eq!(rucuda_jit::OutputKind::Cubin.extension(), "cubin");
    /// ```
    pub fn extension(self) -> &'static str {
        match self {
            OutputKind::Cubin => "cubin",
            OutputKind::Ptx => "ptx",
            OutputKind::Fatbin => "fatbin",
            OutputKind::LtoIr => "ltoir",
        }
    }

    pub(crate) fn code(self) -> u32 {
        match self {
            OutputKind::Cubin => 1,
            OutputKind::Ptx => 2,
            OutputKind::Fatbin => 3,
            OutputKind::LtoIr => 4,
        }
    }

    pub(crate) fn from_code(code: u32) -> Option<OutputKind> {
        [
            OutputKind::Cubin,
            OutputKind::Ptx,
            OutputKind::Fatbin,
            OutputKind::LtoIr,
        ]
        .into_iter()
        .find(|k| k.code() == code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_codes_round_trip() {
        for k in [
            OutputKind::Cubin,
            OutputKind::Ptx,
            OutputKind::Fatbin,
            OutputKind::LtoIr,
        ] {
            assert_eq!(OutputKind::from_code(k.code()), Some(k));
        }
        assert_eq!(OutputKind::from_code(0), None);
    }
}
