//! `cast_copy_or_accumulate`: the accumulate-path vectors of numerics.md §6 and per-dtype/op
//! tables (expected values worked by hand from re-facts §8).

use bir_ir::AluOp;
use numerics::*;
use rstest::rstest;

fn acc(op: MemoryReductionOp, dt: Dtype, dst: &[u8], src: &[u8]) -> Result<Vec<u8>, NumericsError> {
    let mut d = dst.to_vec();
    accumulate(op, dt, &mut d, src, &Profile::refsim())?;
    Ok(d)
}

fn f(x: u32) -> [u8; 4] {
    x.to_le_bytes()
}

use MemoryReductionOp::{Add, Copy, Max, Min};

#[rstest]
// bf16 1.0 + 2^-8 = 0x3F80 (the exact sum 1.00390625 ties to even).
#[case(Add, Dtype::Bfloat16, vec![0x80, 0x3F], vec![0x80, 0x3B], vec![0x80, 0x3F])]
// e4m3 (max 240) 240 + 16 overflows to Inf 0x78: the accumulate path forces config 0.
#[case(Add, Dtype::Float8E4, vec![0x77], vec![0x58], vec![0x78])]
// e5m2 57344 + 57344 → Inf, not saturated.
#[case(Add, Dtype::Float8E5, vec![0x7B], vec![0x7B], vec![0x7C])]
// int32 wraps.
#[case(Add, Dtype::Int32, f(0x7FFF_FFFF).to_vec(), f(1).to_vec(), f(0x8000_0000).to_vec())]
// int64 wraps; min/max are signed.
#[case(Add, Dtype::Int64, i64::MAX.to_le_bytes().to_vec(), 1i64.to_le_bytes().to_vec(), i64::MIN.to_le_bytes().to_vec())]
#[case(Max, Dtype::Int32, f(0xFFFF_FFFF).to_vec(), f(1).to_vec(), f(1).to_vec())]
#[case(Min, Dtype::Int32, f(0xFFFF_FFFF).to_vec(), f(1).to_vec(), f(0xFFFF_FFFF).to_vec())]
// fp32 max: a NaN in dst sticks, a NaN in src is ignored, a tie keeps dst (−0 vs +0).
#[case(Max, Dtype::Float32, f(0x7FC0_0000).to_vec(), f(0x3F80_0000).to_vec(), f(0x7FC0_0000).to_vec())]
#[case(Max, Dtype::Float32, f(0x3F80_0000).to_vec(), f(0x7FC0_0000).to_vec(), f(0x3F80_0000).to_vec())]
#[case(Max, Dtype::Float32, f(0x8000_0000).to_vec(), f(0x0000_0000).to_vec(), f(0x8000_0000).to_vec())]
#[case(Min, Dtype::Float32, f(0x0000_0000).to_vec(), f(0x8000_0000).to_vec(), f(0x0000_0000).to_vec())]
#[case(Min, Dtype::Float32, f(0x4000_0000).to_vec(), f(0x3F80_0000).to_vec(), f(0x3F80_0000).to_vec())]
// fp16 1 + 1 = 2; float16 NaN under refsim is 0x7E00.
#[case(Add, Dtype::Float16, vec![0x00, 0x3C], vec![0x00, 0x3C], vec![0x00, 0x40])]
#[case(Add, Dtype::Float16, vec![0x00, 0x7C], vec![0x00, 0xFC], vec![0x00, 0x7E])]
// Copy moves bytes for any dtype.
#[case(Copy, Dtype::Float8E4m3fn, vec![0x11], vec![0x7F], vec![0x7F])]
#[case(Copy, Dtype::Uint64, vec![1; 8], vec![9; 8], vec![9; 8])]
fn accumulate_table(
    #[case] op: MemoryReductionOp,
    #[case] dt: Dtype,
    #[case] dst: Vec<u8>,
    #[case] src: Vec<u8>,
    #[case] want: Vec<u8>,
) {
    assert_eq!(acc(op, dt, &dst, &src).unwrap(), want, "{op} {dt}");
}

#[test]
fn only_the_eight_reducible_dtypes_reduce() {
    for dt in <Dtype as bir_ir::BirEnum>::ALL {
        let z = vec![0u8; dt.size()];
        for op in [Add, Min, Max] {
            let r = acc(op, *dt, &z, &z);
            assert_eq!(r.is_ok(), dt.is_reducible(), "{op} on {dt}: {r:?}");
        }
        assert!(acc(Copy, *dt, &z, &z).is_ok(), "copy on {dt}");
    }
}

/// Three contributions per element into a four-element bf16 slice, narrowed after each one
/// (worked by hand; bf16 has 8 significant bits, so next to 1.0 its spacing is 2^-7):
/// element 0: (1.0 + 2^-8, a tie, RNE keeps even 1.0) + 2^-8 → 1.0 again = 0x3F80;
/// element 1: the same values in another order, (0 + 2^-8) + 2^-8 = 2^-7, + 1.0 = 1 + 2^-7 = 0x3F81;
/// element 2: 1.0 + 3·2^-9 (0x3BC0) is 3/4 of the way to 1 + 2^-7: rounds up to 0x3F81;
/// element 3: (1 + 2^-7) + 2^-8 is a tie with an odd lower neighbour: rounds up to even 0x3F82.
/// This fails if a slice pairs dst k with any src other than k, if a step does not narrow to bf16,
/// or if the narrowing truncates or rounds ties up, down or away.
#[test]
fn slices_accumulate_element_by_element_and_round_each_step() {
    let bf = |v: [u16; 4]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let mut d = bf([0x3F80, 0x0000, 0x3F80, 0x3F81]);
    for src in [[0x3B80, 0x3B80, 0x3BC0, 0x3B80], [0x3B80, 0x3B80, 0, 0], [0x0000, 0x3F80, 0, 0]] {
        accumulate_slice(Add, Dtype::Bfloat16, &mut d, &bf(src), &Profile::refsim()).unwrap();
    }
    assert_eq!(d, bf([0x3F80, 0x3F81, 0x3F81, 0x3F82]));
}

#[rstest]
#[case(AluOp::Bypass, Ok(Copy))]
#[case(AluOp::Add, Ok(Add))]
#[case(AluOp::Max, Err(NumericsError::NoMemoryReduction(AluOp::Max)))]
#[case(AluOp::Min, Err(NumericsError::NoMemoryReduction(AluOp::Min)))]
#[case(AluOp::Mult, Err(NumericsError::NoMemoryReduction(AluOp::Mult)))]
fn alu_to_memory_reduction(#[case] op: AluOp, #[case] want: Result<MemoryReductionOp, NumericsError>) {
    assert_eq!(memory_reduction(op), want);
}
