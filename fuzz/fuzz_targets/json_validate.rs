//! Fuzz target 1: any bytes through the JSON loader and the validator (docs/robustness.md).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| birsim_fuzz::json_validate(data));
