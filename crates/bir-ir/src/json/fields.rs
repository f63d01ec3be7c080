//! Reading and writing each payload's own fields. The per-opcode dispatch is generated from
//! the one opcode list (`for_each_opcode!`).

use super::read::{Cx, Obj};
use super::write::float_value;
use crate::alu::AluOp;
use crate::ap::{ApPair, F32};
use crate::diag::ErrorKind;
use crate::enum_macro::BirEnum;
use crate::enums::*;
use crate::opcode::{Op, Opcode, Payload as _};
use crate::ops::*;
use crate::program::Function;
use serde_json::{Map, Value};

/// How one payload type reads and writes its fields.
pub(crate) trait OpFields: Sized {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self;
    fn write(&self, w: &mut Map<String, Value>, fun: &Function);
}

macro_rules! dispatch {
    ($($ord:literal $name:ident $cat:ident $payload:ident $sig:ident,)*) => {
        /// Reads the fields of `opcode` from an instruction object.
        pub(crate) fn read_op(opcode: Opcode, o: &Obj<'_, '_>, cx: &mut Cx) -> Op {
            match opcode {
                $(Opcode::$name => Op::$name(<$payload as OpFields>::read(o, cx).store()),)*
            }
        }

        /// Writes an op's fields into an instruction object.
        pub(crate) fn write_op(op: &Op, w: &mut Map<String, Value>, fun: &Function) {
            match op {
                $(Op::$name(p) => p.write(w, fun),)*
            }
        }
    };
}
crate::for_each_opcode!(dispatch);

// ----- small helpers -----

fn flag(o: &Obj<'_, '_>, cx: &mut Cx, key: &str, default: bool) -> bool {
    o.opt(cx, key, Cx::boolean).unwrap_or(default)
}

fn req_enum<T: BirEnum>(o: &Obj<'_, '_>, cx: &mut Cx, key: &str, default: T) -> T {
    o.req(cx, key, Cx::enum_name::<T>).unwrap_or(default)
}

fn opt_enum<T: BirEnum>(o: &Obj<'_, '_>, cx: &mut Cx, key: &str) -> Option<T> {
    o.opt(cx, key, Cx::enum_name::<T>)
}

fn put(w: &mut Map<String, Value>, key: &str, v: impl Into<Value>) {
    w.insert(key.to_owned(), v.into());
}

fn put_enum<T: BirEnum>(w: &mut Map<String, Value>, key: &str, v: T) {
    put(w, key, v.name());
}

fn put_f32(w: &mut Map<String, Value>, key: &str, v: F32) {
    w.insert(key.to_owned(), float_value(v.get()));
}

fn put_f32s(w: &mut Map<String, Value>, key: &str, v: &[F32]) {
    w.insert(key.to_owned(), Value::Array(v.iter().map(|f| float_value(f.get())).collect()));
}

fn put_pairs(w: &mut Map<String, Value>, key: &str, pairs: &[ApPair]) {
    let v = pairs.iter().map(|p| Value::from(vec![p.step, p.num])).collect::<Vec<_>>();
    put(w, key, v);
}

fn f32_list(o: &Obj<'_, '_>, cx: &mut Cx, key: &str) -> Vec<F32> {
    o.opt(cx, key, |cx, v, p| cx.list(v, p, Cx::float32))
        .unwrap_or_default()
        .into_iter()
        .map(F32::new)
        .collect()
}

/// The accumulate field, which dumps spell `acc`, `accumulator_cmd` or `reduce_cmd` (re-facts §3).
fn acc_field(o: &Obj<'_, '_>, cx: &mut Cx) -> Option<EngineAccumulationType> {
    o.opt_any(cx, &["acc", "accumulator_cmd", "reduce_cmd"], Cx::enum_name::<EngineAccumulationType>)
}

fn put_acc(w: &mut Map<String, Value>, acc: Option<EngineAccumulationType>) {
    if let Some(a) = acc {
        put_enum(w, "acc", a);
    }
}

// ----- payloads -----

impl OpFields for Raw {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        Raw(cx.raw_fields(o))
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        for (k, v) in &self.0 {
            w.insert(k.clone(), v.into());
        }
    }
}

impl OpFields for NoFields {
    fn read(_o: &Obj<'_, '_>, _cx: &mut Cx) -> Self {
        NoFields
    }
    fn write(&self, _w: &mut Map<String, Value>, _fun: &Function) {}
}

impl OpFields for CopyFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        CopyFields { can_read_uninit: flag(o, cx, "can_read_uninit", false) }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put(w, "can_read_uninit", self.can_read_uninit);
    }
}

impl OpFields for DmaFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        DmaFields {
            queue: o.opt(cx, "queue", Cx::string),
            dge_type: opt_enum(o, cx, "dge_type").unwrap_or(DgeType::Unassigned),
            duplicate: flag(o, cx, "duplicate", false),
            can_read_uninit: flag(o, cx, "can_read_uninit", false),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        if let Some(q) = &self.queue {
            put(w, "queue", q.as_str());
        }
        put_enum(w, "dge_type", self.dge_type);
        put(w, "duplicate", self.duplicate);
        put(w, "can_read_uninit", self.can_read_uninit);
    }
}

impl OpFields for DmaCopyFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        // `oob_is_err` is a flag, or the name of the register holding it (KLR `DmaBounds.reg`).
        let oob_is_err_reg = o.get("oob_is_err").and_then(|v| v.as_str()).map(str::to_owned);
        DmaCopyFields {
            dma: DmaFields::read(o, cx),
            mode: opt_enum(o, cx, "mode").unwrap_or(CopyMode::Copy),
            oob_is_err: oob_is_err_reg.is_some() || flag(o, cx, "oob_is_err", true),
            oob_is_err_reg,
            transpose_op: opt_enum(o, cx, "transpose_op").unwrap_or(TransposeOps::None),
            constants: f32_list(o, cx, "constants"),
            cce_op: o.opt(cx, "cce_op", Cx::alu),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        self.dma.write(w, _fun);
        put_enum(w, "mode", self.mode);
        match &self.oob_is_err_reg {
            Some(r) => put(w, "oob_is_err", r.as_str()),
            None => put(w, "oob_is_err", self.oob_is_err),
        }
        put_enum(w, "transpose_op", self.transpose_op);
        if !self.constants.is_empty() {
            put_f32s(w, "constants", &self.constants);
        }
        if let Some(op) = self.cce_op {
            put_enum(w, "cce_op", op);
        }
    }
}

impl OpFields for TensorScalarFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        TensorScalarFields {
            op0: req_enum(o, cx, "op0", AluOp::Bypass),
            const0: F32::new(o.opt(cx, "const0", Cx::float32).unwrap_or(0.0)),
            reverse0: flag(o, cx, "reverse0", false),
            op1: opt_enum(o, cx, "op1").unwrap_or(AluOp::Bypass),
            const1: F32::new(o.opt(cx, "const1", Cx::float32).unwrap_or(0.0)),
            reverse1: flag(o, cx, "reverse1", false),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put_enum(w, "op0", self.op0);
        put_f32(w, "const0", self.const0);
        put(w, "reverse0", self.reverse0);
        put_enum(w, "op1", self.op1);
        put_f32(w, "const1", self.const1);
        put(w, "reverse1", self.reverse1);
    }
}

impl OpFields for TensorScalarPtrFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        TensorScalarPtrFields {
            op0: req_enum(o, cx, "op0", AluOp::Bypass),
            reverse0: flag(o, cx, "reverse0", false),
            op1: opt_enum(o, cx, "op1").unwrap_or(AluOp::Bypass),
            reverse1: flag(o, cx, "reverse1", false),
            apply_transpose: flag(o, cx, "apply_transpose", false),
            is_tensor_scalar_addr: flag(o, cx, "is_tensor_scalar_addr", false),
            is_scalar_tensor_tensor: flag(o, cx, "is_scalar_tensor_tensor", false),
            is_tensor_tensor_scan: flag(o, cx, "is_tensor_tensor_scan", false),
            acc: acc_field(o, cx),
            negate_second_output: flag(o, cx, "negate_second_output", false),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put_enum(w, "op0", self.op0);
        put(w, "reverse0", self.reverse0);
        put_enum(w, "op1", self.op1);
        put(w, "reverse1", self.reverse1);
        put(w, "apply_transpose", self.apply_transpose);
        put(w, "is_tensor_scalar_addr", self.is_tensor_scalar_addr);
        put(w, "is_scalar_tensor_tensor", self.is_scalar_tensor_tensor);
        put(w, "is_tensor_tensor_scan", self.is_tensor_tensor_scan);
        put_acc(w, self.acc);
        put(w, "negate_second_output", self.negate_second_output);
    }
}

impl OpFields for TensorScalarCacheFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        TensorScalarCacheFields {
            op0: req_enum(o, cx, "op0", AluOp::Bypass),
            reverse0: flag(o, cx, "reverse0", false),
            op1: opt_enum(o, cx, "op1").unwrap_or(AluOp::Bypass),
            reverse1: flag(o, cx, "reverse1", false),
            mode: req_enum(o, cx, "mode", TscMode::Reduce),
            acc: acc_field(o, cx).unwrap_or(EngineAccumulationType::ZeroAccumulate),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put_enum(w, "op0", self.op0);
        put(w, "reverse0", self.reverse0);
        put_enum(w, "op1", self.op1);
        put(w, "reverse1", self.reverse1);
        put_enum(w, "mode", self.mode);
        put_enum(w, "acc", self.acc);
    }
}

impl OpFields for TensorTensorFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        TensorTensorFields { op: req_enum(o, cx, "op", AluOp::Bypass), acc: acc_field(o, cx) }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put_enum(w, "op", self.op);
        put_acc(w, self.acc);
    }
}

impl OpFields for TensorReduceFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        TensorReduceFields {
            op: req_enum(o, cx, "op", AluOp::Add),
            axis: req_enum(o, cx, "axis", AxisListType::X),
            negate: flag(o, cx, "negate", false),
            apply_transpose: flag(o, cx, "apply_transpose", false),
            acc: acc_field(o, cx),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put_enum(w, "op", self.op);
        put_enum(w, "axis", self.axis);
        put(w, "negate", self.negate);
        put(w, "apply_transpose", self.apply_transpose);
        put_acc(w, self.acc);
    }
}

impl OpFields for PoolFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        PoolFields { func: req_enum(o, cx, "func", PoolFunctionType::Max) }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put_enum(w, "func", self.func);
    }
}

impl OpFields for AffinePattern {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        AffinePattern {
            base: o.opt(cx, "base", Cx::int).unwrap_or(0),
            pattern: o.req(cx, "pattern", Cx::pairs).unwrap_or_default(),
            channel_multiplier: o.opt(cx, "channel_multiplier", Cx::int).unwrap_or(0),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put(w, "base", self.base);
        put_pairs(w, "pattern", &self.pattern);
        put(w, "channel_multiplier", self.channel_multiplier);
    }
}

impl OpFields for IotaFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        IotaFields { generator: AffinePattern::read(o, cx) }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        self.generator.write(w, _fun);
    }
}

impl OpFields for AffineSelectFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        AffineSelectFields {
            generator: AffinePattern::read(o, cx),
            compare_op: opt_enum(o, cx, "compare_op").unwrap_or(AluOp::IsEqual),
            fill_value: F32::new(o.opt(cx, "fill_value", Cx::float32).unwrap_or(0.0)),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        self.generator.write(w, _fun);
        put_enum(w, "compare_op", self.compare_op);
        put_f32(w, "fill_value", self.fill_value);
    }
}

impl OpFields for MemsetFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        MemsetFields {
            mode: opt_enum(o, cx, "mode").unwrap_or(MemsetMode::Const),
            constant: o
                .opt(cx, "constant", |cx, v, p| cx.uint_max(v, p, u64::from(u32::MAX)))
                .map_or(0, |c| c as u32),
            seed: o.opt(cx, "seed", Cx::uint),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put_enum(w, "mode", self.mode);
        put(w, "constant", self.constant);
        if let Some(s) = self.seed {
            put(w, "seed", s);
        }
    }
}

impl OpFields for StreamShuffleFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        let mask = o.req(cx, "mask", |cx, v, p| cx.list(v, p, |cx, v, p| cx.uint_max(v, p, 255)));
        StreamShuffleFields { mask: mask.unwrap_or_default().into_iter().map(|m| m as u8).collect() }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put(w, "mask", self.mask.clone());
    }
}

impl OpFields for CopyPredicatedFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        CopyPredicatedFields {
            reverse_pred: flag(o, cx, "reverse_pred", false),
            can_read_uninit: flag(o, cx, "can_read_uninit", false),
            use_false_fill: flag(o, cx, "use_false_fill", false),
            false_fill: F32::new(o.opt(cx, "false_fill", Cx::float32).unwrap_or(0.0)),
            reduce_op: o.opt(cx, "reduce_op", Cx::alu),
            acc: acc_field(o, cx),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put(w, "reverse_pred", self.reverse_pred);
        put(w, "can_read_uninit", self.can_read_uninit);
        if self.use_false_fill {
            put(w, "use_false_fill", true);
            put_f32(w, "false_fill", self.false_fill);
        }
        if let Some(op) = self.reduce_op {
            put_enum(w, "reduce_op", op);
        }
        put_acc(w, self.acc);
    }
}

impl OpFields for IndirectCopyFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        IndirectCopyFields { num_valid_indices: o.req(cx, "num_valid_indices", Cx::uint).unwrap_or(0) }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put(w, "num_valid_indices", self.num_valid_indices);
    }
}

/// The optional `wrap` object `{"n": N, "hi": H (0)}` of the indirect DMA ops (fidelity I3).
fn wrap_field(o: &Obj<'_, '_>, cx: &mut Cx) -> Option<IndirectWrap> {
    o.opt(cx, "wrap", |cx, v, p| {
        let w = cx.obj(v, p)?;
        let n = w.req(cx, "n", Cx::uint);
        let hi = w.opt(cx, "hi", Cx::uint).unwrap_or(0);
        Some(IndirectWrap { n: n?, hi })
    })
}

fn put_wrap(w: &mut Map<String, Value>, wrap: Option<IndirectWrap>) {
    if let Some(x) = wrap {
        let mut m = Map::new();
        m.insert("n".into(), x.n.into());
        m.insert("hi".into(), x.hi.into());
        w.insert("wrap".into(), Value::Object(m));
    }
}

impl OpFields for IndirectFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        IndirectFields { dma: DmaFields::read(o, cx), wrap: wrap_field(o, cx) }
    }
    fn write(&self, w: &mut Map<String, Value>, fun: &Function) {
        self.dma.write(w, fun);
        put_wrap(w, self.wrap);
    }
}

impl OpFields for IndirectSaveAccumulateFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        IndirectSaveAccumulateFields {
            dma: DmaFields::read(o, cx),
            wrap: wrap_field(o, cx),
            num_indices: o.req(cx, "num_indices", Cx::uint).unwrap_or(0),
            entry_step_elements: o.req(cx, "entry_step_elements", Cx::int).unwrap_or(0),
            op: opt_enum(o, cx, "op").unwrap_or(AluOp::Add),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        self.dma.write(w, _fun);
        put_wrap(w, self.wrap);
        put(w, "num_indices", self.num_indices);
        put(w, "entry_step_elements", self.entry_step_elements);
        put_enum(w, "op", self.op);
    }
}

impl OpFields for GenericIndirectFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        GenericIndirectFields {
            dma: DmaFields::read(o, cx),
            wrap: wrap_field(o, cx),
            indirect_dims: o
                .opt(cx, "indirect_dims", |cx, v, p| cx.list(v, p, Cx::enum_name::<IndirectDim>))
                .unwrap_or_default(),
            // Absent = add: the public schema lists `op? (add)`, and a non-unique-index
            // accumulate DMA lowers to GenericIndirectSave with op add (re-facts §6; fidelity I13).
            op: opt_enum(o, cx, "op").unwrap_or(AluOp::Add),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        self.dma.write(w, _fun);
        put_wrap(w, self.wrap);
        put(w, "indirect_dims", self.indirect_dims.iter().map(|d| d.name()).collect::<Vec<_>>());
        put_enum(w, "op", self.op);
    }
}

impl OpFields for DmaTriggerFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        DmaTriggerFields {
            dma: DmaFields::read(o, cx),
            dma_blocks: o.opt(cx, "dma_blocks", |cx, v, p| cx.list(v, p, Cx::string)).unwrap_or_default(),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        self.dma.write(w, _fun);
        put(w, "dma_blocks", self.dma_blocks.clone());
    }
}

impl OpFields for QueueInstanceFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        QueueInstanceFields {
            queue: o.opt(cx, "queue", Cx::string),
            no_rearm: flag(o, cx, "no_rearm", false),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        if let Some(q) = &self.queue {
            put(w, "queue", q.as_str());
        }
        put(w, "no_rearm", self.no_rearm);
    }
}

impl OpFields for DmaBlockFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        let descriptors = o.opt(cx, "descriptors", |cx, v, p| {
            let items = cx.arr(v, p)?;
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let Some(obj) = cx.obj(item, &p.index(i)) else { continue };
                if let Some(inst) = cx.instruction(&obj, i) {
                    out.push(inst);
                }
            }
            Some(out)
        });
        DmaBlockFields { descriptors: descriptors.unwrap_or_default() }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        let list =
            self.descriptors.iter().map(|d| super::write::instruction_value(d, _fun)).collect::<Vec<_>>();
        put(w, "descriptors", list);
    }
}

impl OpFields for DmaDescriptorFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        DmaDescriptorFields {
            num_tiling_dimensions: o
                .opt(cx, "num_tiling_dimensions", |cx, v, p| cx.uint_max(v, p, u64::from(u32::MAX)))
                .map(|n| n as u32),
            op: o.opt(cx, "op", Cx::alu),
            constants: f32_list(o, cx, "constants"),
            transpose_op: opt_enum(o, cx, "transpose_op").unwrap_or(TransposeOps::None),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        if let Some(n) = self.num_tiling_dimensions {
            put(w, "num_tiling_dimensions", n);
        }
        if let Some(op) = self.op {
            put_enum(w, "op", op);
        }
        if !self.constants.is_empty() {
            put_f32s(w, "constants", &self.constants);
        }
        put_enum(w, "transpose_op", self.transpose_op);
    }
}

impl OpFields for MatmultFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        let ints =
            |cx: &mut Cx, key: &str| o.opt(cx, key, |cx, v, p| cx.list(v, p, Cx::int)).unwrap_or_default();
        let small = |cx: &mut Cx, key: &str, max: u64| {
            o.opt(cx, key, |cx, v, p| cx.uint_max(v, p, max)).map(|n| n as u8)
        };
        // The two schemas (engines.md §1.6, fidelity M1): one or the other, never both.
        let flags = match (o.get("start_tensor_calc").is_some(), o.get("accumulation_flag").is_some()) {
            (true, true) => {
                cx.err(
                    ErrorKind::BadField,
                    &o.field("accumulation_flag"),
                    "`accumulation_flag` (neuronx-cc 2.24 schema) together with `start_tensor_calc` (KLR-era \
                     schema): give one of the two",
                );
                MatmultFlags::Calc { start: false, stop: None }
            }
            (false, true) => MatmultFlags::Record {
                accumulation_flag: small(cx, "accumulation_flag", 7).unwrap_or(0),
                psum_zero_region: small(cx, "psum_zero_region", 3).unwrap_or(0),
            },
            (true, false) => MatmultFlags::Calc {
                start: o.req(cx, "start_tensor_calc", Cx::boolean).unwrap_or(false),
                stop: o.opt(cx, "stop_tensor_calc", Cx::boolean),
            },
            (false, false) => {
                cx.err(
                    ErrorKind::MissingField,
                    &o.field("accumulation_flag"),
                    "required field `accumulation_flag` (or, in the KLR-era schema, `start_tensor_calc`) is missing",
                );
                MatmultFlags::Calc { start: false, stop: None }
            }
        };
        let int = |cx: &mut Cx, key: &str| o.opt(cx, key, Cx::int);
        MatmultFields {
            flags,
            is_transpose: flag(o, cx, "is_transpose", false),
            tile_size: ints(cx, "tile_size"),
            tile_position: ints(cx, "tile_position"),
            perf_mode: opt_enum(o, cx, "perf_mode").unwrap_or(MatmultPerfMode::None),
            ifmap_quant_offset: int(cx, "ifmap_quant_offset"),
            weights_quant_offset: int(cx, "weights_quant_offset"),
            replication: MATMULT_REPLICATION.map(|k| int(cx, k)),
            onezero: MATMULT_ONEZERO.map(|k| o.opt(cx, k, Cx::boolean)),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        match self.flags {
            MatmultFlags::Calc { start, stop } => {
                put(w, "start_tensor_calc", start);
                if let Some(stop) = stop {
                    put(w, "stop_tensor_calc", stop);
                }
            }
            MatmultFlags::Record { accumulation_flag, psum_zero_region } => {
                put(w, "accumulation_flag", accumulation_flag);
                put(w, "psum_zero_region", psum_zero_region);
            }
        }
        put(w, "is_transpose", self.is_transpose);
        if !self.tile_size.is_empty() {
            put(w, "tile_size", self.tile_size.clone());
        }
        if !self.tile_position.is_empty() {
            put(w, "tile_position", self.tile_position.clone());
        }
        put_enum(w, "perf_mode", self.perf_mode);
        let ints = [
            ("ifmap_quant_offset", self.ifmap_quant_offset),
            ("weights_quant_offset", self.weights_quant_offset),
        ];
        for (k, v) in ints.into_iter().chain(MATMULT_REPLICATION.into_iter().zip(self.replication)) {
            if let Some(v) = v {
                put(w, k, v);
            }
        }
        for (k, v) in MATMULT_ONEZERO.into_iter().zip(self.onezero) {
            if let Some(v) = v {
                put(w, k, v);
            }
        }
    }
}

/// Matmult's replication keys, in [`MatmultFields::replication`] order.
const MATMULT_REPLICATION: [&str; 3] =
    ["replication_resolution", "replication_shift_amnt", "replication_num_rows"];
/// Matmult's onezero hints, in [`MatmultFields::onezero`] order.
const MATMULT_ONEZERO: [&str; 2] = ["is_fmap_onezero", "is_weight_onezero"];

impl OpFields for ActivationFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        let func = o.req(cx, "func", |cx, v, p| {
            let s = cx.string(v, p)?;
            Some(match ActivationFunctionType::from_name(&s) {
                Some(f) => ActivationFunc::Known(f),
                None => ActivationFunc::Other(s),
            })
        });
        ActivationFields {
            func: func.unwrap_or(ActivationFunc::Known(ActivationFunctionType::Identity)),
            scale: F32::new(o.opt(cx, "scale", Cx::float32).unwrap_or(1.0)),
            alpha: F32::new(o.opt(cx, "alpha", Cx::float32).unwrap_or(0.0)),
            acc: acc_field(o, cx),
            is_activate2: flag(o, cx, "is_activate2", false),
            op0: opt_enum(o, cx, "op0").unwrap_or(AluOp::Bypass),
            op1: opt_enum(o, cx, "op1").unwrap_or(AluOp::Bypass),
            reverse0: flag(o, cx, "reverse0", false),
            reverse1: flag(o, cx, "reverse1", false),
            reduce_op: opt_enum(o, cx, "reduce_op"),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put(w, "func", self.func.name());
        put_f32(w, "scale", self.scale);
        put_f32(w, "alpha", self.alpha);
        put_acc(w, self.acc);
        if self.is_activate2 {
            put(w, "is_activate2", true);
        }
        for (k, op) in [("op0", self.op0), ("op1", self.op1)] {
            if op != AluOp::Bypass {
                put_enum(w, k, op);
            }
        }
        for (k, r) in [("reverse0", self.reverse0), ("reverse1", self.reverse1)] {
            if r {
                put(w, k, true);
            }
        }
        if let Some(op) = self.reduce_op {
            put_enum(w, "reduce_op", op);
        }
    }
}

impl OpFields for ExponentialFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        ExponentialFields { acc: acc_field(o, cx) }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put_acc(w, self.acc);
    }
}

impl OpFields for MatchReplaceFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        MatchReplaceFields { imm_value: F32::new(o.req(cx, "imm_value", Cx::float32).unwrap_or(0.0)) }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put_f32(w, "imm_value", self.imm_value);
    }
}

impl OpFields for RangeSelectFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        RangeSelectFields {
            op0: req_enum(o, cx, "op0", AluOp::IsGe),
            op1: req_enum(o, cx, "op1", AluOp::IsLt),
            range_start: o.opt(cx, "range_start", Cx::int).unwrap_or(0),
            fill_value: F32::new(o.opt(cx, "fill_value", Cx::float32).unwrap_or(f32::MIN)),
            reduce_op: opt_enum(o, cx, "reduce_op"),
            acc: acc_field(o, cx),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put_enum(w, "op0", self.op0);
        put_enum(w, "op1", self.op1);
        put(w, "range_start", self.range_start);
        put_f32(w, "fill_value", self.fill_value);
        if let Some(op) = self.reduce_op {
            put_enum(w, "reduce_op", op);
        }
        put_acc(w, self.acc);
    }
}

impl OpFields for NonzeroFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        NonzeroFields {
            index_offset: o.opt(cx, "index_offset", Cx::int32).unwrap_or(0),
            padding_val: o.opt(cx, "padding_val", Cx::int32).unwrap_or(-1),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put(w, "index_offset", self.index_offset);
        put(w, "padding_val", self.padding_val);
    }
}

impl OpFields for DropoutFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        DropoutFields {
            threshold_type: opt_enum(o, cx, "threshold_type").unwrap_or(DropoutThresholdType::DropRate),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put_enum(w, "threshold_type", self.threshold_type);
    }
}

impl OpFields for RegisterAluFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        RegisterAluFields {
            op: req_enum(o, cx, "op", AluOp::Bypass),
            is_64bit: flag(o, cx, "is_64bit", false),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put_enum(w, "op", self.op);
        put(w, "is_64bit", self.is_64bit);
    }
}

impl OpFields for BranchFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        BranchFields { target: o.req(cx, "target", Cx::string).unwrap_or_default() }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put(w, "target", self.target.as_str());
    }
}

impl OpFields for CallFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        CallFields {
            target: o.req(cx, "target", Cx::string).unwrap_or_default(),
            table_id: o.opt(cx, "table_id", Cx::int),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put(w, "target", self.target.as_str());
        if let Some(t) = self.table_id {
            put(w, "table_id", t);
        }
    }
}

impl OpFields for CompareBranchFields {
    fn read(o: &Obj<'_, '_>, cx: &mut Cx) -> Self {
        CompareBranchFields {
            comp_op: req_enum(o, cx, "comp_op", BranchCompareOp::IsEqImm),
            on_true: o.opt(cx, "on_true", Cx::string),
            on_false: o.opt(cx, "on_false", Cx::string),
        }
    }
    fn write(&self, w: &mut Map<String, Value>, _fun: &Function) {
        put_enum(w, "comp_op", self.comp_op);
        for (key, target) in [("on_true", &self.on_true), ("on_false", &self.on_false)] {
            if let Some(t) = target {
                put(w, key, t.as_str());
            }
        }
    }
}
