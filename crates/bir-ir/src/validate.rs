//! Validation: one pass over a loaded program that checks everything the executor relies on,
//! collects every problem with its location, and hands out a [`Validated`] proof so the hot
//! paths never re-check (style.md practice 6).
//!
//! Checked: memory placement (SB/PSUM start partitions 0/32/64/96, partition and byte ranges per
//! arch), a configurable cap on the memory a program can make us allocate, loop strides, every
//! opcode's operand counts and kinds (docs/bir-json.md), dtype rules, AP rank and shape (seed 000
//! §1.3; a negative partition step asserts in the reference, re-facts §6), that dynamic offsets
//! and GenericIndirect dims name a real level by the one dim-letter rule
//! ([`AccessPattern::level_of`], docs/bir-json.md "Dim letters"), index dtypes (seed 000 §6.1,
//! §7), and that every static access stays inside its memory location, with checked arithmetic
//! throughout.

use crate::alu::AluOp;
use crate::ap::{AccessPattern, MAX_AP_DIMS, OffsetSource, Operand};
use crate::diag::{Diagnostics, ErrorKind};
use crate::dtype::Dtype;
use crate::enums::*;
use crate::opcode::{Op, Opcode};
use crate::program::*;
use crate::signature::{Sig, Signature, Slot};
use std::collections::HashMap;

/// Limits for validation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidateOptions {
    /// The most bytes of memory a program may make the simulator allocate (default 4 GiB).
    pub memory_cap_bytes: u64,
    /// The most iterations one loop may declare (default 2^32).
    pub max_loop_trips: u64,
}

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions { memory_cap_bytes: 4 << 30, max_loop_trips: 1 << 32 }
    }
}

/// Proof that a program passed [`validate`]; the executor accepts only this.
#[derive(Clone, Copy, Debug)]
pub struct Validated<'p> {
    program: &'p Program,
}

impl<'p> Validated<'p> {
    /// The validated program.
    pub fn program(&self) -> &'p Program {
        self.program
    }
}

/// Validates `program`, returning the proof or every problem found.
pub fn validate<'p>(program: &'p Program, opts: &ValidateOptions) -> Result<Validated<'p>, Diagnostics> {
    let mut v = Validator { diags: Diagnostics::default(), context: Vec::new(), arch: program.arch, opts };
    if program.functions.is_empty() {
        v.err(ErrorKind::Structure, "functions", "a program needs at least one function");
    }
    for f in &program.functions {
        v.context.push(format!("function '{}'", f.name));
        v.function(f);
        v.context.pop();
    }
    if v.diags.is_empty() { Ok(Validated { program }) } else { Err(v.diags) }
}

struct Validator<'o> {
    diags: Diagnostics,
    context: Vec<String>,
    arch: Arch,
    opts: &'o ValidateOptions,
}

/// The operand signature of an instruction: its opcode's signature column (opcode.rs), with
/// DMACopy's resolved by its mode.
fn signature(op: &Op) -> Option<Sig> {
    match op.opcode().signature() {
        Signature::Unchecked => None,
        Signature::Fixed(s) => Some(s),
        Signature::ByCopyMode { plain, cce } => match op {
            Op::DMACopy(f) if f.mode == CopyMode::Cce => Some(cce),
            _ => Some(plain),
        },
    }
}

impl Validator<'_> {
    fn err(&mut self, kind: ErrorKind, field: &str, message: impl Into<String>) {
        let context = self.context.join(" › ");
        self.diags.push(kind, &context, field, message);
    }

    fn function(&mut self, f: &Function) {
        self.memory(f);
        let mut dma_blocks: HashMap<&str, usize> = HashMap::new();
        f.for_each_instruction(&mut |i| {
            if i.opcode() == Opcode::DMABlock {
                *dma_blocks.entry(i.name.as_str()).or_default() += 1;
            }
        });
        self.nodes(&f.body, f, &dma_blocks);
    }

    fn memory(&mut self, f: &Function) {
        let sbuf = self.arch.sbuf_bytes_per_partition();
        let mut total: u64 = 0;
        let (mut shared_sb, mut shared_psum) = (false, false);
        for l in &f.locations {
            self.context.push(format!("memory location '{}'", l.name));
            if l.partitions == 0 || l.bytes_per_partition == 0 {
                self.err(ErrorKind::Placement, "dims", "dims must be at least [1, 1]");
            }
            let size = l.size_bytes();
            if size.is_none() {
                self.err(ErrorKind::Overflow, "dims", "partitions × bytes per partition overflows 64 bits");
            }
            if l.mem_type.is_partitioned() {
                let per_partition =
                    if l.mem_type == MemoryType::Sb { sbuf } else { PSUM_BYTES_PER_PARTITION };
                if !matches!(l.base, 0 | 32 | 64 | 96) {
                    self.err(
                        ErrorKind::Placement,
                        "base",
                        format!("start partition {} must be 0, 32, 64 or 96", l.base),
                    );
                }
                if l.base.checked_add(l.partitions).is_none_or(|end| end > NUM_PARTITIONS) {
                    self.err(
                        ErrorKind::Placement,
                        "dims[0]",
                        format!(
                            "partitions {}..{} leave the {NUM_PARTITIONS} partitions",
                            l.base,
                            l.base.saturating_add(l.partitions)
                        ),
                    );
                }
                if l.addr.checked_add(l.bytes_per_partition).is_none_or(|end| end > per_partition) {
                    self.err(
                        ErrorKind::Placement,
                        "dims[1]",
                        format!(
                            "bytes {}..{} of each partition leave the {} {per_partition} bytes per partition ({})",
                            l.addr,
                            l.addr.saturating_add(l.bytes_per_partition),
                            l.mem_type,
                            self.arch
                        ),
                    );
                }
                if l.allocated {
                    if l.mem_type == MemoryType::Sb {
                        shared_sb = true
                    } else {
                        shared_psum = true
                    }
                    self.context.pop();
                    continue;
                }
            }
            total = total.saturating_add(size.unwrap_or(u64::MAX));
            self.context.pop();
        }
        if shared_sb {
            total = total.saturating_add(NUM_PARTITIONS * sbuf);
        }
        if shared_psum {
            total = total.saturating_add(NUM_PARTITIONS * PSUM_BYTES_PER_PARTITION);
        }
        if total > self.opts.memory_cap_bytes {
            self.err(
                ErrorKind::MemoryCap,
                "allocations",
                format!(
                    "the program's memory locations need {total} bytes, above the cap of {} bytes \
                     (raise it with --memory-cap / ValidateOptions::memory_cap_bytes)",
                    self.opts.memory_cap_bytes
                ),
            );
        }
    }

    fn nodes(&mut self, nodes: &[Node], f: &Function, blocks: &HashMap<&str, usize>) {
        for (index, node) in nodes.iter().enumerate() {
            match node {
                Node::Block(b) => {
                    self.context.push(format!("block '{}'", b.name));
                    self.nodes(&b.body, f, blocks);
                    self.context.pop();
                }
                Node::Loop(l) => {
                    self.context.push(format!("loop #{index} '{}'", l.name));
                    match l.trip_count() {
                        None if l.stride == 0 => {
                            self.err(ErrorKind::Loop, "LoopAxis.stride", "loop stride must not be 0")
                        }
                        None => self.err(ErrorKind::Loop, "LoopAxis", "loop trip count overflows"),
                        Some(n) if n > self.opts.max_loop_trips => self.err(
                            ErrorKind::Loop,
                            "LoopAxis",
                            format!("loop runs {n} times, above the limit of {}", self.opts.max_loop_trips),
                        ),
                        Some(_) => {}
                    }
                    self.nodes(&l.body, f, blocks);
                    self.context.pop();
                }
                Node::Inst(i) => self.instruction(i, index, f, blocks),
            }
        }
    }

    fn instruction(&mut self, i: &Instruction, index: usize, f: &Function, blocks: &HashMap<&str, usize>) {
        self.context.push(format!("instruction #{index} '{}' ({})", i.name, i.opcode()));
        if let Some(sig) = signature(&i.op) {
            self.operands("ins", &i.ins, sig.ins, sig.min_ins, sig.rest);
            self.operands("outs", &i.outs, sig.outs, sig.outs.len(), None);
        }
        for (k, a) in i.ins.iter().enumerate() {
            self.operand(&format!("ins[{k}]"), a, f);
        }
        for (k, a) in i.outs.iter().enumerate() {
            self.operand(&format!("outs[{k}]"), a, f);
        }
        self.rules(i, f, blocks);
        self.context.pop();
    }

    fn operands(&mut self, list: &str, got: &[Operand], slots: &[Slot], min: usize, rest: Option<Slot>) {
        let max = if rest.is_some() { usize::MAX } else { slots.len() };
        if got.len() < min || got.len() > max {
            let want = match (rest, min == slots.len()) {
                (Some(_), _) => format!("at least {min}"),
                (None, true) => format!("exactly {min}"),
                (None, false) => format!("{min} to {}", slots.len()),
            };
            self.err(
                ErrorKind::OperandCount,
                list,
                format!(
                    "expected {want} operand(s) in `{list}`, found {} (operand order: docs/bir-json.md)",
                    got.len()
                ),
            );
        }
        for (k, a) in got.iter().enumerate() {
            let Some(slot) = slots.get(k).copied().or(rest) else { break };
            let ok = match slot {
                Slot::Ap => matches!(a, Operand::Ap(_)),
                Slot::ApOrImm => matches!(a, Operand::Ap(_) | Operand::Imm { .. }),
                Slot::Any => true,
            };
            if !ok {
                let want = if slot == Slot::Ap { "a physical_ap" } else { "a physical_ap or an imm_value" };
                self.err(
                    ErrorKind::OperandKind,
                    &format!("{list}[{k}].kind"),
                    format!("expected {want}, found {}", a.kind_name()),
                );
            }
        }
    }

    fn operand(&mut self, field: &str, a: &Operand, f: &Function) {
        if let Operand::Ap(ap) = a {
            self.ap(field, ap, f);
        }
    }

    fn ap(&mut self, field: &str, ap: &AccessPattern, f: &Function) {
        let Some(loc) = f.location(ap.loc) else {
            self.err(
                ErrorKind::UnresolvedRef,
                &format!("{field}.memref"),
                format!("location id {} is out of range", ap.loc.0),
            );
            return;
        };
        if ap.pairs.is_empty() || ap.pairs.len() > MAX_AP_DIMS {
            self.err(
                ErrorKind::ApRank,
                &format!("{field}.ap"),
                format!(
                    "an access pattern has 1 to {MAX_AP_DIMS} [step, num] levels, found {}",
                    ap.pairs.len()
                ),
            );
            return;
        }
        let mut shape_ok = true;
        for (d, p) in ap.pairs.iter().enumerate() {
            if p.num < 1 {
                self.err(
                    ErrorKind::ApShape,
                    &format!("{field}.ap[{d}][1]"),
                    format!("num must be at least 1, found {}", p.num),
                );
                shape_ok = false;
            }
        }
        if ap.pairs[0].step < 0 {
            self.err(
                ErrorKind::ApShape,
                &format!("{field}.ap[0][0]"),
                format!("the partition-dim step must not be negative, found {}", ap.pairs[0].step),
            );
            shape_ok = false;
        }
        if let Some(d) = &ap.dynamic {
            if d.max_index < 1 {
                self.err(
                    ErrorKind::BadField,
                    &format!("{field}.indirect_dim_max_index"),
                    format!("must be at least 1, found {}", d.max_index),
                );
            }
            if ap.level_of(d.indirect_dim).is_none() {
                self.err(
                    ErrorKind::BadField,
                    &format!("{field}.indirect_dim"),
                    padded_dim_message(d.indirect_dim, ap),
                );
            }
            match &d.source {
                OffsetSource::Vector(v) => {
                    // The HW-DGE index vector is read as uint16 (seed 000 §7; fidelity J32).
                    if v.dtype != Dtype::Uint16 {
                        self.err(
                            ErrorKind::Dtype,
                            &format!("{field}.vector_offset.dtype"),
                            format!(
                                "vector offset (index) dtype must be uint16 (seed 000 §7), found {}",
                                v.dtype
                            ),
                        );
                    }
                    self.ap(&format!("{field}.vector_offset"), v, f)
                }
                OffsetSource::Scalar(s) => self.ap(&format!("{field}.scalar_offset"), s, f),
                OffsetSource::Register(_) => {}
            }
            // The dynamic part is only known at run time; the simulator checks it there.
            return;
        }
        if !shape_ok {
            return;
        }
        // Elements are addressed in the dtype the memory holds (a differing AP dtype casts).
        let elem_size = f.allocation(loc.alloc).map_or(ap.dtype.size(), |a| a.dtype.size());
        match static_extent(ap, loc, elem_size) {
            Ok(_) => {}
            Err(ExtentError::Overflow { dim }) => self.err(
                ErrorKind::Overflow,
                &format!("{field}.ap[{dim}]"),
                "address arithmetic overflows 64 bits at this level",
            ),
            Err(ExtentError::OutOfBounds { lowest, highest, limit }) => self.err(
                ErrorKind::OutOfBounds,
                &format!("{field}.ap"),
                format!(
                    "elements {lowest}..={highest} (offset {}) leave memory location '{}', which holds elements 0..{limit} \
                     of {} ({})",
                    ap.offset,
                    loc.name,
                    ap.dtype,
                    geometry(loc),
                ),
            ),
        }
    }

    /// Per-opcode rules beyond operand shapes.
    fn rules(&mut self, i: &Instruction, f: &Function, blocks: &HashMap<&str, usize>) {
        let dtype_of = |k: usize| i.in_ap(k).map(|a| a.dtype);
        match &i.op {
            Op::TensorScalarCache(c) => {
                let has_init = i.ins.len() >= 2;
                if has_init != (c.acc == EngineAccumulationType::LoadAccumulate) {
                    self.err(
                        ErrorKind::BadField,
                        "acc",
                        format!(
                            "a 3-argument TensorScalarCache (with an initial value in ins[1]) must use acc \
                             LoadAccumulate, and LoadAccumulate needs ins[1] (seed 000 §4); found acc {} with {} ins",
                            c.acc,
                            i.ins.len()
                        ),
                    );
                }
                // ZeroAccumulate / LoadAccumulate initialise the per-partition cache; Idle, Zero and
                // Accumulate continue from the running cache of the previous instance (seed 000 §4;
                // NKI chains a reset_reduce call with a reduce = Accumulate call; fidelity J33).
                // AddAccumulate has no TensorScalarCache meaning in any source.
                if c.acc == EngineAccumulationType::AddAccumulate {
                    self.err(
                        ErrorKind::BadField,
                        "acc",
                        format!(
                            "acc must be Idle, Zero, Accumulate, ZeroAccumulate or LoadAccumulate, found {}",
                            c.acc
                        ),
                    );
                }
                if let Some(Operand::Imm { dtype, .. }) = i.ins.get(1)
                    && *dtype != Dtype::Float32
                {
                    self.err(
                        ErrorKind::Dtype,
                        "ins[1].dtype",
                        format!("the initial value must be float32, found {dtype}"),
                    );
                }
            }
            Op::StreamShuffle(s) => {
                if s.mask.len() != 32 {
                    self.err(
                        ErrorKind::BadField,
                        "mask",
                        format!("StreamShuffle mask must have 32 entries, found {}", s.mask.len()),
                    );
                }
                for (k, m) in s.mask.iter().enumerate() {
                    if *m >= 32 && *m != 255 {
                        self.err(
                            ErrorKind::BadField,
                            &format!("mask[{k}]"),
                            format!("mask entries must be < 32 or 255, found {m}"),
                        );
                    }
                }
                self.same_dtype(i, "StreamShuffle does not support cast");
            }
            Op::StreamTranspose(_) => self.same_dtype(i, "StreamTranspose does not support cast"),
            Op::IndirectLoad(_) | Op::IndirectSave(_) | Op::IndirectSaveAccumulate(_) => {
                self.index_dtype(i, 1);
                if i.opcode() == Opcode::IndirectLoad
                    && let Some(last) = i.out_ap(0).and_then(|a| a.pairs.last())
                    && last.step != 1
                {
                    self.err(
                        ErrorKind::ApShape,
                        "outs[0].ap",
                        format!(
                            "must have step 1 in the final dim of the IndirectLoad output AP, found {}",
                            last.step
                        ),
                    );
                }
                if let Op::IndirectSaveAccumulate(s) = &i.op {
                    self.reduce_op("op", s.op);
                }
            }
            Op::GenericIndirectLoad(g) | Op::GenericIndirectSave(g) => {
                let indices = i.ins.len().saturating_sub(1);
                for k in 1..i.ins.len() {
                    self.index_dtype(i, k);
                }
                if g.indirect_dims.len() != indices {
                    self.err(
                        ErrorKind::BadField,
                        "indirect_dims",
                        format!(
                            "number of indirect dims ({}) must match the number of index operands ({indices})",
                            g.indirect_dims.len()
                        ),
                    );
                }
                // The indexed AP: the table, ins[0] for a load, outs[0] for a save (seed 000 §6.2).
                let table = if i.opcode() == Opcode::GenericIndirectLoad { i.in_ap(0) } else { i.out_ap(0) };
                // A table AP of the wrong rank already has its own error.
                if let Some(table) = table.filter(|t| (1..=MAX_AP_DIMS).contains(&t.pairs.len())) {
                    for (k, &dim) in g.indirect_dims.iter().enumerate() {
                        if table.level_of(dim).is_none() {
                            self.err(
                                ErrorKind::BadField,
                                &format!("indirect_dims[{k}]"),
                                padded_dim_message(dim, table),
                            );
                        }
                    }
                }
                if i.opcode() == Opcode::GenericIndirectSave {
                    self.reduce_op("op", g.op);
                }
            }
            // The index (or predicate) operand is ins[1] and must hold integers.
            Op::IndirectCopy(_) | Op::Gather(_) | Op::CopyPredicated(_) => {
                if let Some(d) = dtype_of(1).filter(|d| !d.is_integer()) {
                    self.err(
                        ErrorKind::Dtype,
                        "ins[1].dtype",
                        format!("expected an integer dtype, found {d}"),
                    );
                }
            }
            Op::DMACopy(d) => {
                if d.mode == CopyMode::Cce && !d.constants.is_empty() && d.constants.len() != i.ins.len() {
                    self.err(
                        ErrorKind::BadField,
                        "constants",
                        format!(
                            "CCE needs one constant per input ({}), found {}",
                            i.ins.len(),
                            d.constants.len()
                        ),
                    );
                }
                if let Some(op) = d.cce_op
                    && d.mode == CopyMode::Cce
                    && !matches!(op, AluOp::Add | AluOp::Max | AluOp::Min)
                {
                    self.err(
                        ErrorKind::BadField,
                        "cce_op",
                        format!("CCE reduces with add, max or min, found {op}"),
                    );
                }
            }
            Op::DMATrigger(t) => {
                for (k, name) in t.dma_blocks.iter().enumerate() {
                    match blocks.get(name.as_str()) {
                        Some(1) => {}
                        Some(n) => self.err(
                            ErrorKind::DuplicateName,
                            &format!("dma_blocks[{k}]"),
                            format!("{n} DMABlock instructions are named '{name}'"),
                        ),
                        None => self.err(
                            ErrorKind::UnresolvedRef,
                            &format!("dma_blocks[{k}]"),
                            format!("no DMABlock instruction is named '{name}'"),
                        ),
                    }
                }
            }
            Op::DMABlock(b) => {
                for (k, d) in b.descriptors.iter().enumerate() {
                    if !matches!(
                        d.opcode(),
                        Opcode::DMADescriptorCopy
                            | Opcode::DMADescriptorCCE
                            | Opcode::DMADescriptorTranspose
                            | Opcode::DMADescriptorReplicate
                    ) {
                        self.err(
                            ErrorKind::BadField,
                            &format!("descriptors[{k}].opcode"),
                            format!(
                                "a DMABlock holds DMADescriptor{{Copy,CCE,Transpose,Replicate}}, found {}",
                                d.opcode()
                            ),
                        );
                    }
                    self.context.push("descriptors".to_owned());
                    self.instruction(d, k, f, blocks);
                    self.context.pop();
                }
            }
            _ => {}
        }
    }

    /// The Load/Save-family index operand `ins[k]` holds int32, uint64 or int64 (seed 000 §6.1:
    /// any other dtype throws "…must be uint64"; fidelity J10/J32).
    fn index_dtype(&mut self, i: &Instruction, k: usize) {
        if let Some(d) = i.in_ap(k).map(|a| a.dtype)
            && !matches!(d, Dtype::Int32 | Dtype::Uint64 | Dtype::Int64)
        {
            self.err(
                ErrorKind::Dtype,
                &format!("ins[{k}].dtype"),
                format!("index dtype must be int32, uint64 or int64 (seed 000 §6.1), found {d}"),
            );
        }
    }

    fn same_dtype(&mut self, i: &Instruction, message: &str) {
        if let (Some(a), Some(b)) = (i.in_ap(0), i.out_ap(0))
            && a.dtype != b.dtype
        {
            self.err(
                ErrorKind::Dtype,
                "outs[0].dtype",
                format!("{message}: ins[0] is {}, outs[0] is {}", a.dtype, b.dtype),
            );
        }
    }

    fn reduce_op(&mut self, field: &str, op: AluOp) {
        if alu_to_memory_reduction(op).is_none() {
            self.err(
                ErrorKind::BadField,
                field,
                format!(
                    "the memory-side reduce supports only bypass (copy) and add, found {op} (re-facts §8)"
                ),
            );
        }
    }
}

/// Why `dim` cannot be indexed on `ap`: it is a padded size-1 dim (the dim-letter rule of
/// [`AccessPattern::level_of`], docs/bir-json.md "Dim letters").
fn padded_dim_message(dim: IndirectDim, ap: &AccessPattern) -> String {
    let n = ap.pairs.len();
    let named: Vec<String> = [IndirectDim::W, IndirectDim::Z, IndirectDim::Y, IndirectDim::X]
        .into_iter()
        .filter(|&d| ap.level_of(d).is_some())
        .map(|d| d.to_string())
        .collect();
    format!(
        "dim {dim} is a padded size-1 dim of a {n}-level access pattern, which has only {} \
         (docs/bir-json.md \"Dim letters\")",
        named.join(", ")
    )
}

fn geometry(loc: &MemoryLocation) -> String {
    if loc.mem_type.is_partitioned() {
        format!("{} partitions × {} bytes, {}", loc.partitions, loc.bytes_per_partition, loc.mem_type)
    } else {
        format!("{} bytes, {}", loc.partitions.saturating_mul(loc.bytes_per_partition), loc.mem_type)
    }
}

/// Why an access pattern's static extent is unusable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtentError {
    /// Address arithmetic overflows at this level.
    Overflow {
        /// The level index (0 = partition dim).
        dim: usize,
    },
    /// Some element falls outside the location.
    OutOfBounds {
        /// The lowest element index reached.
        lowest: i64,
        /// The highest element index reached.
        highest: i64,
        /// The location holds elements `0..limit`.
        limit: u64,
    },
}

/// The lowest and highest element index an AP reaches (relative to the location start,
/// bir-json.md "Access-pattern units"), checked against the location's capacity in elements of
/// `elem_size` bytes (the size of the dtype the memory holds: its allocation's):
/// `partitions × (bytes per partition / elem_size)` for SB/PSUM, `total bytes / elem_size` for
/// flat memory. The AP must have levels with `num ≥ 1`.
pub fn static_extent(
    ap: &AccessPattern,
    loc: &MemoryLocation,
    elem_size: usize,
) -> Result<(i64, i64), ExtentError> {
    let mut lo = ap.offset;
    let mut hi = ap.offset;
    for (dim, p) in ap.pairs.iter().enumerate() {
        let span = p.step.checked_mul(p.num - 1).ok_or(ExtentError::Overflow { dim })?;
        if span < 0 {
            lo = lo.checked_add(span).ok_or(ExtentError::Overflow { dim })?;
        } else {
            hi = hi.checked_add(span).ok_or(ExtentError::Overflow { dim })?;
        }
    }
    let size = elem_size.max(1) as u64;
    let limit = if loc.mem_type.is_partitioned() {
        loc.partitions.saturating_mul(loc.bytes_per_partition / size)
    } else {
        loc.partitions.saturating_mul(loc.bytes_per_partition) / size
    };
    if lo < 0 || u64::try_from(hi).map_or(true, |h| h >= limit) {
        return Err(ExtentError::OutOfBounds { lowest: lo, highest: hi, limit });
    }
    Ok((lo, hi))
}
