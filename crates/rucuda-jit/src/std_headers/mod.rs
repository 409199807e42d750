//! The C and C++ standard headers rucuda serves to NVRTC, which has none: `<stdio.h>`,
//! `<stdint.h>`, `<limits.h>`, `<float.h>`, `<math.h>`, `<stddef.h>`, `<assert.h>` and
//! their `<cxxx>` forms. CUDA sources written for nvcc include them for `printf`,
//! `uint32_t`, `INT_MAX`, `FLT_MAX`, `M_PI`...; NVRTC stops at such an include with
//! "cannot open source file". These small headers (our own, in this folder) give the
//! device-side part of each.
//!
//! A header is given to NVRTC only when a source includes it (directly or through
//! another header) and no include of that name finds a file of the user's (in an include
//! folder, or beside the including file for `#include "..."`): NVRTC hands an in-memory
//! header to every include of its name, so serving it then would hide the user's file.
//! Their text is part of the cache key of every compile that uses them.
//!
//! ```
//! use rucuda_jit::std_headers;
//! assert!(std_headers::NAMES.contains(&"cstdio"));
//! assert!(std_headers::get("stdint.h").unwrap().contains("uint32_t"));
//! assert_eq!(std_headers::get("vector"), None);
//! ```

/// Each header's name (as written in `#include <...>`) and text.
const HEADERS: &[(&str, &str)] = &[
    ("assert.h", include_str!("assert.h")),
    ("cassert", include_str!("cassert")),
    ("float.h", include_str!("float.h")),
    ("cfloat", include_str!("cfloat")),
    ("limits.h", include_str!("limits.h")),
    ("climits", include_str!("climits")),
    ("math.h", include_str!("math.h")),
    ("cmath", include_str!("cmath")),
    ("stddef.h", include_str!("stddef.h")),
    ("cstddef", include_str!("cstddef")),
    ("stdint.h", include_str!("stdint.h")),
    ("cstdint", include_str!("cstdint")),
    ("stdio.h", include_str!("stdio.h")),
    ("cstdio", include_str!("cstdio")),
];

/// The names of the headers served, as written in an `#include`.
pub const NAMES: &[&str] = &[
    "assert.h", "cassert", "float.h", "cfloat", "limits.h", "climits", "math.h", "cmath",
    "stddef.h", "cstddef", "stdint.h", "cstdint", "stdio.h", "cstdio",
];

/// The text of the built-in header `name` (`"stdio.h"`, `"cstdint"`), if rucuda serves
/// one of that name.
pub fn get(name: &str) -> Option<&'static str> {
    lookup(name).map(|(_, text)| text)
}

/// The built-in header `name` as its static name and text.
pub(crate) fn lookup(name: &str) -> Option<(&'static str, &'static str)> {
    HEADERS.iter().find(|(n, _)| *n == name).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_texts_agree() {
        assert_eq!(NAMES.len(), HEADERS.len());
        for (name, (listed, text)) in NAMES.iter().zip(HEADERS) {
            assert_eq!(name, listed);
            assert!(!text.is_empty(), "{name}");
            // Each include guard or #undef is the header's own.
            assert!(text.contains("rucuda") || text.contains("#undef"), "{name}");
        }
    }

    #[test]
    fn the_cxx_forms_include_the_c_headers() {
        for (cxx, c) in [
            ("cassert", "assert.h"),
            ("cfloat", "float.h"),
            ("climits", "limits.h"),
            ("cmath", "math.h"),
            ("cstddef", "stddef.h"),
            ("cstdint", "stdint.h"),
            ("cstdio", "stdio.h"),
        ] {
            let text = get(cxx).unwrap();
            assert!(text.contains(&format!("#include <{c}>")), "{cxx}");
        }
    }
}
