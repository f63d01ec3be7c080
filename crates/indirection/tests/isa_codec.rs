//! The ISA word codec (seed 004 §3; re-facts §8 "Device 64-byte words"; docs/isa.md "Word
//! layouts") against golden words assembled here byte by byte from the offsets of re-facts §8 and
//! the contract's bit layouts (X3 ADDR4, X4 ADDR8) — never produced by our encoder — plus round
//! trips and a decode-never-panics property test on random and mutated words.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use indirection::isa::{
    Addr4, Addr4Marker, Addr8, Addr8Marker, Addr8Target, BoundCheckReg, CceOp, DgeComputeOp, DmaConfigs,
    DmaIndirect1d, DmaIndirectFlags, Header, IndexMissBehavior, Indirect20B, IndirectDim, IndirectMode,
    IsaDtype, IsaError, MemPattern4D, Opcode, PoolBufferLoad, PseudoEmbeddingUpdate, S4d4Gt, S4d4Ic, Space,
    TargetError, TensorNd, Word, nki_dma_opcode, nki_opcode,
};
use test_rng::XorShift64;

/// A word under construction: bytes poked at offsets typed in each test.
struct W([u8; 64]);

impl W {
    fn new() -> W {
        W([0; 64])
    }
    fn b(mut self, at: usize, bytes: &[u8]) -> W {
        self.0[at..at + bytes.len()].copy_from_slice(bytes);
        self
    }
    fn u16(self, at: usize, v: u16) -> W {
        self.b(at, &v.to_le_bytes())
    }
    fn i16(self, at: usize, v: i16) -> W {
        self.b(at, &v.to_le_bytes())
    }
    fn u32(self, at: usize, v: u32) -> W {
        self.b(at, &v.to_le_bytes())
    }
    fn i32(self, at: usize, v: i32) -> W {
        self.b(at, &v.to_le_bytes())
    }
    fn u64(self, at: usize, v: u64) -> W {
        self.b(at, &v.to_le_bytes())
    }
}

fn a4(marker: Addr4Marker, partition: u8, space: Space, offset: u32) -> Addr4 {
    Addr4 { marker, partition, space, offset, reserved: 0 }
}

/// GATHER golden 1: an IMM SBUF index tensor, a PSUM destination, every raw byte non-zero.
fn gather_1() -> [u8; 64] {
    W::new()
        .b(0, &[0x68, 0x01, 0xAB, 0xCD]) // opcode, inst_flags, unnamed
        .b(4, &[1, 2, 3, 4, 5, 6, 7, 8]) // events
        .u32(12, 0x0000_0040) // src ADDR4: IMM, partition 0, SBUF, offset 0x40
        .i16(16, 1)
        .i16(18, 4)
        .i16(20, 0)
        .i16(22, 0) // src steps X Y Z W
        .u16(24, 4)
        .u16(26, 2)
        .u16(28, 1)
        .u16(30, 1) // src counts
        .b(32, &[0x09, 0x0A, 16, 0x5A, 1, 1, 0x11, 0x22]) // in UINT32, out FP32, 16 ch, raw, SKIP, free, raw
        .u32(40, 0xDEAD_BEEF) // immediate
        // dst ADDR4 (X3): PSUM (1 << 25 = 0x0200_0000) | partition 3 << 15 (= 0x0001_8000)
        // | offset 0x200
        .u32(44, 0x0201_8200)
        .i16(48, -1)
        .i16(50, 8)
        .u16(56, 8)
        .u16(58, 1)
        .u16(60, 1)
        .u16(62, 1)
        .0
}

/// GATHER golden 2: ADDR_REG marker with every address bit set, IMMEDIATE_WRITE.
fn gather_2() -> [u8; 64] {
    W::new()
        .b(0, &[0x68])
        // 0x80 << 24 | all 29 low bits: bit 25 → PSUM, partition (bits 15..21) 127, offset
        // (bits 0..14) 0x7FFF, reserved bits 22..24 | 26..28 = 0x01C0_0000 | 0x1C00_0000
        .u32(12, 0x9FFF_FFFF)
        .u16(24, 0xFFFF)
        .b(32, &[0x03, 0x06, 128, 0, 0, 0])
        .u32(40, 7)
        .u32(44, 0x4000_0000) // dst ADDR4: SHAPE_REG, partition 0, SBUF, offset 0
        .0
}

#[test]
fn gather_golden_words_decode_field_by_field() {
    let w = S4d4Gt::decode(&gather_1()).unwrap();
    let expected = S4d4Gt {
        header: Header { opcode: 0x68, inst_flags: 1, unnamed_2: [0xAB, 0xCD] },
        events: [1, 2, 3, 4, 5, 6, 7, 8],
        src: TensorNd {
            start_addr: a4(Addr4Marker::Imm, 0, Space::Sbuf, 0x40),
            step_elem: [1, 4, 0, 0],
            num_elem: [4, 2, 1, 1],
        },
        in_dtype: IsaDtype::UINT32,
        out_dtype: IsaDtype::FP32,
        num_active_channels: 16,
        unnamed_35: [0x5A],
        index_miss_behavior: IndexMissBehavior::SkipWrite,
        free_pool_buffer: 1,
        unnamed_38: [0x11, 0x22],
        immediate: 0xDEAD_BEEF,
        dst: TensorNd {
            start_addr: a4(Addr4Marker::Imm, 3, Space::Psum, 0x200),
            step_elem: [-1, 8, 0, 0],
            num_elem: [8, 1, 1, 1],
        },
    };
    assert_eq!(w, expected);

    let w = S4d4Gt::decode(&gather_2()).unwrap();
    assert_eq!(
        w.src.start_addr,
        Addr4 { reserved: 0x1DC0_0000, ..a4(Addr4Marker::AddrReg, 127, Space::Psum, 0x7FFF) }
    );
    assert_eq!(w.src.num_elem, [0xFFFF, 0, 0, 0]);
    assert_eq!((w.in_dtype, w.out_dtype, w.num_active_channels), (IsaDtype::UINT8, IsaDtype::BFLOAT16, 128));
    assert_eq!(w.index_miss_behavior, IndexMissBehavior::ImmediateWrite);
    assert_eq!(w.immediate, 7);
    assert_eq!(w.dst.start_addr, a4(Addr4Marker::ShapeReg, 0, Space::Sbuf, 0));
}

/// INDIRECT_COPY golden 1: the valid shape (indirect src, tensor dst).
fn ic_1() -> [u8; 64] {
    W::new()
        .b(0, &[0xE7, 0, 0, 0])
        .b(4, &[0xFF; 8])
        // index_addr: INDIRECT_IMM (0x20 << 24) | partition 32 (0x0800_0000) | offset 0x10
        .u32(12, 0x2080_0010)
        .u32(16, 0x0080_1000) // data_addr: IMM, partition 32, SBUF, offset 0x1000
        .u16(20, 64) // num_elem
        .b(22, &[0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9]) // raw tail
        .b(32, &[0x05, 0x05, 32, 4, 0, 0x77]) // in/out UINT16, 32 ch, 4 per idx, dst 0, raw
        .u16(38, 512)
        .u16(40, 0)
        .b(42, &[1, 2])
        .u32(44, 0x0080_2000) // dst ADDR4: IMM, partition 32 (32 << 18 = 0x0080_0000), offset 0x2000
        .i16(48, 1)
        .u16(56, 64)
        .u16(58, 1)
        .u16(60, 1)
        .u16(62, 1)
        .0
}

/// INDIRECT_COPY golden 2: the union the other way round (tensor src, INDIRECT_REG dst).
fn ic_2() -> [u8; 64] {
    W::new()
        .b(0, &[0xE7])
        .u32(12, 0x0000_0000)
        .u16(24, 3) // src tensor count X
        .b(32, &[0x0A, 0x06, 17, 3, 2, 0])
        .u16(40, 9)
        // dst: INDIRECT_REG (0xA0 << 24) | partition 1 (0x0040_0000) | PSUM (0x0020_0000) | 5
        .u32(44, 0xA200_8005) // INDIRECT_REG 0xA0 << 24 | PSUM 0x0200_0000 | 1 << 15 | offset 5
        .u32(48, 0x0000_0044) // data_addr IMM SBUF offset 0x44
        .u16(52, 12)
        .0
}

#[test]
fn indirect_copy_golden_words_decode_field_by_field() {
    let w = S4d4Ic::decode(&ic_1()).unwrap();
    let expected = S4d4Ic {
        header: Header::new(0xE7),
        events: [0xFF; 8],
        src: MemPattern4D::Indirect(Indirect20B {
            index_addr: a4(Addr4Marker::IndirectImm, 32, Space::Sbuf, 0x10),
            data_addr: a4(Addr4Marker::Imm, 32, Space::Sbuf, 0x1000),
            num_elem: 64,
            unnamed_10: [0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9],
        }),
        in_dtype: IsaDtype::UINT16,
        out_dtype: IsaDtype::UINT16,
        num_active_channels: 32,
        src_num_elem_per_idx: 4,
        dst_num_elem_per_idx: 0,
        unnamed_37: [0x77],
        src_buffer_size: 512,
        dst_buffer_size: 0,
        unnamed_42: [1, 2],
        dst: MemPattern4D::Tensor(TensorNd {
            start_addr: a4(Addr4Marker::Imm, 32, Space::Sbuf, 0x2000),
            step_elem: [1, 0, 0, 0],
            num_elem: [64, 1, 1, 1],
        }),
    };
    assert_eq!(w, expected);

    let w = S4d4Ic::decode(&ic_2()).unwrap();
    assert_eq!(
        w.src,
        MemPattern4D::Tensor(TensorNd {
            start_addr: a4(Addr4Marker::Imm, 0, Space::Sbuf, 0),
            step_elem: [0; 4],
            num_elem: [3, 0, 0, 0]
        })
    );
    assert_eq!((w.in_dtype, w.out_dtype), (IsaDtype::FP32, IsaDtype::BFLOAT16));
    assert_eq!((w.num_active_channels, w.src_num_elem_per_idx, w.dst_num_elem_per_idx), (17, 3, 2));
    assert_eq!(w.dst_buffer_size, 9);
    assert_eq!(
        w.dst,
        MemPattern4D::Indirect(Indirect20B {
            index_addr: a4(Addr4Marker::IndirectReg, 1, Space::Psum, 5),
            data_addr: a4(Addr4Marker::Imm, 0, Space::Sbuf, 0x44),
            num_elem: 12,
            unnamed_10: [0; 10],
        })
    );
}

/// DMA_INDIRECT golden 1: a gather from DRAM into SBUF with a bound check (offsets re-facts §8).
fn dma_1() -> [u8; 64] {
    W::new()
        .b(0, &[0xBB, 0, 0, 0])
        .b(4, &[9, 8, 7, 6, 5, 4, 3, 2])
        .b(12, &[3, 1, 128, 0x04]) // semaphore, sem_increment, idx channels, flags: SRC, is_err
        .u64(16, 0x0000_0000_1000_0000) // src ADDR8: IMM, DRAM 0x1000_0000
        .i32(24, 1)
        .u16(28, 100)
        .u16(30, 512)
        .u64(32, 0x0080_0000_0000_0400) // dst ADDR8: IMM, bit 55 (on chip), SBUF p0 offset 0x400
        .i32(40, 1)
        .u16(44, 100)
        .u16(46, 512)
        .u32(48, 0x0000_0800) // src_idx ADDR4: IMM SBUF partition 0 offset 0x800
        .u32(52, 0)
        // in FP32, out FP32, src bound: enabled | reg 5, dst bound 0, NONE, priority 2 | raw 0b10101 << 3
        .b(56, &[0x0A, 0x0A, 0x85, 0x00, 0, 0xAA, 0xEE, 0xFF])
        .0
}

/// DMA_INDIRECT golden 2: a scatter with register markers and every flag field non-zero.
fn dma_2() -> [u8; 64] {
    W::new()
        .b(0, &[0xBB])
        // flags: DST (1) | non_unique (0x08) | gather_dim W (3 << 4) | scatter_dim Y (1 << 6) = 0x79
        .b(12, &[0, 0, 64, 0x79])
        // src ADDR8 top byte 0x6D: ADDR_TABLE|SHAPE_REG 0x60 | OFFSET_REG 0x08 | OFFSET_WIDE 0x04 | 0b01
        .u64(16, 0x6D00_0012_3456_789A)
        .i32(24, -3)
        .u64(32, 0x4000_0000_0000_0000) // dst ADDR8: SHAPE_REG, address 0
        .u16(44, 4096)
        .u16(46, 2)
        .u32(52, 0x8000_0010) // dst_idx ADDR4: ADDR_REG, offset 0x10
        .b(56, &[0x06, 0x07, 0x00, 0x7F, 4, 0x07]) // BF16, FP16, bound 0, bound 0x7F, MIN, priority 7
        .0
}

#[test]
fn dma_indirect_golden_words_decode_field_by_field() {
    let w = DmaIndirect1d::decode(&dma_1()).unwrap();
    let expected = DmaIndirect1d {
        header: Header::new(0xBB),
        events: [9, 8, 7, 6, 5, 4, 3, 2],
        semaphore: 3,
        sem_increment: 1,
        idx_num_active_channels: 128,
        flags: DmaIndirectFlags {
            indirect_mode: IndirectMode::SrcIndirection,
            idx_bound_is_err: true,
            non_unique_dst_idx: false,
            gather_dim: IndirectDim::X,
            scatter_dim: IndirectDim::X,
        },
        src_start_addr: Addr8::dram(0x1000_0000),
        src_step_elem: 1,
        src_num_elem: 100,
        src_elem_size: 512,
        dst_start_addr: Addr8 {
            marker: Addr8Marker::Imm,
            offset_reg: false,
            offset_wide: false,
            reserved: 0,
            address: 0x0080_0000_0000_0400,
        },
        dst_step_elem: 1,
        dst_num_elem: 100,
        dst_elem_size: 512,
        src_idx_start_addr: a4(Addr4Marker::Imm, 0, Space::Sbuf, 0x800),
        dst_idx_start_addr: a4(Addr4Marker::Imm, 0, Space::Sbuf, 0),
        in_dtype: IsaDtype::FP32,
        out_dtype: IsaDtype::FP32,
        src_idx_bound_reg: BoundCheckReg { bc_reg: 5, bc_disable_oob_error_notif: false, bc_enabled: true },
        dst_idx_bound_reg: BoundCheckReg::default(),
        compute_op: DgeComputeOp::None,
        dma_configs: DmaConfigs { priority_class: 2, unnamed_bits: 0b10101 },
        reserved_62: [0xEE, 0xFF],
    };
    assert_eq!(w, expected);
    assert_eq!(
        w.dst_start_addr.target(),
        Ok(Addr8Target::OnChip { partition: 0, space: Space::Sbuf, offset: 0x400 })
    );
    assert_eq!(w.src_start_addr.target(), Ok(Addr8Target::Dram(0x1000_0000)));

    let w = DmaIndirect1d::decode(&dma_2()).unwrap();
    assert_eq!(
        w.flags,
        DmaIndirectFlags {
            indirect_mode: IndirectMode::DstIndirection,
            idx_bound_is_err: false,
            non_unique_dst_idx: true,
            gather_dim: IndirectDim::W,
            scatter_dim: IndirectDim::Y,
        }
    );
    assert_eq!(
        w.src_start_addr,
        Addr8 {
            marker: Addr8Marker::AddrTableReg,
            offset_reg: true,
            offset_wide: true,
            reserved: 1,
            address: 0x12_3456_789A
        }
    );
    assert!(w.src_start_addr.has_shape_reg());
    assert_eq!(w.src_step_elem, -3);
    assert_eq!(w.dst_start_addr.marker, Addr8Marker::ShapeReg);
    assert_eq!((w.dst_num_elem, w.dst_elem_size), (4096, 2));
    assert_eq!(w.dst_idx_start_addr, a4(Addr4Marker::AddrReg, 0, Space::Sbuf, 0x10));
    assert_eq!((w.in_dtype, w.out_dtype), (IsaDtype::BFLOAT16, IsaDtype::FP16));
    assert_eq!(
        w.dst_idx_bound_reg,
        BoundCheckReg { bc_reg: 63, bc_disable_oob_error_notif: true, bc_enabled: false }
    );
    assert_eq!(w.compute_op, DgeComputeOp::Min);
    assert_eq!(w.dma_configs, DmaConfigs { priority_class: 7, unnamed_bits: 0 });
}

/// EMBEDDING_UPDATE golden 1 (0xca): offsets of re-facts §8.
fn embed_1() -> [u8; 64] {
    W::new()
        .b(0, &[0xCA, 0, 0, 0])
        .b(12, &[0x0A, 0x00, 0x01, 0x02]) // FP32, ADD, raw
        .u32(16, 0) // index TENSOR1D: IMM p0 offset 0
        .i16(20, 1)
        .u16(22, 8)
        .u32(24, 0x0004_0100) // data TENSOR2D: partition 1 (1 << 18) offset 0x100
        .i16(28, 1)
        .i16(30, 16)
        .u16(32, 16)
        .u16(34, 8)
        .u32(36, 0x0008_0000) // desc TENSOR1D: partition 2 (2 << 18)
        .i16(40, 1)
        .u16(42, 4)
        .u32(44, 0x0010_0000) // table base
        .u16(48, 16) // entry elements
        .u16(50, 0x0040) // stride low
        .u32(52, 8) // sequence_length
        .u32(56, 1000) // num entries
        .u16(60, 0x0001) // stride high
        .b(62, &[9, 9])
        .0
}

/// EMBEDDING_UPDATE golden 2: the raw SEQ opcode 0x79, MIN, bf16.
fn embed_2() -> [u8; 64] {
    W::new().b(0, &[0x79, 0x02]).b(12, &[0x06, 0x03]).u32(52, 0xFFFF_FFFF).u32(56, 3).0
}

#[test]
fn embedding_update_golden_words_decode_field_by_field() {
    let w = PseudoEmbeddingUpdate::decode(&embed_1()).unwrap();
    let expected = PseudoEmbeddingUpdate {
        header: Header::new(0xCA),
        events: [0; 8],
        data_dtype: IsaDtype::FP32,
        cce_op: CceOp::Add,
        unnamed_14: [1, 2],
        embed_index_in: TensorNd {
            start_addr: a4(Addr4Marker::Imm, 0, Space::Sbuf, 0),
            step_elem: [1],
            num_elem: [8],
        },
        embed_data_in: TensorNd {
            start_addr: a4(Addr4Marker::Imm, 1, Space::Sbuf, 0x100),
            step_elem: [1, 16],
            num_elem: [16, 8],
        },
        desc: TensorNd { start_addr: a4(Addr4Marker::Imm, 2, Space::Sbuf, 0), step_elem: [1], num_elem: [4] },
        embedding_table_base_addr: 0x0010_0000,
        embed_entry_num_elements: 16,
        embed_entry_stride_bytes_lo: 0x40,
        sequence_length: 8,
        embedding_table_num_entries: 1000,
        embed_entry_stride_bytes_hi: 1,
        unnamed_62: [9, 9],
    };
    assert_eq!(w, expected);
    assert_eq!(w.embed_entry_stride_bytes(), 0x0001_0040);

    let w = PseudoEmbeddingUpdate::decode(&embed_2()).unwrap();
    assert_eq!(w.header, Header { opcode: 0x79, inst_flags: 2, unnamed_2: [0, 0] });
    assert_eq!((w.data_dtype, w.cce_op), (IsaDtype::BFLOAT16, CceOp::Min));
    assert_eq!((w.sequence_length, w.embedding_table_num_entries), (0xFFFF_FFFF, 3));
    assert!(matches!(Word::decode(&embed_2()).unwrap(), Word::EmbeddingUpdate(_)));
}

/// POOL_BUFFER_LOAD golden words (birsim's form, X11: src +12, dtype +32, channels +34,
/// mask +36, start_index +40).
fn pool_1() -> [u8; 64] {
    W::new()
        .b(0, &[0x67])
        .u32(12, 0x0000_0100)
        .i16(16, 1)
        .u16(24, 512)
        .u16(26, 1)
        .u16(28, 1)
        .u16(30, 1)
        .b(32, &[0x0A, 0x33, 128, 0x44])
        .u16(36, 0x01FF)
        .b(38, &[5, 6])
        .u32(40, 0x0000_0200)
        .b(44, &[0xC3; 20])
        .0
}

fn pool_2() -> [u8; 64] {
    W::new().b(0, &[0x67, 0xFF, 0xFF, 0xFF]).u32(12, 0x0200_0000).b(32, &[0x06, 0, 1, 0]).u16(36, 0xFFFF).0
}

#[test]
fn pool_buffer_load_golden_words_decode_field_by_field() {
    let w = PoolBufferLoad::decode(&pool_1()).unwrap();
    let expected = PoolBufferLoad {
        header: Header::new(0x67),
        events: [0; 8],
        src: TensorNd {
            start_addr: a4(Addr4Marker::Imm, 0, Space::Sbuf, 0x100),
            step_elem: [1, 0, 0, 0],
            num_elem: [512, 1, 1, 1],
        },
        dtype: IsaDtype::FP32,
        unnamed_33: [0x33],
        num_active_channels: 128,
        unnamed_35: [0x44],
        mask: 0x01FF,
        unnamed_38: [5, 6],
        start_index: 0x200,
        unnamed_44: [0xC3; 20],
    };
    assert_eq!(w, expected);
    let w = PoolBufferLoad::decode(&pool_2()).unwrap();
    assert_eq!(w.header, Header { opcode: 0x67, inst_flags: 0xFF, unnamed_2: [0xFF, 0xFF] });
    assert_eq!(w.src.start_addr, a4(Addr4Marker::Imm, 0, Space::Psum, 0));
    assert_eq!((w.dtype, w.num_active_channels, w.mask), (IsaDtype::BFLOAT16, 1, 0xFFFF));
}

fn goldens() -> Vec<(&'static str, [u8; 64])> {
    vec![
        ("gather_1", gather_1()),
        ("gather_2", gather_2()),
        ("ic_1", ic_1()),
        ("ic_2", ic_2()),
        ("dma_1", dma_1()),
        ("dma_2", dma_2()),
        ("embed_1", embed_1()),
        ("embed_2", embed_2()),
        ("pool_1", pool_1()),
        ("pool_2", pool_2()),
    ]
}

#[test]
fn golden_words_round_trip_through_word_and_their_struct() {
    for (name, bytes) in goldens() {
        let w = Word::decode(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(w.encode(), bytes, "{name}");
        let again = match w {
            Word::Gather(s) => S4d4Gt::decode(&bytes).map(|t| (t == s, t.encode())),
            Word::IndirectCopy(s) => S4d4Ic::decode(&bytes).map(|t| (t == s, t.encode())),
            Word::DmaIndirect(s) => DmaIndirect1d::decode(&bytes).map(|t| (t == s, t.encode())),
            Word::EmbeddingUpdate(s) => PseudoEmbeddingUpdate::decode(&bytes).map(|t| (t == s, t.encode())),
            Word::PoolBufferLoad(s) => PoolBufferLoad::decode(&bytes).map(|t| (t == s, t.encode())),
        }
        .unwrap();
        assert_eq!(again, (true, bytes), "{name}");
    }
}

#[test]
fn hand_built_gather_encodes_to_the_hand_bytes() {
    // Encode of a value typed here (not decoded) equals the bytes poked by hand.
    let w = S4d4Gt {
        header: Header::new(0x68),
        events: [0; 8],
        src: TensorNd {
            start_addr: a4(Addr4Marker::Imm, 5, Space::Sbuf, 0x30),
            step_elem: [1, 0, 0, 0],
            num_elem: [10, 1, 1, 1],
        },
        in_dtype: IsaDtype::UINT16,
        out_dtype: IsaDtype::FP16,
        num_active_channels: 2,
        unnamed_35: [0],
        index_miss_behavior: IndexMissBehavior::ImmediateWrite,
        free_pool_buffer: 0,
        unnamed_38: [0; 2],
        immediate: 0x3C00,
        dst: TensorNd {
            start_addr: a4(Addr4Marker::Imm, 5, Space::Sbuf, 0x80),
            step_elem: [1, 0, 0, 0],
            num_elem: [10, 1, 1, 1],
        },
    };
    let hand = W::new()
        .b(0, &[0x68])
        .u32(12, 0x0014_0030) // 5 << 18 = 0x0014_0000
        .i16(16, 1)
        .u16(24, 10)
        .u16(26, 1)
        .u16(28, 1)
        .u16(30, 1)
        .b(32, &[0x05, 0x07, 2])
        .u32(40, 0x3C00)
        .u32(44, 0x0014_0080)
        .i16(48, 1)
        .u16(56, 10)
        .u16(58, 1)
        .u16(60, 1)
        .u16(62, 1)
        .0;
    assert_eq!(w.encode(), hand);
    assert_eq!(Word::Gather(w).encode(), hand);
}

#[test]
fn decode_errors_name_the_field() {
    let bad_enum = |bytes: [u8; 64], field: &str, value: u32| match Word::decode(&bytes) {
        Err(IsaError::BadEnum { field: f, value: v, .. }) => assert_eq!((f, v), (field, value)),
        other => panic!("{field}: {other:?}"),
    };
    bad_enum(W(gather_1()).b(36, &[2]).0, "index_miss_behavior", 2);
    bad_enum(W(gather_1()).u32(12, 0x6000_0000).0, "src.start_addr.marker", 0x60);
    bad_enum(W(gather_1()).u32(44, 0xE000_0000).0, "dst.start_addr.marker", 0xE0);
    bad_enum(W(ic_1()).u32(16, 0x6000_0000).0, "src.data_addr.marker", 0x60);
    bad_enum(W(ic_1()).u32(44, 0xE123_4567).0, "dst.start_addr.marker", 0xE0);
    bad_enum(W(dma_1()).b(15, &[0x03]).0, "flags.indirect_mode", 3);
    bad_enum(W(dma_1()).b(60, &[5]).0, "compute_op", 5);
    bad_enum(W(dma_1()).u64(16, 0xA000_0000_0000_0000).0, "src_start_addr.marker", 0xA0);
    bad_enum(W(dma_1()).u64(32, 0x1000_0000_0000_0000).0, "dst_start_addr.marker", 0x10);
    bad_enum(W(dma_1()).u32(48, 0x6000_0000).0, "src_idx_start_addr.marker", 0x60);
    bad_enum(W(dma_1()).u32(52, 0xE000_0000).0, "dst_idx_start_addr.marker", 0xE0);
    bad_enum(W(embed_1()).b(13, &[1]).0, "cce_op", 1);
    bad_enum(W(embed_1()).u32(24, 0x6000_0000).0, "embed_data_in.start_addr.marker", 0x60);
    bad_enum(W(pool_1()).u32(12, 0xE000_0000).0, "src.start_addr.marker", 0xE0);

    assert_eq!(Word::decode(&W::new().b(0, &[0xB8]).0), Err(IsaError::NoWireLayout { opcode: 0xB8 }));
    assert_eq!(Word::decode(&W::new().b(0, &[0xF1]).0), Err(IsaError::NoWireLayout { opcode: 0xF1 }));
    assert_eq!(Word::decode(&W::new().0), Err(IsaError::UnknownOpcode { opcode: 0 }));
    assert_eq!(Word::decode(&W::new().b(0, &[0x69]).0), Err(IsaError::UnknownOpcode { opcode: 0x69 }));
    assert!(matches!(S4d4Gt::decode(&ic_1()), Err(IsaError::WrongOpcode { found: 0xE7, .. })));
    assert!(matches!(
        PseudoEmbeddingUpdate::decode(&dma_1()),
        Err(IsaError::WrongOpcode { found: 0xBB, .. })
    ));
}

/// X3: the partition where re-facts §6 "Partition base on the wire" puts it, `basePartition
/// << 18` (SBUF) or `<< 15` (PSUM); space bit 25, marker bits 29..31 (ASSUMED). Worked by hand:
/// - SBUF p127 offset 0x3_FFFF (256 KiB − 1): 127 << 18 = 0x01FC_0000, | 0x3_FFFF = 0x01FF_FFFF;
/// - PSUM p127 offset 0x3FFF (16 KiB − 1): 0x0200_0000 | 127 << 15 (0x003F_8000) | 0x3FFF
///   = 0x023F_BFFF;
/// - PSUM p5 offset 0x7FFF (the field's top): 0x0200_0000 | 5 << 15 (0x0002_8000) | 0x7FFF
///   = 0x0202_FFFF;
/// - SBUF p1 offset 0 with marker INDIRECT_IMM: 0x2000_0000 | 1 << 18 = 0x2004_0000;
/// - reserved: 0x1C00_0000 (bits 26..28) reads SBUF p0 offset 0 reserved 0x1C00_0000;
///   0x03C0_0000 reads PSUM (bit 25) p0 reserved 0x01C0_0000 (bits 22..24).
#[test]
fn addr4_layout_follows_re_facts_6() {
    let cases = [
        (0x01FF_FFFF, a4(Addr4Marker::Imm, 127, Space::Sbuf, 0x3_FFFF)),
        (0x023F_BFFF, a4(Addr4Marker::Imm, 127, Space::Psum, 0x3FFF)),
        (0x0202_FFFF, a4(Addr4Marker::Imm, 5, Space::Psum, 0x7FFF)),
        (0x2004_0000, a4(Addr4Marker::IndirectImm, 1, Space::Sbuf, 0)),
        (0x1C00_0000, Addr4 { reserved: 0x1C00_0000, ..a4(Addr4Marker::Imm, 0, Space::Sbuf, 0) }),
        (0x03C0_0000, Addr4 { reserved: 0x01C0_0000, ..a4(Addr4Marker::Imm, 0, Space::Psum, 0) }),
    ];
    for (bits, want) in cases {
        assert_eq!(Addr4::from_bits(bits, "a").unwrap(), want, "{bits:#010x}");
        assert_eq!(want.to_bits(), bits, "{want:?}");
    }
    assert_eq!((Addr4::offset_max(Space::Sbuf), Addr4::offset_max(Space::Psum)), (0x3_FFFF, 0x7FFF));
    assert_eq!(
        (Addr4::reserved_mask(Space::Sbuf), Addr4::reserved_mask(Space::Psum)),
        (0x1C00_0000, 0x1DC0_0000)
    );
}

#[test]
fn addr8_target_rejects_marker_and_high_bits_on_chip() {
    // Bit 55 set with ADDR4 marker bits 29..31 = 0x20 (X5), and with bit 40 set (X31).
    let a = Addr8::dram((1 << 55) | 0x2000_0000);
    assert_eq!(a.target(), Err(TargetError::Marker(0x20)));
    let a = Addr8::dram((1 << 55) | (1 << 40));
    assert_eq!(a.target(), Err(TargetError::HighBits(1 << 8)));
    // partition 127 PSUM offset 1 on chip (X3): PSUM 0x0200_0000 | 127 << 15 (= 0x003F_8000) | 1.
    assert_eq!(Addr8::on_chip(127, Space::Psum, 1).address, (1 << 55) | 0x023F_8001);
    // ADDR4 reserved bits in the low word: bit 26 (SBUF), bit 22 under PSUM.
    assert_eq!(Addr8::dram((1 << 55) | 0x0400_0000).target(), Err(TargetError::Reserved(0x0400_0000)));
    assert_eq!(Addr8::dram((1 << 55) | 0x0240_0000).target(), Err(TargetError::Reserved(0x0040_0000)));
    assert_eq!(Addr8::dram((1 << 55) - 1).target(), Ok(Addr8Target::Dram((1 << 55) - 1)));
}

#[test]
fn nki_names_cross_to_the_other_gather_opcode() {
    // seed 004 §2: local_gather -> IndirectCopy 0xe7, nc_n_gather -> Gather 0x68.
    assert_eq!(nki_opcode("local_gather").map(Opcode::byte), Some(0xE7));
    assert_eq!(nki_opcode("nc_n_gather").map(Opcode::byte), Some(0x68));
    assert_eq!(nki_opcode("dma_copy").map(Opcode::byte), Some(0xBB));
    assert_eq!(nki_opcode("dma_compute").map(Opcode::byte), Some(0xBB));
    assert_eq!(nki_opcode("gather"), None);
    assert_eq!(nki_opcode("Local_Gather"), None);
    assert_eq!(nki_dma_opcode("dma_copy", true).map(Opcode::byte), Some(0xBB));
    assert_eq!(nki_dma_opcode("dma_copy", false), None);
    assert_eq!(nki_dma_opcode("nc_n_gather", true), None);
    assert_eq!(indirection::isa::nki_index_dtype("local_gather"), Some(bir_ir::Dtype::Uint16));
    assert_eq!(indirection::isa::nki_index_dtype("nc_n_gather"), Some(bir_ir::Dtype::Uint32));
}

#[test]
fn isa_dtype_codes_follow_re_facts_1() {
    use bir_ir::Dtype;
    // re-facts §1 ISA table: 3 UINT8, 5 UINT16, 6 BFLOAT16, 9 UINT32, 0xA FP32, 0xE FP8_EXP4.
    assert_eq!(IsaDtype::from_dtype(Dtype::Uint16), IsaDtype(5));
    assert_eq!(IsaDtype::from(Dtype::Float8E4m3fn), IsaDtype(0xE));
    assert_eq!(IsaDtype(0xA).to_dtype(), Some(Dtype::Float32));
    assert_eq!(IsaDtype(0x3).to_dtype(), Some(Dtype::Uint8)); // X30: not float8_e8m0fnu
    assert_eq!(IsaDtype(0xE).to_dtype(), Some(Dtype::Float8E4)); // X30: the lowest ordinal
    assert_eq!(IsaDtype(0x10).to_dtype(), None);
    assert_eq!(IsaDtype(0x0B).name(), Some("FP32R"));
    assert_eq!(IsaDtype(0x16).name(), Some("SFP8_E5"));
    assert_eq!(IsaDtype(0x17).name(), None);
    assert!(!IsaDtype(0).is_known() && !IsaDtype(0x18).is_known() && IsaDtype(0x1F).is_known());
    assert_eq!(IsaDtype(0x20).name(), None);
    assert_eq!(IsaDtype::from_name("UINT32"), Some(IsaDtype(9)));
    assert_eq!(IsaDtype(0x0C).size(), Some(8));
    assert_eq!(IsaDtype(0x12).size(), None);
    // Every one-lane BIR dtype whose code maps back maps to a dtype with that code.
    for d in [Dtype::Uint8, Dtype::Int16, Dtype::Bfloat16, Dtype::Int64, Dtype::Float8E5, Dtype::Float32r] {
        assert_eq!(IsaDtype::from(d).to_dtype(), Some(d));
    }
}

/// A random 64-byte word: eight xorshift64 outputs, little-endian.
fn random_word(rng: &mut XorShift64) -> [u8; 64] {
    let mut w = [0u8; 64];
    for chunk in w.chunks_mut(8) {
        chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    w
}

/// Decode never panics; whatever decodes re-encodes to the same bytes; the struct decoders
/// agree with `Word::decode`.
fn check_word(w: &[u8; 64]) -> bool {
    let word = Word::decode(w);
    if let Ok(d) = &word {
        assert_eq!(&d.encode(), w, "{d:?}");
    }
    let per_struct = match w[0] {
        0x68 => Some(S4d4Gt::decode(w).map(|s| s.encode())),
        0xE7 => Some(S4d4Ic::decode(w).map(|s| s.encode())),
        0xBB => Some(DmaIndirect1d::decode(w).map(|s| s.encode())),
        0xCA | 0x79 => Some(PseudoEmbeddingUpdate::decode(w).map(|s| s.encode())),
        0x67 => Some(PoolBufferLoad::decode(w).map(|s| s.encode())),
        _ => None,
    };
    if let Some(r) = per_struct {
        assert_eq!(r.is_ok(), word.is_ok());
    }
    word.is_ok()
}

#[test]
fn random_words_never_panic_and_every_ok_re_encodes() {
    let mut rng = XorShift64::new(0x9E37_79B9_7F4A_7C15);
    for _ in 0..20_000 {
        check_word(&random_word(&mut rng));
    }
    // The opcode byte forced to each known one, so the struct decoders run on random bodies.
    for op in Opcode::ALL {
        for _ in 0..5_000 {
            let mut w = random_word(&mut rng);
            w[0] = op.byte();
            check_word(&w);
        }
    }
}

#[test]
fn mutated_golden_words_round_trip_whenever_they_decode() {
    // Random bytes rarely give every enum field a valid value, so mutate the golden words a few
    // bytes at a time: many still decode, and each must round-trip exactly.
    let mut rng = XorShift64::new(0xD1B5_4A32_D192_ED03);
    for (name, g) in goldens() {
        let mut ok = 0;
        for _ in 0..4_000 {
            let mut w = g;
            for _ in 0..1 + rng.below(4) {
                let at = 1 + rng.below_usize(63); // keep the opcode
                w[at] = rng.next_u64() as u8;
            }
            ok += usize::from(check_word(&w));
        }
        assert!(ok > 1_000, "{name}: only {ok} of 4000 mutations decoded");
    }
}
