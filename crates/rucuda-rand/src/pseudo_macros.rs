//! The parts of the three pseudo-random generators' GPU types that are the same.

/// For a type with a `core: PseudoCore` field, the generator `$name` of `$family` with
/// the jump table `$table` (an `Option<Vec<u32>>`): `RandomGenerator`, `Debug`, the
/// constructors `new` and `with_options`, and `skip_ahead` / `skip_ahead_array`.
macro_rules! impl_pseudo_generator {
    ($t:ident, $name:expr, $family:expr, $table:expr) => {
        $crate::launch::impl_random_generator!($t);

        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($t))
                    .field(
                        "states",
                        &$crate::launch::GeneratorCore::state_count(&self.core),
                    )
                    .field("family", &self.core.family())
                    .finish()
            }
        }

        impl $t {
            /// The default number of states, all seeded with `seed`, state `i` on
            /// subsequence `i`.
            pub fn new(ctx: &rucuda_driver::Context, seed: u64) -> $crate::error::Result<$t> {
                Self::with_options(
                    ctx,
                    &$crate::pseudo::GeneratorOptions {
                        seeds: $crate::seed::Seeds::Same(seed),
                        ..Default::default()
                    },
                )
            }

            /// States initialised as `options` says.
            pub fn with_options(
                ctx: &rucuda_driver::Context,
                options: &$crate::pseudo::GeneratorOptions,
            ) -> $crate::error::Result<$t> {
                Ok($t {
                    core: $crate::pseudo::PseudoCore::new(ctx, $name, $family, $table, options)?,
                })
            }

            $crate::pseudo_macros::skip_methods! {
                /// `skipahead(n)` on every state (PyCUDA's `call_skip_ahead`).
                skip_ahead,
                /// `skipahead(counts[i])` on state `i` (PyCUDA's `call_skip_ahead_array`).
                skip_ahead_array => 0;
            }
        }
    };
}

/// Skip-ahead methods of a pseudo-random generator, inside its `impl`: each pair skips
/// every state by `n`, or state `i` by `counts[i]`, with the family's skip kind (see
/// `PseudoCore::skip`).
macro_rules! skip_methods {
    ($($(#[$all_doc:meta])* $all:ident, $(#[$each_doc:meta])* $each:ident => $kind:expr;)+) => {
        $(
            $(#[$all_doc])*
            pub fn $all(&mut self, n: u64, stream: &rucuda_driver::Stream) -> $crate::error::Result<()> {
                self.core.skip($kind, n, None, stream)
            }

            $(#[$each_doc])*
            pub fn $each(
                &mut self,
                counts: &rucuda_driver::DeviceBuffer<u64>,
                stream: &rucuda_driver::Stream,
            ) -> $crate::error::Result<()> {
                self.core.skip($kind, 0, Some(counts), stream)
            }
        )+
    };
}

pub(crate) use {impl_pseudo_generator, skip_methods};
