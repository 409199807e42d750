//! libFuzzer entry for the `elementwise_spec` target; the checks live in `src/targets.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| rucuda_fuzz::targets::elementwise_spec(data));
