//! The common parts of the 64-byte ISA words (seed 004 §3; re-facts §8 "Device 64-byte words";
//! docs/isa.md "Word layouts"): the header, ADDR4 / ADDR8 addresses with their markers,
//! TENSORnD, MEM_PATTERN4D, the ISA dtype byte and the small enums and bitfields.
//!
//! Every value here is a typed view of bits; nothing is range-checked beyond what a decode needs
//! to give the bits a meaning (an enum byte outside its enum). Everything else — counts, partition
//! ranges, dtype sets — is the validator's job (`super::validate`).

use bir_ir::Dtype;

/// Declares a one-byte ISA enum with its wire values and header names, plus `from_byte`,
/// `byte`, `name`, `from_name` and `ALL`.
macro_rules! isa_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in wire order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The value for a wire byte, if it is one of the enum's.
            pub const fn from_byte(b: u8) -> Option<$name> {
                match b {
                    $( $value => Some($name::$variant), )+
                    _ => None,
                }
            }

            /// The wire byte.
            pub const fn byte(self) -> u8 {
                match self {
                    $( $name::$variant => $value, )+
                }
            }

            /// The header's name (the JSON spelling).
            pub const fn name(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }

            /// The value with this header name.
            pub fn from_name(s: &str) -> Option<$name> {
                match s {
                    $( $text => Some($name::$variant), )+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use isa_enum;

/// The 4-byte prefix of every word (seed 004 §3; contract X1 ASSUMED: the opcode byte at +0,
/// `inst_flags` at +1; +2..+3 kept raw).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Header {
    /// +0: the `NEURON_ISA_TPB_OPCODE` byte.
    pub opcode: u8,
    /// +1: `header.inst_flags` (v5 GATHER reads bit 0 as "tile-aware channel range", X13).
    pub inst_flags: u8,
    /// +2..+3: not named by any source, kept raw.
    pub unnamed_2: [u8; 2],
}

impl Header {
    /// A header with this opcode byte and every other bit zero.
    pub const fn new(opcode: u8) -> Header {
        Header { opcode, inst_flags: 0, unnamed_2: [0; 2] }
    }
}

/// On-chip memory space of an ADDR4 (contract X3 ASSUMED: bit 25).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Space {
    /// State buffer (bit 25 = 0).
    #[default]
    Sbuf,
    /// Partial-sum buffer (bit 25 = 1).
    Psum,
}

impl Space {
    /// The JSON spelling, `SBUF` or `PSUM`.
    pub const fn name(self) -> &'static str {
        match self {
            Space::Sbuf => "SBUF",
            Space::Psum => "PSUM",
        }
    }

    /// The space with this spelling.
    pub fn from_name(s: &str) -> Option<Space> {
        match s {
            "SBUF" => Some(Space::Sbuf),
            "PSUM" => Some(Space::Psum),
            _ => None,
        }
    }
}

isa_enum! {
    /// The ADDR4 marker, bits 29..31 of the u32 (re-facts §8 "ADDR4 marker": 0x00, 0x40, 0x80,
    /// 0xC0, 0x20 INDIRECT_IMM, 0xA0 INDIRECT_REG; the values here are the top byte & 0xE0, contract
    /// X3 ASSUMED for where the bits sit). 0x60 and 0xE0 are a decode error.
    pub enum Addr4Marker {
        /// 0x00: an immediate address.
        Imm = 0x00 => "IMM",
        /// 0x20: an immediate address of an index tensor (MEM_PATTERN4D indirect form).
        IndirectImm = 0x20 => "INDIRECT_IMM",
        /// 0x40: shape from a register.
        ShapeReg = 0x40 => "SHAPE_REG",
        /// 0x80: address from a register.
        AddrReg = 0x80 => "ADDR_REG",
        /// 0xA0: an index tensor address from a register.
        IndirectReg = 0xA0 => "INDIRECT_REG",
        /// 0xC0: address and shape from registers.
        AddrRegShapeReg = 0xC0 => "ADDR_REG|SHAPE_REG",
    }
}

impl Addr4Marker {
    /// True for the two INDIRECT markers, which select MEM_PATTERN4D's indirect form (X8).
    pub const fn is_indirect(self) -> bool {
        matches!(self, Addr4Marker::IndirectImm | Addr4Marker::IndirectReg)
    }

    /// True for every marker that reads a register, for the address or the shape (all but IMM
    /// and INDIRECT_IMM).
    pub const fn uses_register(self) -> bool {
        !matches!(self, Addr4Marker::Imm | Addr4Marker::IndirectImm)
    }

    /// True when bit 7 (ADDR_REG) is set: the address comes from a register (ADDR_REG,
    /// INDIRECT_REG, ADDR_REG|SHAPE_REG), so the offset bits are not an address.
    pub const fn address_from_register(self) -> bool {
        self.byte() & 0x80 != 0
    }
}

/// A 4-byte on-chip address (contract X3; seed 004 §3a TENSOR4D's `start_addr`). The partition
/// sits where re-facts §6 "Partition base on the wire" places it, `basePartition << 18` (SBUF) or
/// `<< 15` (PSUM) {S}, so the byte offset is bits 0..17 (SBUF, 256 KiB: the largest SBUF
/// partition, v4/v5) or 0..14 (PSUM, 32 KiB ≥ its 16 KiB). Ours (ASSUMED): the marker in bits
/// 29..31, the space in bit 25 (the first bit above 128 SBUF partitions × 2^18 bytes), and the
/// bits left over — SBUF 26..28, PSUM 22..24 and 26..28 — kept raw in [`Addr4::reserved`].
///
/// | bits | SBUF (bit 25 = 0) | PSUM (bit 25 = 1) |
/// |---|---|---|
/// | 29..31 | marker | marker |
/// | 26..28 | reserved | reserved |
/// | 22..24 | partition (high 3 bits) | reserved |
/// | 18..21 | partition (low 4 bits) | partition (high 4 bits) |
/// | 15..17 | offset | partition (low 3 bits) |
/// | 0..14 | offset | offset |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Addr4 {
    /// Bits 29..31.
    pub marker: Addr4Marker,
    /// The start partition: bits 18..24 (SBUF) or 15..21 (PSUM); 0..=127 fit the field.
    pub partition: u8,
    /// Bit 25.
    pub space: Space,
    /// The byte offset inside the partition: bits 0..17 (SBUF) or 0..14 (PSUM).
    pub offset: u32,
    /// The bits the layout leaves unnamed, in place ([`Addr4::reserved_mask`] of the space):
    /// kept raw so every word re-encodes; they must be 0 (rule `addr4-reserved`).
    pub reserved: u32,
}

impl Addr4 {
    /// Partition field width: 7 bits.
    pub const PARTITION_MAX: u8 = 0x7F;
    /// The space bit (bit 25; X3 ASSUMED).
    pub const SPACE_BIT: u32 = 1 << 25;

    /// Where the partition field starts: 18 for SBUF, 15 for PSUM (re-facts §6).
    pub const fn partition_shift(space: Space) -> u32 {
        match space {
            Space::Sbuf => 18,
            Space::Psum => 15,
        }
    }

    /// The largest offset the field holds: 2^18 − 1 (SBUF) or 2^15 − 1 (PSUM).
    pub const fn offset_max(space: Space) -> u32 {
        (1 << Addr4::partition_shift(space)) - 1
    }

    /// The unnamed bits of the space's layout: SBUF 26..28 (0x1C00_0000), PSUM 22..24 and
    /// 26..28 (0x1DC0_0000).
    pub const fn reserved_mask(space: Space) -> u32 {
        let above_partition = ((1u32 << 25) - 1) & !((1 << (Addr4::partition_shift(space) + 7)) - 1);
        0x1C00_0000 | above_partition
    }

    /// An IMM address.
    pub const fn imm(partition: u8, space: Space, offset: u32) -> Addr4 {
        Addr4 { marker: Addr4Marker::Imm, partition, space, offset, reserved: 0 }
    }

    /// The low 29 bits (everything but the marker). Fields wider than their bits are truncated
    /// (the validator reports them).
    pub const fn location_bits(&self) -> u32 {
        let psum = matches!(self.space, Space::Psum);
        (if psum { Addr4::SPACE_BIT } else { 0 })
            | ((self.partition as u32) & 0x7F) << Addr4::partition_shift(self.space)
            | (self.offset & Addr4::offset_max(self.space))
            | (self.reserved & Addr4::reserved_mask(self.space))
    }

    /// Splits the low 29 bits (the marker bits are ignored) into (partition, space, offset,
    /// reserved).
    pub const fn split_location(bits: u32) -> (u8, Space, u32, u32) {
        let space = if bits & Addr4::SPACE_BIT != 0 { Space::Psum } else { Space::Sbuf };
        let partition = ((bits >> Addr4::partition_shift(space)) & 0x7F) as u8;
        (partition, space, bits & Addr4::offset_max(space), bits & Addr4::reserved_mask(space))
    }
}

isa_enum! {
    /// The base of the ADDR8 marker, bits 61..63 of the u64 (re-facts §8 "ADDR8 marker", mask
    /// 0xFC: 0x00 IMM, 0x40 SHAPE_REG, 0x80 ADDR_REG, 0xC0 both, 0x20 / 0x60 address table with an
    /// immediate / register shape; contract X4 ASSUMED for where the bits sit). The values are
    /// the top byte & 0xE0; 0xA0 and 0xE0 are a decode error.
    pub enum Addr8Marker {
        /// 0x00: an immediate address.
        Imm = 0x00 => "IMM",
        /// 0x20: an address table, immediate shape.
        AddrTableImm = 0x20 => "ADDR_TABLE",
        /// 0x40: shape from a register (num_elem must be 0; lifts the 4096 index cap).
        ShapeReg = 0x40 => "SHAPE_REG",
        /// 0x60: an address table, shape from a register.
        AddrTableReg = 0x60 => "ADDR_TABLE|SHAPE_REG",
        /// 0x80: address from a register.
        AddrReg = 0x80 => "ADDR_REG",
        /// 0xC0: address and shape from registers.
        AddrRegShapeReg = 0xC0 => "ADDR_REG|SHAPE_REG",
    }
}

impl Addr8Marker {
    /// True when bit 6 (SHAPE_REG) is set: SHAPE_REG, ADDR_REG|SHAPE_REG, ADDR_TABLE|SHAPE_REG.
    pub const fn has_shape_reg(self) -> bool {
        self.byte() & 0x40 != 0
    }
}

/// An 8-byte address (contract X4 ASSUMED layout): the top byte & 0xFC is the marker (base in
/// bits 61..63, OFFSET_REG bit 59, OFFSET_WIDE bit 58; bit 60 must be clear), bits 56..57 are
/// kept raw (they must be zero: a validator rule), the low 56 bits are the address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Addr8 {
    /// The marker's base (bits 61..63).
    pub marker: Addr8Marker,
    /// Marker bit 0x08 (bit 59): OFFSET_REG.
    pub offset_reg: bool,
    /// Marker bit 0x04 (bit 58): OFFSET_WIDE.
    pub offset_wide: bool,
    /// Bits 56..57 as a value 0..=3 (kept raw; must be 0).
    pub reserved: u8,
    /// Bits 0..55.
    pub address: u64,
}

/// Where an ADDR8 points (contract X5 ASSUMED, [`Addr8::target`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Addr8Target {
    /// Bit 55 clear: a DRAM byte address (the low 55 bits).
    Dram(u64),
    /// Bit 55 set: an on-chip address in ADDR4 form (IMM marker).
    OnChip {
        /// Start partition.
        partition: u8,
        /// Space.
        space: Space,
        /// Byte offset inside the partition.
        offset: u32,
    },
}

/// Why [`Addr8::target`] cannot place an on-chip ADDR8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum TargetError {
    /// Bits 29..31 of an on-chip address are not zero (an ADDR4 marker inside an ADDR8).
    #[error("an on-chip ADDR8 (bit 55 set) has ADDR4 marker bits 0x{0:02x} in bits 29..31; they must be 0")]
    Marker(u8),
    /// The low word of an on-chip address has ADDR4 reserved bits set (X3).
    #[error("an on-chip ADDR8 (bit 55 set) has ADDR4 reserved bits 0x{0:08x} set; they must be 0")]
    Reserved(u32),
    /// Bits 32..54 of an on-chip address are not zero (X31 ASSUMED).
    #[error("an on-chip ADDR8 (bit 55 set) has bits 32..54 = 0x{0:x}; they must be 0")]
    HighBits(u64),
}

impl Addr8 {
    /// Bit 55 of the address: set for an on-chip target (X5).
    pub const ON_CHIP_BIT: u64 = 1 << 55;
    /// The address field's mask (56 bits).
    pub const ADDRESS_MASK: u64 = (1 << 56) - 1;

    /// An IMM DRAM address.
    pub const fn dram(address: u64) -> Addr8 {
        Addr8 { marker: Addr8Marker::Imm, offset_reg: false, offset_wide: false, reserved: 0, address }
    }

    /// An IMM on-chip address (bit 55 set, the low 32 bits in ADDR4 form, X3).
    pub const fn on_chip(partition: u8, space: Space, offset: u32) -> Addr8 {
        let low = Addr4::imm(partition, space, offset).location_bits();
        Addr8::dram(Addr8::ON_CHIP_BIT | low as u64)
    }

    /// The whole marker byte (base | OFFSET_REG 0x08 | OFFSET_WIDE 0x04).
    pub const fn marker_byte(&self) -> u8 {
        self.marker.byte() | if self.offset_reg { 0x08 } else { 0 } | if self.offset_wide { 0x04 } else { 0 }
    }

    /// True when the marker takes the shape from a register (bit 6).
    pub const fn has_shape_reg(&self) -> bool {
        self.marker.has_shape_reg()
    }

    /// Where the address points (contract X5 ASSUMED, the one function that decides it): bit 55
    /// clear → a DRAM byte address; set → the low 32 bits are an ADDR4-form on-chip address
    /// (X3: space bit 25, partition bits 18..24 / 15..21, offset below it) whose marker bits
    /// 29..31 and reserved bits must be 0; bits 32..54 must be 0 too (X31 ASSUMED).
    pub const fn target(&self) -> Result<Addr8Target, TargetError> {
        let a = self.address;
        if a & Addr8::ON_CHIP_BIT == 0 {
            return Ok(Addr8Target::Dram(a));
        }
        let high = (a >> 32) & ((1 << 23) - 1);
        if high != 0 {
            return Err(TargetError::HighBits(high));
        }
        let low = a as u32;
        let marker = ((low >> 24) & 0xE0) as u8;
        if marker != 0 {
            return Err(TargetError::Marker(marker));
        }
        let (partition, space, offset, reserved) = Addr4::split_location(low);
        if reserved != 0 {
            return Err(TargetError::Reserved(reserved));
        }
        Ok(Addr8Target::OnChip { partition, space, offset })
    }
}

/// TENSORnD: `[ADDR4 start][N × i16 step_elem][N × u16 num_elem]`, 4 + 4N bytes (re-facts §8
/// TENSORnD, CONFIRMED; seed 004 §3a). Dim 0 is X, the innermost (contract X6 INFERRED).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorNd<const N: usize> {
    /// The start address; its partition is the first partition covered.
    pub start_addr: Addr4,
    /// Per-dim step in elements (signed), dim 0 = X.
    pub step_elem: [i16; N],
    /// Per-dim count, dim 0 = X (0 is invalid: a validator rule).
    pub num_elem: [u16; N],
}

impl<const N: usize> TensorNd<N> {
    /// Bytes on the wire.
    pub const WIRE_BYTES: usize = 4 + 4 * N;

    /// Elements per partition: the product of the counts.
    pub fn element_count(&self) -> u64 {
        self.num_elem.iter().map(|&n| u64::from(n)).product()
    }
}

/// TENSOR1D (8 bytes).
pub type Tensor1D = TensorNd<1>;
/// TENSOR2D (12 bytes).
pub type Tensor2D = TensorNd<2>;
/// TENSOR4D (20 bytes).
pub type Tensor4D = TensorNd<4>;

/// MEM_PATTERN4D's indirect form, `INDIRECT20B` (seed 004 §3b: `.i.p` is
/// `{index_addr, data_addr, num_elem, reserved[2]}`, 12 bytes, in a 20-byte union; the last ten
/// bytes kept raw).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Indirect20B {
    /// Union +0: the index tensor's start (SBUF; its marker is INDIRECT_IMM or INDIRECT_REG).
    pub index_addr: Addr4,
    /// Union +4: the source buffer's start (SBUF).
    pub data_addr: Addr4,
    /// Union +8: total elements per partition to read.
    pub num_elem: u16,
    /// Union +10..+19: `reserved[2]` and the union's tail, kept raw.
    pub unnamed_10: [u8; 10],
}

/// MEM_PATTERN4D: a union of TENSOR4D and the indirect form (seed 004 §3b), told apart by the
/// marker of its first ADDR4 (contract X8 ASSUMED: INDIRECT_IMM / INDIRECT_REG → indirect).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemPattern4D {
    /// The tensor form.
    Tensor(Tensor4D),
    /// The indirect form.
    Indirect(Indirect20B),
}

/// The `NEURON_ISA_TPB_DTYPE` byte, kept raw (re-facts §1 "ISA NEURON_ISA_TPB_DTYPE"); an unknown
/// code decodes and is a validator violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct IsaDtype(pub u8);

/// Names and byte sizes of the known ISA dtype codes (re-facts §1), indexed by code 0..=0x1F.
/// `None` name: no such code; `0` size: not a whole number of bytes or not given.
const ISA_DTYPES: [(Option<&str>, u8); 32] = [
    (Some("INVALID"), 0),
    (Some("UINT64"), 8),
    (Some("INT8"), 1),
    (Some("UINT8"), 1),
    (Some("INT16"), 2),
    (Some("UINT16"), 2),
    (Some("BFLOAT16"), 2),
    (Some("FP16"), 2),
    (Some("INT32"), 4),
    (Some("UINT32"), 4),
    (Some("FP32"), 4),
    (Some("FP32R"), 4),
    (Some("INT64"), 8),
    (Some("FP8_EXP3"), 1),
    (Some("FP8_EXP4"), 1),
    (Some("FP8_EXP5"), 1),
    (Some("FP4_EXP2"), 0),
    (Some("FP8_EXP2"), 1),
    (Some("INT4"), 0),
    (Some("SFP8_E8"), 1),
    (Some("SFP8_E7"), 1),
    (Some("SFP8_E6"), 1),
    (Some("SFP8_E5"), 1),
    (None, 0),
    (None, 0),
    (Some("CPTC1"), 0),
    (Some("CPTC2"), 0),
    (Some("CPTC3"), 0),
    (Some("CPTC4"), 0),
    (Some("CPTC5"), 0),
    (Some("CPTC6"), 0),
    (Some("CPTC7"), 0),
];

impl IsaDtype {
    /// 0: INVALID.
    pub const INVALID: IsaDtype = IsaDtype(0x0);
    /// 1.
    pub const UINT64: IsaDtype = IsaDtype(0x1);
    /// 2.
    pub const INT8: IsaDtype = IsaDtype(0x2);
    /// 3.
    pub const UINT8: IsaDtype = IsaDtype(0x3);
    /// 4.
    pub const INT16: IsaDtype = IsaDtype(0x4);
    /// 5.
    pub const UINT16: IsaDtype = IsaDtype(0x5);
    /// 6.
    pub const BFLOAT16: IsaDtype = IsaDtype(0x6);
    /// 7.
    pub const FP16: IsaDtype = IsaDtype(0x7);
    /// 8.
    pub const INT32: IsaDtype = IsaDtype(0x8);
    /// 9.
    pub const UINT32: IsaDtype = IsaDtype(0x9);
    /// 0xA.
    pub const FP32: IsaDtype = IsaDtype(0xA);
    /// 0xB: "FP22" partial fp32, allowed only as output (re-facts §1).
    pub const FP32R: IsaDtype = IsaDtype(0xB);
    /// 0xC.
    pub const INT64: IsaDtype = IsaDtype(0xC);
    /// 0xD: FP8 E3M4.
    pub const FP8_EXP3: IsaDtype = IsaDtype(0xD);
    /// 0xE: FP8 E4M3.
    pub const FP8_EXP4: IsaDtype = IsaDtype(0xE);
    /// 0xF: FP8 E5M2.
    pub const FP8_EXP5: IsaDtype = IsaDtype(0xF);

    fn entry(self) -> Option<(Option<&'static str>, u8)> {
        ISA_DTYPES.get(usize::from(self.0)).copied()
    }

    /// The header name (`UINT16`, `FP32`, …), or `None` for a code the header does not name.
    pub fn name(self) -> Option<&'static str> {
        self.entry().and_then(|(n, _)| n)
    }

    /// The code with this header name.
    pub fn from_name(s: &str) -> Option<IsaDtype> {
        ISA_DTYPES.iter().position(|(n, _)| *n == Some(s)).and_then(|i| u8::try_from(i).ok()).map(IsaDtype)
    }

    /// True for a code the header names, INVALID excluded.
    pub fn is_known(self) -> bool {
        self.0 != 0 && self.name().is_some()
    }

    /// Bytes per element, for the codes with a whole-byte element (INVALID, FP4, INT4 and the
    /// CPTC codes have none).
    pub fn size(self) -> Option<usize> {
        self.entry().map(|(_, s)| usize::from(s)).filter(|&s| s > 0)
    }

    /// True for the float codes that have a BIR counterpart (BF16, FP16, FP32, FP32R, FP8_EXP3/4/5).
    pub fn is_float(self) -> bool {
        matches!(self.0, 0x6 | 0x7 | 0xA | 0xB | 0xD | 0xE | 0xF)
    }

    /// The BIR dtype for this code (contract §0; X30 ASSUMED: the wire map is many-to-one, so the
    /// code maps to the lowest BIR ordinal with that `Dtype::isa_code` among the one-lane,
    /// non-scale dtypes: 3 → uint8, 0xE → float8e4, 0xF → float8e5). `None` for codes without a
    /// one-lane BIR dtype (INVALID, FP4_EXP2, FP8_EXP2, INT4, SFP8, CPTC, unknown).
    pub fn to_dtype(self) -> Option<Dtype> {
        Some(match self.0 {
            0x1 => Dtype::Uint64,
            0x2 => Dtype::Int8,
            0x3 => Dtype::Uint8,
            0x4 => Dtype::Int16,
            0x5 => Dtype::Uint16,
            0x6 => Dtype::Bfloat16,
            0x7 => Dtype::Float16,
            0x8 => Dtype::Int32,
            0x9 => Dtype::Uint32,
            0xA => Dtype::Float32,
            0xB => Dtype::Float32r,
            0xC => Dtype::Int64,
            0xD => Dtype::Float8E3,
            0xE => Dtype::Float8E4,
            0xF => Dtype::Float8E5,
            _ => return None,
        })
    }

    /// The ISA code of a BIR dtype (`Dtype::isa_code`, re-facts §1).
    pub fn from_dtype(d: Dtype) -> IsaDtype {
        IsaDtype(d.isa_code())
    }
}

impl From<Dtype> for IsaDtype {
    fn from(d: Dtype) -> IsaDtype {
        IsaDtype::from_dtype(d)
    }
}

impl std::fmt::Display for IsaDtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "0x{:02X}", self.0),
        }
    }
}

isa_enum! {
    /// `INDIRECT_DIM` in ISA order (re-facts §3 / §8: X 0, Y 1, Z 2, W 3, minor to major — the
    /// reverse of BIR's `IndirectDim`).
    pub enum IndirectDim {
        /// 0: the innermost dim.
        X = 0 => "X",
        /// 1.
        Y = 1 => "Y",
        /// 2.
        Z = 2 => "Z",
        /// 3: the outermost dim.
        W = 3 => "W",
    }
}

isa_enum! {
    /// `INDIRECT_DMA_ADDRESSING_MODE`, DMA_INDIRECT_FLAGS bits 0..1 (seed 004 §3c); 3 is a decode
    /// error.
    pub enum IndirectMode {
        /// 0: indices applied to the source (gather).
        SrcIndirection = 0 => "SRC_INDIRECTION",
        /// 1: indices applied to the destination (scatter).
        DstIndirection = 1 => "DST_INDIRECTION",
        /// 2: both, two independent index tensors.
        SrcDstIndirection = 2 => "SRC_DST_INDIRECTION",
    }
}

impl IndirectMode {
    /// True when the source side is indexed (mode ≠ DST).
    pub const fn gathers(self) -> bool {
        !matches!(self, IndirectMode::DstIndirection)
    }

    /// True when the destination side is indexed (mode ≠ SRC).
    pub const fn scatters(self) -> bool {
        !matches!(self, IndirectMode::SrcIndirection)
    }
}

/// DMA_INDIRECT_FLAGS, the byte at +15 of DMA_INDIRECT1D (seed 004 §3c, byte-exact; LSB first:
/// indirect_mode:2, idx_bound_is_err:1, non_unique_dst_idx:1, gather_dim:2, scatter_dim:2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct DmaIndirectFlags {
    /// Bits 0..1.
    pub indirect_mode: IndirectMode,
    /// Bit 2: an out-of-bounds index is a hard error (vs a soft skip).
    pub idx_bound_is_err: bool,
    /// Bit 3: duplicate scatter targets allowed.
    pub non_unique_dst_idx: bool,
    /// Bits 4..5.
    pub gather_dim: IndirectDim,
    /// Bits 6..7.
    pub scatter_dim: IndirectDim,
}

/// BOUND_CHECK_REG (seed 004 §3c: bc_reg:6, bc_disable_oob_error_notif:1, bc_enabled:1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct BoundCheckReg {
    /// Bits 0..5: the register holding the index bound (0..=63).
    pub bc_reg: u8,
    /// Bit 6.
    pub bc_disable_oob_error_notif: bool,
    /// Bit 7.
    pub bc_enabled: bool,
}

isa_enum! {
    /// DGE_COMPUTE_OP (seed 004 §3c): what a DMA does with the destination.
    pub enum DgeComputeOp {
        /// 0: B = A (copy).
        None = 0 => "NONE",
        /// 1: B += A.
        Add = 1 => "ADD",
        /// 2: B *= A.
        Multiply = 2 => "MULTIPLY",
        /// 3: B = max(B, A).
        Max = 3 => "MAX",
        /// 4: B = min(B, A).
        Min = 4 => "MIN",
    }
}

isa_enum! {
    /// CCE_OP of EMBEDDING_UPDATE (seed 004 §3d: ADD 0, MAX 2, MIN 3; Multiply 1 is commented out
    /// in the header, so it is a decode error here).
    pub enum CceOp {
        /// 0.
        Add = 0 => "ADD",
        /// 2.
        Max = 2 => "MAX",
        /// 3.
        Min = 3 => "MIN",
    }
}

isa_enum! {
    /// GATHER's `index_miss_behavior` (seed 004 §7a).
    pub enum IndexMissBehavior {
        /// 0: a miss writes the immediate.
        ImmediateWrite = 0 => "IMMEDIATE_WRITE",
        /// 1: a miss leaves the destination element unchanged.
        SkipWrite = 1 => "SKIP_WRITE",
    }
}

/// DMA_INDIRECT1D's `dma_configs` byte (re-facts §8: priority_class:3, values 0..4; bits 3..7 not
/// named, kept raw).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct DmaConfigs {
    /// Bits 0..2 (valid 0..=4: a validator rule).
    pub priority_class: u8,
    /// Bits 3..7 as a value 0..=31, kept raw.
    pub unnamed_bits: u8,
}

/// One (step, count) pair of the typed DMA_DIRECT2D / GATHER_XPOSE access patterns (no wire
/// layout is known for them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(deny_unknown_fields))]
pub struct DmaDim {
    /// Step in elements (signed).
    pub step_elem: i32,
    /// Count.
    pub num_elem: u16,
}
