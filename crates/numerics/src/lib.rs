//! Every BIR dtype's bit-exact codecs, `cast_copy_or_accumulate` and the ALU functor tables.
//!
//! This crate will own (issue "numerics"): decode/encode for all 20 dtypes under the `refsim`
//! and `nki` fidelity profiles (re-facts §4), the memory-reduction accumulate path
//! (seed 000 §6.4), and the four ALU functor maps `ts_ops`, `ts_int_ops`, `ta_ops` and
//! `ts_int_cmp_ops` (seed 000 §2.1). It knows nothing of instructions or memory.
