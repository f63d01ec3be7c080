//! Index-vector decode (seed 000 §6.1, CONFIRMED; fidelity I1, I9, I11).
//!
//! The Load/Save family reads int32 zero-extended to `u64` (a stored −1 is row 4294967295, not a
//! skip) and uint64/int64 as the value minus 0x1_0000_0000 (wrapping): 2^32 + r reaches row r and
//! a stored 2^32 − 1 becomes −1, the skip sentinel [`SKIP`]. IndirectSaveAccumulate is the
//! exception (§6.2 rebases its table base instead): its 64-bit indices are plain rows. The local gathers (IndirectCopy,
//! Gather) zero-extend their unsigned forms and int32's bit pattern, with no rebase and no
//! sentinel.

use crate::IndirectError;
use bir_ir::Dtype;

/// The decoded −1: the entry is skipped (seed 000 §6.3).
pub const SKIP: u64 = u64::MAX;

/// The rebase of 64-bit indices (seed 000 §6.1: `_mm_add_epi64` with 0xffffffff00000000).
const REBASE: u64 = 0x1_0000_0000;

/// Decodes a Load/Save-family index vector (`bytes` holds values of `dtype`, in AP order) into
/// `out` (cleared first). `operand` names the index operand in errors.
pub fn decode_indices(
    dtype: Dtype,
    bytes: &[u8],
    operand: usize,
    out: &mut Vec<u64>,
) -> Result<(), IndirectError> {
    out.clear();
    match dtype {
        Dtype::Int32 => {
            let (c, _) = bytes.as_chunks::<4>();
            out.extend(c.iter().map(|b| u64::from(u32::from_le_bytes(*b))));
        }
        Dtype::Uint64 | Dtype::Int64 => {
            let (c, _) = bytes.as_chunks::<8>();
            out.extend(c.iter().map(|b| u64::from_le_bytes(*b).wrapping_sub(REBASE)));
        }
        _ => {
            return Err(IndirectError::IndexDtype {
                operand,
                dtype,
                expected: "loading mem addr, which must be int32, uint64 or int64 (seed 000 §6.1)",
            });
        }
    }
    Ok(())
}

/// The stored index behind decoded value `decoded`, as its dtype reads it (for messages: an
/// int32 −1 is −1, not the row 4294967295 it decodes to). `rebased`: decoded by
/// [`decode_indices`] (uint64/int64 lose 2^32); else zero-extended or plain.
pub fn stored_value(dtype: Dtype, rebased: bool, decoded: u64) -> i128 {
    let bits = if rebased && dtype.size() == 8 { decoded.wrapping_add(REBASE) } else { decoded };
    let signed = dtype.class() == bir_ir::DtypeClass::SignedInt;
    match dtype.size() {
        1 if signed => i128::from(bits as u8 as i8),
        2 if signed => i128::from(bits as u16 as i16),
        4 if signed => i128::from(bits as u32 as i32),
        8 if signed => i128::from(bits as i64),
        _ => i128::from(bits),
    }
}

/// Decodes IndirectSaveAccumulate's index vector: int32 zero-extended, uint64/int64 as they are.
/// Seed 000 §6.2 builds `idx = embTableBase − 0x100000000 + dtypeBytes·(entry_step_elements·
/// indexTensor[v15])`: the −2^32 rebases the table *base*, so a plain 64-bit value reaches its
/// row, and no stored value is the −1 sentinel (only the `num_indices` tails are). The dtypes
/// are §6.1's gate.
pub fn decode_accumulate_indices(
    dtype: Dtype,
    bytes: &[u8],
    operand: usize,
    out: &mut Vec<u64>,
) -> Result<(), IndirectError> {
    decode_indices(dtype, bytes, operand, out)?;
    if matches!(dtype, Dtype::Uint64 | Dtype::Int64) {
        for v in out.iter_mut() {
            *v = v.wrapping_add(REBASE);
        }
    }
    Ok(())
}

/// The index dtypes IndirectCopy accepts (NKI local_gather's uint16, plus int32 and uint32; I9).
pub const INDIRECT_COPY_INDEX: &[Dtype] = &[Dtype::Uint16, Dtype::Int32, Dtype::Uint32];

/// The index dtypes Gather accepts (seed 004's GATHER widths u8/u16/u32, plus int32; I11).
pub const GATHER_INDEX: &[Dtype] = &[Dtype::Uint8, Dtype::Uint16, Dtype::Uint32, Dtype::Int32];

/// Decodes a local-gather index vector: each value zero-extended (int32 as its uint32 bit
/// pattern). `accepted` is the opcode's set ([`INDIRECT_COPY_INDEX`], [`GATHER_INDEX`]).
pub fn decode_local_indices(
    dtype: Dtype,
    bytes: &[u8],
    accepted: &[Dtype],
    operand: usize,
    out: &mut Vec<u64>,
) -> Result<(), IndirectError> {
    out.clear();
    if !accepted.contains(&dtype) {
        return Err(IndirectError::IndexDtype {
            operand,
            dtype,
            expected: "expected one of uint8, uint16, uint32 or int32 as the opcode accepts (fidelity I9/I11)",
        });
    }
    match dtype.size() {
        1 => out.extend(bytes.iter().map(|b| u64::from(*b))),
        2 => out.extend(bytes.as_chunks::<2>().0.iter().map(|b| u64::from(u16::from_le_bytes(*b)))),
        _ => out.extend(bytes.as_chunks::<4>().0.iter().map(|b| u64::from(u32::from_le_bytes(*b)))),
    }
    Ok(())
}

/// The index dtype of the HW-DGE address materialisation (`getIndirectAddrsVector`, seed 000 §7)
/// and of `Memory::obtainDataAddrsInByte` (§6.1): uint16 only ("TensorIndirect Indices data type
/// must be uint16", CONFIRMED).
pub const DGE_INDEX: &[Dtype] = &[Dtype::Uint16];

/// Decodes a HW-DGE / `obtainDataAddrsInByte` index vector: uint16, zero-extended, no rebase and
/// no sentinel (the HW-DGE bounds each index against `indirect_dim_max_index` instead, §7).
pub fn decode_dge_indices(
    dtype: Dtype,
    bytes: &[u8],
    operand: usize,
    out: &mut Vec<u64>,
) -> Result<(), IndirectError> {
    if dtype != Dtype::Uint16 {
        out.clear();
        return Err(IndirectError::IndexDtype {
            operand,
            dtype,
            expected: "TensorIndirect Indices data type must be uint16 (seed 000 §6.1, §7)",
        });
    }
    decode_local_indices(dtype, bytes, DGE_INDEX, operand, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn le32(v: &[u32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    fn le64(v: &[u64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// Messages read an index as its dtype does: int32 −1 (row 4294967295) is −1; a rebased
    /// uint64 5 (row 5 − 2^32) is 5; an int64 −1 under the plain decode is −1; uint32 stays.
    #[test]
    fn stored_values_read_as_their_dtype() {
        assert_eq!(stored_value(Dtype::Int32, true, 0xFFFF_FFFF), -1);
        assert_eq!(stored_value(Dtype::Int32, false, 0xFFFF_FFFF), -1);
        assert_eq!(stored_value(Dtype::Uint32, false, 0xFFFF_FFFF), 4_294_967_295);
        assert_eq!(stored_value(Dtype::Uint64, true, 5u64.wrapping_sub(REBASE)), 5);
        assert_eq!(stored_value(Dtype::Int64, true, 0u64.wrapping_sub(REBASE + 3)), -3);
        assert_eq!(stored_value(Dtype::Int64, false, u64::MAX), -1);
        assert_eq!(stored_value(Dtype::Uint8, false, 200), 200);
        let e = IndirectError::OutOfBounds {
            operand: 1,
            position: 0,
            value: 0xFFFF_FFFF,
            stored: None,
            bound: 4,
        };
        assert!(e.to_string().contains("element 0 = 4294967295 is outside"), "{e}");
        let e = e.index_dtype(Dtype::Int32, false);
        assert!(e.to_string().contains("element 0 = -1 is outside the table's 4 entries"), "{e}");
    }

    /// int32 zero-extends: 0xFFFFFFFF is row 4294967295, not the sentinel (seed 000 §6.1).
    #[test]
    fn int32_zero_extends() {
        let mut out = Vec::new();
        decode_indices(Dtype::Int32, &le32(&[0, 7, 0xFFFF_FFFF, 0x8000_0000]), 1, &mut out).unwrap();
        assert_eq!(out, [0, 7, 4_294_967_295, 2_147_483_648]);
    }

    /// 64-bit indices lose 2^32: 2^32 + r → r; 2^32 − 1 → −1 (skip); 0 → 2^64 − 2^32.
    #[rstest]
    #[case::uint64(Dtype::Uint64)]
    #[case::int64(Dtype::Int64)]
    fn sixty_four_bit_rebase(#[case] dt: Dtype) {
        let mut out = Vec::new();
        let v = [0x1_0000_0000u64, 0x1_0000_0005, 0xFFFF_FFFF, 0, 0x2_0000_0000];
        decode_indices(dt, &le64(&v), 2, &mut out).unwrap();
        assert_eq!(out, [0, 5, SKIP, 0xFFFF_FFFF_0000_0000, 0x1_0000_0000]);
    }

    #[rstest]
    #[case(Dtype::Uint16)]
    #[case(Dtype::Uint32)]
    #[case(Dtype::Float32)]
    #[case(Dtype::Uint8)]
    fn other_dtypes_are_refused(#[case] dt: Dtype) {
        let mut out = Vec::new();
        let e = decode_indices(dt, &[0; 8], 1, &mut out).unwrap_err();
        assert!(e.to_string().contains("ins[1]"), "{e}");
        assert!(e.to_string().contains(dt.name()), "{e}");
    }

    /// The HW-DGE form: uint16 zero-extended (0xFFFF is 65535, not a skip); nothing else.
    #[test]
    fn dge_form_is_uint16_only() {
        let mut out = Vec::new();
        decode_dge_indices(Dtype::Uint16, &[0xFF, 0xFF, 0x34, 0x12], 3, &mut out).unwrap();
        assert_eq!(out, [0xFFFF, 0x1234]);
        for dt in [Dtype::Int32, Dtype::Uint32, Dtype::Uint64, Dtype::Int16] {
            let e = decode_dge_indices(dt, &[0; 8], 3, &mut out).unwrap_err().to_string();
            assert!(e.contains("must be uint16") && e.contains("ins[3]") && e.contains(dt.name()), "{e}");
        }
    }

    #[test]
    fn local_forms_zero_extend() {
        let mut out = Vec::new();
        decode_local_indices(Dtype::Uint16, &[0xFF, 0xFF, 3, 0], INDIRECT_COPY_INDEX, 1, &mut out).unwrap();
        assert_eq!(out, [0xFFFF, 3]);
        decode_local_indices(Dtype::Uint8, &[200, 1], GATHER_INDEX, 1, &mut out).unwrap();
        assert_eq!(out, [200, 1]);
        decode_local_indices(Dtype::Int32, &le32(&[0xFFFF_FFFF]), GATHER_INDEX, 1, &mut out).unwrap();
        assert_eq!(out, [0xFFFF_FFFF]);
        assert!(decode_local_indices(Dtype::Uint8, &[1], INDIRECT_COPY_INDEX, 1, &mut out).is_err());
        assert!(decode_local_indices(Dtype::Int64, &[0; 8], GATHER_INDEX, 1, &mut out).is_err());
    }
}
