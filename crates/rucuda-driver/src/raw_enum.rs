//! `raw_enum!`: a Rust enum over a C enum of the driver, with every value, its C value
//! and name, and `None` for values this crate does not know.

macro_rules! raw_enum {
    (
        $(#[$meta:meta])*
        $name:ident($raw:ty) {
            $($(#[$vmeta:meta])* $variant:ident = $value:expr, $cname:literal;)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in the order of the C header.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The C value.
            pub fn raw(self) -> $raw {
                match self {
                    $($name::$variant => $value,)+
                }
            }

            /// The value for a C value, `None` when this crate does not know it.
            pub fn from_raw(raw: $raw) -> Option<$name> {
                $(if raw == $value { return Some($name::$variant); })+
                None
            }

            /// The C name (`CU_JIT_MAX_REGISTERS`).
            pub fn c_name(self) -> &'static str {
                match self {
                    $($name::$variant => $cname,)+
                }
            }
        }
    };
}
