//! `cuda_test!` (PyCUDA's `mark_cuda_test`) used as a test author would: each test gets
//! the default context, current on its own thread.

use rucuda::cuda_test;
use rucuda::driver::{Context, DeviceBuffer};
use rucuda_testkit::{random_f32, seed};

cuda_test! {
    /// The context is the default one and current on the test's thread.
    fn gets_the_current_default_context(ctx) {
        let current = Context::current().unwrap().expect("a current context");
        assert_eq!(current.raw(), ctx.context.raw());
        assert!(ctx.context.is_primary());
        assert!(std::ptr::eq(ctx, rucuda::tools::autoprimaryctx().unwrap()));
    }

    fn returns_a_result(ctx) -> Result<(), rucuda::driver::Error> {
        let data = random_f32(4096, seed!());
        let dev = DeviceBuffer::from_slice(ctx, &data)?;
        assert_eq!(dev.to_vec()?, data);
        Ok(())
    }

    /// Attributes pass through: this one must panic, and only after getting a context.
    #[should_panic(expected = "deliberate")]
    fn keeps_attributes(ctx) {
        assert_eq!(ctx.device.ordinal(), ctx.context.device().ordinal());
        panic!("deliberate");
    }
}
