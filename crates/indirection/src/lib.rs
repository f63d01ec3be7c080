//! The indirection engine: index decode, the serial gather/scatter executor and ISA operand structs.
//!
//! This crate will own (issue "indirection"): the index-vector decode and offset-list
//! construction of the six BIR indirect ops (seed 000 §6), the in-order `doCopyIndirect` apply
//! loop with its −1 skip sentinel (seed 000 §6.3), the four GpSimd gather/scatter datapaths and
//! their 64-byte operand structs (seed 004).
