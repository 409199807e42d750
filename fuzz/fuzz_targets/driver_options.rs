//! libFuzzer entry for the `driver_options` target; the checks live in `src/targets.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| rucuda_fuzz::targets::driver_options(data));
