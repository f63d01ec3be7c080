//! Per-generation validity of the ISA words (seed 004 §1, §3, §8; re-facts §8; contract §2,
//! docs/isa.md "Validity"). [`validate`] collects every violation, never stopping at the first;
//! each names its field path (`src.num_elem[2]`) and a stable rule id from [`rule`].

use super::parts::IndirectDim;
use super::parts::{
    Addr4, Addr8, Addr8Target, BoundCheckReg, DmaDim, IsaDtype, MemPattern4D, Space, TensorNd,
};
use super::words::{
    DmaDirect2d, DmaIndirect1d, GatherXpose, Generation, Opcode, PoolBufferLoad, PseudoEmbeddingUpdate,
    S4d4Gt, S4d4Ic, Word,
};

/// The stable rule ids (docs/isa.md "Validity" gives each one's source and tag).
pub mod rule {
    /// The header's opcode byte is not the struct's (only a hand-built value can have this).
    pub const OPCODE: &str = "opcode";
    /// A value does not fit its bit field (partition > 127, offset ≥ 2^21, bc_reg > 63, …; only a
    /// hand-built value can have this).
    pub const FIELD_WIDTH: &str = "field-width";
    /// A TENSORnD count is 0 (re-facts §8 TENSORnD).
    pub const TENSOR_COUNT: &str = "tensor-count";
    /// A dtype byte is INVALID or not a header-named ISA dtype (re-facts §1).
    pub const DTYPE_KNOWN: &str = "dtype-known";
    /// Start partition + channels > 128.
    pub const PARTITION_RANGE: &str = "partition-range";
    /// An ADDR4 (or on-chip ADDR8) offset outside its space's partition for the generation.
    pub const OFFSET_RANGE: &str = "offset-range";
    /// ADDR8 bits 56..57 are not zero (contract X4).
    pub const ADDR8_RESERVED: &str = "addr8-reserved";
    /// An on-chip ADDR8 whose low word is not a plain ADDR4-form address (X5, X31).
    pub const ADDR8_TARGET: &str = "addr8-target";
    /// More than 4096 indices (seed 004 §3b, §3c, §8).
    pub const INDEX_COUNT: &str = "index-count";
    /// GATHER's index dtype is not UINT8, UINT16 or UINT32 (seed 004 §3a `has_gather_index_dtype`).
    pub const GATHER_INDEX_DTYPE: &str = "gather-index-dtype";
    /// num_active_channels outside 1..=128.
    pub const CHANNELS: &str = "channels";
    /// GATHER's dst element count differs from its index count per channel.
    pub const GATHER_COUNT_MATCH: &str = "gather-count-match";
    /// GATHER on v5 sources or sinks PSUM (seed 004 §1, CONFIRMED).
    pub const GATHER_SBUF_ONLY_V5: &str = "gather-sbuf-only-v5";
    /// v5 GATHER with `inst_flags & 1`: the channel range leaves its 32-partition quadrant (X13).
    pub const CHANNEL_RANGE_TILE: &str = "channel-range-tile";
    /// free_pool_buffer is not 0 or 1.
    pub const FREE_POOL_BUFFER: &str = "free-pool-buffer";
    /// INDIRECT_COPY's src is not the indirect form.
    pub const IC_SRC_INDIRECT: &str = "ic-src-indirect";
    /// INDIRECT_COPY's dst is not the tensor form.
    pub const IC_DST_TENSOR: &str = "ic-dst-tensor";
    /// INDIRECT_COPY in_dtype ≠ out_dtype.
    pub const IC_DTYPE_MATCH: &str = "ic-dtype-match";
    /// INDIRECT_COPY channels not a multiple of 16 in 16..=128.
    pub const IC_CHANNELS: &str = "ic-channels";
    /// INDIRECT_COPY start partition not 0, 32, 64 or 96.
    pub const IC_START_PARTITION: &str = "ic-start-partition";
    /// src_num_elem_per_idx not in {1, 2, 4, 8, 16, 32}.
    pub const IC_ELEM_PER_IDX: &str = "ic-elem-per-idx";
    /// num_elem not a multiple of src_num_elem_per_idx.
    pub const IC_NUM_ELEM_MULTIPLE: &str = "ic-num-elem-multiple";
    /// dst_num_elem_per_idx or dst_buffer_size non-zero ("scatter is not implemented yet").
    pub const SCATTER_NOT_IMPLEMENTED: &str = "scatter-not-implemented";
    /// INDIRECT_COPY dst elements per partition ≠ num_elem.
    pub const IC_DST_COUNT: &str = "ic-dst-count";
    /// INDIRECT_COPY dst elements per partition > 1024.
    pub const IC_DST_MAX: &str = "ic-dst-max";
    /// DMA_INDIRECT idx_num_active_channels ≠ 128.
    pub const DMA_IDX_CHANNELS: &str = "dma-idx-channels";
    /// A DMA_INDIRECT index ADDR4 (IMM) not in SBUF partition 0.
    pub const DMA_IDX_PARTITION0: &str = "dma-idx-partition0";
    /// gather_dim / scatter_dim not X without a shape register.
    pub const DMA_INDIRECT_DIM: &str = "dma-indirect-dim";
    /// BOUND_CHECK_REG disabled with other bits set.
    pub const BOUND_CHECK_REG: &str = "bound-check-reg";
    /// dma_configs.priority_class > 4.
    pub const PRIORITY_CLASS: &str = "priority-class";
    /// An ADDR4 with reserved bits set (X3: SBUF bits 26..28; PSUM bits 22..24, 26..28).
    pub const ADDR4_RESERVED: &str = "addr4-reserved";
    /// An elem_size 0, not a multiple of its dtype's size, or a dtype without a byte size.
    pub const ELEM_SIZE: &str = "elem-size";
    /// src_elem_size / size(in) ≠ dst_elem_size / size(out) (contract §4 DMA_INDIRECT).
    pub const ELEM_VALUES: &str = "elem-values";
    /// SRC_DST_INDIRECTION with src_num_elem ≠ dst_num_elem.
    pub const DMA_BOTH_COUNT: &str = "dma-both-count";
    /// A SHAPE_REG ADDR8 with num_elem ≠ 0.
    pub const SHAPE_REG_NUM_ELEM: &str = "shape-reg-num-elem";
    /// EMBEDDING_UPDATE index TENSOR1D shorter than sequence_length.
    pub const EMBED_INDEX_COUNT: &str = "embed-index-count";
    /// EMBEDDING_UPDATE data TENSOR2D counts ≠ [entry_num_elements, sequence_length].
    pub const EMBED_DATA_SHAPE: &str = "embed-data-shape";
    /// EMBEDDING_UPDATE data dtype not a float.
    pub const EMBED_DATA_FLOAT: &str = "embed-data-float";
    /// POOL_BUFFER_LOAD more than 512 elements per channel (seed 004 §2 POOL_BUFFER_MAX_ELEMENTS).
    pub const POOL_BUFFER_MAX: &str = "pool-buffer-max";
    /// GATHER_XPOSE dtype not 2 bytes (re-facts §8).
    pub const XPOSE_DTYPE: &str = "xpose-dtype";
    /// GATHER_XPOSE gather_dim not Y.
    pub const XPOSE_GATHER_DIM: &str = "xpose-gather-dim";
    /// GATHER_XPOSE dst not 32-byte aligned.
    pub const XPOSE_DST_ALIGN: &str = "xpose-dst-align";
    /// GATHER_XPOSE src `num_elem[Y]` not a multiple of 16.
    pub const XPOSE_SRC_Y: &str = "xpose-src-y";
    /// GATHER_XPOSE dst `num_elem[0]` ≠ src `num_elem[Y]`.
    pub const XPOSE_DST_X: &str = "xpose-dst-x";
    /// GATHER_XPOSE dst dim-0 step ≠ 1 element (sizeof(dtype) bytes; X37).
    pub const XPOSE_DST_STEP: &str = "xpose-dst-step";
}

/// Most indices one word may carry (seed 004 §8: "the index count is ≤ 4096 everywhere").
pub const MAX_INDICES: u64 = 4096;
/// Pool_Buffer elements per channel (seed 004 §2, POOL_BUFFER_MAX_ELEMENTS).
pub const POOL_BUFFER_MAX_ELEMENTS: u64 = 512;
/// INDIRECT_COPY dst elements per partition (re-facts §8).
pub const IC_MAX_DST_ELEMENTS: u64 = 1024;
/// Partitions on chip.
pub const PARTITIONS: u32 = 128;

/// One broken rule: the field it concerns, the stable rule id, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Field path, e.g. `src.num_elem[2]`.
    pub field: &'static str,
    /// Stable rule id (a [`rule`] constant).
    pub rule: &'static str,
    /// What is wrong, with the values.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} [{}]", self.field, self.message, self.rule)
    }
}

/// A value the validator can check.
pub trait Validate {
    /// Appends every violation of `self` for generation `g` to `out`.
    fn check(&self, g: Generation, out: &mut Vec<Violation>);
}

/// Every violation of `item` for generation `g` (contract §2), in field order; empty = valid.
pub fn validate<T: Validate + ?Sized>(item: &T, g: Generation) -> Vec<Violation> {
    let mut out = Vec::new();
    item.check(g, &mut out);
    out
}

/// The violations being collected.
struct V<'a> {
    g: Generation,
    out: &'a mut Vec<Violation>,
}

impl V<'_> {
    #[cold]
    #[inline(never)]
    fn push(&mut self, field: &'static str, rule: &'static str, message: String) {
        self.out.push(Violation { field, rule, message });
    }

    #[inline]
    fn opcode(&mut self, found: u8, ok: &[Opcode]) {
        if !ok.iter().any(|o| o.byte() == found) {
            let names: Vec<String> = ok.iter().map(|o| format!("0x{:02x} {}", o.byte(), o.name())).collect();
            self.push("header.opcode", rule::OPCODE, format!("0x{found:02x} is not {}", names.join(" or ")));
        }
    }

    #[inline]
    fn dtype(&mut self, field: &'static str, d: IsaDtype) {
        if !d.is_known() {
            self.push(field, rule::DTYPE_KNOWN, format!("{d} is not a valid ISA dtype"));
        }
    }

    #[inline]
    /// Field widths and offset range of one ADDR4 (not for a marker whose address comes from a
    /// register: its bits are not an address, X38).
    fn addr4(&mut self, p: &A4, a: &Addr4) {
        if a.partition > Addr4::PARTITION_MAX {
            self.push(p.partition, rule::FIELD_WIDTH, format!("{} does not fit 7 bits", a.partition));
        }
        let max = Addr4::offset_max(a.space);
        if a.offset > max {
            self.push(
                p.offset,
                rule::FIELD_WIDTH,
                format!("{} does not fit a {} offset (at most {max})", a.offset, a.space.name()),
            );
        } else if !a.marker.address_from_register() {
            self.offset(p.offset, a.space, a.offset);
        }
        if a.reserved != 0 {
            self.push(
                p.reserved,
                rule::ADDR4_RESERVED,
                format!(
                    "reserved bits 0x{:08x} set; the {} layout leaves 0x{:08x} unnamed and they must be 0",
                    a.reserved,
                    a.space.name(),
                    Addr4::reserved_mask(a.space)
                ),
            );
        }
    }

    #[inline]
    fn offset(&mut self, field: &'static str, space: Space, offset: u32) {
        let bytes = match space {
            Space::Sbuf => self.g.sbuf_partition_bytes(),
            Space::Psum => self.g.psum_partition_bytes(),
        };
        if offset >= bytes {
            self.push(
                field,
                rule::OFFSET_RANGE,
                format!("{offset} is outside a {} partition of {bytes} bytes on {}", space.name(), self.g),
            );
        }
    }

    #[inline]
    /// `partition + channels ≤ 128`.
    fn partitions(&mut self, field: &'static str, partition: u8, channels: u32) {
        if u32::from(partition) + channels > PARTITIONS {
            self.push(
                field,
                rule::PARTITION_RANGE,
                format!(
                    "partitions {partition}..{} leave the 128 partitions",
                    u32::from(partition) + channels
                ),
            );
        }
    }

    #[inline]
    fn tensor<const N: usize>(&mut self, p: &T, t: &TensorNd<N>) {
        self.addr4(&p.addr, &t.start_addr);
        for (d, &n) in t.num_elem.iter().enumerate() {
            if n == 0 {
                self.push(
                    p.num_elem.get(d).copied().unwrap_or(p.all),
                    rule::TENSOR_COUNT,
                    "a count of 0".into(),
                );
            }
        }
    }

    #[inline]
    /// Reserved bits and, for a non-register address, the target (X5, X31) and its offset.
    fn addr8(&mut self, p: &A8, a: &Addr8) {
        if a.reserved != 0 {
            self.push(p.reserved, rule::ADDR8_RESERVED, format!("bits 56..57 = {} must be 0", a.reserved));
        }
        if a.address > Addr8::ADDRESS_MASK {
            self.push(p.address, rule::FIELD_WIDTH, format!("0x{:x} does not fit 56 bits", a.address));
            return;
        }
        if a.marker.byte() & 0x80 == 0 {
            match a.target() {
                Ok(Addr8Target::OnChip { space, offset, .. }) => self.offset(p.address, space, offset),
                Ok(Addr8Target::Dram(_)) => {}
                Err(e) => self.push(p.address, rule::ADDR8_TARGET, e.to_string()),
            }
        }
    }

    #[inline]
    fn index_count(&mut self, field: &'static str, n: u64, what: &str) {
        if n > MAX_INDICES {
            self.push(field, rule::INDEX_COUNT, format!("{n} {what}; at most {MAX_INDICES}"));
        }
    }

    #[inline]
    fn channels(&mut self, n: u8) {
        if !(1..=128).contains(&n) {
            self.push("num_active_channels", rule::CHANNELS, format!("{n}; expected 1..=128"));
        }
    }

    #[inline]
    /// elem_size > 0, a multiple of the dtype's size.
    fn elem_size(&mut self, field: &'static str, size: u16, d: IsaDtype) {
        match d.size() {
            _ if size == 0 => self.push(field, rule::ELEM_SIZE, "0 bytes".into()),
            Some(s) if usize::from(size) % s != 0 => {
                self.push(field, rule::ELEM_SIZE, format!("{size} bytes is not a multiple of {d}'s {s}"))
            }
            Some(_) => {}
            None if d.is_known() => {
                self.push(field, rule::ELEM_SIZE, format!("{d} has no whole-byte element size"))
            }
            None => {}
        }
    }
}

/// Field paths of one ADDR4.
struct A4 {
    partition: &'static str,
    offset: &'static str,
    space: &'static str,
    reserved: &'static str,
}

/// Field paths of one TENSORnD.
struct T {
    addr: A4,
    num_elem: [&'static str; 4],
    all: &'static str,
}

/// Field paths of one ADDR8.
struct A8 {
    reserved: &'static str,
    address: &'static str,
}

macro_rules! a4 {
    ($p:literal) => {
        A4 {
            partition: concat!($p, ".partition"),
            offset: concat!($p, ".offset"),
            space: concat!($p, ".space"),
            reserved: concat!($p, ".reserved"),
        }
    };
}
macro_rules! tp {
    ($p:literal) => {
        T {
            addr: A4 {
                partition: concat!($p, ".start_addr.partition"),
                offset: concat!($p, ".start_addr.offset"),
                space: concat!($p, ".start_addr.space"),
                reserved: concat!($p, ".start_addr.reserved"),
            },
            num_elem: [
                concat!($p, ".num_elem[0]"),
                concat!($p, ".num_elem[1]"),
                concat!($p, ".num_elem[2]"),
                concat!($p, ".num_elem[3]"),
            ],
            all: concat!($p, ".num_elem"),
        }
    };
}
macro_rules! a8 {
    ($p:literal) => {
        A8 { reserved: concat!($p, ".reserved"), address: concat!($p, ".address") }
    };
}

const GT_SRC: T = tp!("src");
const GT_DST: T = tp!("dst");
const IC_INDEX: A4 = a4!("src.index_addr");
const IC_DATA: A4 = a4!("src.data_addr");
const IC_SRC_T: T = tp!("src");
const IC_DST_T: T = tp!("dst");
const EU_INDEX: T = tp!("embed_index_in");
const EU_DATA: T = tp!("embed_data_in");
const EU_DESC: T = tp!("desc");
const DI_SRC: A8 = a8!("src_start_addr");
const DI_DST: A8 = a8!("dst_start_addr");
const DI_SRC_IDX: A4 = a4!("src_idx_start_addr");
const DI_DST_IDX: A4 = a4!("dst_idx_start_addr");
const IX_INDEX: A4 = a4!("index_addr");

impl Validate for Word {
    fn check(&self, g: Generation, out: &mut Vec<Violation>) {
        match self {
            Word::PoolBufferLoad(w) => w.check(g, out),
            Word::Gather(w) => w.check(g, out),
            Word::IndirectCopy(w) => w.check(g, out),
            Word::DmaIndirect(w) => w.check(g, out),
            Word::EmbeddingUpdate(w) => w.check(g, out),
        }
    }
}

impl Validate for S4d4Gt {
    /// Contract §2 "GATHER"; seed 004 §1 (v5), §3a.
    fn check(&self, g: Generation, out: &mut Vec<Violation>) {
        let mut v = V { g, out };
        v.opcode(self.header.opcode, &[Opcode::Gather]);
        v.tensor(&GT_SRC, &self.src);
        if !matches!(self.in_dtype, IsaDtype::UINT8 | IsaDtype::UINT16 | IsaDtype::UINT32) {
            v.push(
                "in_dtype",
                rule::GATHER_INDEX_DTYPE,
                format!("{} is not an index dtype (UINT8, UINT16 or UINT32)", self.in_dtype),
            );
        }
        v.dtype("out_dtype", self.out_dtype);
        v.channels(self.num_active_channels);
        let ch = u32::from(self.num_active_channels);
        v.partitions(GT_SRC.addr.partition, self.src.start_addr.partition, ch);
        v.partitions(GT_DST.addr.partition, self.dst.start_addr.partition, ch);
        let n = self.src.element_count();
        v.index_count(GT_SRC.all, n, "indices per channel");
        if self.free_pool_buffer > 1 {
            v.push(
                "free_pool_buffer",
                rule::FREE_POOL_BUFFER,
                format!("{}; expected 0 or 1", self.free_pool_buffer),
            );
        }
        v.tensor(&GT_DST, &self.dst);
        if self.dst.element_count() != n {
            v.push(
                GT_DST.all,
                rule::GATHER_COUNT_MATCH,
                format!("{} elements per channel, the index tensor has {n}", self.dst.element_count()),
            );
        }
        if g == Generation::V5 {
            for (p, t) in [(&GT_SRC, &self.src), (&GT_DST, &self.dst)] {
                if t.start_addr.space == Space::Psum {
                    v.push(
                        p.addr.space,
                        rule::GATHER_SBUF_ONLY_V5,
                        "GATHER on v5 cannot use PSUM (SBUF only)".into(),
                    );
                }
            }
            if self.header.inst_flags & 1 != 0 && ch >= 1 {
                for (p, t) in [(&GT_SRC, &self.src), (&GT_DST, &self.dst)] {
                    let first = u32::from(t.start_addr.partition);
                    let last = first + ch - 1;
                    if first / 32 != last / 32 {
                        v.push(
                            p.addr.partition,
                            rule::CHANNEL_RANGE_TILE,
                            format!(
                                "channels {first}..={last} cross a 32-partition quadrant (inst_flags bit 0, tile-aware on v5)"
                            ),
                        );
                    }
                }
            }
        }
    }
}

impl Validate for S4d4Ic {
    /// Contract §2 "IC"; seed 004 §3b.
    fn check(&self, g: Generation, out: &mut Vec<Violation>) {
        let mut v = V { g, out };
        v.opcode(self.header.opcode, &[Opcode::IndirectCopy]);
        let ch = self.num_active_channels;
        let e = self.src_num_elem_per_idx;
        let num_elem = match &self.src {
            MemPattern4D::Indirect(i) => {
                v.addr4(&IC_INDEX, &i.index_addr);
                v.addr4(&IC_DATA, &i.data_addr);
                for (p, a) in [(&IC_INDEX, &i.index_addr), (&IC_DATA, &i.data_addr)] {
                    start_partition(&mut v, p.partition, a.partition);
                    v.partitions(p.partition, a.partition, u32::from(ch));
                }
                Some(i.num_elem)
            }
            MemPattern4D::Tensor(t) => {
                v.tensor(&IC_SRC_T, t);
                v.push(
                    "src",
                    rule::IC_SRC_INDIRECT,
                    "src must be the indirect form (INDIRECT_IMM / INDIRECT_REG)".into(),
                );
                None
            }
        };
        v.dtype("in_dtype", self.in_dtype);
        v.dtype("out_dtype", self.out_dtype);
        if self.in_dtype != self.out_dtype {
            v.push(
                "out_dtype",
                rule::IC_DTYPE_MATCH,
                format!("{} differs from in_dtype {} (no cast)", self.out_dtype, self.in_dtype),
            );
        }
        if ch == 0 || !ch.is_multiple_of(16) || ch > 128 {
            v.push(
                "num_active_channels",
                rule::IC_CHANNELS,
                format!("{ch}; expected a multiple of 16 in 16..=128"),
            );
        }
        if ![1, 2, 4, 8, 16, 32].contains(&e) {
            v.push(
                "src_num_elem_per_idx",
                rule::IC_ELEM_PER_IDX,
                format!("{e}; expected 1, 2, 4, 8, 16 or 32"),
            );
        }
        if let Some(n) = num_elem {
            if e != 0 && n % u16::from(e) != 0 {
                v.push(
                    "src.num_elem",
                    rule::IC_NUM_ELEM_MULTIPLE,
                    format!("{n} is not a multiple of src_num_elem_per_idx {e}"),
                );
            }
            if e != 0 {
                v.index_count(
                    "src.num_elem",
                    u64::from(n / u16::from(e)),
                    "indices (num_elem / src_num_elem_per_idx)",
                );
            }
        }
        if self.dst_num_elem_per_idx != 0 {
            v.push(
                "dst_num_elem_per_idx",
                rule::SCATTER_NOT_IMPLEMENTED,
                format!(
                    "scatter is not implemented yet (dst_num_elem_per_idx = {}, must be 0)",
                    self.dst_num_elem_per_idx
                ),
            );
        }
        if self.dst_buffer_size != 0 {
            v.push(
                "dst_buffer_size",
                rule::SCATTER_NOT_IMPLEMENTED,
                format!(
                    "scatter is not implemented yet (dst_buffer_size = {}, must be 0)",
                    self.dst_buffer_size
                ),
            );
        }
        match &self.dst {
            MemPattern4D::Tensor(t) => {
                v.tensor(&IC_DST_T, t);
                start_partition(&mut v, IC_DST_T.addr.partition, t.start_addr.partition);
                v.partitions(IC_DST_T.addr.partition, t.start_addr.partition, u32::from(ch));
                let count = t.element_count();
                if let Some(n) = num_elem
                    && count != u64::from(n)
                {
                    v.push(
                        IC_DST_T.all,
                        rule::IC_DST_COUNT,
                        format!("{count} elements per partition, num_elem is {n}"),
                    );
                }
                if count > IC_MAX_DST_ELEMENTS {
                    v.push(
                        IC_DST_T.all,
                        rule::IC_DST_MAX,
                        format!("{count} elements per partition; at most {IC_MAX_DST_ELEMENTS}"),
                    );
                }
            }
            MemPattern4D::Indirect(_) => {
                v.push("dst", rule::IC_DST_TENSOR, "dst must be the tensor form".into());
            }
        }
    }
}

#[inline]
fn start_partition(v: &mut V<'_>, field: &'static str, p: u8) {
    if !p.is_multiple_of(32) {
        v.push(field, rule::IC_START_PARTITION, format!("{p}; expected 0, 32, 64 or 96"));
    }
}

impl Validate for DmaIndirect1d {
    /// Contract §2 "DMA_INDIRECT"; seed 004 §3c; re-facts §8.
    fn check(&self, g: Generation, out: &mut Vec<Violation>) {
        let mut v = V { g, out };
        v.opcode(self.header.opcode, &[Opcode::DmaIndirect]);
        if self.idx_num_active_channels != 128 {
            v.push(
                "idx_num_active_channels",
                rule::DMA_IDX_CHANNELS,
                format!("{}; must be 128", self.idx_num_active_channels),
            );
        }
        let f = &self.flags;
        let sides = [
            (
                f.indirect_mode.gathers(),
                &self.src_start_addr,
                self.src_num_elem,
                "src_num_elem",
                &DI_SRC_IDX,
                &self.src_idx_start_addr,
                f.gather_dim,
                "flags.gather_dim",
            ),
            (
                f.indirect_mode.scatters(),
                &self.dst_start_addr,
                self.dst_num_elem,
                "dst_num_elem",
                &DI_DST_IDX,
                &self.dst_idx_start_addr,
                f.scatter_dim,
                "flags.scatter_dim",
            ),
        ];
        v.addr8(&DI_SRC, &self.src_start_addr);
        v.addr8(&DI_DST, &self.dst_start_addr);
        for (used, a8, num, num_field, p, idx, dim, dim_field) in sides {
            if a8.has_shape_reg() && num != 0 {
                v.push(
                    num_field,
                    rule::SHAPE_REG_NUM_ELEM,
                    format!("{num}; must be 0 with a SHAPE_REG address"),
                );
            }
            // X35: only the indexed side's index address and dim are checked.
            if !used {
                continue;
            }
            v.addr4(p, idx);
            if !idx.marker.address_from_register() && (idx.space != Space::Sbuf || idx.partition != 0) {
                v.push(
                    p.partition,
                    rule::DMA_IDX_PARTITION0,
                    format!(
                        "indices in {} partition {}; they must be in SBUF partition 0",
                        idx.space.name(),
                        idx.partition
                    ),
                );
            }
            if dim != IndirectDim::X && !a8.has_shape_reg() {
                v.push(dim_field, rule::DMA_INDIRECT_DIM, format!("{dim}; only X without a shape register"));
            }
        }
        let (n, n_field, a8) = if f.indirect_mode.gathers() {
            (self.src_num_elem, "src_num_elem", &self.src_start_addr)
        } else {
            (self.dst_num_elem, "dst_num_elem", &self.dst_start_addr)
        };
        if !a8.has_shape_reg() {
            v.index_count(n_field, u64::from(n), "indices");
        }
        if f.indirect_mode.gathers() && f.indirect_mode.scatters() && self.src_num_elem != self.dst_num_elem {
            v.push(
                "dst_num_elem",
                rule::DMA_BOTH_COUNT,
                format!(
                    "{} differs from src_num_elem {} (SRC_DST_INDIRECTION)",
                    self.dst_num_elem, self.src_num_elem
                ),
            );
        }
        v.elem_size("src_elem_size", self.src_elem_size, self.in_dtype);
        v.elem_size("dst_elem_size", self.dst_elem_size, self.out_dtype);
        elem_values(&mut v, (self.src_elem_size, self.in_dtype), (self.dst_elem_size, self.out_dtype));
        v.dtype("in_dtype", self.in_dtype);
        v.dtype("out_dtype", self.out_dtype);
        bound_reg(&mut v, "src_idx_bound_reg", &self.src_idx_bound_reg);
        bound_reg(&mut v, "dst_idx_bound_reg", &self.dst_idx_bound_reg);
        if self.dma_configs.priority_class > 4 {
            v.push(
                "dma_configs.priority_class",
                rule::PRIORITY_CLASS,
                format!("{}; expected 0..=4", self.dma_configs.priority_class),
            );
        }
        if self.dma_configs.unnamed_bits > 0x1F {
            v.push("dma_configs.unnamed_bits", rule::FIELD_WIDTH, "does not fit 5 bits".into());
        }
    }
}

#[inline]
/// `src_elem_size / size(in) == dst_elem_size / size(out)` when both are whole.
fn elem_values(v: &mut V<'_>, (ss, sd): (u16, IsaDtype), (ds, dd): (u16, IsaDtype)) {
    if let (Some(a), Some(b)) = (sd.size(), dd.size()) {
        let (ss, ds) = (usize::from(ss), usize::from(ds));
        if ss % a == 0 && ds % b == 0 && ss / a != ds / b {
            v.push(
                "dst_elem_size",
                rule::ELEM_VALUES,
                format!("{} values per element, the source moves {}", ds / b, ss / a),
            );
        }
    }
}

#[inline]
/// BOUND_CHECK_REG is valid all-zero or enabled (re-facts §8); bc_reg must fit 6 bits.
fn bound_reg(v: &mut V<'_>, field: &'static str, r: &BoundCheckReg) {
    if r.bc_reg > 0x3F {
        v.push(field, rule::FIELD_WIDTH, format!("bc_reg {} does not fit 6 bits", r.bc_reg));
    }
    if !r.bc_enabled && (r.bc_reg != 0 || r.bc_disable_oob_error_notif) {
        v.push(
            field,
            rule::BOUND_CHECK_REG,
            format!(
                "disabled but bc_reg = {}, bc_disable_oob_error_notif = {}: must be all zero or enabled",
                r.bc_reg, r.bc_disable_oob_error_notif
            ),
        );
    }
}

impl Validate for PseudoEmbeddingUpdate {
    /// Contract §2 "EMBEDDING"; seed 004 §3d.
    fn check(&self, g: Generation, out: &mut Vec<Violation>) {
        let mut v = V { g, out };
        v.opcode(self.header.opcode, &[Opcode::PseudoEmbeddingUpdate, Opcode::EmbeddingUpdate]);
        v.dtype("data_dtype", self.data_dtype);
        if self.data_dtype.is_known() && !self.data_dtype.is_float() {
            v.push(
                "data_dtype",
                rule::EMBED_DATA_FLOAT,
                format!("{} is not a float (ADD / MAX / MIN run in fp32)", self.data_dtype),
            );
        }
        v.tensor(&EU_INDEX, &self.embed_index_in);
        v.tensor(&EU_DATA, &self.embed_data_in);
        v.tensor(&EU_DESC, &self.desc);
        let seq = self.sequence_length;
        if u64::from(self.embed_index_in.num_elem[0]) < u64::from(seq) {
            v.push(
                EU_INDEX.num_elem[0],
                rule::EMBED_INDEX_COUNT,
                format!("{} indices, sequence_length is {seq}", self.embed_index_in.num_elem[0]),
            );
        }
        let [d0, d1] = self.embed_data_in.num_elem;
        if d0 != self.embed_entry_num_elements {
            v.push(
                EU_DATA.num_elem[0],
                rule::EMBED_DATA_SHAPE,
                format!("{d0}; must equal embed_entry_num_elements {}", self.embed_entry_num_elements),
            );
        }
        if u64::from(d1) != u64::from(seq) {
            v.push(
                EU_DATA.num_elem[1],
                rule::EMBED_DATA_SHAPE,
                format!("{d1}; must equal sequence_length {seq}"),
            );
        }
        v.index_count("sequence_length", u64::from(seq), "indices");
    }
}

impl Validate for PoolBufferLoad {
    /// birsim's form (X11): the TENSOR4D rules, a known sized dtype, 1..=128 channels, ≤ 512
    /// elements per channel.
    fn check(&self, g: Generation, out: &mut Vec<Violation>) {
        let mut v = V { g, out };
        v.opcode(self.header.opcode, &[Opcode::PoolBufferLoad]);
        v.tensor(&GT_SRC, &self.src);
        v.dtype("dtype", self.dtype);
        if self.dtype.is_known() && self.dtype.size().is_none() {
            v.push("dtype", rule::ELEM_SIZE, format!("{} has no whole-byte element size", self.dtype));
        }
        v.channels(self.num_active_channels);
        v.partitions(
            GT_SRC.addr.partition,
            self.src.start_addr.partition,
            u32::from(self.num_active_channels),
        );
        let n = self.src.element_count();
        if n > POOL_BUFFER_MAX_ELEMENTS {
            v.push(
                GT_SRC.all,
                rule::POOL_BUFFER_MAX,
                format!("{n} elements per channel; the Pool_Buffer holds {POOL_BUFFER_MAX_ELEMENTS}"),
            );
        }
    }
}

const D2_SRC: A8 = a8!("src_start_addr");
const D2_DST: A8 = a8!("dst_start_addr");
const D2_SRC_DIMS: [&str; 4] =
    ["src_dims[0].num_elem", "src_dims[1].num_elem", "src_dims[2].num_elem", "src_dims[3].num_elem"];
const D2_DST_DIMS: [&str; 4] =
    ["dst_dims[0].num_elem", "dst_dims[1].num_elem", "dst_dims[2].num_elem", "dst_dims[3].num_elem"];

fn dims(v: &mut V<'_>, fields: &[&'static str; 4], dims: &[DmaDim]) {
    for (f, d) in fields.iter().zip(dims) {
        if d.num_elem == 0 {
            v.push(f, rule::TENSOR_COUNT, "a count of 0".into());
        }
    }
}

impl Validate for DmaDirect2d {
    /// Typed only: dtypes, elem sizes, counts ≥ 1 and the ADDR8 rules (any compute_op runs on
    /// every dtype: X14).
    fn check(&self, g: Generation, out: &mut Vec<Violation>) {
        let mut v = V { g, out };
        v.addr8(&D2_SRC, &self.src_start_addr);
        dims(&mut v, &D2_SRC_DIMS, &self.src_dims);
        v.elem_size("src_elem_size", self.src_elem_size, self.in_dtype);
        v.addr8(&D2_DST, &self.dst_start_addr);
        dims(&mut v, &D2_DST_DIMS, &self.dst_dims);
        v.elem_size("dst_elem_size", self.dst_elem_size, self.out_dtype);
        elem_values(&mut v, (self.src_elem_size, self.in_dtype), (self.dst_elem_size, self.out_dtype));
        v.dtype("in_dtype", self.in_dtype);
        v.dtype("out_dtype", self.out_dtype);
    }
}

impl Validate for GatherXpose {
    /// re-facts §8 "GATHER_XPOSE".
    fn check(&self, g: Generation, out: &mut Vec<Violation>) {
        let mut v = V { g, out };
        v.dtype("dtype", self.dtype);
        if self.dtype.size() != Some(2) {
            v.push(
                "dtype",
                rule::XPOSE_DTYPE,
                format!("{}; GATHER_XPOSE takes 2-byte dtypes only", self.dtype),
            );
        }
        v.addr8(&D2_SRC, &self.src_start_addr);
        dims(&mut v, &D2_SRC_DIMS, &self.src_dims);
        v.addr8(&D2_DST, &self.dst_start_addr);
        dims(&mut v, &D2_DST_DIMS, &self.dst_dims);
        if self.gather_dim != IndirectDim::Y {
            v.push("gather_dim", rule::XPOSE_GATHER_DIM, format!("{}; must be Y", self.gather_dim));
        }
        let dst_byte = match self.dst_start_addr.target() {
            Ok(Addr8Target::Dram(a)) => Some(a),
            Ok(Addr8Target::OnChip { offset, .. }) => Some(u64::from(offset)),
            Err(_) => None,
        };
        if let Some(a) = dst_byte
            && a % 32 != 0
        {
            v.push(
                "dst_start_addr.address",
                rule::XPOSE_DST_ALIGN,
                format!("byte 0x{a:x} is not 32-byte aligned"),
            );
        }
        let [_, sy, _, _] = self.src_dims;
        if sy.num_elem % 16 != 0 {
            v.push(
                "src_dims[1].num_elem",
                rule::XPOSE_SRC_Y,
                format!("{}; must be a multiple of 16", sy.num_elem),
            );
        }
        let [dx, _, _, _] = self.dst_dims;
        if dx.num_elem != sy.num_elem {
            v.push(
                "dst_dims[0].num_elem",
                rule::XPOSE_DST_X,
                format!("{}; must equal src num_elem[Y] {}", dx.num_elem, sy.num_elem),
            );
        }
        if dx.step_elem != 1 {
            v.push(
                "dst_dims[0].step_elem",
                rule::XPOSE_DST_STEP,
                format!("{}; the dst dim-0 step is implicitly sizeof(dtype), i.e. 1 element", dx.step_elem),
            );
        }
        v.addr4(&IX_INDEX, &self.index_addr);
        v.index_count("index_count", u64::from(self.index_count), "indices");
    }
}
