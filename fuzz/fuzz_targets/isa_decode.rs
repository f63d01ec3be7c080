//! Fuzz target 5: any bytes as 64-byte ISA words through decode, encode, the JSON form and the
//! validator for every generation (docs/robustness.md, docs/isa.md).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| birsim_fuzz::isa_decode(data));
