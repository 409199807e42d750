//! libFuzzer entry for the `operation_analysis` target; the checks live in `src/targets.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| rucuda_fuzz::targets::operation_analysis(data));
