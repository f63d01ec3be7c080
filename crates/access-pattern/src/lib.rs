//! [W,Z,Y,X] access-pattern linearization and AP reads/writes over partitioned memory.
//!
//! This crate will own (issue "access-pattern"): turning an access pattern into the list of
//! contiguous element runs exactly as the reference `linearizedElementIntervals` does
//! (seed 000 §1.3), mapping element indices onto partitions and bytes of a memory location
//! (`runAP`), plain byte gathers/scatters through an AP, and per-element bounds reports.
//! It computes addresses and copies bytes; it knows no opcode and no numerics.
