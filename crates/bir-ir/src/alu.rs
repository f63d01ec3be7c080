//! `bir::AluOpType`: the 33 ALU operations (re-facts §2), their BIR JSON spellings, CoreV4
//! `ALU_OP` wire bytes and an operand classification.
//!
//! Which functor table runs an op, and what it computes, is the `numerics` crate's concern
//! (seed 000 §2.1); this module only states the facts every crate shares.

use crate::enum_macro::bir_enum;

bir_enum! {
    /// An ALU operation. The discriminant is the reference ordinal (re-facts §2, CERTAIN).
    /// `acc` below is the left operand; `x` the right one.
    pub enum AluOp ("ALU op") {
        /// `acc` (unary; passes the value through).
        Bypass = 0 => ["bypass"],
        /// `!acc` (unary, bitwise).
        BitwiseNot = 1 => ["bitwise_not"],
        /// `acc << x`.
        ArithShiftLeft = 2 => ["arith_shift_left"],
        /// `acc >> x`, sign-propagating.
        ArithShiftRight = 3 => ["arith_shift_right"],
        /// `acc + x`.
        Add = 4 => ["add"],
        /// `acc - x`.
        Subtract = 5 => ["subtract"],
        /// `acc * x`.
        Mult = 6 => ["mult", "multiply"],
        /// `acc / x`.
        Divide = 7 => ["divide"],
        /// `max(acc, x)`.
        Max = 8 => ["max"],
        /// `min(acc, x)`.
        Min = 9 => ["min"],
        /// `acc & x`.
        BitwiseAnd = 10 => ["bitwise_and"],
        /// `acc | x`.
        BitwiseOr = 11 => ["bitwise_or"],
        /// `acc ^ x`.
        BitwiseXor = 12 => ["bitwise_xor"],
        /// `acc && x`.
        LogicalAnd = 13 => ["logical_and"],
        /// `acc || x`.
        LogicalOr = 14 => ["logical_or"],
        /// `acc != x` as booleans.
        LogicalXor = 15 => ["logical_xor"],
        /// `acc << x`, unsigned.
        LogicalShiftLeft = 16 => ["logical_shift_left"],
        /// `acc >> x`, zero-filling.
        LogicalShiftRight = 17 => ["logical_shift_right"],
        /// `acc == x`.
        IsEqual = 18 => ["is_equal", "equal"],
        /// `acc != x`.
        NotEqual = 19 => ["not_equal"],
        /// `acc > x`.
        IsGt = 20 => ["is_gt", "greater"],
        /// `acc >= x`.
        IsGe = 21 => ["is_ge", "greater_equal"],
        /// `acc < x`.
        IsLt = 22 => ["is_lt", "less"],
        /// `acc <= x`.
        IsLe = 23 => ["is_le", "less_equal"],
        /// Mean (TensorReduce only; absent from every functor table).
        Average = 24 => ["average"],
        /// Element-wise multiply with a dedicated silicon opcode (absent from every functor table).
        ElemwiseMul = 25 => ["elemwise_mul"],
        /// `powf(acc, x)`.
        Pow = 26 => ["pow"],
        /// `acc mod x`.
        Mod = 27 => ["mod"],
        /// `1 / sqrt(acc)` (unary).
        Rsqrt = 28 => ["rsqrt"],
        /// `|acc|` (unary).
        Abs = 29 => ["abs"],
        /// `max(|acc|, |x|)` (CoreV4 only).
        AbsMax = 30 => ["abs_max"],
        /// `min(|acc|, |x|)` (CoreV4 only).
        AbsMin = 31 => ["abs_min"],
        /// Integer `acc mod x` (int32 band, CoreV4 only).
        ModInt = 32 => ["mod_int"],
    }
}

/// How an ALU op treats its operands. Documented per op in docs/bir-json.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluClass {
    /// Bit manipulation on integer containers: bitwise and/or/xor/not and the four shifts.
    Bitvec,
    /// Numeric binary arithmetic (add, subtract, mult, divide, max, min, pow, mod, ...).
    Arithmetic,
    /// Predicates producing a truth value (`is_*`, `not_equal`).
    Comparison,
    /// Boolean combinations of truth values (`logical_and/or/xor`).
    Logical,
    /// One-operand ops; the right operand is ignored (bypass, rsqrt, abs).
    Unary,
}

impl AluOp {
    /// The CoreV4 `ALU_OP` wire byte; `None` for average and elemwise_mul, which have none
    /// (re-facts §2, CONFIRMED).
    pub fn wire(self) -> Option<u8> {
        use AluOp::*;
        Some(match self {
            Average | ElemwiseMul => return None,
            NotEqual => 0x18,
            IsGt => 0x13,
            IsGe => 0x14,
            IsLt => 0x16,
            IsLe => 0x15,
            Pow => 0x1a,
            Mod => 0x1b,
            Rsqrt => 0x1d,
            Abs => 0x19,
            AbsMax => 0x20,
            AbsMin => 0x21,
            ModInt => 0xC8,
            // 0..=18 are identity-coded.
            other => other as u8,
        })
    }

    /// The op's operand class.
    pub fn class(self) -> AluClass {
        use AluOp::*;
        match self {
            Bypass | Rsqrt | Abs => AluClass::Unary,
            BitwiseNot | ArithShiftLeft | ArithShiftRight | BitwiseAnd | BitwiseOr | BitwiseXor
            | LogicalShiftLeft | LogicalShiftRight => AluClass::Bitvec,
            IsEqual | NotEqual | IsGt | IsGe | IsLt | IsLe => AluClass::Comparison,
            LogicalAnd | LogicalOr | LogicalXor => AluClass::Logical,
            Add | Subtract | Mult | Divide | Max | Min | Average | ElemwiseMul | Pow | Mod | AbsMax
            | AbsMin | ModInt => AluClass::Arithmetic,
        }
    }

    /// True for a bit operation ([`AluClass::Bitvec`]). An instruction runs on the int32 path
    /// when any of its non-bypass ops is one: the reference's bitvec predicate is not pinned
    /// (re-facts §2), this is birsim's reading (docs/fidelity.md S3, ASSUMED).
    pub fn is_bitvec(self) -> bool {
        self.class() == AluClass::Bitvec
    }

    /// True when the right operand is ignored (bypass, bitwise_not, rsqrt, abs; re-facts §2).
    pub fn is_unary(self) -> bool {
        matches!(self, AluOp::Bypass | AluOp::BitwiseNot | AluOp::Rsqrt | AluOp::Abs)
    }

    /// True when `op(a, b) == op(b, a)`; subtract, divide, shifts, pow, mod and the ordered
    /// comparisons are order-sensitive (re-facts §2).
    pub fn is_commutative(self) -> bool {
        use AluOp::*;
        !matches!(
            self,
            Subtract
                | Divide
                | ArithShiftLeft
                | ArithShiftRight
                | LogicalShiftLeft
                | LogicalShiftRight
                | Pow
                | Mod
                | ModInt
                | IsGt
                | IsGe
                | IsLt
                | IsLe
        ) && !self.is_unary()
    }
}
