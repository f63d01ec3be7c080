//! Decode and encode of the 64-byte words (seed 004 §3; re-facts §8 "Device 64-byte words";
//! docs/isa.md "Word layouts"). All multi-byte fields are little-endian.
//!
//! A decode reads every byte through `Bytes`, whose reads are bounds-checked `get`s on the
//! fixed 64-byte array, so no input can make it panic. It fails only on an opcode byte that is
//! not the struct's and on an enum field outside its enum ([`IsaError`] names the field); every
//! other byte is kept (raw where no source names it), so `encode(decode(w)) == w` for every `w`
//! that decodes.

use super::IsaError;
use super::parts::{
    Addr4, Addr4Marker, Addr8, Addr8Marker, BoundCheckReg, CceOp, DgeComputeOp, DmaConfigs, DmaIndirectFlags,
    Header, IndexMissBehavior, Indirect20B, IndirectDim, IndirectMode, IsaDtype, MemPattern4D, TensorNd,
};
use super::words::{DmaIndirect1d, Opcode, PoolBufferLoad, PseudoEmbeddingUpdate, S4d4Gt, S4d4Ic, Word};

/// Read access to a word by byte offset.
struct Bytes<'a>(&'a [u8; 64]);

impl Bytes<'_> {
    /// `K` bytes at `at` (zeros past the end, which no call site reaches).
    #[inline]
    fn array<const K: usize>(&self, at: usize) -> [u8; K] {
        let mut out = [0; K];
        if let Some(s) = self.0.get(at..at.saturating_add(K)) {
            out.copy_from_slice(s);
        }
        out
    }
    #[inline]
    fn u8(&self, at: usize) -> u8 {
        self.0.get(at).copied().unwrap_or(0)
    }
    #[inline]
    fn u16(&self, at: usize) -> u16 {
        u16::from_le_bytes(self.array(at))
    }
    #[inline]
    fn i16(&self, at: usize) -> i16 {
        i16::from_le_bytes(self.array(at))
    }
    #[inline]
    fn u32(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.array(at))
    }
    #[inline]
    fn i32(&self, at: usize) -> i32 {
        i32::from_le_bytes(self.array(at))
    }
    #[inline]
    fn u64(&self, at: usize) -> u64 {
        u64::from_le_bytes(self.array(at))
    }
}

/// Write access to a word being encoded.
struct Out([u8; 64]);

impl Out {
    fn new() -> Out {
        Out([0; 64])
    }
    fn put(&mut self, at: usize, src: &[u8]) {
        if let Some(d) = self.0.get_mut(at..at.saturating_add(src.len())) {
            d.copy_from_slice(src);
        }
    }
    fn u8(&mut self, at: usize, v: u8) {
        self.put(at, &[v]);
    }
    fn u16(&mut self, at: usize, v: u16) {
        self.put(at, &v.to_le_bytes());
    }
    fn i16(&mut self, at: usize, v: i16) {
        self.put(at, &v.to_le_bytes());
    }
    fn u32(&mut self, at: usize, v: u32) {
        self.put(at, &v.to_le_bytes());
    }
    fn i32(&mut self, at: usize, v: i32) {
        self.put(at, &v.to_le_bytes());
    }
    fn u64(&mut self, at: usize, v: u64) {
        self.put(at, &v.to_le_bytes());
    }
    fn header(&mut self, h: &Header) {
        self.u8(0, h.opcode);
        self.u8(1, h.inst_flags);
        self.put(2, &h.unnamed_2);
    }
}

fn bad(field: &'static str, value: impl Into<u32>, expected: &'static str) -> IsaError {
    IsaError::BadEnum { field, value: value.into(), expected }
}

#[inline]
fn header(b: &Bytes<'_>) -> Header {
    Header { opcode: b.u8(0), inst_flags: b.u8(1), unnamed_2: b.array(2) }
}

#[inline]
fn expect_opcode(b: &Bytes<'_>, ok: &[Opcode], name: &'static str) -> Result<(), IsaError> {
    let found = b.u8(0);
    if ok.iter().any(|o| o.byte() == found) {
        Ok(())
    } else {
        Err(IsaError::WrongOpcode { expected: name, found })
    }
}

impl Addr4 {
    /// Decodes the u32 form (contract X3): marker bits 29..31, space bit 25, partition bits
    /// 18..24 (SBUF) / 15..21 (PSUM), the offset below it, the rest raw in `reserved`. `field`
    /// names the marker in an error.
    #[inline]
    pub fn from_bits(bits: u32, field: &'static str) -> Result<Addr4, IsaError> {
        let m = ((bits >> 24) & 0xE0) as u8;
        let marker = Addr4Marker::from_byte(m)
            .ok_or_else(|| bad(field, m, "ADDR4 marker 0x00, 0x20, 0x40, 0x80, 0xA0 or 0xC0"))?;
        let (partition, space, offset, reserved) = Addr4::split_location(bits);
        Ok(Addr4 { marker, partition, space, offset, reserved })
    }

    /// The u32 form. Fields wider than their bits are truncated (the validator reports them).
    pub const fn to_bits(&self) -> u32 {
        (self.marker.byte() as u32) << 24 | self.location_bits()
    }
}

impl Addr8 {
    /// Decodes the u64 form (contract X4): marker = top byte & 0xFC (base in bits 61..63,
    /// OFFSET_REG 0x08, OFFSET_WIDE 0x04; 0x10 is no flag), bits 56..57 raw, low 56 bits the
    /// address. `field` names the marker in an error.
    #[inline]
    pub fn from_bits(bits: u64, field: &'static str) -> Result<Addr8, IsaError> {
        let top = (bits >> 56) as u8;
        let marker = match Addr8Marker::from_byte(top & 0xE0) {
            Some(m) if top & 0x10 == 0 => m,
            _ => {
                return Err(bad(
                    field,
                    top & 0xFC,
                    "ADDR8 marker 0x00, 0x20, 0x40, 0x60, 0x80 or 0xC0, optionally | 0x08 OFFSET_REG | 0x04 OFFSET_WIDE",
                ));
            }
        };
        Ok(Addr8 {
            marker,
            offset_reg: top & 0x08 != 0,
            offset_wide: top & 0x04 != 0,
            reserved: top & 0x03,
            address: bits & Addr8::ADDRESS_MASK,
        })
    }

    /// The u64 form. Fields wider than their bits are truncated (the validator reports them).
    pub const fn to_bits(&self) -> u64 {
        ((self.marker_byte() | (self.reserved & 0x03)) as u64) << 56 | (self.address & Addr8::ADDRESS_MASK)
    }
}

#[inline]
fn tensor<const N: usize>(b: &Bytes<'_>, at: usize, marker: &'static str) -> Result<TensorNd<N>, IsaError> {
    let start_addr = Addr4::from_bits(b.u32(at), marker)?;
    let mut step_elem = [0; N];
    let mut num_elem = [0; N];
    for (d, s) in step_elem.iter_mut().enumerate() {
        *s = b.i16(at + 4 + 2 * d);
    }
    for (d, n) in num_elem.iter_mut().enumerate() {
        *n = b.u16(at + 4 + 2 * N + 2 * d);
    }
    Ok(TensorNd { start_addr, step_elem, num_elem })
}

fn put_tensor<const N: usize>(o: &mut Out, at: usize, t: &TensorNd<N>) {
    o.u32(at, t.start_addr.to_bits());
    for (d, s) in t.step_elem.iter().enumerate() {
        o.i16(at + 4 + 2 * d, *s);
    }
    for (d, n) in t.num_elem.iter().enumerate() {
        o.u16(at + 4 + 2 * N + 2 * d, *n);
    }
}

/// MEM_PATTERN4D at `at`: the indirect form when its first ADDR4's marker is INDIRECT_IMM or
/// INDIRECT_REG (X8), else TENSOR4D. `fields` = (first marker, data_addr marker).
#[inline]
fn mem_pattern(
    b: &Bytes<'_>,
    at: usize,
    fields: (&'static str, &'static str),
) -> Result<MemPattern4D, IsaError> {
    let first = Addr4::from_bits(b.u32(at), fields.0)?;
    if first.marker.is_indirect() {
        Ok(MemPattern4D::Indirect(Indirect20B {
            index_addr: first,
            data_addr: Addr4::from_bits(b.u32(at + 4), fields.1)?,
            num_elem: b.u16(at + 8),
            unnamed_10: b.array(at + 10),
        }))
    } else {
        Ok(MemPattern4D::Tensor(tensor(b, at, fields.0)?))
    }
}

fn put_mem_pattern(o: &mut Out, at: usize, m: &MemPattern4D) {
    match m {
        MemPattern4D::Tensor(t) => put_tensor(o, at, t),
        MemPattern4D::Indirect(i) => {
            o.u32(at, i.index_addr.to_bits());
            o.u32(at + 4, i.data_addr.to_bits());
            o.u16(at + 8, i.num_elem);
            o.put(at + 10, &i.unnamed_10);
        }
    }
}

#[inline]
fn dtype(b: &Bytes<'_>, at: usize) -> IsaDtype {
    IsaDtype(b.u8(at))
}

impl DmaIndirectFlags {
    /// Decodes the byte (seed 004 §3c, LSB first); indirect_mode 3 is an error.
    #[inline]
    pub fn from_byte(v: u8) -> Result<DmaIndirectFlags, IsaError> {
        let indirect_mode = IndirectMode::from_byte(v & 0x3).ok_or_else(|| {
            bad("flags.indirect_mode", v & 0x3, "0 SRC_INDIRECTION, 1 DST_INDIRECTION, 2 SRC_DST_INDIRECTION")
        })?;
        let dim = |bits: u8| match bits & 0x3 {
            0 => IndirectDim::X,
            1 => IndirectDim::Y,
            2 => IndirectDim::Z,
            _ => IndirectDim::W,
        };
        Ok(DmaIndirectFlags {
            indirect_mode,
            idx_bound_is_err: v & 0x04 != 0,
            non_unique_dst_idx: v & 0x08 != 0,
            gather_dim: dim(v >> 4),
            scatter_dim: dim(v >> 6),
        })
    }

    /// The byte.
    pub const fn to_byte(&self) -> u8 {
        self.indirect_mode.byte()
            | if self.idx_bound_is_err { 0x04 } else { 0 }
            | if self.non_unique_dst_idx { 0x08 } else { 0 }
            | (self.gather_dim.byte() & 0x3) << 4
            | (self.scatter_dim.byte() & 0x3) << 6
    }
}

impl BoundCheckReg {
    /// Decodes the byte (bc_reg bits 0..5, bc_disable_oob_error_notif bit 6, bc_enabled bit 7).
    pub const fn from_byte(v: u8) -> BoundCheckReg {
        BoundCheckReg {
            bc_reg: v & 0x3F,
            bc_disable_oob_error_notif: v & 0x40 != 0,
            bc_enabled: v & 0x80 != 0,
        }
    }

    /// The byte (bc_reg truncated to 6 bits).
    pub const fn to_byte(&self) -> u8 {
        (self.bc_reg & 0x3F)
            | if self.bc_disable_oob_error_notif { 0x40 } else { 0 }
            | if self.bc_enabled { 0x80 } else { 0 }
    }
}

impl DmaConfigs {
    /// Decodes the byte (priority_class bits 0..2, the rest raw).
    pub const fn from_byte(v: u8) -> DmaConfigs {
        DmaConfigs { priority_class: v & 0x7, unnamed_bits: v >> 3 }
    }

    /// The byte.
    pub const fn to_byte(&self) -> u8 {
        (self.priority_class & 0x7) | (self.unnamed_bits << 3)
    }
}

impl S4d4Gt {
    /// Decodes a GATHER word (contract §1 "S4D4_GT").
    #[inline]
    pub fn decode(w: &[u8; 64]) -> Result<S4d4Gt, IsaError> {
        let b = Bytes(w);
        expect_opcode(&b, &[Opcode::Gather], "S4D4_GT (GATHER 0x68)")?;
        let miss = b.u8(36);
        Ok(S4d4Gt {
            header: header(&b),
            events: b.array(4),
            src: tensor(&b, 12, "src.start_addr.marker")?,
            in_dtype: dtype(&b, 32),
            out_dtype: dtype(&b, 33),
            num_active_channels: b.u8(34),
            unnamed_35: b.array(35),
            index_miss_behavior: IndexMissBehavior::from_byte(miss)
                .ok_or_else(|| bad("index_miss_behavior", miss, "0 IMMEDIATE_WRITE, 1 SKIP_WRITE"))?,
            free_pool_buffer: b.u8(37),
            unnamed_38: b.array(38),
            immediate: b.u32(40),
            dst: tensor(&b, 44, "dst.start_addr.marker")?,
        })
    }

    /// The 64 bytes.
    pub fn encode(&self) -> [u8; 64] {
        let mut o = Out::new();
        o.header(&self.header);
        o.put(4, &self.events);
        put_tensor(&mut o, 12, &self.src);
        o.u8(32, self.in_dtype.0);
        o.u8(33, self.out_dtype.0);
        o.u8(34, self.num_active_channels);
        o.put(35, &self.unnamed_35);
        o.u8(36, self.index_miss_behavior.byte());
        o.u8(37, self.free_pool_buffer);
        o.put(38, &self.unnamed_38);
        o.u32(40, self.immediate);
        put_tensor(&mut o, 44, &self.dst);
        o.0
    }
}

impl S4d4Ic {
    /// Decodes an INDIRECT_COPY word (contract §1 "S4D4_IC").
    #[inline]
    pub fn decode(w: &[u8; 64]) -> Result<S4d4Ic, IsaError> {
        let b = Bytes(w);
        expect_opcode(&b, &[Opcode::IndirectCopy], "S4D4_IC (INDIRECT_COPY 0xe7)")?;
        Ok(S4d4Ic {
            header: header(&b),
            events: b.array(4),
            src: mem_pattern(&b, 12, ("src.start_addr.marker", "src.data_addr.marker"))?,
            in_dtype: dtype(&b, 32),
            out_dtype: dtype(&b, 33),
            num_active_channels: b.u8(34),
            src_num_elem_per_idx: b.u8(35),
            dst_num_elem_per_idx: b.u8(36),
            unnamed_37: b.array(37),
            src_buffer_size: b.u16(38),
            dst_buffer_size: b.u16(40),
            unnamed_42: b.array(42),
            dst: mem_pattern(&b, 44, ("dst.start_addr.marker", "dst.data_addr.marker"))?,
        })
    }

    /// The 64 bytes.
    pub fn encode(&self) -> [u8; 64] {
        let mut o = Out::new();
        o.header(&self.header);
        o.put(4, &self.events);
        put_mem_pattern(&mut o, 12, &self.src);
        o.u8(32, self.in_dtype.0);
        o.u8(33, self.out_dtype.0);
        o.u8(34, self.num_active_channels);
        o.u8(35, self.src_num_elem_per_idx);
        o.u8(36, self.dst_num_elem_per_idx);
        o.put(37, &self.unnamed_37);
        o.u16(38, self.src_buffer_size);
        o.u16(40, self.dst_buffer_size);
        o.put(42, &self.unnamed_42);
        put_mem_pattern(&mut o, 44, &self.dst);
        o.0
    }
}

impl DmaIndirect1d {
    /// Decodes a DMA_INDIRECT word (contract §1 "DMA_INDIRECT1D"; offsets re-facts §8).
    #[inline]
    pub fn decode(w: &[u8; 64]) -> Result<DmaIndirect1d, IsaError> {
        let b = Bytes(w);
        expect_opcode(&b, &[Opcode::DmaIndirect], "DMA_INDIRECT1D (DMA_INDIRECT 0xbb)")?;
        let op = b.u8(60);
        Ok(DmaIndirect1d {
            header: header(&b),
            events: b.array(4),
            semaphore: b.u8(12),
            sem_increment: b.u8(13),
            idx_num_active_channels: b.u8(14),
            flags: DmaIndirectFlags::from_byte(b.u8(15))?,
            src_start_addr: Addr8::from_bits(b.u64(16), "src_start_addr.marker")?,
            src_step_elem: b.i32(24),
            src_num_elem: b.u16(28),
            src_elem_size: b.u16(30),
            dst_start_addr: Addr8::from_bits(b.u64(32), "dst_start_addr.marker")?,
            dst_step_elem: b.i32(40),
            dst_num_elem: b.u16(44),
            dst_elem_size: b.u16(46),
            src_idx_start_addr: Addr4::from_bits(b.u32(48), "src_idx_start_addr.marker")?,
            dst_idx_start_addr: Addr4::from_bits(b.u32(52), "dst_idx_start_addr.marker")?,
            in_dtype: dtype(&b, 56),
            out_dtype: dtype(&b, 57),
            src_idx_bound_reg: BoundCheckReg::from_byte(b.u8(58)),
            dst_idx_bound_reg: BoundCheckReg::from_byte(b.u8(59)),
            compute_op: DgeComputeOp::from_byte(op)
                .ok_or_else(|| bad("compute_op", op, "0 NONE, 1 ADD, 2 MULTIPLY, 3 MAX, 4 MIN"))?,
            dma_configs: DmaConfigs::from_byte(b.u8(61)),
            reserved_62: b.array(62),
        })
    }

    /// The 64 bytes.
    pub fn encode(&self) -> [u8; 64] {
        let mut o = Out::new();
        o.header(&self.header);
        o.put(4, &self.events);
        o.u8(12, self.semaphore);
        o.u8(13, self.sem_increment);
        o.u8(14, self.idx_num_active_channels);
        o.u8(15, self.flags.to_byte());
        o.u64(16, self.src_start_addr.to_bits());
        o.i32(24, self.src_step_elem);
        o.u16(28, self.src_num_elem);
        o.u16(30, self.src_elem_size);
        o.u64(32, self.dst_start_addr.to_bits());
        o.i32(40, self.dst_step_elem);
        o.u16(44, self.dst_num_elem);
        o.u16(46, self.dst_elem_size);
        o.u32(48, self.src_idx_start_addr.to_bits());
        o.u32(52, self.dst_idx_start_addr.to_bits());
        o.u8(56, self.in_dtype.0);
        o.u8(57, self.out_dtype.0);
        o.u8(58, self.src_idx_bound_reg.to_byte());
        o.u8(59, self.dst_idx_bound_reg.to_byte());
        o.u8(60, self.compute_op.byte());
        o.u8(61, self.dma_configs.to_byte());
        o.put(62, &self.reserved_62);
        o.0
    }
}

impl PseudoEmbeddingUpdate {
    /// Decodes an EMBEDDING_UPDATE word, opcode 0xca or the raw 0x79 (contract §1).
    #[inline]
    pub fn decode(w: &[u8; 64]) -> Result<PseudoEmbeddingUpdate, IsaError> {
        let b = Bytes(w);
        expect_opcode(
            &b,
            &[Opcode::PseudoEmbeddingUpdate, Opcode::EmbeddingUpdate],
            "PSEUDO_EMBEDDING_UPDATE (0xca / 0x79)",
        )?;
        let op = b.u8(13);
        Ok(PseudoEmbeddingUpdate {
            header: header(&b),
            events: b.array(4),
            data_dtype: dtype(&b, 12),
            cce_op: CceOp::from_byte(op).ok_or_else(|| bad("cce_op", op, "0 ADD, 2 MAX, 3 MIN"))?,
            unnamed_14: b.array(14),
            embed_index_in: tensor(&b, 16, "embed_index_in.start_addr.marker")?,
            embed_data_in: tensor(&b, 24, "embed_data_in.start_addr.marker")?,
            desc: tensor(&b, 36, "desc.start_addr.marker")?,
            embedding_table_base_addr: b.u32(44),
            embed_entry_num_elements: b.u16(48),
            embed_entry_stride_bytes_lo: b.u16(50),
            sequence_length: b.u32(52),
            embedding_table_num_entries: b.u32(56),
            embed_entry_stride_bytes_hi: b.u16(60),
            unnamed_62: b.array(62),
        })
    }

    /// The 64 bytes.
    pub fn encode(&self) -> [u8; 64] {
        let mut o = Out::new();
        o.header(&self.header);
        o.put(4, &self.events);
        o.u8(12, self.data_dtype.0);
        o.u8(13, self.cce_op.byte());
        o.put(14, &self.unnamed_14);
        put_tensor(&mut o, 16, &self.embed_index_in);
        put_tensor(&mut o, 24, &self.embed_data_in);
        put_tensor(&mut o, 36, &self.desc);
        o.u32(44, self.embedding_table_base_addr);
        o.u16(48, self.embed_entry_num_elements);
        o.u16(50, self.embed_entry_stride_bytes_lo);
        o.u32(52, self.sequence_length);
        o.u32(56, self.embedding_table_num_entries);
        o.u16(60, self.embed_entry_stride_bytes_hi);
        o.put(62, &self.unnamed_62);
        o.0
    }
}

impl PoolBufferLoad {
    /// Decodes a POOL_BUFFER_LOAD word (birsim's form, X11).
    #[inline]
    pub fn decode(w: &[u8; 64]) -> Result<PoolBufferLoad, IsaError> {
        let b = Bytes(w);
        expect_opcode(&b, &[Opcode::PoolBufferLoad], "POOL_BUFFER_LOAD (0x67)")?;
        Ok(PoolBufferLoad {
            header: header(&b),
            events: b.array(4),
            src: tensor(&b, 12, "src.start_addr.marker")?,
            dtype: dtype(&b, 32),
            unnamed_33: b.array(33),
            num_active_channels: b.u8(34),
            unnamed_35: b.array(35),
            mask: b.u16(36),
            unnamed_38: b.array(38),
            start_index: b.u32(40),
            unnamed_44: b.array(44),
        })
    }

    /// The 64 bytes.
    pub fn encode(&self) -> [u8; 64] {
        let mut o = Out::new();
        o.header(&self.header);
        o.put(4, &self.events);
        put_tensor(&mut o, 12, &self.src);
        o.u8(32, self.dtype.0);
        o.put(33, &self.unnamed_33);
        o.u8(34, self.num_active_channels);
        o.put(35, &self.unnamed_35);
        o.u16(36, self.mask);
        o.put(38, &self.unnamed_38);
        o.u32(40, self.start_index);
        o.put(44, &self.unnamed_44);
        o.0
    }
}

impl Word {
    /// Decodes any word by its opcode byte: 0x67, 0x68, 0x79 / 0xca, 0xbb, 0xe7; 0xb8 and 0xf1
    /// are [`IsaError::NoWireLayout`], every other byte [`IsaError::UnknownOpcode`].
    pub fn decode(w: &[u8; 64]) -> Result<Word, IsaError> {
        let opcode = w.first().copied().unwrap_or(0);
        match Opcode::from_byte(opcode) {
            Some(Opcode::PoolBufferLoad) => PoolBufferLoad::decode(w).map(Word::PoolBufferLoad),
            Some(Opcode::Gather) => S4d4Gt::decode(w).map(Word::Gather),
            Some(Opcode::IndirectCopy) => S4d4Ic::decode(w).map(Word::IndirectCopy),
            Some(Opcode::DmaIndirect) => DmaIndirect1d::decode(w).map(Word::DmaIndirect),
            Some(Opcode::PseudoEmbeddingUpdate | Opcode::EmbeddingUpdate) => {
                PseudoEmbeddingUpdate::decode(w).map(Word::EmbeddingUpdate)
            }
            Some(Opcode::DmaMemcpy | Opcode::GatherXpose) => Err(IsaError::NoWireLayout { opcode }),
            None => Err(IsaError::UnknownOpcode { opcode }),
        }
    }

    /// The 64 bytes.
    pub fn encode(&self) -> [u8; 64] {
        match self {
            Word::PoolBufferLoad(w) => w.encode(),
            Word::Gather(w) => w.encode(),
            Word::IndirectCopy(w) => w.encode(),
            Word::DmaIndirect(w) => w.encode(),
            Word::EmbeddingUpdate(w) => w.encode(),
        }
    }
}
