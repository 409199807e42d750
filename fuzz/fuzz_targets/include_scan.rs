//! libFuzzer entry for the `include_scan` target; the checks live in `src/targets.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| rucuda_fuzz::targets::include_scan(data));
