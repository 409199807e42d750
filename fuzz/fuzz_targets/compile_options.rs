//! libFuzzer entry for the `compile_options` target; the checks live in `src/targets.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| rucuda_fuzz::targets::compile_options(data));
