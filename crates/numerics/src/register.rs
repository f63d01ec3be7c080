//! The engines' 32-bit scalar register arithmetic: RegisterAlu (73) and CompareAndBranch (78)
//! (re-facts §5 "RegState": 32-bit registers; KLR `RegisterAluOp`; docs/bir-json.md
//! "RegisterAlu", docs/fidelity.md B3).
//!
//! The sources name the instruction and its `AluOp`, not its arithmetic: birsim computes on
//! the 32 bits, reading them signed or unsigned as the left operand's dtype says. Add,
//! subtract and multiply wrap mod 2^32 (the and a sequencer's plain integer ALU);
//! divide truncates toward zero; mod takes the dividend's sign (C `%`); a zero divisor is an
//! error (the caller's fault); shift counts outside 0..32 shift everything out, as
//! `ts_int_ops` does; an arithmetic right shift fills with the sign of a signed value and with
//! zeros for an unsigned one; comparisons and the logical ops give 1 or 0.

use bir_ir::AluOp;

/// Why a register op has no result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegisterAluError {
    /// divide or mod by 0.
    DivisionByZero,
    /// The op is not a register ALU op.
    Unsupported(AluOp),
}

/// `a op b` on 32-bit registers, `signed` giving how their bits read (module doc).
pub fn register_alu(op: AluOp, a: u32, b: u32, signed: bool) -> Result<u32, RegisterAluError> {
    let (sa, sb) = (a as i32, b as i32);
    let truth = |t: bool| u32::from(t);
    let shift = |count: u32| (count < 32).then_some(count);
    Ok(match op {
        AluOp::Bypass => a,
        AluOp::Add => a.wrapping_add(b),
        AluOp::Subtract => a.wrapping_sub(b),
        AluOp::Mult => a.wrapping_mul(b),
        AluOp::Divide | AluOp::Mod if b == 0 => return Err(RegisterAluError::DivisionByZero),
        AluOp::Divide if signed => sa.wrapping_div(sb) as u32,
        AluOp::Divide => a / b,
        AluOp::Mod if signed => sa.wrapping_rem(sb) as u32,
        AluOp::Mod => a % b,
        AluOp::Max if signed => sa.max(sb) as u32,
        AluOp::Max => a.max(b),
        AluOp::Min if signed => sa.min(sb) as u32,
        AluOp::Min => a.min(b),
        AluOp::Abs if signed => sa.wrapping_abs() as u32,
        AluOp::Abs => a,
        AluOp::BitwiseAnd => a & b,
        AluOp::BitwiseOr => a | b,
        AluOp::BitwiseXor => a ^ b,
        AluOp::BitwiseNot => !a,
        AluOp::LogicalShiftLeft | AluOp::ArithShiftLeft => shift(b).map_or(0, |c| a << c),
        AluOp::LogicalShiftRight => shift(b).map_or(0, |c| a >> c),
        AluOp::ArithShiftRight if signed => (sa >> shift(b).unwrap_or(31)) as u32,
        AluOp::ArithShiftRight => shift(b).map_or(0, |c| a >> c),
        AluOp::IsEqual => truth(a == b),
        AluOp::NotEqual => truth(a != b),
        AluOp::IsGt if signed => truth(sa > sb),
        AluOp::IsGt => truth(a > b),
        AluOp::IsGe if signed => truth(sa >= sb),
        AluOp::IsGe => truth(a >= b),
        AluOp::IsLt if signed => truth(sa < sb),
        AluOp::IsLt => truth(a < b),
        AluOp::IsLe if signed => truth(sa <= sb),
        AluOp::IsLe => truth(a <= b),
        AluOp::LogicalAnd => truth(a != 0 && b != 0),
        AluOp::LogicalOr => truth(a != 0 || b != 0),
        AluOp::LogicalXor => truth((a != 0) != (b != 0)),
        other => return Err(RegisterAluError::Unsupported(other)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values worked by hand: wrap, the signed corner of divide, C remainder signs, shifts at
    /// and past the width, and orders that differ signed and unsigned.
    #[test]
    fn hand_worked_values() {
        let m = |x: i32| x as u32;
        let cases: &[(AluOp, u32, u32, bool, u32)] = &[
            (AluOp::Add, 0xFFFF_FFFF, 1, true, 0),
            (AluOp::Add, m(i32::MAX), 1, true, 0x8000_0000),
            (AluOp::Subtract, 0, 1, false, 0xFFFF_FFFF),
            (AluOp::Mult, 0x1_0001, 0x1_0001, false, 0x0002_0001),
            (AluOp::Divide, m(-7), 2, true, m(-3)),
            (AluOp::Divide, m(-7), 2, false, 0x7FFF_FFFC),
            (AluOp::Divide, 0x8000_0000, m(-1), true, 0x8000_0000),
            (AluOp::Mod, m(-7), 2, true, m(-1)),
            (AluOp::Mod, 7, m(-2), true, 1),
            (AluOp::Max, m(-1), 1, true, 1),
            (AluOp::Max, m(-1), 1, false, 0xFFFF_FFFF),
            (AluOp::Abs, 0x8000_0000, 0, true, 0x8000_0000),
            (AluOp::LogicalShiftLeft, 1, 31, true, 0x8000_0000),
            (AluOp::LogicalShiftLeft, 1, 32, true, 0),
            (AluOp::LogicalShiftRight, 0x8000_0000, 31, true, 1),
            (AluOp::ArithShiftRight, 0x8000_0000, 31, true, 0xFFFF_FFFF),
            (AluOp::ArithShiftRight, 0x8000_0000, m(-1), true, 0xFFFF_FFFF),
            (AluOp::ArithShiftRight, 0x4000_0000, 40, true, 0),
            (AluOp::ArithShiftRight, 0x8000_0000, 4, false, 0x0800_0000),
            (AluOp::IsLt, m(-1), 0, true, 1),
            (AluOp::IsLt, m(-1), 0, false, 0),
            (AluOp::LogicalXor, 5, 0, true, 1),
            (AluOp::BitwiseNot, 0x0F0F_0F0F, 7, true, 0xF0F0_F0F0),
        ];
        for &(op, a, b, signed, want) in cases {
            assert_eq!(register_alu(op, a, b, signed), Ok(want), "{op} {a:#x} {b:#x} signed={signed}");
        }
        assert_eq!(register_alu(AluOp::Divide, 1, 0, true), Err(RegisterAluError::DivisionByZero));
        assert_eq!(register_alu(AluOp::Mod, 1, 0, false), Err(RegisterAluError::DivisionByZero));
        assert_eq!(register_alu(AluOp::Pow, 1, 1, false), Err(RegisterAluError::Unsupported(AluOp::Pow)));
    }
}
