//! Validation: one pass over a loaded program that checks everything the executor relies on,
//! collects every problem with its location, and hands out a [`Validated`] proof so the hot
//! paths never re-check (style.md practice 6).
//!
//! Checked: memory placement (SB/PSUM start partitions 0/32/64/96, partition and byte ranges per
//! arch), a configurable cap on the memory a program can make us allocate, loop strides, every
//! opcode's operand counts and kinds (docs/bir-json.md), dtype rules, AP rank and shape (seed 000
//! §1.3; a negative partition step asserts in the reference, re-facts §6), that dynamic offsets
//! and GenericIndirect dims name a real level by the indirect-dim rule
//! ([`AccessPattern::indirect_level`], docs/bir-json.md "Dim letters"), index dtypes (seed 000 §6.1,
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
    /// The most instructions a run may execute, loop iterations counted (default 10^9, far
    /// beyond any real kernel, and about a minute of the cheapest instruction, a NoOp):
    /// nested loops of 2^32 trips each, or one loop of 2^32, are refused, not run for minutes.
    pub max_instructions: u64,
}

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions {
            memory_cap_bytes: 4 << 30,
            max_loop_trips: 1 << 32,
            max_instructions: 1_000_000_000,
        }
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
    let mut v = Validator {
        diags: Diagnostics::default(),
        context: String::new(),
        marks: Vec::new(),
        arch: program.arch,
        opts,
        labels: Vec::new(),
        loop_vars: Vec::new(),
        functions: HashMap::new(),
        called: Vec::new(),
    };
    if program.functions.is_empty() {
        v.err(ErrorKind::Structure, "functions", "a program needs at least one function");
    }
    for (k, f) in program.functions.iter().enumerate() {
        v.functions.entry(f.name.clone()).or_default().push(k);
    }
    for f in &program.functions {
        v.push(format_args!("function '{}'", f.name));
        v.function(f);
        v.pop();
    }
    v.shared_locations(program);
    if v.diags.is_empty() { Ok(Validated { program }) } else { Err(v.diags) }
}

struct Validator<'o> {
    diags: Diagnostics,
    /// The context segments joined by ` › `, built in place (no allocation per instruction).
    context: String,
    /// Where each segment of `context` starts (its separator included).
    marks: Vec<usize>,
    arch: Arch,
    opts: &'o ValidateOptions,
    /// The block names a branch may target: those of the innermost `blocks` list (the function's
    /// or a loop's), with how often each occurs.
    labels: Vec<HashMap<String, usize>>,
    /// The variables of the loops around the node being checked, innermost last.
    loop_vars: Vec<String>,
    /// The program's functions by name (their indices: more than one is an ambiguous Call).
    functions: HashMap<String, Vec<usize>>,
    /// The functions a Call names.
    called: Vec<usize>,
}

/// The most registers one engine's file holds (AWS `register_alloc`: "64x 32-bit registers per
/// engine sequencer in NeuronCore v2-v4"; docs/fidelity.md B1).
pub const REGISTERS_PER_ENGINE: usize = 64;

/// The ops RegisterAlu runs (docs/bir-json.md "RegisterAlu"; fidelity B3).
const REGISTER_ALU_OPS: &[AluOp] = &[
    AluOp::Bypass,
    AluOp::Add,
    AluOp::Subtract,
    AluOp::Mult,
    AluOp::Divide,
    AluOp::Mod,
    AluOp::Max,
    AluOp::Min,
    AluOp::Abs,
    AluOp::BitwiseAnd,
    AluOp::BitwiseOr,
    AluOp::BitwiseXor,
    AluOp::BitwiseNot,
    AluOp::LogicalShiftLeft,
    AluOp::LogicalShiftRight,
    AluOp::ArithShiftLeft,
    AluOp::ArithShiftRight,
    AluOp::IsEqual,
    AluOp::NotEqual,
    AluOp::IsGt,
    AluOp::IsGe,
    AluOp::IsLt,
    AluOp::IsLe,
    AluOp::LogicalAnd,
    AluOp::LogicalOr,
    AluOp::LogicalXor,
];

/// The field names of the first operands, so that naming an operand allocates nothing.
const INS: [&str; 4] = ["ins[0]", "ins[1]", "ins[2]", "ins[3]"];
const OUTS: [&str; 4] = ["outs[0]", "outs[1]", "outs[2]", "outs[3]"];

/// `list[k]` as a field name.
fn list_field(names: &[&'static str], list: &str, k: usize) -> std::borrow::Cow<'static, str> {
    match names.get(k) {
        Some(name) => std::borrow::Cow::Borrowed(name),
        None => std::borrow::Cow::Owned(format!("{list}[{k}]")),
    }
}

/// Appends `n` in decimal (as `{n}` formats it).
fn push_decimal(out: &mut String, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        if let Some(d) = digits.get_mut(at) {
            *d = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || at == 0 {
            break;
        }
    }
    for &d in digits.get(at..).unwrap_or_default() {
        out.push(char::from(d));
    }
}

/// An AP's element count (`None` on overflow).
fn elements(ap: &AccessPattern) -> Option<i64> {
    ap.pairs.iter().try_fold(1i64, |acc, p| acc.checked_mul(p.num))
}

fn show(n: Option<i64>) -> String {
    n.map_or_else(|| "an overflowing count".to_owned(), |n| n.to_string())
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
        self.diags.push(kind, &self.context, field, message);
    }

    /// Enters one more context segment.
    fn push(&mut self, segment: std::fmt::Arguments<'_>) {
        self.marks.push(self.context.len());
        if !self.context.is_empty() {
            self.context.push_str(" › ");
        }
        let _ = std::fmt::Write::write_fmt(&mut self.context, segment);
    }

    /// Enters an instruction's context segment, `instruction #INDEX 'NAME' (OPCODE)` (what
    /// [`Validator::push`] would write, spelled out: one is entered per instruction, and the
    /// formatting machinery costs more than the rest of the checks of a small one).
    fn push_instruction(&mut self, index: usize, name: &str, opcode: Opcode) {
        self.marks.push(self.context.len());
        if !self.context.is_empty() {
            self.context.push_str(" › ");
        }
        self.context.push_str("instruction #");
        push_decimal(&mut self.context, index);
        self.context.push_str(" '");
        self.context.push_str(&crate::clip(name, crate::ECHO_CHARS));
        self.context.push_str("' (");
        self.context.push_str(opcode.name());
        self.context.push(')');
    }

    /// Leaves the innermost context segment.
    fn pop(&mut self) {
        let at = self.marks.pop().unwrap_or(0);
        self.context.truncate(at);
    }

    fn function(&mut self, f: &Function) {
        self.memory(f);
        self.shapes(f);
        let mut dma_blocks: HashMap<&str, usize> = HashMap::new();
        f.for_each_instruction(&mut |i| {
            if i.opcode() == Opcode::DMABlock {
                *dma_blocks.entry(i.name.as_str()).or_default() += 1;
            }
        });
        self.registers(f);
        self.region(&f.body, f, &dma_blocks);
        let executed = executed(&f.body);
        if executed > self.opts.max_instructions {
            self.err(
                ErrorKind::Loop,
                "blocks",
                format!(
                    "the program would execute {} instructions (loop iterations counted), above the budget of {} \
                     (raise it with --max-instructions / ValidateOptions::max_instructions)",
                    if executed == u64::MAX { "more than 2^64".to_owned() } else { executed.to_string() },
                    self.opts.max_instructions
                ),
            );
        }
    }

    /// A called function's memory location named like one of the entry function's is that
    /// location (docs/fidelity.md B14), so the two must agree on where it lives and its size.
    fn shared_locations(&mut self, program: &Program) {
        let Some(entry) = program.functions.first() else { return };
        let mut called = std::mem::take(&mut self.called);
        called.sort_unstable();
        called.dedup();
        let by_name: HashMap<&str, &MemoryLocation> =
            entry.locations.iter().map(|l| (l.name.as_str(), l)).collect();
        for k in called.into_iter().filter(|&k| k != 0) {
            let Some(f) = program.functions.get(k) else { continue };
            self.push(format_args!("function '{}'", f.name));
            for l in &f.locations {
                let Some(e) = by_name.get(l.name.as_str()) else { continue };
                if (e.mem_type, e.partitions, e.bytes_per_partition)
                    != (l.mem_type, l.partitions, l.bytes_per_partition)
                {
                    self.err(
                        ErrorKind::BadField,
                        &format!("location '{}'", crate::clip(&l.name, crate::ECHO_CHARS)),
                        format!(
                            "a called function's location named like one of the entry function's is that location, \
                             so type and dims must agree: {} [{}, {}] here, {} [{}, {}] in '{}'",
                            l.mem_type, l.partitions, l.bytes_per_partition, e.mem_type, e.partitions,
                            e.bytes_per_partition, crate::clip(&entry.name, crate::ECHO_CHARS)
                        ),
                    );
                }
            }
            self.pop();
        }
    }

    /// An allocation's `tensor_shape` (what a tensor file holds) must not overflow and must fit
    /// each of its memory locations; otherwise a run could write a file that claims more than it
    /// holds.
    fn shapes(&mut self, f: &Function) {
        for a in &f.allocations {
            if a.tensor_shape.is_empty() {
                continue;
            }
            self.push(format_args!("allocation '{}'", a.name));
            let bytes = a
                .tensor_shape
                .iter()
                .try_fold(1u64, |acc, &d| acc.checked_mul(d))
                .and_then(|n| n.checked_mul(a.dtype.size() as u64));
            match bytes {
                None => self.err(
                    ErrorKind::Overflow,
                    "tensor_shape",
                    format!("the shape {:?} of {} multiplies past 64 bits", a.tensor_shape, a.dtype),
                ),
                Some(bytes) => {
                    for l in a.locations.iter().filter_map(|id| f.location(*id)) {
                        let room = l.size_bytes().unwrap_or(u64::MAX);
                        if bytes > room {
                            self.err(
                                ErrorKind::OutOfBounds,
                                "tensor_shape",
                                format!(
                                    "the shape {:?} of {} needs {bytes} bytes, but memory location '{}' holds {room}",
                                    a.tensor_shape, a.dtype, l.name
                                ),
                            );
                        }
                    }
                }
            }
            self.pop();
        }
    }

    fn memory(&mut self, f: &Function) {
        // (see `shapes` for the tensor shapes)
        let sbuf = self.arch.sbuf_bytes_per_partition();
        let mut total: u64 = 0;
        let (mut shared_sb, mut shared_psum) = (false, false);
        for l in &f.locations {
            self.push(format_args!("memory location '{}'", l.name));
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
                    self.pop();
                    continue;
                }
            }
            total = total.saturating_add(size.unwrap_or(u64::MAX));
            self.pop();
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

    /// A `blocks` list a branch can move in (the function's or a loop's body): its block names
    /// are the labels of the branches inside it (docs/bir-json.md "Blocks and branches").
    fn region(&mut self, nodes: &[Node], f: &Function, blocks: &HashMap<&str, usize>) {
        let mut labels: HashMap<String, usize> = HashMap::new();
        for node in nodes {
            if let Node::Block(b) = node {
                *labels.entry(b.name.clone()).or_default() += 1;
            }
        }
        self.labels.push(labels);
        self.nodes(nodes, f, blocks);
        self.labels.pop();
    }

    fn nodes(&mut self, nodes: &[Node], f: &Function, blocks: &HashMap<&str, usize>) {
        for (index, node) in nodes.iter().enumerate() {
            match node {
                Node::Block(b) => {
                    self.push(format_args!("block '{}'", b.name));
                    self.nodes(&b.body, f, blocks);
                    self.pop();
                }
                Node::Loop(l) => {
                    self.push(format_args!("loop #{index} '{}'", l.name));
                    self.loop_bounds(l);
                    self.loop_vars.push(l.var.clone());
                    self.region(&l.body, f, blocks);
                    self.loop_vars.pop();
                    self.pop();
                }
                Node::Inst(i) => self.instruction(i, index, f, blocks),
            }
        }
    }

    /// A loop node's own fields: a counted loop's trip count, a DoWhile's condition register, a
    /// DynamicForLoop's bound register, induction register and the variables its bounds name.
    fn loop_bounds(&mut self, l: &Loop) {
        match &l.kind {
            LoopKind::Counted => match l.trip_count() {
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
            },
            LoopKind::DoWhile { cond } => self.register_dtype("ins[0].dtype", cond.dtype),
            LoopKind::Dynamic(d) => {
                self.register_dtype("ins[0].dtype", d.ub_reg.dtype);
                if let Some(r) = &d.induction {
                    self.register_dtype("outs[0].dtype", r.dtype);
                }
                for (field, a) in [("LoopAxis.lb", &d.lb), ("LoopAxis.stride", &d.stride)] {
                    for (var, _) in &a.terms {
                        if !self.loop_vars.contains(var) {
                            self.err(
                                ErrorKind::UnresolvedRef,
                                field,
                                format!(
                                    "'{}' is not the variable of an enclosing loop",
                                    crate::clip(var, crate::ECHO_CHARS)
                                ),
                            );
                        }
                    }
                }
            }
        }
    }

    /// A register operand's dtype: its 32 bits read as int32 or uint32.
    fn register_dtype(&mut self, field: &str, dtype: Dtype) {
        if !matches!(dtype, Dtype::Int32 | Dtype::Uint32) {
            self.err(ErrorKind::Dtype, field, format!("a register reads as int32 or uint32, found {dtype}"));
        }
    }

    /// Each engine's file holds at most [`REGISTERS_PER_ENGINE`] names.
    fn registers(&mut self, f: &Function) {
        let mut files: HashMap<EngineType, std::collections::HashSet<&str>> = HashMap::new();
        fn walk<'a>(nodes: &'a [Node], files: &mut HashMap<EngineType, std::collections::HashSet<&'a str>>) {
            for node in nodes {
                match node {
                    Node::Block(b) => walk(&b.body, files),
                    Node::Loop(l) => {
                        let names: Vec<&str> = match &l.kind {
                            LoopKind::Counted => Vec::new(),
                            LoopKind::DoWhile { cond } => vec![&cond.name],
                            LoopKind::Dynamic(d) => std::iter::once(&d.ub_reg)
                                .chain(&d.induction)
                                .map(|r| r.name.as_str())
                                .collect(),
                        };
                        files.entry(l.engine).or_default().extend(names);
                        walk(&l.body, files);
                    }
                    Node::Inst(i) => {
                        let file = files.entry(i.engine).or_default();
                        for a in i.ins.iter().chain(&i.outs) {
                            if let Operand::Register { regref, .. } = a {
                                file.insert(regref);
                            }
                            match (a, a.as_ap().and_then(|ap| ap.dynamic.as_deref()).map(|d| &d.source)) {
                                (_, Some(OffsetSource::Register(r))) => {
                                    file.insert(r);
                                }
                                (_, Some(OffsetSource::RegisterBase { regref, offset_reg })) => {
                                    file.insert(regref);
                                    file.extend(offset_reg.as_deref());
                                }
                                _ => {}
                            }
                        }
                        if let Op::DMACopy(c) = &i.op
                            && let Some(r) = &c.oob_is_err_reg
                        {
                            file.insert(r);
                        }
                    }
                }
            }
        }
        walk(&f.body, &mut files);
        let mut engines: Vec<_> = files.into_iter().filter(|(_, n)| n.len() > REGISTERS_PER_ENGINE).collect();
        engines.sort_by_key(|(e, _)| *e);
        for (engine, names) in engines {
            self.err(
                ErrorKind::OutOfRange,
                "blocks",
                format!(
                    "the program names {} registers on engine {engine}; an engine has {REGISTERS_PER_ENGINE}",
                    names.len()
                ),
            );
        }
    }

    /// A branch target: a block of the innermost `blocks` list, named once.
    fn label(&mut self, field: &str, target: &str) {
        match self.labels.last().and_then(|l| l.get(target)) {
            Some(1) => {}
            Some(n) => self.err(
                ErrorKind::DuplicateName,
                field,
                format!("{n} blocks of this list are named '{}'", crate::clip(target, crate::ECHO_CHARS)),
            ),
            None => self.err(
                ErrorKind::UnresolvedRef,
                field,
                format!(
                    "'{}' names no block of the blocks list this branch is in (a branch moves between the blocks of one list)",
                    crate::clip(target, crate::ECHO_CHARS)
                ),
            ),
        }
    }

    /// The register instructions' and CompareAndBranch's operands: registers read as int32 or
    /// uint32, immediates are int32 or uint32 integers in −2^31 ..= 2^32 − 1.
    fn register_operands(&mut self, i: &Instruction) {
        for (list, ops) in [("ins", &i.ins), ("outs", &i.outs)] {
            for (k, a) in ops.iter().enumerate() {
                match a {
                    Operand::Register { dtype, .. } => {
                        self.register_dtype(&format!("{list}[{k}].dtype"), *dtype)
                    }
                    Operand::Imm { dtype, value } => {
                        self.register_dtype(&format!("{list}[{k}].dtype"), *dtype);
                        let fits = match value {
                            crate::Number::Int(v) => (i64::from(i32::MIN)..=i64::from(u32::MAX)).contains(v),
                            _ => false,
                        };
                        if !fits {
                            self.err(
                                ErrorKind::OutOfRange,
                                &format!("{list}[{k}].value"),
                                format!("a register immediate is an integer in -2147483648..=4294967295, found {value:?}"),
                            );
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// TensorLoad's and TensorSave's memory side: one element of an integer dtype of at most
    /// 32 bits.
    fn scalar_access(&mut self, field: &str, ap: Option<&AccessPattern>, what: &str) {
        let Some(ap) = ap else { return };
        use Dtype::{Int8, Int16, Int32, Uint8, Uint16, Uint32};
        self.dtype_in(
            Some(ap),
            &format!("{field}.dtype"),
            &[Int8, Int16, Int32, Uint8, Uint16, Uint32],
            what,
        );
        let n = ap.pairs.iter().try_fold(1i64, |n, p| n.checked_mul(p.num));
        if n != Some(1) {
            self.err(
                ErrorKind::ApShape,
                &format!("{field}.ap"),
                format!("{what} is exactly one element (every num 1)"),
            );
        }
    }

    fn instruction(&mut self, i: &Instruction, index: usize, f: &Function, blocks: &HashMap<&str, usize>) {
        self.push_instruction(index, &i.name, i.opcode());
        if let Some(sig) = signature(&i.op) {
            self.operands("ins", &i.ins, sig.ins, sig.min_ins, sig.rest);
            self.operands("outs", &i.outs, sig.outs, sig.min_outs, None);
        }
        for (k, a) in i.ins.iter().enumerate() {
            self.operand(&list_field(&INS, "ins", k), a, f);
        }
        for (k, a) in i.outs.iter().enumerate() {
            self.operand(&list_field(&OUTS, "outs", k), a, f);
        }
        self.rules(i, f, blocks);
        self.pop();
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
            let (ok, want) = match slot {
                Slot::Ap => (matches!(a, Operand::Ap(_)), "a physical_ap"),
                Slot::ApOrImm => {
                    (matches!(a, Operand::Ap(_) | Operand::Imm { .. }), "a physical_ap or an imm_value")
                }
                Slot::Reg => (matches!(a, Operand::Register { .. }), "a register_access"),
                Slot::RegOrImm => (
                    matches!(a, Operand::Register { .. } | Operand::Imm { .. }),
                    "a register_access or an imm_value",
                ),
                Slot::Any => (true, ""),
            };
            if !ok {
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
        if let Some(d) = &ap.dynamic
            && let OffsetSource::RegisterBase { offset_reg, .. } = &d.source
        {
            // A register_ap: its start is known when it runs. Without reg_ap_offset only an SB
            // location's engine address is decoded (B13).
            if offset_reg.is_none() && loc.mem_type != MemoryType::Sb {
                self.err(
                    ErrorKind::BadField,
                    &format!("{field}.reg_ap_offset"),
                    format!(
                        "a register_ap over a {} location needs reg_ap_offset (birsim decodes regref's engine address only for SB)",
                        loc.mem_type
                    ),
                );
            }
            return;
        }
        if let Some(d) = &ap.dynamic {
            if d.max_index < 1 {
                self.err(
                    ErrorKind::BadField,
                    &format!("{field}.indirect_dim_max_index"),
                    format!("must be at least 1, found {}", d.max_index),
                );
            }
            if ap.indirect_level(d.indirect_dim).is_none() {
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
                OffsetSource::Register(_) | OffsetSource::RegisterBase { .. } => {}
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
    /// Element-for-element instructions (the copy family, TensorScalar(Ptr), TensorTensor) must
    /// move as many values out as they read in: when the counts cannot match it is known before
    /// the run (a validation error), not a large allocation and then a fault.
    fn counts(&mut self, i: &Instruction) {
        // APs with a shape error of their own (no levels, too many, a num below 1) are reported
        // there; no second error here.
        let values = |ap: &AccessPattern| -> Option<u64> {
            if ap.pairs.is_empty() || ap.pairs.len() > MAX_AP_DIMS || ap.pairs.iter().any(|p| p.num < 1) {
                return None;
            }
            ap.pairs
                .iter()
                .try_fold(1u64, |n, p| n.checked_mul(u64::try_from(p.num).ok()?))
                .and_then(|n| n.checked_mul(ap.dtype.lanes() as u64))
        };
        let data_ins: &[usize] = match &i.op {
            Op::GenericCopy(_)
            | Op::AbstractCopy(_)
            | Op::TensorCopy(_)
            | Op::TensorCopyDynamicSrc(_)
            | Op::TensorCopyDynamicDst(_)
            | Op::Load(_)
            | Op::Save(_) => &[0],
            Op::TensorScalar(_) => &[0],
            Op::TensorScalarPtr(t) if !t.is_tensor_tensor_scan && !t.is_scalar_tensor_tensor => &[0],
            Op::TensorTensor(_) => &[0, 1],
            _ => return,
        };
        let Some(want) = i.out_ap(0).and_then(values) else { return };
        for &k in data_ins {
            if let Some(got) = i.in_ap(k).and_then(values)
                && got != want
            {
                self.err(
                    ErrorKind::ApShape,
                    &format!("ins[{k}].ap"),
                    format!("ins[{k}] holds {got} values but outs[0] holds {want}; this instruction maps them one to one"),
                );
            }
        }
    }

    fn rules(&mut self, i: &Instruction, f: &Function, blocks: &HashMap<&str, usize>) {
        self.counts(i);
        self.dynamic_forms(i);
        match &i.op {
            Op::RegisterMove(_) => self.register_operands(i),
            Op::RegisterAlu(r) => {
                self.register_operands(i);
                if !REGISTER_ALU_OPS.contains(&r.op) {
                    self.err(
                        ErrorKind::BadField,
                        "op",
                        format!("{} is not a register ALU op (docs/bir-json.md \"RegisterAlu\")", r.op),
                    );
                }
            }
            Op::TensorLoad(_) => {
                self.register_operands(i);
                self.scalar_access("ins[0]", i.in_ap(0), "TensorLoad's source");
            }
            Op::TensorSave(_) => {
                self.register_operands(i);
                self.scalar_access("outs[0]", i.out_ap(0), "TensorSave's destination");
            }
            Op::CompareAndBranch(c) => {
                self.register_operands(i);
                let reg = matches!(i.ins.get(1), Some(Operand::Register { .. }));
                if i.ins.len() == 2 && reg != c.comp_op.against_register() {
                    let want =
                        if c.comp_op.against_register() { "a register_access" } else { "an imm_value" };
                    self.err(
                        ErrorKind::OperandKind,
                        "ins[1].kind",
                        format!("comp_op {} compares against {want}", c.comp_op),
                    );
                }
                for (field, target) in [("on_true", &c.on_true), ("on_false", &c.on_false)] {
                    if let Some(t) = target {
                        self.label(field, t);
                    }
                }
            }
            Op::UnconditionalBranch(b) => self.label("target", &b.target),
            Op::Call(c) => match self.functions.get(&c.target).map(Vec::as_slice) {
                Some([k]) => self.called.push(*k),
                Some(ks) => self.err(
                    ErrorKind::DuplicateName,
                    "target",
                    format!(
                        "{} functions are named '{}'",
                        ks.len(),
                        crate::clip(&c.target, crate::ECHO_CHARS)
                    ),
                ),
                None => self.err(
                    ErrorKind::UnresolvedRef,
                    "target",
                    format!(
                        "'{}' names no function of the program",
                        crate::clip(&c.target, crate::ECHO_CHARS)
                    ),
                ),
            },
            Op::ReadVarAddr(_) => {
                let what = "ReadVarAddr's destination (a 64-bit address)";
                self.dtype_in(i.out_ap(0), "outs[0].dtype", &[Dtype::Int64, Dtype::Uint64], what);
                if let Some(ap) = i.out_ap(0)
                    && ap.pairs.iter().try_fold(1i64, |n, p| n.checked_mul(p.num)) != Some(1)
                {
                    self.err(
                        ErrorKind::ApShape,
                        "outs[0].ap",
                        format!("{what} is exactly one element (every num 1)"),
                    );
                }
            }
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
                self.f32_immediates(i, "the initial value");
            }
            Op::Activation(a) => {
                self.activation(a);
                self.f32_immediates(i, "an Activation parameter (scale, bias, alpha, imm0, imm1)");
            }
            Op::Exponential(_) => self.f32_immediates(i, "Exponential's max_value and reduce_init"),
            Op::MaxIndex(_) => self.out_dtype(i, 0, &[Dtype::Uint32, Dtype::Uint16], "MaxIndex's indices"),
            Op::MaxIndexAndMatchReplace(_) => {
                self.out_dtype(i, 1, &[Dtype::Uint32, Dtype::Uint16], "MaxIndexAndMatchReplace's indices")
            }
            Op::NonzeroWithCount(_) => self.out_dtype(i, 0, &[Dtype::Int32], "NonzeroWithCount's output"),
            Op::Rand(_) => {
                self.random_engine(i);
                let ints =
                    [Dtype::Int8, Dtype::Int16, Dtype::Int32, Dtype::Uint8, Dtype::Uint16, Dtype::Uint32];
                self.out_dtype(i, 0, &ints, "Rand's output");
            }
            Op::Rand2(_) => {
                self.random_engine(i);
                self.f32_immediates(i, "Rand2's bounds");
            }
            Op::Dropout(_) => {
                self.random_engine(i);
                self.f32_immediates(i, "Dropout's probability");
                self.same_dtype(i, "Dropout writes its data's dtype");
            }
            Op::RandSetState(_) => {
                self.random_engine(i);
                self.in_dtype(i, 0, &[Dtype::Uint32], "RandSetState's state words");
            }
            Op::RandGetState(_) | Op::GetRandState(_) => {
                self.random_engine(i);
                self.out_dtype(i, 0, &[Dtype::Uint32], "the state words");
            }
            Op::MatmultMx(m) => {
                use Dtype::{Float4E2m1fnX4, Float8E4m3fnX4, Float8E5m2X4, Float8E8m0fnu, Uint8};
                for k in 0..2 {
                    self.in_dtype(i, k, &[Float8E4m3fnX4, Float8E5m2X4, Float4E2m1fnX4], "MX data");
                }
                for k in 2..4 {
                    self.in_dtype(i, k, &[Float8E8m0fnu, Uint8], "MX scales");
                }
                self.out_dtype(i, 0, &[Dtype::Float32, Dtype::Bfloat16], "MatmultMx's output");
                self.psum_output(i, f, "a MatmultMx");
                // AWS's nc_matmul_mx has no transpose and no perf modes: a MatmultMx that asks for
                // one would otherwise run as a plain product (fidelity Q11).
                if m.is_transpose || m.perf_mode != MatmultPerfMode::None {
                    self.err(
                        ErrorKind::BadField,
                        if m.is_transpose { "is_transpose" } else { "perf_mode" },
                        "a MatmultMx has no PE transpose and no perf mode (AWS nc_matmul_mx; fidelity Q11)",
                    );
                }
            }
            Op::QuantizeMx(_) => {
                let src = [Dtype::Bfloat16, Dtype::Float16, Dtype::Float32];
                self.in_dtype(i, 0, &src, "QuantizeMx's source");
                self.out_dtype(i, 0, &[Dtype::Float8E4m3fnX4, Dtype::Float8E5m2X4], "QuantizeMx's data");
                self.out_dtype(i, 1, &[Dtype::Float8E8m0fnu, Dtype::Uint8], "QuantizeMx's scales");
            }
            Op::RangeSelect(r) => {
                self.range_select(r);
                self.f32_immediates(i, "RangeSelect's bounds");
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
                self.indirect_rows(i);
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
                let mut letters_ok = true;
                if let Some(table) = table.filter(|t| (1..=MAX_AP_DIMS).contains(&t.pairs.len())) {
                    for (k, &dim) in g.indirect_dims.iter().enumerate() {
                        if table.indirect_level(dim).is_none() {
                            letters_ok = false;
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
                self.wrap(g.wrap);
                self.same_dtype(i, "an indirect copy does not cast");
                if letters_ok && g.indirect_dims.len() == indices {
                    self.generic_counts(i, g);
                }
            }
            Op::IndirectCopy(_) | Op::Gather(_) => self.local_gather(i),
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
                self.dma_shapes(i, d);
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
            Op::Iota(g) => self.affine_pattern(i, &g.generator),
            Op::Matmult(m) => self.matmult(i, f, m),
            Op::TensorScalarAffineSelect(g) => {
                self.affine_pattern(i, &g.generator);
                if !matches!(
                    g.compare_op,
                    AluOp::IsEqual | AluOp::NotEqual | AluOp::IsGt | AluOp::IsGe | AluOp::IsLt | AluOp::IsLe
                ) {
                    self.err(
                        ErrorKind::BadField,
                        "compare_op",
                        format!(
                            "compare_op must be a comparison (is_equal, not_equal, is_gt, is_ge, is_lt, is_le), found {}",
                            g.compare_op
                        ),
                    );
                }
                self.same_count(i, 0);
            }
            Op::Select(_) => {
                for k in 0..3 {
                    self.same_count(i, k);
                }
            }
            // The source (when an AP) and the predicate hold one value per output value (K1).
            Op::CopyPredicated(_) => {
                for k in 0..2 {
                    self.same_count(i, k);
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
            Op::SwitchQueueInstance(q) | Op::ResetQueueInstance(q) => {
                if q.queue.as_deref() == Some("") {
                    self.err(ErrorKind::BadField, "queue", "a queue name must not be empty (fidelity G5)");
                }
                if q.no_rearm && i.opcode() == Opcode::ResetQueueInstance {
                    self.err(
                        ErrorKind::BadField,
                        "no_rearm",
                        "ResetQueueInstance always erases the trigger cursors; no_rearm belongs to SwitchQueueInstance (re-facts §5)",
                    );
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
                    self.push(format_args!("descriptors"));
                    self.instruction(d, k, f, blocks);
                    self.pop();
                }
            }
            _ => {}
        }
    }

    /// Where each dynamic-offset form may sit (docs/bir-json.md "Dynamic offsets"; fidelity D18,
    /// D19, G56). A `vector_offset` is the HW-DGE form: only on `ins[0]`/`outs[0]` of a
    /// DMACopy (or DMADescriptorCopy) in Copy mode (seed 000 §5.2 routes only Copy mode to the
    /// vector-indirect arm), on one of them (§7: `getIndirectArgId` finds one offset argument).
    /// A TensorReduce input with an offset needs axis X (§3.1). TensorCopyDynamicSrc/Dst carry
    /// a scalar offset on a free dim of `ins[0]`/`outs[0]` (NKI: "along a free dim, never the
    /// partition dim").
    fn dynamic_forms(&mut self, i: &Instruction) {
        let dma_mode = match &i.op {
            Op::DMACopy(d) => Some(d.mode),
            Op::DMADescriptorCopy(_) => Some(CopyMode::Copy),
            Op::DMADescriptorCCE(_) => Some(CopyMode::Cce),
            Op::DMADescriptorTranspose(_) => Some(CopyMode::Transpose),
            Op::DMADescriptorReplicate(_) => Some(CopyMode::Replicate),
            _ => None,
        };
        let mut vectors = 0;
        for (list, ops) in [("ins", &i.ins), ("outs", &i.outs)] {
            for (k, op) in ops.iter().enumerate() {
                let Some(mut ap) = op.as_ap() else { continue };
                let mut path = format!("{list}[{k}]");
                let mut top = k == 0;
                while let Some(d) = ap.dynamic.as_deref() {
                    ap = match &d.source {
                        OffsetSource::Vector(v) => {
                            let field = format!("{path}.vector_offset");
                            match dma_mode {
                                Some(CopyMode::Copy) if top => vectors += 1,
                                Some(mode) if top => self.err(
                                    ErrorKind::BadField,
                                    &field,
                                    format!(
                                        "a vector offset in DMACopy mode {mode}: seed 000 §5.2 routes only Copy mode to the vector-indirect (HW-DGE) arm (fidelity G56)"
                                    ),
                                ),
                                _ => self.err(
                                    ErrorKind::BadField,
                                    &field,
                                    "a vector offset is the HW-DGE form, only on ins[0] or outs[0] of a DMACopy (or DMADescriptorCopy) in Copy mode (seed 000 §5.2, §7; fidelity G56)",
                                ),
                            }
                            path = field;
                            v
                        }
                        OffsetSource::Scalar(x) => {
                            path.push_str(".scalar_offset");
                            x
                        }
                        OffsetSource::Register(_) | OffsetSource::RegisterBase { .. } => break,
                    };
                    top = false;
                }
            }
        }
        if vectors > 1 {
            self.err(
                ErrorKind::BadField,
                "outs[0].vector_offset",
                "a vector offset on both ins[0] and outs[0]: the reference reads one offset argument (seed 000 §7 getIndirectArgId; fidelity G56)",
            );
        }
        match &i.op {
            Op::TensorReduce(t)
                if t.axis != AxisListType::X
                    && i.in_ap(0)
                        .and_then(|a| a.dynamic.as_deref())
                        .is_some_and(|d| !matches!(d.source, OffsetSource::RegisterBase { .. })) =>
            {
                self.err(
                    ErrorKind::BadField,
                    "axis",
                    format!(
                        "Indirection is only allowed for AxisListType::X (seed 000 §3.1: num_dims == 1); ins[0] carries a dynamic offset and axis is {}",
                        t.axis
                    ),
                );
            }
            Op::TensorCopyDynamicSrc(_) => self.dynamic_copy_offset(i.in_ap(0), "ins[0]"),
            Op::TensorCopyDynamicDst(_) => self.dynamic_copy_offset(i.out_ap(0), "outs[0]"),
            _ => {}
        }
    }

    /// TensorCopyDynamicSrc/Dst's offset: a scalar one (memory- or register-held) on a free dim
    /// (nki-semantics: "along a free dim, never the partition dim").
    fn dynamic_copy_offset(&mut self, ap: Option<&AccessPattern>, side: &str) {
        let Some(ap) = ap else { return };
        match ap.dynamic.as_deref() {
            None => self.err(
                ErrorKind::BadField,
                &format!("{side}.scalar_offset"),
                format!("{side} must carry a scalar dynamic offset (the runtime start of the copy)"),
            ),
            Some(d) if matches!(d.source, OffsetSource::Vector(_)) => {}
            Some(d) if d.indirect_dim == IndirectDim::W => self.err(
                ErrorKind::BadField,
                &format!("{side}.indirect_dim"),
                "the dynamic offset runs along a free dim, never the partition dim W (NKI tensor_copy_dynamic_src/dst)",
            ),
            Some(_) => {}
        }
    }

    /// `Some(n)` for an AP whose shape is sound (its own errors are reported elsewhere).
    /// Matmult's dtypes and shapes (engines.md §1.2–§1.3; docs/fidelity.md M5): `ins = [moving
    /// K × N, stationary K × M]` into a float32 PSUM output of M partitions × N, K and M at most
    /// 128, N within one 2 KiB PSUM bank; a PE tile, when given, holds the operands.
    /// The TensorEngine writes PSUM: `outs[0]` must lie in a PSUM location (fidelity M5).
    fn psum_output(&mut self, i: &Instruction, f: &Function, what: &str) {
        if let Some(l) = i.out_ap(0).and_then(|out| f.location(out.loc))
            && l.mem_type != MemoryType::Psum
        {
            self.err(
                ErrorKind::BadField,
                "outs[0].memref",
                format!("{what} writes PSUM; `{}` is {} (fidelity M5)", l.name, l.mem_type),
            );
        }
    }

    fn matmult(&mut self, i: &Instruction, f: &Function, m: &crate::ops::MatmultFields) {
        let (Some(mov), Some(st), Some(out)) = (i.in_ap(0), i.in_ap(1), i.out_ap(0)) else { return };
        let float32 = |d: Dtype| matches!(d, Dtype::Float32 | Dtype::Float32r);
        for (k, d) in [(0, mov.dtype), (1, st.dtype)] {
            let ok = float32(d)
                || matches!(
                    d,
                    Dtype::Bfloat16
                        | Dtype::Float16
                        | Dtype::Float8E4
                        | Dtype::Float8E5
                        | Dtype::Float8E4m3fn
                        | Dtype::Uint8
                );
            if !ok {
                self.err(
                    ErrorKind::Dtype,
                    &format!("ins[{k}].dtype"),
                    format!(
                        "Matmult operands are float32, float32r, bfloat16, float16, float8e4, float8e5, \
                         float8_e4m3fn or uint8, found {d} (fidelity M5)"
                    ),
                );
            }
        }
        if float32(mov.dtype) != float32(st.dtype) {
            self.err(
                ErrorKind::Dtype,
                "ins[1].dtype",
                format!(
                    "float32 and float32r operands go only with each other: moving is {}, stationary {} \
                     (fidelity M5)",
                    mov.dtype, st.dtype
                ),
            );
        }
        let e4 = |d: Dtype| [Dtype::Float8E4, Dtype::Float8E4m3fn].iter().position(|&x| x == d);
        if let (Some(a), Some(b)) = (e4(mov.dtype), e4(st.dtype))
            && a != b
        {
            self.err(
                ErrorKind::Dtype,
                "ins[1].dtype",
                format!(
                    "float8e4 and float8_e4m3fn do not mix: moving is {}, stationary {}",
                    mov.dtype, st.dtype
                ),
            );
        }
        let fp8 = |d: Dtype| matches!(d, Dtype::Float8E4 | Dtype::Float8E5 | Dtype::Float8E4m3fn);
        // The PE transpose (fidelity M7) on gen3+ writes the data's own dtype; gen2 runs it as
        // a product.
        let transpose = m.is_transpose && self.arch != Arch::Gen2;
        let double = m.perf_mode == MatmultPerfMode::DoubleRow;
        if transpose {
            // The data is one of the two operands (decided below); its dtype, or 16-bit
            // elements for fp8 data.
            let fits = |d: Dtype| if fp8(d) { out.dtype == Dtype::Uint16 } else { out.dtype == d };
            if !fits(mov.dtype) && !fits(st.dtype) {
                self.err(
                    ErrorKind::Dtype,
                    "outs[0].dtype",
                    format!(
                        "a PE transpose writes the data's dtype (uint16 for fp8 data): the operands are {} and {}, \
                         the output {} (fidelity M7)",
                        mov.dtype, st.dtype, out.dtype
                    ),
                );
            }
        } else if !(out.dtype == Dtype::Float32 || (out.dtype == Dtype::Bfloat16 && self.arch == Arch::Gen4))
        {
            self.err(
                ErrorKind::Dtype,
                "outs[0].dtype",
                format!(
                    "a Matmult writes float32 PSUM (or bfloat16 on gen4), found {} on {} (fidelity M5, M9)",
                    out.dtype, self.arch
                ),
            );
        }
        if double && !(fp8(mov.dtype) && fp8(st.dtype)) {
            self.err(
                ErrorKind::Dtype,
                "perf_mode",
                format!(
                    "DoubleRow multiplies fp8 operands, found {} and {} (fidelity M8)",
                    mov.dtype, st.dtype
                ),
            );
        }
        self.psum_output(i, f, "a Matmult");
        // Shapes: partitions are the first level, the free size the product of the others
        // (DoubleRow: less its size-2 first free level, which doubles the contraction).
        let shape = |ap: &AccessPattern| Some((ap.pairs.first()?.num, Self::count_of(ap)? / ap.pairs[0].num));
        let (Some((k_mov, mut n)), Some((k_st, mut m_free)), Some((m_out, n_out))) =
            (shape(mov), shape(st), shape(out))
        else {
            return;
        };
        if double {
            for (k, ap) in [(0, mov), (1, st)] {
                if ap.pairs.len() < 3 || ap.pairs[1].num != 2 {
                    self.err(
                        ErrorKind::ApShape,
                        &format!("ins[{k}].ap"),
                        "DoubleRow's operands have a size-2 first free level (the second half of K) (fidelity M8)",
                    );
                    return;
                }
            }
            (n, m_free) = (n / 2, m_free / 2);
        }
        if transpose {
            // NKI: data stationary (P × F), identity moving (P × P); KLR: data moving (P × F),
            // identity stationary (F × F); the output is F × P either way.
            let nki = n == k_mov && k_mov == k_st && (m_out, n_out) == (m_free, k_st);
            let klr = k_st == m_free && n == m_free && (m_out, n_out) == (m_free, k_mov);
            if !nki && !klr {
                self.err(
                    ErrorKind::ApShape,
                    "outs[0].ap",
                    format!(
                        "a PE transpose is data (P × F) into F × P with a P × P identity moving (NKI) or an F × F \
                         identity stationary (KLR); found moving {k_mov} × {n}, stationary {k_st} × {m_free}, \
                         output {m_out} × {n_out} (fidelity M7)"
                    ),
                );
                return;
            }
            // The data's partitions and free size each fit the 128-row array, and its transpose
            // one bank (engines.md §1.7: up to 128 × 128).
            let (p, free) = if nki { (k_st, m_free) } else { (k_mov, n) };
            if p > 128 || free > 128 {
                self.err(
                    ErrorKind::ApShape,
                    "outs[0].ap",
                    format!("a PE transpose handles up to 128 × 128, found {p} × {free} (fidelity M7)"),
                );
            } else if self.arch != Arch::Gen4
                && let Some(l) = f.location(out.loc)
            {
                self.matmult_bank(out, l);
            }
            return;
        }
        if k_mov != k_st {
            self.err(
                ErrorKind::ApShape,
                "ins[1].ap[0].num",
                format!(
                    "the contraction runs over both inputs' partitions: moving has {k_mov}, stationary {k_st}"
                ),
            );
        }
        // N fills one 2 KiB PSUM bank on v2/v3; on v4 up to all eight (4096 fp32, 8192 bf16:
        // engines.md §1.2, AWS nc_matmul "Tile size").
        let (n_what, n_bytes) = if self.arch == Arch::Gen4 {
            ("N (the moving free size) fills at most PSUM's 8 banks on gen4: it", PSUM_BYTES_PER_PARTITION)
        } else {
            ("N (the moving free size) fills at most one 2 KiB PSUM bank: it", 2048)
        };
        let limits = [
            ("ins[0].ap[0].num", "K (the inputs' partitions)", k_mov, 128),
            ("ins[1].ap", "M (the stationary free size)", m_free, 128),
            ("outs[0].ap", n_what, n, n_bytes as i64 / out.dtype.size().max(1) as i64),
        ];
        let mut within = true;
        for (field, what, v, max) in limits {
            if v > max {
                within = false;
                self.err(ErrorKind::ApShape, field, format!("{what} is {v}, at most {max}"));
            }
        }
        if within
            && self.arch != Arch::Gen4
            && let Some(l) = f.location(out.loc)
        {
            self.matmult_bank(out, l);
        }
        if (m_out, n_out) != (m_free, n) {
            self.err(
                ErrorKind::ApShape,
                "outs[0].ap",
                format!(
                    "the output is M × N = {m_free} partitions × {n} (stationary free × moving free), found \
                     {m_out} × {n_out}"
                ),
            );
        }
        // The PE tile (engines.md §1.2): when given (not the KLR default [-1, -1]), sizes of 32,
        // 64 or 128 rows / columns that hold K and M, at a position inside the 128 × 128 array.
        let given = |v: &[i64]| v.len() == 2 && v != [-1, -1];
        let mut size = [128, 128];
        for (key, v) in [("tile_size", &m.tile_size), ("tile_position", &m.tile_position)] {
            if !v.is_empty() && v.len() != 2 {
                self.err(
                    ErrorKind::BadField,
                    key,
                    format!("{key} is [rows, columns], found {} values", v.len()),
                );
            }
        }
        if within && given(&m.tile_size) {
            if m.tile_size.iter().any(|s| ![32, 64, 128].contains(s)) {
                self.err(
                    ErrorKind::BadField,
                    "tile_size",
                    format!("tile sizes are 32, 64 or 128, found {:?}", m.tile_size),
                );
            } else {
                size = [m.tile_size[0], m.tile_size[1]];
                if k_mov > size[0] || m_free > size[1] {
                    self.err(
                        ErrorKind::BadField,
                        "tile_size",
                        format!(
                            "a {} × {} tile does not hold K = {k_mov} rows and M = {m_free} columns",
                            size[0], size[1]
                        ),
                    );
                }
            }
        }
        if given(&m.tile_position) {
            let p = &m.tile_position;
            if (0..2).any(|d| p[d] < 0 || p[d] % 32 != 0 || p[d] + size[d] > 128) {
                self.err(
                    ErrorKind::BadField,
                    "tile_position",
                    format!(
                        "a {} × {} tile at {p:?} leaves the 128 × 128 array (positions are multiples of 32)",
                        size[0], size[1]
                    ),
                );
            }
        }
    }

    /// Before gen4, a Matmult's output lies inside one 2 KiB bank of each PSUM partition
    /// (engines.md §1.2; gen4's may span all 8, as the kernel's own check allows):
    /// every element's byte in its partition (`addr` + its place in the row) is in the bank of
    /// the first element's. Checked on the static AP (at most 128 × 512 elements here); the
    /// kernel checks again after dynamic offsets.
    fn matmult_bank(&mut self, out: &AccessPattern, l: &MemoryLocation) {
        let size = out.dtype.size().max(1) as i64;
        let pitch = (l.bytes_per_partition as i64 / size).max(1);
        // In i128: `addr` and the offsets come from the file (an overflow is reported elsewhere).
        let bank_of =
            |e: i64| (i128::from(l.addr) + i128::from(e.rem_euclid(pitch)) * i128::from(size)) / 2048;
        // The usual shape, in O(levels): partition steps that are whole rows and free levels
        // that stay inside one row; the lowest and highest element then bound every bank.
        if let Some((first, free)) = out.pairs.split_first()
            && first.step.checked_rem(pitch) == Some(0)
        {
            let (mut lo, mut hi) = (i128::from(out.offset), i128::from(out.offset));
            for q in free {
                let d = i128::from(q.step) * i128::from(q.num - 1);
                if d < 0 { lo += d } else { hi += d }
            }
            if let (Ok(lo), Ok(hi)) = (i64::try_from(lo), i64::try_from(hi))
                && lo.div_euclid(pitch) == hi.div_euclid(pitch)
            {
                let (a, b) = (bank_of(lo), bank_of(hi));
                if a != b {
                    self.err(
                        ErrorKind::ApShape,
                        "outs[0].ap",
                        format!(
                            "a Matmult output lies within one 2 KiB PSUM bank of each partition; element {hi} is in \
                             bank {b}, element {lo} in bank {a}"
                        ),
                    );
                }
                return;
            }
        }
        // The walk is bounded: an output of more elements than one bank holds on all 128
        // partitions already has its shape error.
        if Self::count_of(out).is_none_or(|c| c > 128 * 2048) {
            return;
        }
        let mut bank = None;
        let mut idx = vec![0i64; out.pairs.len()];
        loop {
            let e = idx
                .iter()
                .zip(&out.pairs)
                .try_fold(out.offset, |e, (i, p)| e.checked_add(i.checked_mul(p.step)?));
            // An address that overflows has its own error (the AP's extent).
            let Some(e) = e else { return };
            let b = bank_of(e);
            if *bank.get_or_insert(b) != b {
                self.err(
                    ErrorKind::ApShape,
                    "outs[0].ap",
                    format!(
                        "a Matmult output lies within one 2 KiB PSUM bank of each partition; element {e} is in \
                         bank {b}, the first in bank {}",
                        bank.unwrap_or(0)
                    ),
                );
                return;
            }
            let Some(d) = (0..idx.len()).rev().find(|&d| idx[d] + 1 < out.pairs[d].num) else { return };
            idx[d] += 1;
            idx[d + 1..].iter_mut().for_each(|i| *i = 0);
        }
    }

    fn count_of(ap: &AccessPattern) -> Option<i64> {
        if ap.pairs.is_empty() || ap.pairs.len() > MAX_AP_DIMS || ap.pairs.iter().any(|p| p.num < 1) {
            return None;
        }
        elements(ap)
    }

    fn wrap(&mut self, wrap: Option<crate::ops::IndirectWrap>) {
        if let Some(w) = wrap
            && w.n == 0
        {
            self.err(
                ErrorKind::BadField,
                "wrap.n",
                "apply_wrap's n must be at least 1, found 0 (fidelity I3)",
            );
        }
    }

    /// IndirectLoad / IndirectSave / IndirectSaveAccumulate: one dtype and one dense row (the
    /// dense AP's non-final levels) per index slot (fidelity I4–I6). The table AP may have any
    /// shape: only its offset and final-level step address the entries (seed 000 §6.1).
    fn indirect_rows(&mut self, i: &Instruction) {
        let (wrap, isa) = match &i.op {
            Op::IndirectLoad(f) | Op::IndirectSave(f) => (f.wrap, None),
            Op::IndirectSaveAccumulate(f) => (f.wrap, Some(f.num_indices)),
            _ => return,
        };
        self.wrap(wrap);
        self.same_dtype(i, "an indirect copy does not cast");
        let load = i.opcode() == Opcode::IndirectLoad;
        let (dense, dense_field) = if load { (i.out_ap(0), "outs[0]") } else { (i.in_ap(0), "ins[0]") };
        let (Some(dense), Some(idx)) = (dense, i.in_ap(1)) else { return };
        let (Some(dn), Some(k)) = (Self::count_of(dense), Self::count_of(idx)) else { return };
        let rows = dn / dense.pairs.last().map_or(1, |p| p.num.max(1));
        if let Some(num_indices) = isa {
            let parts = idx.pairs[0].num.max(1);
            let per = k / parts;
            if num_indices > per as u64 {
                self.err(
                    ErrorKind::ApShape,
                    "num_indices",
                    format!(
                        "insufficient indices: num_indices is {num_indices} but ins[1] holds {per} per partition \
                         ({parts} partitions; seed 000 §6.2 \"AddrCount >= I.getNumIndices()\", fidelity I5)"
                    ),
                );
            }
        }
        if rows != k {
            self.err(
                ErrorKind::ApShape,
                &format!("{dense_field}.ap"),
                format!(
                    "{dense_field} has {rows} rows (its levels before the final one) but ins[1] holds {k} indices; \
                     each index moves one row"
                ),
            );
        }
    }

    /// GenericIndirect: every index operand holds K indices, and the dense side holds K entries of
    /// L elements, L the product of the table's non-indirect nums (fidelity I7, I8).
    fn generic_counts(&mut self, i: &Instruction, g: &crate::ops::GenericIndirectFields) {
        let load = i.opcode() == Opcode::GenericIndirectLoad;
        let (table, dense, dense_field) =
            if load { (i.in_ap(0), i.out_ap(0), "outs[0]") } else { (i.out_ap(0), i.in_ap(0), "ins[0]") };
        let (Some(table), Some(dense)) = (table, dense) else { return };
        if Self::count_of(table).is_none() {
            return;
        }
        let mut k_all: Option<i64> = None;
        for k in 1..i.ins.len() {
            let Some(n) = i.in_ap(k).and_then(Self::count_of) else { return };
            match k_all {
                None => k_all = Some(n),
                Some(first) if first != n => {
                    self.err(
                        ErrorKind::ApShape,
                        &format!("ins[{k}].ap"),
                        format!("every index operand holds the same number of indices: ins[1] holds {first}, ins[{k}] holds {n}"),
                    );
                    return;
                }
                Some(_) => {}
            }
        }
        let Some(k) = k_all else { return };
        let levels: Vec<usize> = g.indirect_dims.iter().filter_map(|d| table.indirect_level(*d)).collect();
        let l = table
            .pairs
            .iter()
            .enumerate()
            .filter(|(lv, _)| !levels.contains(lv))
            .try_fold(1i64, |acc, (_, p)| acc.checked_mul(p.num));
        let want = l.and_then(|l| l.checked_mul(k));
        let got = Self::count_of(dense);
        if want != got {
            self.err(
                ErrorKind::ApShape,
                &format!("{dense_field}.ap"),
                format!(
                    "{dense_field} holds {} elements but {k} entries of {} elements (the table's non-indirect levels) are {}",
                    show(got),
                    show(l),
                    show(want)
                ),
            );
        }
    }

    /// IndirectCopy and Gather (fidelity I9–I11): the index dtype, one partition count on all
    /// three operands (IndirectCopy: a multiple of 16), one dtype, and the destination's size.
    fn local_gather(&mut self, i: &Instruction) {
        let copy = i.opcode() == Opcode::IndirectCopy;
        if let Some(d) = i.in_ap(1).map(|a| a.dtype) {
            let ok = if copy {
                matches!(d, Dtype::Uint16 | Dtype::Int32 | Dtype::Uint32)
            } else {
                matches!(d, Dtype::Uint8 | Dtype::Uint16 | Dtype::Uint32 | Dtype::Int32)
            };
            if !ok {
                let (want, id) = if copy {
                    ("uint16, int32 or uint32", "I9")
                } else {
                    ("uint8, uint16, uint32 or int32", "I11")
                };
                self.err(
                    ErrorKind::Dtype,
                    "ins[1].dtype",
                    format!("{} index dtype must be {want}, found {d} (fidelity {id})", i.opcode()),
                );
            }
        }
        self.same_dtype(i, "an indirect copy does not cast");
        let (Some(src), Some(idx), Some(dst)) = (i.in_ap(0), i.in_ap(1), i.out_ap(0)) else { return };
        let (Some(_), Some(kn), Some(dn)) = (Self::count_of(src), Self::count_of(idx), Self::count_of(dst))
        else {
            return;
        };
        let p = src.pairs[0].num;
        let mut parts_ok = true;
        for (field, ap) in [("ins[1].ap", idx), ("outs[0].ap", dst)] {
            if ap.pairs[0].num != p {
                parts_ok = false;
                self.err(
                    ErrorKind::ApShape,
                    field,
                    format!(
                        "{} needs one partition count on src, indices and dst: ins[0] has {p}, {} has {}",
                        i.opcode(),
                        &field[..field.len() - 3],
                        ap.pairs[0].num
                    ),
                );
            }
        }
        if copy && p % 16 != 0 {
            parts_ok = false;
            self.err(
                ErrorKind::ApShape,
                "ins[0].ap",
                format!("IndirectCopy works in 16-partition blocks: the partition count must be a multiple of 16, found {p}"),
            );
        }
        if !parts_ok {
            return;
        }
        let (per_idx, per_dst) = (kn / p, dn / p);
        let want = if copy {
            // num_elem_per_idx: the dst AP's innermost num (NKI local_gather; fidelity I10).
            let l = if dst.pairs.len() >= 2 { dst.pairs.last().map_or(1, |q| q.num) } else { 1 };
            (16 * per_idx).checked_mul(l)
        } else {
            Some(per_idx)
        };
        if want != Some(per_dst) {
            self.err(
                ErrorKind::ApShape,
                "outs[0].ap",
                format!(
                    "outs[0] holds {per_dst} elements per partition but {} needs {}",
                    i.opcode(),
                    match (copy, want) {
                        (true, Some(w)) =>
                            format!("{w} (16 × {per_idx} indices per partition × its innermost num, the elements per index)"),
                        (false, Some(w)) => format!("{w} (one per index)"),
                        (_, None) => "an overflowing count".to_owned(),
                    }
                ),
            );
        }
    }

    /// DMACopy's mode-specific shapes (seed 000 §5.2; fidelity D2–D4).
    fn dma_shapes(&mut self, i: &Instruction, d: &crate::ops::DmaCopyFields) {
        let (Some(src), Some(dst)) = (i.in_ap(0), i.out_ap(0)) else { return };
        match d.mode {
            CopyMode::Transpose if d.transpose_op != TransposeOps::None => {
                let mut rank_ok = true;
                for (field, ap) in [("ins[0].ap", src), ("outs[0].ap", dst)] {
                    if ap.pairs.len() != 4 {
                        self.err(
                            ErrorKind::ApRank,
                            field,
                            format!(
                                "a DMA transpose ({}) needs 4-level access patterns [W, Z, Y, X], found {} levels",
                                d.transpose_op,
                                ap.pairs.len()
                            ),
                        );
                        rank_ok = false;
                    }
                }
                // The source counted in the destination's dtype (fidelity K3): a cast into an
                // x4 dtype packs 4 values along X, one out of x4 unpacks them. An X count that
                // is not a multiple of 4 is left to the executor's located `dims` fault.
                let (ls, ld) = (src.dtype.lanes(), dst.dtype.lanes());
                let mut nums: Vec<i64> = src.pairs.iter().map(|p| p.num).collect();
                let packs_evenly = match nums.last_mut() {
                    Some(x) if ld > ls => {
                        let k = (ld / ls) as i64;
                        let even = *x % k == 0;
                        *x /= k;
                        even
                    }
                    Some(x) if ls > ld => {
                        *x = x.saturating_mul((ls / ld) as i64);
                        true
                    }
                    _ => true,
                };
                if rank_ok && packs_evenly {
                    let perm = d.transpose_op.permutation();
                    let want: Vec<i64> = perm.iter().map(|&p| nums[p]).collect();
                    let got: Vec<i64> = dst.pairs.iter().map(|p| p.num).collect();
                    if want != got {
                        self.err(
                            ErrorKind::ApShape,
                            "outs[0].ap",
                            format!(
                                "transpose {} (source axes {perm:?}) of a source shaped {nums:?} gives {want:?}, but the destination is {got:?}",
                                d.transpose_op
                            ),
                        );
                    }
                }
            }
            CopyMode::Replicate => {
                let mut rank_ok = true;
                for (field, ap) in [("ins[0].ap", src), ("outs[0].ap", dst)] {
                    if ap.pairs.len() != 2 {
                        self.err(
                            ErrorKind::ApRank,
                            field,
                            format!(
                                "DMA replicate needs 2-level access patterns [partitions, free], found {} levels",
                                ap.pairs.len()
                            ),
                        );
                        rank_ok = false;
                    }
                }
                if rank_ok {
                    let (sp, sf, dp, df) =
                        (src.pairs[0].num, src.pairs[1].num, dst.pairs[0].num, dst.pairs[1].num);
                    if sp < 1 || dp % sp != 0 || sf != df {
                        self.err(
                            ErrorKind::ApShape,
                            "outs[0].ap",
                            format!(
                                "DMA replicate needs destination partitions a multiple of the source's and equal free sizes; source [{sp}, {sf}], destination [{dp}, {df}]"
                            ),
                        );
                    }
                }
            }
            CopyMode::Copy => self.hw_dge_shapes(src, dst),
            CopyMode::Cce => {
                let n = elements(dst);
                for k in 0..i.ins.len() {
                    if let Some(a) = i.in_ap(k)
                        && elements(a) != n
                    {
                        self.err(
                            ErrorKind::ApShape,
                            &format!("ins[{k}].ap"),
                            format!(
                                "every CCE input holds as many elements as the output ({}), found {}",
                                show(n),
                                show(elements(a))
                            ),
                        );
                    }
                }
            }
            _ => {}
        }
    }

    /// The HW-DGE bridge's static rules (seed 000 §7; docs/fidelity.md G6, G50): a `vector_offset`
    /// on exactly one AP of a DMACopy Copy. The dense side (the other AP) has N rows (its level-0
    /// num); the index AP holds exactly N elements; a dense row and an indexed row (the indexed
    /// AP with its `indirect_dim` level's num taken as 1) hold as many elements.
    fn hw_dge_shapes(&mut self, src: &AccessPattern, dst: &AccessPattern) {
        fn vector(a: &AccessPattern) -> Option<(&AccessPattern, usize)> {
            let d = a.dynamic.as_deref()?;
            match &d.source {
                OffsetSource::Vector(v) => a.indirect_level(d.indirect_dim).map(|level| (v, level)),
                _ => None,
            }
        }
        let (side, indexed, dense, (v, level)) = match (vector(src), vector(dst)) {
            (None, Some(x)) => ("outs[0]", dst, src, x),
            (Some(x), None) => ("ins[0]", src, dst, x),
            // Neither, or both (not-implemented at run time).
            _ => return,
        };
        let (Some(rows), Some(n_idx), Some(n_dense), Some(n_indexed), Some(level_num)) = (
            dense.pairs.first().map(|p| p.num).filter(|n| *n >= 1),
            Self::count_of(v),
            Self::count_of(dense),
            Self::count_of(indexed),
            indexed.pairs.get(level).map(|p| p.num).filter(|n| *n >= 1),
        ) else {
            return;
        };
        let dense_side = if side == "outs[0]" { "ins[0]" } else { "outs[0]" };
        if n_idx != rows {
            self.err(
                ErrorKind::ApShape,
                &format!("{side}.vector_offset.ap"),
                format!(
                    "a vector offset holds one index per row of {dense_side} ({rows} rows, its level-0 num), found {n_idx} elements (fidelity G50)"
                ),
            );
        }
        let (dense_row, indexed_row) = (n_dense / rows, n_indexed / level_num);
        if dense_row != indexed_row {
            self.err(
                ErrorKind::ApShape,
                &format!("{side}.ap"),
                format!(
                    "an indexed row ({side} with its indirect_dim level's num taken as 1) holds {indexed_row} elements, \
                     but a row of {dense_side} (one level-0 index) holds {dense_row} (fidelity G50)"
                ),
            );
        }
    }

    /// An Iota/AffineSelect pattern: at most 4 `[step, num]` pairs whose nums multiply to the
    /// output's elements per partition (seed 000 §5.4; fidelity D14).
    fn affine_pattern(&mut self, i: &Instruction, g: &crate::ops::AffinePattern) {
        if g.pattern.len() > 4 {
            self.err(
                ErrorKind::BadField,
                "pattern",
                format!("an affine pattern has at most 4 [step, num] pairs, found {}", g.pattern.len()),
            );
            return;
        }
        if let Some(p) = g.pattern.iter().position(|p| p.num < 1) {
            self.err(ErrorKind::BadField, &format!("pattern[{p}][1]"), "num must be at least 1");
            return;
        }
        let Some(out) = i.out_ap(0) else { return };
        let free = out.pairs.iter().skip(1).try_fold(1i64, |acc, p| acc.checked_mul(p.num));
        let covered = g.pattern.iter().try_fold(1i64, |acc, p| acc.checked_mul(p.num));
        if free != covered {
            self.err(
                ErrorKind::BadField,
                "pattern",
                format!(
                    "the pattern's nums multiply to {}, but outs[0] has {} elements per partition",
                    show(covered),
                    show(free)
                ),
            );
        }
    }

    /// `ins[k]`, when an AP, holds as many values as `outs[0]` (elements × lanes: an `_x4`
    /// element holds 4 values; fidelity K1, K2).
    fn same_count(&mut self, i: &Instruction, k: usize) {
        let values = |ap: &AccessPattern| elements(ap).and_then(|n| n.checked_mul(ap.dtype.lanes() as i64));
        if let (Some(a), Some(o)) = (i.in_ap(k), i.out_ap(0))
            && values(a) != values(o)
        {
            self.err(
                ErrorKind::ApShape,
                &format!("ins[{k}].ap"),
                format!(
                    "{} needs one value per output value ({}{}), found {}",
                    i.opcode(),
                    show(values(o)),
                    if a.dtype.lanes() != 1 || o.dtype.lanes() != 1 { "; 4 per x4 element" } else { "" },
                    show(values(a))
                ),
            );
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

    /// Immediates after the data operand must be float32 (seed 000 §4 for TensorScalarCache's
    /// initial value; RE: the activation kernel asserts on any other immediate dtype; AWS: scale
    /// and Exponential's max_value / reduce_init are float32).
    fn f32_immediates(&mut self, i: &Instruction, what: &str) {
        for (k, op) in i.ins.iter().enumerate().skip(1) {
            if let Operand::Imm { dtype, .. } = op
                && *dtype != Dtype::Float32
            {
                self.err(
                    ErrorKind::Dtype,
                    &format!("ins[{k}].dtype"),
                    format!("{what} must be float32, found {dtype}"),
                );
            }
        }
    }

    /// Activation's accumulator fold and activate2's tensor-scalar stage (AWS `activation`:
    /// reduce_op must be add; `activate2`: six (op0, op1) pairs and five reduce ops;
    /// docs/fidelity.md E7, E9).
    /// The random family runs on the engines with generators: GpSimd (Pool) and VectorE (DVE).
    fn random_engine(&mut self, i: &Instruction) {
        if !matches!(i.engine, EngineType::Pool | EngineType::Dve) {
            self.err(
                ErrorKind::BadField,
                "engine",
                format!(
                    "{} draws from the Pool or DVE engine's generator, found engine {}",
                    i.opcode(),
                    i.engine
                ),
            );
        }
    }

    /// An input whose dtype must be one of `allowed` (AWS's documented dtypes).
    fn in_dtype(&mut self, i: &Instruction, k: usize, allowed: &[Dtype], what: &str) {
        self.dtype_in(i.in_ap(k), &format!("ins[{k}].dtype"), allowed, what);
    }

    /// An output whose dtype must be one of `allowed` (AWS's documented dtypes).
    fn out_dtype(&mut self, i: &Instruction, k: usize, allowed: &[Dtype], what: &str) {
        self.dtype_in(i.out_ap(k), &format!("outs[{k}].dtype"), allowed, what);
    }

    /// A `bad-field` error at `field` when the operand's dtype is not one of `allowed`.
    fn dtype_in(&mut self, ap: Option<&AccessPattern>, field: &str, allowed: &[Dtype], what: &str) {
        if let Some(ap) = ap
            && !allowed.contains(&ap.dtype)
        {
            let names: Vec<&str> = allowed.iter().map(|d| d.name()).collect();
            self.err(
                ErrorKind::BadField,
                field,
                format!("{what} must be {}, found {}", names.join(" or "), ap.dtype),
            );
        }
    }

    /// RangeSelect (AWS `range_select`): both comparisons from AWS's list, a fold the registers
    /// know, and no LoadAccumulate (there is no operand for the initial values).
    fn range_select(&mut self, r: &crate::ops::RangeSelectFields) {
        use AluOp::{AbsMax, AbsMin, Add, IsEqual, IsGe, IsGt, IsLe, IsLt, Max, Min};
        for (field, op) in [("op0", r.op0), ("op1", r.op1)] {
            if ![IsEqual, IsLt, IsLe, IsGt, IsGe].contains(&op) {
                self.err(
                    ErrorKind::BadField,
                    field,
                    format!(
                        "RangeSelect's comparisons are is_equal, is_lt, is_le, is_gt or is_ge, found {op}"
                    ),
                );
            }
        }
        if let Some(op) = r.reduce_op
            && ![Max, Add, Min, AbsMax, AbsMin].contains(&op)
        {
            self.err(
                ErrorKind::BadField,
                "reduce_op",
                format!("the accumulator's fold must be max, add, min, abs_max or abs_min, found {op}"),
            );
        }
        if r.acc == Some(EngineAccumulationType::LoadAccumulate) {
            self.err(ErrorKind::BadField, "acc", "RangeSelect has no operand to LoadAccumulate from");
        }
    }

    fn activation(&mut self, a: &crate::ops::ActivationFields) {
        use AluOp::{AbsMax, AbsMin, Add, Bypass, Max, Min, Mult, Subtract};
        if let Some(op) = a.reduce_op {
            let allowed: &[AluOp] = if a.is_activate2 { &[Add, Max, Min, AbsMax, AbsMin] } else { &[Add] };
            if !allowed.contains(&op) {
                let which =
                    if a.is_activate2 { "add, max, min, abs_max or abs_min (activate2)" } else { "add" };
                self.err(
                    ErrorKind::BadField,
                    "reduce_op",
                    format!("the accumulator's fold must be {which}, found {op}"),
                );
            }
        }
        let pair = (a.op0, a.op1);
        if a.is_activate2 {
            const PAIRS: [(AluOp, AluOp); 6] = [
                (Mult, Add),
                (Mult, Subtract),
                (Mult, Bypass),
                (Add, Bypass),
                (Subtract, Bypass),
                (Bypass, Bypass),
            ];
            if !PAIRS.contains(&pair) {
                self.err(
                    ErrorKind::BadField,
                    "op0",
                    format!(
                        "activate2's (op0, op1) must be one of (mult, add), (mult, subtract), (mult, bypass), \
                         (add, bypass), (subtract, bypass), (bypass, bypass); found ({}, {})",
                        a.op0, a.op1
                    ),
                );
            }
        } else if pair != (Bypass, Bypass) || a.reverse0 || a.reverse1 {
            self.err(
                ErrorKind::BadField,
                "op0",
                "op0, op1, reverse0 and reverse1 belong to activate2; set is_activate2 or drop them",
            );
        }
    }
}

/// Why `dim` cannot be indexed on `ap`: an indirect dim's letter is the AP level index (W 0, Z 1,
/// Y 2, X 3; re-facts §3, [`AccessPattern::indirect_level`], docs/bir-json.md "Dim letters") and
/// the AP has no such level.
fn padded_dim_message(dim: IndirectDim, ap: &AccessPattern) -> String {
    let n = ap.pairs.len();
    let named: Vec<String> = [IndirectDim::W, IndirectDim::Z, IndirectDim::Y, IndirectDim::X]
        .into_iter()
        .filter(|&d| ap.indirect_level(d).is_some())
        .map(|d| d.to_string())
        .collect();
    format!(
        "indirect dim {dim} is level {} (an indirect dim's letter is its AP level index: W 0, Z 1, \
         Y 2, X 3) but the access pattern has {n} levels, named {} (docs/bir-json.md \"Dim letters\")",
        dim as u8,
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

/// How many instructions running `nodes` executes, counted loop trips multiplied in
/// (saturating). Branches, Calls, DoWhile and DynamicForLoop make the count data-dependent: each
/// instruction then counts once, and the run's budget bounds what it really executes.
pub fn executed(nodes: &[Node]) -> u64 {
    nodes.iter().fold(0u64, |n, node| {
        n.saturating_add(match node {
            Node::Block(b) => executed(&b.body),
            Node::Loop(l) => match l.kind {
                LoopKind::Counted => l.trip_count().unwrap_or(u64::MAX).saturating_mul(executed(&l.body)),
                // Runs at least once / as its register says: counted once here.
                LoopKind::DoWhile { .. } | LoopKind::Dynamic(_) => executed(&l.body),
            },
            Node::Inst(_) => 1,
        })
    })
}

#[cfg(test)]
#[cfg(feature = "json")] // The cases are written as BIR JSON.
mod tests {
    use super::*;

    /// The instruction segment is spelled as the format string spells it (std's `Display` of
    /// an integer is the independent reference), at every digit count.
    #[test]
    fn instruction_segment_is_spelled_as_formatted() {
        let mut v = Validator {
            diags: Diagnostics::default(),
            context: "function 'f'".to_owned(),
            marks: Vec::new(),
            arch: Arch::Gen3,
            opts: &ValidateOptions::default(),
            labels: Vec::new(),
            loop_vars: Vec::new(),
            functions: HashMap::new(),
            called: Vec::new(),
        };
        let mut n = 0usize;
        for digits in 0..=20 {
            for index in [n, n.saturating_sub(1), n.saturating_add(1), usize::MAX] {
                v.push_instruction(index, "i 'x'", Opcode::TensorScalar);
                assert_eq!(v.context, format!("function 'f' › instruction #{index} 'i 'x'' (TensorScalar)"));
                v.pop();
                assert_eq!(v.context, "function 'f'");
            }
            n = n.saturating_mul(10).saturating_add(usize::from(digits == 0));
        }
    }

    /// A program with tensors x (1 × 4096 fp32, DRAM) and y (same) and the one instruction.
    fn check(inst: &str) -> Vec<(ErrorKind, String, String)> {
        let text = format!(
            r#"{{"functions":[{{"name":"f","allocations":[
              {{"name":"x","kind":"ExternalInput","dtype":"float32","tensor_shape":[4096],"memorylocations":[{{"name":"x","type":"DRAM","dims":[1,16384]}}]}},
              {{"name":"y","kind":"ExternalOutput","dtype":"float32","tensor_shape":[4096],"memorylocations":[{{"name":"y","type":"DRAM","dims":[1,16384]}}]}}],
              "blocks":[{inst}]}}]}}"#
        );
        let prog = crate::json::load_str(&text).unwrap_or_else(|e| panic!("{e}"));
        match validate(&prog, &ValidateOptions::default()) {
            Ok(_) => Vec::new(),
            Err(d) => d.iter().map(|d| (d.kind, d.field.clone(), d.message.clone())).collect(),
        }
    }

    fn ap(mem: &str, pairs: &[(i64, i64)]) -> String {
        let p: Vec<String> = pairs.iter().map(|(s, n)| format!("[{s},{n}]")).collect();
        format!(r#"{{"kind":"physical_ap","memref":"{mem}","dtype":"float32","ap":[{}]}}"#, p.join(","))
    }

    fn dma(src: &str, dst: &str, fields: &str) -> String {
        format!(r#"{{"opcode":"DMACopy","name":"d","engine":"DMA","ins":[{src}],"outs":[{dst}],{fields}}}"#)
    }

    #[test]
    fn transpose_shapes() {
        // Code 12 XYZW on [2,3,4,5] needs a [5,4,3,2] destination.
        let src = ap("x", &[(60, 2), (20, 3), (5, 4), (1, 5)]);
        let ok = ap("y", &[(24, 5), (6, 4), (2, 3), (1, 2)]);
        assert_eq!(check(&dma(&src, &ok, r#""mode":"Transpose","transpose_op":"XYZW""#)), []);
        // [2,3,4,5] under code 11 XZYW (3,1,2,0) would be [5,3,4,2]: a mismatch.
        let e = check(&dma(&src, &ok, r#""mode":"Transpose","transpose_op":"XZYW""#));
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!((e[0].0, e[0].1.as_str()), (ErrorKind::ApShape, "outs[0].ap"));
        assert!(e[0].2.contains("[5, 3, 4, 2]"), "{}", e[0].2);
        // A 2-level AP: wrong rank; code None (identity) allows any rank.
        let flat = ap("y", &[(5, 24), (1, 5)]);
        let e = check(&dma(&src, &flat, r#""mode":"Transpose","transpose_op":"XYZW""#));
        assert_eq!((e[0].0, e[0].1.as_str()), (ErrorKind::ApRank, "outs[0].ap"));
        assert_eq!(
            check(&dma(&ap("x", &[(5, 24), (1, 5)]), &flat, r#""mode":"Transpose","transpose_op":"None""#)),
            []
        );
    }

    /// K3: a transpose that casts into or out of x4 counts the source in the destination's
    /// dtype. fp32 [1,1,2,8] packs to [1,1,2,2] (X/4), which WZXY (perm 0,1,3,2) keeps as
    /// [1,1,2,2]; fp8_x4 [1,1,2,2] unpacks to [1,1,2,8], which WZXY makes [1,1,8,2]. An X of 6
    /// does not pack: no static error, the executor faults `dims` naming outs[0].
    #[test]
    fn transpose_shapes_count_the_source_in_the_destination_dtype() {
        let x4 = |s: String| s.replace("float32", "float8_e4m3fn_x4");
        let wzxy = r#""mode":"Transpose","transpose_op":"WZXY""#;
        let src = ap("x", &[(16, 1), (16, 1), (8, 2), (1, 8)]);
        let packed = x4(ap("y", &[(4, 1), (4, 1), (2, 2), (1, 2)]));
        assert_eq!(check(&dma(&src, &packed, wzxy)), []);
        // The value count [1,1,8,2] is not the container count.
        let e = check(&dma(&src, &x4(ap("y", &[(16, 1), (16, 1), (2, 8), (1, 2)])), wzxy));
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!((e[0].0, e[0].1.as_str()), (ErrorKind::ApShape, "outs[0].ap"));
        assert!(e[0].2.contains("shaped [1, 1, 2, 2] gives [1, 1, 2, 2]"), "{}", e[0].2);
        let x4_src = x4(ap("x", &[(4, 1), (4, 1), (2, 2), (1, 2)]));
        assert_eq!(check(&dma(&x4_src, &ap("y", &[(16, 1), (16, 1), (2, 8), (1, 2)]), wzxy)), []);
        let six = ap("x", &[(12, 1), (12, 1), (6, 2), (1, 6)]);
        assert_eq!(check(&dma(&six, &x4(ap("y", &[(4, 1), (4, 1), (2, 2), (1, 1)])), wzxy)), []);
    }

    #[test]
    fn transpose_code_out_of_range_is_refused_by_the_reader() {
        let src = ap("x", &[(60, 2), (20, 3), (5, 4), (1, 5)]);
        let text = format!(
            r#"{{"functions":[{{"name":"f","allocations":[{{"name":"x","kind":"ExternalInput","dtype":"float32","tensor_shape":[4096],"memorylocations":[{{"name":"x","type":"DRAM","dims":[1,16384]}}]}}],"blocks":[{}]}}]}}"#,
            dma(&src, &src, r#""mode":"Transpose","transpose_op":14"#)
        );
        assert!(crate::json::load_str(&text).is_err());
    }

    #[test]
    fn replicate_shapes() {
        let src = ap("x", &[(4, 2), (1, 4)]);
        assert_eq!(check(&dma(&src, &ap("y", &[(4, 6), (1, 4)]), r#""mode":"Replicate""#)), []);
        // 5 partitions is not a multiple of 2.
        let e = check(&dma(&src, &ap("y", &[(4, 5), (1, 4)]), r#""mode":"Replicate""#));
        assert_eq!((e[0].0, e[0].1.as_str()), (ErrorKind::ApShape, "outs[0].ap"));
        // Free sizes differ.
        let e = check(&dma(&src, &ap("y", &[(4, 4), (1, 3)]), r#""mode":"Replicate""#));
        assert_eq!(e[0].0, ErrorKind::ApShape);
        // A 3-level source.
        let e = check(&dma(
            &ap("x", &[(4, 2), (2, 2), (1, 2)]),
            &ap("y", &[(4, 4), (1, 4)]),
            r#""mode":"Replicate""#,
        ));
        assert_eq!((e[0].0, e[0].1.as_str()), (ErrorKind::ApRank, "ins[0].ap"));
    }

    #[test]
    fn cce_inputs_match_the_output() {
        let inst = format!(
            r#"{{"opcode":"DMACopy","name":"d","engine":"DMA","ins":[{},{}],"outs":[{}],"mode":"CCE","cce_op":"add"}}"#,
            ap("x", &[(4, 2), (1, 4)]),
            ap("x", &[(4, 2), (1, 3)]),
            ap("y", &[(4, 2), (1, 4)])
        );
        let e = check(&inst);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!((e[0].0, e[0].1.as_str()), (ErrorKind::ApShape, "ins[1].ap"));
        assert!(e[0].2.contains("(8), found 6"), "{}", e[0].2);
    }

    #[test]
    fn shuffle_mask() {
        let mut mask = [255u32; 32];
        mask[3] = 32;
        let m: Vec<String> = mask.iter().map(u32::to_string).collect();
        let inst = format!(
            r#"{{"opcode":"StreamShuffle","name":"s","engine":"DVE","ins":[{}],"outs":[{}],"mask":[{}]}}"#,
            ap("x", &[(4, 2), (1, 4)]),
            ap("y", &[(4, 2), (1, 4)]),
            m.join(",")
        );
        let e = check(&inst);
        assert_eq!((e[0].0, e[0].1.as_str()), (ErrorKind::BadField, "mask[3]"));
    }

    #[test]
    fn iota_pattern_covers_the_free_size() {
        let iota = |pattern: &str| {
            check(&format!(
                r#"{{"opcode":"Iota","name":"i","engine":"Pool","ins":[],"outs":[{}],"base":0,"pattern":{pattern},"channel_multiplier":0}}"#,
                ap("y", &[(6, 2), (1, 6)])
            ))
        };
        assert_eq!(iota("[[1,2],[1,3]]"), []);
        let e = iota("[[1,4]]");
        assert_eq!((e[0].0, e[0].1.as_str()), (ErrorKind::BadField, "pattern"));
        assert!(e[0].2.contains("multiply to 4, but outs[0] has 6"), "{}", e[0].2);
        let e = iota("[[1,1],[1,1],[1,1],[1,2],[1,3]]");
        assert_eq!(e[0].0, ErrorKind::BadField);
    }

    #[test]
    fn select_operands_match_the_output() {
        let inst = format!(
            r#"{{"opcode":"Select","name":"s","engine":"DVE","ins":[{},{},{{"kind":"imm_value","dtype":"float32","value":0.0}}],"outs":[{}]}}"#,
            ap("x", &[(4, 2), (1, 4)]),
            ap("x", &[(4, 2), (1, 2)]),
            ap("y", &[(4, 2), (1, 4)])
        );
        let e = check(&inst);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!((e[0].0, e[0].1.as_str()), (ErrorKind::ApShape, "ins[1].ap"));
    }

    /// Nested loops of 2^32 trips each (2^64 instructions) are a located validation error, not a
    /// run that never ends.
    #[test]
    fn unbounded_work_is_refused_by_the_instruction_budget() {
        let nop = r#"{"opcode":"NoOp","name":"n","ins":[],"outs":[]}"#;
        let inner = format!(
            r#"{{"opcode":"Loop","name":"l2","LoopAxis":{{"name":"j","lb":0,"ub":4294967296,"stride":1}},"blocks":[{{"name":"b2","instructions":[{nop}]}}]}}"#
        );
        let outer = format!(
            r#"{{"opcode":"Loop","name":"l1","LoopAxis":{{"name":"i","lb":0,"ub":4294967296,"stride":1}},"blocks":[{{"name":"b1","instructions":[{inner}]}}]}}"#
        );
        let text = format!(
            r#"{{"functions":[{{"name":"f","allocations":[],"blocks":[{{"name":"b","instructions":[{outer}]}}]}}]}}"#
        );
        let p = crate::json::load_str(&text).expect("loads");
        let d = validate(&p, &ValidateOptions::default()).err().map(|d| d.to_string()).unwrap_or_default();
        assert!(d.contains("more than 2^64 instructions") || d.contains("18446744073709551616"), "{d}");
        assert!(d.contains("budget of 1000000000"), "{d}");
        assert_eq!(executed(&p.functions[0].body), u64::MAX);
    }
}
