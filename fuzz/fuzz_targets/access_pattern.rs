//! Fuzz target 2: access-pattern linearisation and bounds, reads and writes against the
//! per-element odometer (docs/robustness.md).
#![no_main]
libfuzzer_sys::fuzz_target!(|case: birsim_fuzz::ApCase| birsim_fuzz::access_pattern(&case));
