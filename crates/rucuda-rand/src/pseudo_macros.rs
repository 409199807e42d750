//! The parts of the three pseudo-random generators' GPU types that are the same.

/// `RandomGenerator` for a type with a `core: PseudoCore` field.
macro_rules! impl_pseudo_generator {
    ($t:ty) => {
        impl $crate::generator::RandomGenerator for $t {
            fn name(&self) -> &'static str {
                self.core.name()
            }
            fn context(&self) -> &rucuda_driver::Context {
                self.core.context()
            }
            fn state_count(&self) -> usize {
                self.core.count()
            }
            unsafe fn fill_ptr(
                &mut self,
                ptr: rucuda_driver::sys::CUdeviceptr,
                n: usize,
                kind: $crate::generator::ElementKind,
                dist: $crate::distributions::Distribution,
                stream: &rucuda_driver::Stream,
            ) -> $crate::Result<()> {
                // SAFETY: forwarded contract.
                unsafe { self.core.fill_ptr(ptr, n, kind, dist, stream) }
            }
        }

        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($t))
                    .field("states", &self.core.count())
                    .field("family", &self.core.family())
                    .finish()
            }
        }
    };
}

pub(crate) use impl_pseudo_generator;
