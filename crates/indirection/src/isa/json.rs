//! The WORDS.json form of the ISA words (contract §6; docs/isa.md "Files and CLI"), behind the
//! optional `serde` feature so the library stays light by default.
//!
//! A word is an object `{"opcode": "GATHER", …}` whose other keys are the struct's field names
//! (the header's names). ADDR4 is `{"marker", "partition", "space", "offset"}`, ADDR8
//! `{"marker", "address": "0x…"}` (plus `"reserved"` when bits 56..57 are not 0) (marker `IMM`, `SHAPE_REG`, … with `|OFFSET_REG`
//! / `|OFFSET_WIDE` appended), enums by their header names, an ISA dtype by name (or `"0xNN"` for
//! a code the header does not name), MEM_PATTERN4D with `"form": "tensor" | "indirect"`, raw
//! bytes as hex strings. Unknown and missing keys are errors (serde_json locates them).

use super::parts::{
    Addr4, Addr4Marker, Addr8, Addr8Marker, CceOp, DgeComputeOp, Header, IndexMissBehavior, Indirect20B,
    IndirectDim, IndirectMode, IsaDtype, MemPattern4D, Space, TensorNd,
};
use super::words::{DmaIndirect1d, Opcode, PoolBufferLoad, PseudoEmbeddingUpdate, S4d4Gt, S4d4Ic, Word};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `[u8; N]` as a lowercase hex string of 2N digits.
pub mod hex {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the bytes as hex.
    pub fn serialize<S: Serializer, const N: usize>(v: &[u8; N], s: S) -> Result<S::Ok, S::Error> {
        let text: String = v.iter().map(|b| format!("{b:02x}")).collect();
        s.serialize_str(&text)
    }

    /// Reads 2N hex digits.
    pub fn deserialize<'de, D: Deserializer<'de>, const N: usize>(d: D) -> Result<[u8; N], D::Error> {
        let text = String::deserialize(d)?;
        let digits = text.strip_prefix("0x").unwrap_or(&text);
        let bad = || D::Error::custom(format!("\"{text}\" is not {N} byte(s) of hex ({} digits)", 2 * N));
        if digits.len() != 2 * N || !digits.is_ascii() {
            return Err(bad());
        }
        let mut out = [0; N];
        for (k, b) in out.iter_mut().enumerate() {
            let pair = digits.get(2 * k..2 * k + 2).ok_or_else(bad)?;
            *b = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
        }
        Ok(out)
    }
}

/// Serialize / Deserialize for the `isa_enum!` enums by their header names.
macro_rules! by_name {
    ($($t:ty),+) => {$(
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                <$t>::from_name(&text).ok_or_else(|| {
                    let names: Vec<&str> = <$t>::ALL.iter().map(|v| v.name()).collect();
                    D::Error::custom(format!("unknown value \"{text}\", expected one of {}", names.join(", ")))
                })
            }
        }
    )+};
}
by_name!(Addr4Marker, IndirectDim, IndirectMode, DgeComputeOp, CceOp, IndexMissBehavior, Opcode);

impl Serialize for Space {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}
impl<'de> Deserialize<'de> for Space {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Space::from_name(&text)
            .ok_or_else(|| D::Error::custom(format!("unknown space \"{text}\", expected SBUF or PSUM")))
    }
}

impl Serialize for IsaDtype {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}
impl<'de> Deserialize<'de> for IsaDtype {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if let Some(t) = IsaDtype::from_name(&text) {
            return Ok(t);
        }
        text.strip_prefix("0x")
            .or_else(|| text.strip_prefix("0X"))
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .map(IsaDtype)
            .ok_or_else(|| {
                D::Error::custom(format!(
                    "unknown ISA dtype \"{text}\" (a header name such as UINT16, or 0xNN)"
                ))
            })
    }
}

/// The header without its opcode byte (the word's `"opcode"` key carries it).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderJson {
    inst_flags: u8,
    #[serde(with = "hex")]
    unnamed_2: [u8; 2],
}

impl Serialize for Header {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        HeaderJson { inst_flags: self.inst_flags, unnamed_2: self.unnamed_2 }.serialize(s)
    }
}
impl<'de> Deserialize<'de> for Header {
    /// The opcode byte is 0 here; [`Word`]'s deserialize sets it from `"opcode"`.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let h = HeaderJson::deserialize(d)?;
        Ok(Header { opcode: 0, inst_flags: h.inst_flags, unnamed_2: h.unnamed_2 })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Addr4Json {
    marker: Addr4Marker,
    partition: u8,
    space: Space,
    offset: u32,
    /// The raw reserved bits in place (X3): written only when non-zero, 0 when absent.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    reserved: u32,
}

impl Serialize for Addr4 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Addr4Json {
            marker: self.marker,
            partition: self.partition,
            space: self.space,
            offset: self.offset,
            reserved: self.reserved,
        }
        .serialize(s)
    }
}
impl<'de> Deserialize<'de> for Addr4 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let a = Addr4Json::deserialize(d)?;
        if a.partition > Addr4::PARTITION_MAX {
            return Err(D::Error::custom(format!("partition {} does not fit 7 bits (0..=127)", a.partition)));
        }
        let max = Addr4::offset_max(a.space);
        if a.offset > max {
            return Err(D::Error::custom(format!(
                "offset {} does not fit a {} offset (at most {max})",
                a.offset,
                a.space.name()
            )));
        }
        let mask = Addr4::reserved_mask(a.space);
        if a.reserved & !mask != 0 {
            return Err(D::Error::custom(format!(
                "reserved 0x{:x} has bits outside the {} reserved bits 0x{mask:08x}",
                a.reserved,
                a.space.name()
            )));
        }
        Ok(Addr4 {
            marker: a.marker,
            partition: a.partition,
            space: a.space,
            offset: a.offset,
            reserved: a.reserved,
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Addr8Json {
    marker: String,
    /// Bits 56..57: written only when non-zero, 0 when absent (the contract's ADDR8 object is
    /// `{"marker", "address"}`).
    #[serde(default, skip_serializing_if = "is_zero")]
    reserved: u8,
    address: String,
}

fn is_zero(v: &u8) -> bool {
    *v == 0
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

impl Serialize for Addr8 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut marker = self.marker.name().to_owned();
        if self.offset_reg {
            marker.push_str("|OFFSET_REG");
        }
        if self.offset_wide {
            marker.push_str("|OFFSET_WIDE");
        }
        Addr8Json { marker, reserved: self.reserved, address: format!("0x{:x}", self.address) }.serialize(s)
    }
}
impl<'de> Deserialize<'de> for Addr8 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let a = Addr8Json::deserialize(d)?;
        let mut base = a.marker.as_str();
        let (mut offset_reg, mut offset_wide) = (false, false);
        loop {
            if let Some(b) = base.strip_suffix("|OFFSET_WIDE") {
                (base, offset_wide) = (b, true);
            } else if let Some(b) = base.strip_suffix("|OFFSET_REG") {
                (base, offset_reg) = (b, true);
            } else {
                break;
            }
        }
        let marker = Addr8Marker::from_name(base).ok_or_else(|| {
            let names: Vec<&str> = Addr8Marker::ALL.iter().map(|m| m.name()).collect();
            D::Error::custom(format!(
                "unknown ADDR8 marker \"{}\", expected one of {} (optionally |OFFSET_REG, |OFFSET_WIDE)",
                a.marker,
                names.join(", ")
            ))
        })?;
        if a.reserved > 3 {
            return Err(D::Error::custom(format!("reserved {} does not fit 2 bits", a.reserved)));
        }
        let address = a
            .address
            .strip_prefix("0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .filter(|&v| v <= Addr8::ADDRESS_MASK)
            .ok_or_else(|| {
                D::Error::custom(format!("address \"{}\" is not a 56-bit hex number 0x…", a.address))
            })?;
        Ok(Addr8 { marker, offset_reg, offset_wide, reserved: a.reserved, address })
    }
}

#[derive(Serialize)]
struct TensorOut<'a> {
    start_addr: &'a Addr4,
    step_elem: &'a [i16],
    num_elem: &'a [u16],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TensorIn {
    start_addr: Addr4,
    step_elem: Vec<i16>,
    num_elem: Vec<u16>,
}

fn tensor_from<E: serde::de::Error, const N: usize>(t: TensorIn) -> Result<TensorNd<N>, E> {
    let len = |what: &str, n: usize| E::custom(format!("{what} has {n} entries, expected {N}"));
    let (s, n) = (t.step_elem.len(), t.num_elem.len());
    Ok(TensorNd {
        start_addr: t.start_addr,
        step_elem: t.step_elem.try_into().map_err(|_| len("step_elem", s))?,
        num_elem: t.num_elem.try_into().map_err(|_| len("num_elem", n))?,
    })
}

impl<const N: usize> Serialize for TensorNd<N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        TensorOut { start_addr: &self.start_addr, step_elem: &self.step_elem, num_elem: &self.num_elem }
            .serialize(s)
    }
}
impl<'de, const N: usize> Deserialize<'de> for TensorNd<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tensor_from(TensorIn::deserialize(d)?)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "form", rename_all = "lowercase")]
enum PatternJson {
    Tensor(TensorNd<4>),
    Indirect(IndirectJson),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct IndirectJson {
    index_addr: Addr4,
    data_addr: Addr4,
    num_elem: u16,
    #[serde(with = "hex")]
    unnamed_10: [u8; 10],
}

impl Serialize for MemPattern4D {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            MemPattern4D::Tensor(t) => PatternJson::Tensor(t),
            MemPattern4D::Indirect(i) => PatternJson::Indirect(IndirectJson {
                index_addr: i.index_addr,
                data_addr: i.data_addr,
                num_elem: i.num_elem,
                unnamed_10: i.unnamed_10,
            }),
        }
        .serialize(s)
    }
}
impl<'de> Deserialize<'de> for MemPattern4D {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match PatternJson::deserialize(d)? {
            PatternJson::Tensor(t) => MemPattern4D::Tensor(t),
            PatternJson::Indirect(i) => MemPattern4D::Indirect(Indirect20B {
                index_addr: i.index_addr,
                data_addr: i.data_addr,
                num_elem: i.num_elem,
                unnamed_10: i.unnamed_10,
            }),
        })
    }
}

/// The word as JSON: `"opcode"` names the struct (and, for EMBEDDING_UPDATE, which opcode byte).
#[derive(Serialize, Deserialize)]
#[serde(tag = "opcode")]
enum WordJson {
    #[serde(rename = "POOL_BUFFER_LOAD")]
    PoolBufferLoad(PoolBufferLoad),
    #[serde(rename = "GATHER")]
    Gather(S4d4Gt),
    #[serde(rename = "INDIRECT_COPY")]
    IndirectCopy(S4d4Ic),
    #[serde(rename = "DMA_INDIRECT")]
    DmaIndirect(DmaIndirect1d),
    #[serde(rename = "PSEUDO_EMBEDDING_UPDATE")]
    PseudoEmbeddingUpdate(PseudoEmbeddingUpdate),
    #[serde(rename = "EMBEDDING_UPDATE")]
    EmbeddingUpdate(PseudoEmbeddingUpdate),
}

impl Serialize for Word {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Word::PoolBufferLoad(w) => WordJson::PoolBufferLoad(w),
            Word::Gather(w) => WordJson::Gather(w),
            Word::IndirectCopy(w) => WordJson::IndirectCopy(w),
            Word::DmaIndirect(w) => WordJson::DmaIndirect(w),
            Word::EmbeddingUpdate(w) if w.header.opcode == Opcode::EmbeddingUpdate.byte() => {
                WordJson::EmbeddingUpdate(w)
            }
            Word::EmbeddingUpdate(w) => WordJson::PseudoEmbeddingUpdate(w),
        }
        .serialize(s)
    }
}
impl<'de> Deserialize<'de> for Word {
    /// Sets each header's opcode byte from `"opcode"`.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match WordJson::deserialize(d)? {
            WordJson::PoolBufferLoad(mut w) => {
                w.header.opcode = Opcode::PoolBufferLoad.byte();
                Word::PoolBufferLoad(w)
            }
            WordJson::Gather(mut w) => {
                w.header.opcode = Opcode::Gather.byte();
                Word::Gather(w)
            }
            WordJson::IndirectCopy(mut w) => {
                w.header.opcode = Opcode::IndirectCopy.byte();
                Word::IndirectCopy(w)
            }
            WordJson::DmaIndirect(mut w) => {
                w.header.opcode = Opcode::DmaIndirect.byte();
                Word::DmaIndirect(w)
            }
            WordJson::PseudoEmbeddingUpdate(mut w) => {
                w.header.opcode = Opcode::PseudoEmbeddingUpdate.byte();
                Word::EmbeddingUpdate(w)
            }
            WordJson::EmbeddingUpdate(mut w) => {
                w.header.opcode = Opcode::EmbeddingUpdate.byte();
                Word::EmbeddingUpdate(w)
            }
        })
    }
}
