//! With the driver path pointed at a file that does not exist, loading fails with an
//! error naming `libcuda.so.1`, every candidate tried, and what provides the library.
//! Runs everywhere (CI has no driver; on a GPU machine the override hides it).

#[test]
fn missing_driver_is_a_typed_error_naming_the_library() {
    std::env::set_var(
        rucuda_driver_sys::LIBCUDA_ENV,
        "/nonexistent/dir/libcuda.so.1",
    );
    let err = rucuda_driver_sys::Driver::get().unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("libcuda.so.1 was not found"), "{msg}");
    assert!(msg.contains("/nonexistent/dir/libcuda.so.1"), "{msg}");
    assert!(msg.contains("NVIDIA GPU driver"), "{msg}");
    assert!(msg.contains(rucuda_driver_sys::LIBCUDA_ENV), "{msg}");
    match err {
        rucuda_driver_sys::LoadError::NotFound(e) => assert_eq!(e.tried.len(), 1),
        other => panic!("unexpected {other:?}"),
    }
    // The same error again: the failed load is remembered, not retried.
    assert!(rucuda_driver_sys::Driver::get().is_err());
    assert!(!rucuda_driver_sys::Driver::is_present());
}
