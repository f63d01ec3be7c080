//! Fuzz target 4: whole programs (JSON seeds, or the structured builder over the instruction
//! templates) validated and run under a 64 MiB memory cap (8 MiB per operand) and a 2,000-instruction budget, at
//! one and at two threads (docs/robustness.md). `BIRSIM_FUZZ_PRINT=1` prints each program's JSON,
//! to turn a crash input into a committed regression program.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if std::env::var_os("BIRSIM_FUZZ_PRINT").is_some()
        && let Some(p) = birsim_fuzz::program_bytes(data)
    {
        eprintln!("{}", String::from_utf8_lossy(&p));
    }
    birsim_fuzz::run_program(data)
});
