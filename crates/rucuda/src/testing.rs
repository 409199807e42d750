//! PyCUDA's `mark_cuda_test`: [`cuda_test!`](crate::cuda_test) declares tests that need
//! a CUDA device and gives them the default context.

use crate::tools::{autoprimaryctx, AutoContext};

/// Declares tests that need a CUDA device (PyCUDA's `mark_cuda_test`).
///
/// Each `fn name(ctx) { ... }` becomes
/// `#[test] #[ignore = "needs a CUDA device"] fn name() { ... }` in which `ctx` is the
/// process's default context (`&'static` [`AutoContext`](crate::tools::AutoContext) from
/// [`autoprimaryctx`](crate::tools::autoprimaryctx), made current on the test's thread).
/// Like every GPU test of rucuda, it is skipped by a plain `cargo test` and run by
/// `cargo test -- --include-ignored` or the GPU bundle (`cargo xtask gpu-test`). Where no
/// context can be had, the test fails and says why.
///
/// Attributes and doc comments before `fn` are kept; a test may return a `Result`; one
/// invocation may declare several tests.
///
/// ```
/// use rucuda::cuda_test;
/// use rucuda::driver::DeviceBuffer;
///
/// cuda_test! {
///     /// A round trip through device memory.
///     fn round_trip(ctx) {
///         let x = DeviceBuffer::from_slice(ctx, &[1.0f32, 2.0, 3.0]).unwrap();
///         assert_eq!(x.to_vec().unwrap(), [1.0, 2.0, 3.0]);
///     }
///
///     fn returns_a_result(ctx) -> Result<(), rucuda::driver::Error> {
///         assert_eq!(ctx.context.device(), ctx.device);
///         Ok(())
///     }
/// }
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! cuda_test {
    () => {};
    (
        $(#[$meta:meta])*
        fn $name:ident($ctx:ident) -> $ret:ty $body:block
        $($rest:tt)*
    ) => {
        $(#[$meta])*
        #[test]
        #[ignore = "needs a CUDA device"]
        fn $name() -> $ret {
            let $ctx: &'static $crate::tools::AutoContext = $crate::cuda_test!(@context);
            $body
        }
        $crate::cuda_test! { $($rest)* }
    };
    (
        $(#[$meta:meta])*
        fn $name:ident($ctx:ident) $body:block
        $($rest:tt)*
    ) => {
        $(#[$meta])*
        #[test]
        #[ignore = "needs a CUDA device"]
        fn $name() {
            let $ctx: &'static $crate::tools::AutoContext = $crate::cuda_test!(@context);
            $body
        }
        $crate::cuda_test! { $($rest)* }
    };
    (@context) => {
        match $crate::__test_context() {
            ::core::result::Result::Ok(ctx) => ctx,
            ::core::result::Result::Err(e) => {
                ::core::panic!("cuda_test!: no CUDA context for this test: {e}")
            }
        }
    };
}

/// The context [`cuda_test!`](crate::cuda_test) gives a test: the default primary context,
/// made current on the calling thread (each test runs on a thread of its own).
#[doc(hidden)]
pub fn __test_context() -> rucuda_driver::Result<&'static AutoContext> {
    let auto = autoprimaryctx()?;
    auto.context.bind()?;
    Ok(auto)
}
