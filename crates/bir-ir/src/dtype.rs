//! `bir::Dtype`: the reference's 20 data types (re-facts §1), their container sizes, BIR JSON
//! spellings, ISA `NEURON_ISA_TPB_DTYPE` wire tags and x4 packing.
//!
//! Only the per-dtype *facts* live here. How values are encoded and decoded is the `numerics`
//! crate's job, which builds on [`Dtype::class`] so no other crate re-derives the classification.

use crate::enum_macro::bir_enum;

bir_enum! {
    /// A BIR element type. The discriminant is the reference ordinal (re-facts §1, CONFIRMED).
    ///
    /// `bool`, which appears in some dumps but is not one of the 20, is read as `uint8`
    /// (docs/fidelity.md, ASSUMED).
    pub enum Dtype ("dtype") {
        /// Unsigned 8-bit integer.
        Uint8 = 0 => ["uint8", "bool"],
        /// Signed 8-bit integer.
        Int8 = 1 => ["int8"],
        /// Four FP4 E2M1 lanes packed in a 16-bit container.
        Float4E2m1fnX4 = 2 => ["float4_e2m1fn_x4"],
        /// Legacy FP8 E3M4.
        Float8E3 = 3 => ["float8e3", "float8_e3m4"],
        /// Legacy IEEE-style FP8 E4M3 (max 240, has Inf).
        Float8E4 = 4 => ["float8e4", "float8_e4m3"],
        /// OCP FP8 E4M3FN (max 448, no Inf).
        Float8E4m3fn = 5 => ["float8_e4m3fn"],
        /// MX block-scale exponent E8M0 (unsigned, no mantissa).
        Float8E8m0fnu = 6 => ["float8_e8m0fnu"],
        /// FP8 E5M2.
        Float8E5 = 7 => ["float8e5", "float8_e5m2"],
        /// Four FP8 E4M3FN lanes packed in a 32-bit container.
        Float8E4m3fnX4 = 8 => ["float8_e4m3fn_x4", "fp8_e4m3_x4"],
        /// Four FP8 E5M2 lanes packed in a 32-bit container.
        Float8E5m2X4 = 9 => ["float8_e5m2_x4", "fp8_e5m2_x4"],
        /// Unsigned 16-bit integer.
        Uint16 = 10 => ["uint16"],
        /// Signed 16-bit integer.
        Int16 = 11 => ["int16"],
        /// bfloat16.
        Bfloat16 = 12 => ["bfloat16"],
        /// IEEE binary16.
        Float16 = 13 => ["float16"],
        /// Unsigned 32-bit integer.
        Uint32 = 14 => ["uint32"],
        /// Signed 32-bit integer.
        Int32 = 15 => ["int32"],
        /// IEEE binary32.
        Float32 = 16 => ["float32"],
        /// fp32 container rounded to 10 explicit mantissa bits on encode (TF32-like; fidelity N11).
        Float32r = 17 => ["float32r", "tfloat32"],
        /// Unsigned 64-bit integer.
        Uint64 = 18 => ["uint64"],
        /// Signed 64-bit integer.
        Int64 = 19 => ["int64"],
    }
}

/// What kind of values a dtype holds; the simulator picks its compute domain from this.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DtypeClass {
    /// Unsigned integer.
    UnsignedInt,
    /// Signed (two's complement) integer.
    SignedInt,
    /// A binary floating-point format (one value per container).
    Float,
    /// Several low-precision float lanes packed in one container (`_x4` dtypes).
    PackedFloat,
    /// The E8M0 scale format; the reference casts it as a raw byte (re-facts §4).
    ScaleExponent,
}

/// Per-dtype facts, one row per ordinal.
struct Info {
    bytes: u8,
    isa: u8,
    lanes: u8,
    class: DtypeClass,
}

const fn info(bytes: u8, isa: u8, lanes: u8, class: DtypeClass) -> Info {
    Info { bytes, isa, lanes, class }
}

use DtypeClass::{Float, PackedFloat, ScaleExponent, SignedInt, UnsignedInt};

/// Indexed by ordinal. Sizes and CoreV4 wire tags from re-facts §1 (CONFIRMED).
const INFO: [Info; 20] = [
    info(1, 3, 1, UnsignedInt),   // 0 uint8
    info(1, 2, 1, SignedInt),     // 1 int8
    info(2, 16, 4, PackedFloat),  // 2 float4_e2m1fn_x4
    info(1, 13, 1, Float),        // 3 float8e3
    info(1, 14, 1, Float),        // 4 float8e4
    info(1, 14, 1, Float),        // 5 float8_e4m3fn
    info(1, 3, 1, ScaleExponent), // 6 float8_e8m0fnu
    info(1, 15, 1, Float),        // 7 float8e5
    info(4, 14, 4, PackedFloat),  // 8 float8_e4m3fn_x4
    info(4, 15, 4, PackedFloat),  // 9 float8_e5m2_x4
    info(2, 5, 1, UnsignedInt),   // 10 uint16
    info(2, 4, 1, SignedInt),     // 11 int16
    info(2, 6, 1, Float),         // 12 bfloat16
    info(2, 7, 1, Float),         // 13 float16
    info(4, 9, 1, UnsignedInt),   // 14 uint32
    info(4, 8, 1, SignedInt),     // 15 int32
    info(4, 10, 1, Float),        // 16 float32
    info(4, 11, 1, Float),        // 17 float32r
    info(8, 1, 1, UnsignedInt),   // 18 uint64
    info(8, 12, 1, SignedInt),    // 19 int64
];

impl Dtype {
    fn info(self) -> &'static Info {
        &INFO[self as usize]
    }

    /// Container size in bytes (the reference's 20-entry stride table, seed 000 §8).
    pub const fn size(self) -> usize {
        INFO[self as usize].bytes as usize
    }

    /// The CoreV4 ISA `NEURON_ISA_TPB_DTYPE` wire tag (re-facts §1; many-to-one).
    pub fn isa_code(self) -> u8 {
        self.info().isa
    }

    /// Logical values per container: 4 for the `_x4` dtypes, else 1.
    pub fn lanes(self) -> usize {
        usize::from(self.info().lanes)
    }

    /// The value class of this dtype.
    pub fn class(self) -> DtypeClass {
        self.info().class
    }

    /// True for integer dtypes (signed or unsigned).
    pub fn is_integer(self) -> bool {
        matches!(self.class(), UnsignedInt | SignedInt)
    }

    /// True for the eight dtypes `cast_copy_or_accumulate` can add/min/max (re-facts §8, CONFIRMED):
    /// float8e3, float8e4, float8e5, bfloat16, float16, int32, float32, int64.
    pub fn is_reducible(self) -> bool {
        matches!(
            self,
            Dtype::Float8E3
                | Dtype::Float8E4
                | Dtype::Float8E5
                | Dtype::Bfloat16
                | Dtype::Float16
                | Dtype::Int32
                | Dtype::Float32
                | Dtype::Int64
        )
    }
}

/// `NEURON_ISA_TPB_DTYPE` codes that name no BIR dtype but appear in ISA words (re-facts §1).
pub mod isa_only {
    /// Invalid / unset.
    pub const INVALID: u8 = 0x00;
    /// FP8 E2M5 (gen5).
    pub const FP8_EXP2: u8 = 0x11;
    /// 4-bit integer.
    pub const INT4: u8 = 0x12;
}
