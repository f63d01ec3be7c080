//! The ISA word validator (contract §2; seed 004 §1, §3, §8; re-facts §8; docs/isa.md
//! "Validity"): one row per rule — a minimal valid word with one field broken, and the exact
//! (field, rule) list the contract's text calls for — plus the per-generation rows (v5 PSUM
//! gather, v5 tile-aware channel range, SBUF size per generation).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use indirection::isa::{
    Addr4, Addr4Marker, Addr8, Addr8Marker, BoundCheckReg, CceOp, DgeComputeOp, DmaConfigs, DmaDim,
    DmaDirect2d, DmaIndirect1d, DmaIndirectFlags, GatherXpose, Generation, Header, IndexMissBehavior,
    Indirect20B, IndirectDim, IndirectMode, IsaDtype, MemPattern4D, PoolBufferLoad, PseudoEmbeddingUpdate,
    S4d4Gt, S4d4Ic, Space, TensorNd, Validate, Word, rule, validate,
};
use rstest::rstest;

use Generation::{V2, V3, V4, V5};

fn sbuf(partition: u8, offset: u32) -> Addr4 {
    Addr4::imm(partition, Space::Sbuf, offset)
}

fn t4(start_addr: Addr4, n: u16) -> TensorNd<4> {
    TensorNd { start_addr, step_elem: [1, 0, 0, 0], num_elem: [n, 1, 1, 1] }
}

fn gather() -> S4d4Gt {
    S4d4Gt {
        header: Header::new(0x68),
        events: [0; 8],
        src: t4(sbuf(0, 0), 8),
        in_dtype: IsaDtype::UINT32,
        out_dtype: IsaDtype::FP32,
        num_active_channels: 4,
        unnamed_35: [0],
        index_miss_behavior: IndexMissBehavior::ImmediateWrite,
        free_pool_buffer: 0,
        unnamed_38: [0; 2],
        immediate: 0,
        dst: t4(sbuf(0, 0x1000), 8),
    }
}

fn ic() -> S4d4Ic {
    S4d4Ic {
        header: Header::new(0xE7),
        events: [0; 8],
        src: MemPattern4D::Indirect(Indirect20B {
            index_addr: Addr4 {
                marker: Addr4Marker::IndirectImm,
                partition: 0,
                space: Space::Sbuf,
                offset: 0,
                reserved: 0,
            },
            data_addr: sbuf(0, 0x100),
            num_elem: 64,
            unnamed_10: [0; 10],
        }),
        in_dtype: IsaDtype::FP32,
        out_dtype: IsaDtype::FP32,
        num_active_channels: 16,
        src_num_elem_per_idx: 4,
        dst_num_elem_per_idx: 0,
        unnamed_37: [0],
        src_buffer_size: 256,
        dst_buffer_size: 0,
        unnamed_42: [0; 2],
        dst: MemPattern4D::Tensor(t4(sbuf(0, 0x2000), 64)),
    }
}

fn dma() -> DmaIndirect1d {
    DmaIndirect1d {
        header: Header::new(0xBB),
        events: [0; 8],
        semaphore: 0,
        sem_increment: 0,
        idx_num_active_channels: 128,
        flags: DmaIndirectFlags {
            indirect_mode: IndirectMode::SrcIndirection,
            idx_bound_is_err: false,
            non_unique_dst_idx: false,
            gather_dim: IndirectDim::X,
            scatter_dim: IndirectDim::X,
        },
        src_start_addr: Addr8::dram(0),
        src_step_elem: 1,
        src_num_elem: 16,
        src_elem_size: 4,
        dst_start_addr: Addr8::on_chip(0, Space::Sbuf, 0x100),
        dst_step_elem: 1,
        dst_num_elem: 16,
        dst_elem_size: 4,
        src_idx_start_addr: sbuf(0, 0x800),
        dst_idx_start_addr: sbuf(0, 0x800),
        in_dtype: IsaDtype::FP32,
        out_dtype: IsaDtype::FP32,
        src_idx_bound_reg: BoundCheckReg::default(),
        dst_idx_bound_reg: BoundCheckReg::default(),
        compute_op: DgeComputeOp::None,
        dma_configs: DmaConfigs::default(),
        reserved_62: [0; 2],
    }
}

fn embed() -> PseudoEmbeddingUpdate {
    PseudoEmbeddingUpdate {
        header: Header::new(0xCA),
        events: [0; 8],
        data_dtype: IsaDtype::FP32,
        cce_op: CceOp::Add,
        unnamed_14: [0; 2],
        embed_index_in: TensorNd { start_addr: sbuf(0, 0), step_elem: [1], num_elem: [8] },
        embed_data_in: TensorNd { start_addr: sbuf(1, 0), step_elem: [1, 16], num_elem: [16, 8] },
        desc: TensorNd { start_addr: sbuf(2, 0), step_elem: [1], num_elem: [1] },
        embedding_table_base_addr: 0x10_0000,
        embed_entry_num_elements: 16,
        embed_entry_stride_bytes_lo: 64,
        sequence_length: 8,
        embedding_table_num_entries: 100,
        embed_entry_stride_bytes_hi: 0,
        unnamed_62: [0; 2],
    }
}

fn pool() -> PoolBufferLoad {
    PoolBufferLoad {
        header: Header::new(0x67),
        events: [0; 8],
        src: t4(sbuf(0, 0), 512),
        dtype: IsaDtype::FP32,
        unnamed_33: [0],
        num_active_channels: 128,
        unnamed_35: [0],
        mask: 0x1FF,
        unnamed_38: [0; 2],
        start_index: 0,
        unnamed_44: [0; 20],
    }
}

fn dim(step_elem: i32, num_elem: u16) -> DmaDim {
    DmaDim { step_elem, num_elem }
}

fn direct() -> DmaDirect2d {
    DmaDirect2d {
        src_start_addr: Addr8::dram(0x1000),
        src_dims: [dim(1, 64), dim(64, 4)],
        src_elem_size: 4,
        dst_start_addr: Addr8::on_chip(0, Space::Sbuf, 0),
        dst_dims: [dim(1, 64), dim(64, 4)],
        dst_elem_size: 4,
        in_dtype: IsaDtype::FP32,
        out_dtype: IsaDtype::FP32,
        compute_op: DgeComputeOp::None,
    }
}

fn xpose() -> GatherXpose {
    GatherXpose {
        dtype: IsaDtype::BFLOAT16,
        src_start_addr: Addr8::dram(0x2000),
        src_dims: [dim(1, 128), dim(128, 32), dim(0, 1), dim(0, 1)],
        dst_start_addr: Addr8::on_chip(0, Space::Sbuf, 0x40),
        dst_dims: [dim(1, 32), dim(32, 128), dim(0, 1), dim(0, 1)],
        gather_dim: IndirectDim::Y,
        index_addr: sbuf(0, 0),
        index_count: 32,
    }
}

/// Something the validator checks, built from a valid base with one change.
enum Item {
    W(Word),
    D(DmaDirect2d),
    X(GatherXpose),
}

impl Item {
    fn violations(&self, g: Generation) -> Vec<(String, String)> {
        let v = match self {
            Item::W(w) => validate(w, g),
            Item::D(d) => validate(d, g),
            Item::X(x) => validate(x, g),
        };
        v.into_iter().map(|v| (v.field.to_owned(), v.rule.to_owned())).collect()
    }
}

fn gt(f: fn(&mut S4d4Gt)) -> Item {
    let mut w = gather();
    f(&mut w);
    Item::W(Word::Gather(w))
}
fn icw(f: fn(&mut S4d4Ic)) -> Item {
    let mut w = ic();
    f(&mut w);
    Item::W(Word::IndirectCopy(w))
}
fn ic_src(f: fn(&mut Indirect20B)) -> Item {
    let mut w = ic();
    if let MemPattern4D::Indirect(i) = &mut w.src {
        f(i);
    }
    Item::W(Word::IndirectCopy(w))
}
fn ic_dst(f: fn(&mut TensorNd<4>)) -> Item {
    let mut w = ic();
    if let MemPattern4D::Tensor(t) = &mut w.dst {
        f(t);
    }
    Item::W(Word::IndirectCopy(w))
}
fn di(f: fn(&mut DmaIndirect1d)) -> Item {
    let mut w = dma();
    f(&mut w);
    Item::W(Word::DmaIndirect(w))
}
fn eu(f: fn(&mut PseudoEmbeddingUpdate)) -> Item {
    let mut w = embed();
    f(&mut w);
    Item::W(Word::EmbeddingUpdate(w))
}
fn pb(f: fn(&mut PoolBufferLoad)) -> Item {
    let mut w = pool();
    f(&mut w);
    Item::W(Word::PoolBufferLoad(w))
}
fn d2(f: fn(&mut DmaDirect2d)) -> Item {
    let mut w = direct();
    f(&mut w);
    Item::D(w)
}
fn gx(f: fn(&mut GatherXpose)) -> Item {
    let mut w = xpose();
    f(&mut w);
    Item::X(w)
}

#[test]
fn the_base_words_are_valid_on_every_generation() {
    for g in Generation::ALL {
        for item in [gt(|_| {}), icw(|_| {}), di(|_| {}), eu(|_| {}), pb(|_| {}), d2(|_| {}), gx(|_| {})] {
            assert_eq!(item.violations(g), Vec::<(String, String)>::new(), "{g}");
        }
    }
}

#[rstest]
// --- GATHER (contract §2 "GATHER"; seed 004 §3a) ---
#[case::gather_index_dtype(gt(|w| w.in_dtype = IsaDtype::INT32), V2, &[("in_dtype", rule::GATHER_INDEX_DTYPE)])]
#[case::gather_index_dtype_uint8_ok(gt(|w| w.in_dtype = IsaDtype::UINT8), V2, &[])]
#[case::gather_index_dtype_uint16_ok(gt(|w| w.in_dtype = IsaDtype::UINT16), V2, &[])]
#[case::dtype_invalid(gt(|w| w.out_dtype = IsaDtype(0)), V2, &[("out_dtype", rule::DTYPE_KNOWN)])]
#[case::dtype_unnamed(gt(|w| w.out_dtype = IsaDtype(0x17)), V2, &[("out_dtype", rule::DTYPE_KNOWN)])]
#[case::channels_zero(gt(|w| w.num_active_channels = 0), V2, &[("num_active_channels", rule::CHANNELS)])]
#[case::channels_129(gt(|w| w.num_active_channels = 129), V2, &[
    ("num_active_channels", rule::CHANNELS),
    ("src.start_addr.partition", rule::PARTITION_RANGE),
    ("dst.start_addr.partition", rule::PARTITION_RANGE),
])]
#[case::partition_range(gt(|w| w.src.start_addr.partition = 126), V2, &[("src.start_addr.partition", rule::PARTITION_RANGE)])]
#[case::partition_range_edge_ok(gt(|w| w.src.start_addr.partition = 124), V2, &[])]
#[case::tensor_count(gt(|w| w.src.num_elem[2] = 0), V2, &[
    ("src.num_elem[2]", rule::TENSOR_COUNT),
    ("dst.num_elem", rule::GATHER_COUNT_MATCH),
])]
#[case::gather_count_match(gt(|w| w.dst.num_elem = [4, 2, 1, 1]), V2, &[])]
#[case::gather_count_mismatch(gt(|w| w.dst.num_elem[0] = 9), V2, &[("dst.num_elem", rule::GATHER_COUNT_MATCH)])]
#[case::index_count(gt(|w| { w.src.num_elem = [4097, 1, 1, 1]; w.dst.num_elem = [4097, 1, 1, 1]; }), V2, &[
    ("src.num_elem", rule::INDEX_COUNT),
])]
#[case::index_count_4096_ok(gt(|w| { w.src.num_elem = [64, 64, 1, 1]; w.dst.num_elem = [4096, 1, 1, 1]; }), V2, &[])]
#[case::free_pool_buffer(gt(|w| w.free_pool_buffer = 2), V2, &[("free_pool_buffer", rule::FREE_POOL_BUFFER)])]
#[case::opcode(gt(|w| w.header.opcode = 0x67), V2, &[("header.opcode", rule::OPCODE)])]
#[case::field_width(gt(|w| w.src.start_addr.partition = 200), V2, &[
    ("src.start_addr.partition", rule::FIELD_WIDTH),
    ("src.start_addr.partition", rule::PARTITION_RANGE),
])]
// SBUF bytes per partition: 192 KiB v2, 224 KiB v3, 256 KiB v4 / v5 (contract §2).
#[case::sbuf_v2(gt(|w| w.dst.start_addr.offset = 192 * 1024), V2, &[("dst.start_addr.offset", rule::OFFSET_RANGE)])]
#[case::sbuf_v2_last_ok(gt(|w| w.dst.start_addr.offset = 192 * 1024 - 1), V2, &[])]
#[case::sbuf_v3_ok(gt(|w| w.dst.start_addr.offset = 192 * 1024), V3, &[])]
#[case::sbuf_v3(gt(|w| w.dst.start_addr.offset = 224 * 1024), V3, &[("dst.start_addr.offset", rule::OFFSET_RANGE)])]
#[case::sbuf_v4_ok(gt(|w| w.dst.start_addr.offset = 224 * 1024), V4, &[])]
// On v4 / v5 256 KiB is the whole 18-bit SBUF offset field (X3), so a larger offset is a field
// width error (no decoded word can hold one).
#[case::sbuf_v4_last_ok(gt(|w| w.dst.start_addr.offset = 256 * 1024 - 1), V4, &[])]
#[case::sbuf_v4(gt(|w| w.dst.start_addr.offset = 256 * 1024), V4, &[("dst.start_addr.offset", rule::FIELD_WIDTH)])]
#[case::sbuf_v5(gt(|w| w.dst.start_addr.offset = 256 * 1024), V5, &[("dst.start_addr.offset", rule::FIELD_WIDTH)])]
#[case::psum_field_width(gt(|w| w.dst.start_addr = Addr4::imm(0, Space::Psum, 32 * 1024)), V2, &[("dst.start_addr.offset", rule::FIELD_WIDTH)])]
// X3: the reserved bits (SBUF 26..28, PSUM 22..24 and 26..28) must be 0.
#[case::addr4_reserved(gt(|w| w.src.start_addr.reserved = 0x0400_0000), V2, &[("src.start_addr.reserved", rule::ADDR4_RESERVED)])]
#[case::addr4_reserved_psum(gt(|w| w.dst.start_addr = Addr4 { reserved: 0x0040_0000, ..Addr4::imm(0, Space::Psum, 0) }), V2, &[("dst.start_addr.reserved", rule::ADDR4_RESERVED)])]
#[case::psum_size(gt(|w| w.dst.start_addr = Addr4::imm(0, Space::Psum, 16 * 1024)), V2, &[("dst.start_addr.offset", rule::OFFSET_RANGE)])]
#[case::register_marker_offset_unchecked(gt(|w| w.dst.start_addr = Addr4 { marker: Addr4Marker::AddrReg, partition: 0, space: Space::Psum, offset: 0x7FFF, reserved: 0 }), V2, &[])]
#[case::shape_reg_marker_offset_checked(gt(|w| w.dst.start_addr = Addr4 { marker: Addr4Marker::ShapeReg, partition: 0, space: Space::Sbuf, offset: 192 * 1024, reserved: 0 }), V2, &[("dst.start_addr.offset", rule::OFFSET_RANGE)])]
// v5: GATHER is SBUF-only (seed 004 §1, CONFIRMED); v2–v4 allow PSUM.
#[case::psum_gather_v4_ok(gt(|w| w.src.start_addr.space = Space::Psum), V4, &[])]
#[case::psum_gather_v5(gt(|w| w.src.start_addr.space = Space::Psum), V5, &[("src.start_addr.space", rule::GATHER_SBUF_ONLY_V5)])]
#[case::psum_gather_v5_dst(gt(|w| w.dst.start_addr = Addr4::imm(0, Space::Psum, 0)), V5, &[("dst.start_addr.space", rule::GATHER_SBUF_ONLY_V5)])]
// v5 tile-aware channel range (X13): with inst_flags bit 0, channels stay in one quadrant.
#[case::tile_v5(gt(|w| { w.header.inst_flags = 1; w.src.start_addr.partition = 30; }), V5, &[("src.start_addr.partition", rule::CHANNEL_RANGE_TILE)])]
#[case::tile_v5_inside_ok(gt(|w| { w.header.inst_flags = 1; w.src.start_addr.partition = 28; }), V5, &[])]
#[case::tile_v5_flag_off_ok(gt(|w| w.src.start_addr.partition = 30), V5, &[])]
#[case::tile_v4_ok(gt(|w| { w.header.inst_flags = 1; w.src.start_addr.partition = 30; }), V4, &[])]
#[case::tile_v5_32_channels(gt(|w| { w.header.inst_flags = 1; w.num_active_channels = 33; }), V5, &[
    ("src.start_addr.partition", rule::CHANNEL_RANGE_TILE),
    ("dst.start_addr.partition", rule::CHANNEL_RANGE_TILE),
])]
// --- INDIRECT_COPY (contract §2 "IC"; seed 004 §3b) ---
#[case::ic_src_indirect(icw(|w| w.src = MemPattern4D::Tensor(t4(Addr4::imm(0, Space::Sbuf, 0), 1))), V2, &[("src", rule::IC_SRC_INDIRECT)])]
#[case::ic_dst_tensor(icw(|w| w.dst = MemPattern4D::Indirect(Indirect20B {
    index_addr: Addr4 { marker: Addr4Marker::IndirectImm, partition: 0, space: Space::Sbuf, offset: 0, reserved: 0 },
    data_addr: Addr4::imm(0, Space::Sbuf, 0), num_elem: 1, unnamed_10: [0; 10] })), V2, &[("dst", rule::IC_DST_TENSOR)])]
#[case::ic_dtype_match(icw(|w| w.out_dtype = IsaDtype::FP16), V2, &[("out_dtype", rule::IC_DTYPE_MATCH)])]
#[case::ic_channels_24(icw(|w| w.num_active_channels = 24), V2, &[("num_active_channels", rule::IC_CHANNELS)])]
#[case::ic_channels_0(icw(|w| w.num_active_channels = 0), V2, &[("num_active_channels", rule::IC_CHANNELS)])]
#[case::ic_channels_128_ok(icw(|w| w.num_active_channels = 128), V2, &[])]
#[case::ic_channels_144(icw(|w| w.num_active_channels = 144), V2, &[
    ("src.index_addr.partition", rule::PARTITION_RANGE),
    ("src.data_addr.partition", rule::PARTITION_RANGE),
    ("num_active_channels", rule::IC_CHANNELS),
    ("dst.start_addr.partition", rule::PARTITION_RANGE),
])]
#[case::ic_start_index(ic_src(|i| i.index_addr.partition = 16), V2, &[("src.index_addr.partition", rule::IC_START_PARTITION)])]
#[case::ic_start_data(ic_src(|i| i.data_addr.partition = 8), V2, &[("src.data_addr.partition", rule::IC_START_PARTITION)])]
#[case::ic_start_dst(ic_dst(|t| t.start_addr.partition = 100), V2, &[("dst.start_addr.partition", rule::IC_START_PARTITION)])]
#[case::ic_start_96_ok(ic_dst(|t| t.start_addr.partition = 96), V2, &[])]
#[case::ic_partition_range(icw(|w| { w.num_active_channels = 64; if let MemPattern4D::Indirect(i) = &mut w.src { i.index_addr.partition = 96; } }), V2, &[
    ("src.index_addr.partition", rule::PARTITION_RANGE),
])]
#[case::ic_elem_per_idx(icw(|w| w.src_num_elem_per_idx = 3), V2, &[
    ("src_num_elem_per_idx", rule::IC_ELEM_PER_IDX),
    ("src.num_elem", rule::IC_NUM_ELEM_MULTIPLE),
])]
#[case::ic_elem_per_idx_64(icw(|w| w.src_num_elem_per_idx = 64), V2, &[("src_num_elem_per_idx", rule::IC_ELEM_PER_IDX)])]
#[case::ic_num_elem_multiple(ic_src(|i| i.num_elem = 66), V2, &[
    ("src.num_elem", rule::IC_NUM_ELEM_MULTIPLE),
    ("dst.num_elem", rule::IC_DST_COUNT),
])]
#[case::scatter_elem(icw(|w| w.dst_num_elem_per_idx = 1), V2, &[("dst_num_elem_per_idx", rule::SCATTER_NOT_IMPLEMENTED)])]
#[case::scatter_buffer(icw(|w| w.dst_buffer_size = 4), V2, &[("dst_buffer_size", rule::SCATTER_NOT_IMPLEMENTED)])]
#[case::ic_dst_count(ic_dst(|t| t.num_elem = [32, 1, 1, 1]), V2, &[("dst.num_elem", rule::IC_DST_COUNT)])]
#[case::ic_dst_max(icw(|w| { w.src_num_elem_per_idx = 1; if let MemPattern4D::Indirect(i) = &mut w.src { i.num_elem = 2048; } w.dst = MemPattern4D::Tensor(t4(Addr4::imm(0, Space::Sbuf, 0x2000), 2048)); }), V2, &[
    ("dst.num_elem", rule::IC_DST_MAX),
])]
#[case::ic_index_count(icw(|w| { w.src_num_elem_per_idx = 1; if let MemPattern4D::Indirect(i) = &mut w.src { i.num_elem = 4097; } w.dst = MemPattern4D::Tensor(t4(Addr4::imm(0, Space::Sbuf, 0x2000), 4097)); }), V2, &[
    ("src.num_elem", rule::INDEX_COUNT),
    ("dst.num_elem", rule::IC_DST_MAX),
])]
#[case::ic_dst_tensor_count(ic_dst(|t| t.num_elem = [64, 1, 0, 1]), V2, &[
    ("dst.num_elem[2]", rule::TENSOR_COUNT),
    ("dst.num_elem", rule::IC_DST_COUNT),
])]
// --- DMA_INDIRECT (contract §2 "DMA_INDIRECT"; seed 004 §3c; re-facts §8) ---
#[case::dma_idx_channels(di(|w| w.idx_num_active_channels = 64), V2, &[("idx_num_active_channels", rule::DMA_IDX_CHANNELS)])]
#[case::dma_idx_partition(di(|w| w.src_idx_start_addr.partition = 1), V2, &[("src_idx_start_addr.partition", rule::DMA_IDX_PARTITION0)])]
#[case::dma_idx_psum(di(|w| w.src_idx_start_addr.space = Space::Psum), V2, &[("src_idx_start_addr.partition", rule::DMA_IDX_PARTITION0)])]
#[case::dma_idx_register_ok(di(|w| w.src_idx_start_addr = Addr4 { marker: Addr4Marker::AddrReg, partition: 1, space: Space::Sbuf, offset: 0, reserved: 0 }), V2, &[])]
#[case::dma_idx_shape_reg_still_partition0(di(|w| w.src_idx_start_addr = Addr4 { marker: Addr4Marker::ShapeReg, partition: 1, space: Space::Sbuf, offset: 0, reserved: 0 }), V2, &[("src_idx_start_addr.partition", rule::DMA_IDX_PARTITION0)])]
#[case::dma_idx_unused_side_ok(di(|w| w.dst_idx_start_addr.partition = 3), V2, &[])]
#[case::dma_idx_scatter_side(di(|w| { w.flags.indirect_mode = IndirectMode::DstIndirection; w.dst_idx_start_addr.partition = 3; }), V2, &[
    ("dst_idx_start_addr.partition", rule::DMA_IDX_PARTITION0),
])]
#[case::dma_gather_dim(di(|w| w.flags.gather_dim = IndirectDim::Y), V2, &[("flags.gather_dim", rule::DMA_INDIRECT_DIM)])]
#[case::dma_scatter_dim(di(|w| { w.flags.indirect_mode = IndirectMode::SrcDstIndirection; w.flags.scatter_dim = IndirectDim::W; }), V2, &[
    ("flags.scatter_dim", rule::DMA_INDIRECT_DIM),
])]
#[case::dma_dim_with_shape_reg_ok(di(|w| { w.flags.gather_dim = IndirectDim::Y; w.src_start_addr.marker = Addr8Marker::ShapeReg; w.src_num_elem = 0; }), V2, &[])]
#[case::shape_reg_num_elem(di(|w| w.src_start_addr.marker = Addr8Marker::ShapeReg), V2, &[("src_num_elem", rule::SHAPE_REG_NUM_ELEM)])]
#[case::dma_index_count(di(|w| w.src_num_elem = 5000), V2, &[("src_num_elem", rule::INDEX_COUNT)])]
#[case::dma_index_count_scatter(di(|w| { w.flags.indirect_mode = IndirectMode::DstIndirection; w.dst_num_elem = 4097; }), V2, &[("dst_num_elem", rule::INDEX_COUNT)])]
#[case::bound_check_reg(di(|w| w.src_idx_bound_reg = BoundCheckReg { bc_reg: 3, bc_disable_oob_error_notif: false, bc_enabled: false }), V2, &[
    ("src_idx_bound_reg", rule::BOUND_CHECK_REG),
])]
#[case::bound_check_reg_notif(di(|w| w.dst_idx_bound_reg = BoundCheckReg { bc_reg: 0, bc_disable_oob_error_notif: true, bc_enabled: false }), V2, &[
    ("dst_idx_bound_reg", rule::BOUND_CHECK_REG),
])]
#[case::bound_check_reg_enabled_ok(di(|w| w.src_idx_bound_reg = BoundCheckReg { bc_reg: 3, bc_disable_oob_error_notif: true, bc_enabled: true }), V2, &[])]
#[case::priority_class(di(|w| w.dma_configs.priority_class = 5), V2, &[("dma_configs.priority_class", rule::PRIORITY_CLASS)])]
#[case::priority_class_4_ok(di(|w| w.dma_configs.priority_class = 4), V2, &[])]
// X14: seed 004 §3c gives DGE_COMPUTE_OP with no dtype limit, so integer dtypes validate.
#[case::compute_int32_ok(di(|w| { w.compute_op = DgeComputeOp::Add; w.in_dtype = IsaDtype::INT32; w.out_dtype = IsaDtype::INT32; }), V2, &[])]
#[case::compute_uint8_ok(di(|w| { w.compute_op = DgeComputeOp::Min; w.in_dtype = IsaDtype::UINT8; w.out_dtype = IsaDtype::UINT8; w.src_elem_size = 16; w.dst_elem_size = 16; }), V2, &[])]
#[case::compute_float_ok(di(|w| w.compute_op = DgeComputeOp::Max), V2, &[])]
#[case::elem_size_zero(di(|w| w.src_elem_size = 0), V2, &[
    ("src_elem_size", rule::ELEM_SIZE),
    ("dst_elem_size", rule::ELEM_VALUES),
])]
#[case::elem_size_multiple(di(|w| w.src_elem_size = 6), V2, &[("src_elem_size", rule::ELEM_SIZE)])]
#[case::elem_size_fp4(di(|w| w.in_dtype = IsaDtype(0x10)), V2, &[("src_elem_size", rule::ELEM_SIZE)])]
#[case::elem_values(di(|w| w.in_dtype = IsaDtype::BFLOAT16), V2, &[("dst_elem_size", rule::ELEM_VALUES)])]
#[case::elem_values_cast_ok(di(|w| { w.in_dtype = IsaDtype::BFLOAT16; w.src_elem_size = 2; w.dst_elem_size = 4; }), V2, &[])]
#[case::dma_both_count(di(|w| { w.flags.indirect_mode = IndirectMode::SrcDstIndirection; w.dst_num_elem = 8; }), V2, &[("dst_num_elem", rule::DMA_BOTH_COUNT)])]
#[case::dma_dtype_unknown(di(|w| w.in_dtype = IsaDtype(0x18)), V2, &[("in_dtype", rule::DTYPE_KNOWN)])]
#[case::addr8_reserved(di(|w| w.src_start_addr.reserved = 1), V2, &[("src_start_addr.reserved", rule::ADDR8_RESERVED)])]
#[case::addr8_target(di(|w| w.dst_start_addr = Addr8::dram((1 << 55) | 0x4000_0000)), V2, &[("dst_start_addr.address", rule::ADDR8_TARGET)])]
#[case::addr8_on_chip_offset_v2(di(|w| w.dst_start_addr = Addr8::on_chip(0, Space::Sbuf, 192 * 1024)), V2, &[("dst_start_addr.address", rule::OFFSET_RANGE)])]
#[case::addr8_on_chip_offset_v4_ok(di(|w| w.dst_start_addr = Addr8::on_chip(0, Space::Sbuf, 192 * 1024)), V4, &[])]
// --- EMBEDDING_UPDATE (contract §2 "EMBEDDING"; seed 004 §3d) ---
#[case::embed_data_float(eu(|w| w.data_dtype = IsaDtype::INT32), V2, &[("data_dtype", rule::EMBED_DATA_FLOAT)])]
#[case::embed_data_bf16_ok(eu(|w| w.data_dtype = IsaDtype::BFLOAT16), V2, &[])]
#[case::embed_dtype_invalid(eu(|w| w.data_dtype = IsaDtype::INVALID), V2, &[("data_dtype", rule::DTYPE_KNOWN)])]
#[case::embed_index_count(eu(|w| w.embed_index_in.num_elem = [4]), V2, &[("embed_index_in.num_elem[0]", rule::EMBED_INDEX_COUNT)])]
#[case::embed_index_longer_ok(eu(|w| w.embed_index_in.num_elem = [9]), V2, &[])]
#[case::embed_data_shape_0(eu(|w| w.embed_data_in.num_elem = [15, 8]), V2, &[("embed_data_in.num_elem[0]", rule::EMBED_DATA_SHAPE)])]
#[case::embed_data_shape_1(eu(|w| w.embed_data_in.num_elem = [16, 7]), V2, &[("embed_data_in.num_elem[1]", rule::EMBED_DATA_SHAPE)])]
#[case::embed_seq_count(eu(|w| { w.sequence_length = 5000; w.embed_index_in.num_elem = [5000]; w.embed_data_in.num_elem = [16, 5000]; }), V2, &[
    ("sequence_length", rule::INDEX_COUNT),
])]
#[case::embed_desc_count(eu(|w| w.desc.num_elem = [0]), V2, &[("desc.num_elem[0]", rule::TENSOR_COUNT)])]
#[case::embed_raw_opcode_ok(eu(|w| w.header.opcode = 0x79), V2, &[])]
// --- POOL_BUFFER_LOAD (X11) ---
#[case::pool_max(pb(|w| w.src.num_elem = [513, 1, 1, 1]), V2, &[("src.num_elem", rule::POOL_BUFFER_MAX)])]
#[case::pool_channels(pb(|w| w.num_active_channels = 0), V2, &[("num_active_channels", rule::CHANNELS)])]
#[case::pool_dtype_size(pb(|w| w.dtype = IsaDtype(0x12)), V2, &[("dtype", rule::ELEM_SIZE)])]
// --- DMA_DIRECT2D / GATHER_XPOSE (typed only) ---
#[case::direct_count(d2(|w| w.src_dims[1].num_elem = 0), V2, &[("src_dims[1].num_elem", rule::TENSOR_COUNT)])]
#[case::direct_compute_int_ok(d2(|w| { w.compute_op = DgeComputeOp::Max; w.in_dtype = IsaDtype::INT8; w.src_elem_size = 1; w.dst_elem_size = 1; w.out_dtype = IsaDtype::UINT8; }), V2, &[])]
#[case::xpose_dtype(gx(|w| w.dtype = IsaDtype::FP32), V2, &[("dtype", rule::XPOSE_DTYPE)])]
#[case::xpose_gather_dim(gx(|w| w.gather_dim = IndirectDim::X), V2, &[("gather_dim", rule::XPOSE_GATHER_DIM)])]
#[case::xpose_dst_align(gx(|w| w.dst_start_addr = Addr8::dram(0x1010)), V2, &[("dst_start_addr.address", rule::XPOSE_DST_ALIGN)])]
#[case::xpose_src_y(gx(|w| { w.src_dims[1].num_elem = 24; w.dst_dims[0].num_elem = 24; }), V2, &[("src_dims[1].num_elem", rule::XPOSE_SRC_Y)])]
#[case::xpose_dst_x(gx(|w| w.dst_dims[0].num_elem = 16), V2, &[("dst_dims[0].num_elem", rule::XPOSE_DST_X)])]
#[case::xpose_dst_step(gx(|w| w.dst_dims[0].step_elem = 2), V2, &[("dst_dims[0].step_elem", rule::XPOSE_DST_STEP)])]
#[case::xpose_index_count(gx(|w| w.index_count = 4097), V2, &[("index_count", rule::INDEX_COUNT)])]
fn each_rule_names_its_field(#[case] item: Item, #[case] g: Generation, #[case] expected: &[(&str, &str)]) {
    let expected: Vec<(String, String)> =
        expected.iter().map(|(f, r)| ((*f).to_owned(), (*r).to_owned())).collect();
    assert_eq!(item.violations(g), expected);
}

#[test]
fn every_violation_is_collected_and_printed_with_its_rule() {
    // Three independent faults in one GATHER: all reported, in field order.
    let mut w = gather();
    w.in_dtype = IsaDtype::FP32;
    w.free_pool_buffer = 9;
    w.dst.num_elem[3] = 0;
    let v = validate(&Word::Gather(w), V2);
    let rules: Vec<&str> = v.iter().map(|v| v.rule).collect();
    assert_eq!(
        rules,
        [rule::GATHER_INDEX_DTYPE, rule::FREE_POOL_BUFFER, rule::TENSOR_COUNT, rule::GATHER_COUNT_MATCH]
    );
    assert_eq!(v[1].to_string(), "free_pool_buffer: 9; expected 0 or 1 [free-pool-buffer]");
    // The trait works on the struct directly too.
    let mut out = Vec::new();
    w.check(V2, &mut out);
    assert_eq!(out, v);
}

#[test]
fn ic_scatter_message_is_the_headers() {
    let mut w = ic();
    w.dst_buffer_size = 1;
    let v = validate(&Word::IndirectCopy(w), V2);
    assert_eq!(v.len(), 1);
    assert!(v[0].message.starts_with("scatter is not implemented yet"), "{}", v[0].message);
}
