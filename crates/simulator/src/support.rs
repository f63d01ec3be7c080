//! The support matrix: which opcode, mode/flag and dtype combinations birsim runs, which it does
//! not implement yet, and which the reference rejects — from the one function the executor
//! itself asks before it runs an instruction (issue #15 item 3; docs/fidelity.md C1–C6).
//!
//! [`classify`] looks at an instruction only through [`Fact`]s: finite-valued questions such as
//! "is `apply_transpose` set" or "does an operand carry a dynamic offset". It is the classifier
//! of the opcode's row in the kernel table (`exec/table.rs`; each kernel file holds its own).
//! The executor calls it once per instruction (exec/mod.rs) and once per fired DMA descriptor
//! (`exec/kernels/dge.rs`), with [`InstFacts`] answering from the instruction, and stops with a
//! `not-implemented` fault when the verdict says so; no kernel decides "not implemented" by
//! itself (a kernel's own defensive check reports a birsim bug instead, see
//! `exec::kit::unclassified`). So the executor cannot run what the classifier refuses, nor
//! refuse what it accepts.
//!
//! [`matrix`] enumerates the classifier: for each opcode it runs `classify` on partial answers,
//! branching on every value of each fact the classifier asks for, until each path ends in a
//! verdict. Each path is one matrix entry: only the facts that decided it, every other one
//! "any". [`check`] classifies each instruction of a program the same way (recording which
//! facts were asked), adds what `bir_ir::validate` rejects, and groups the instructions by
//! combination.
//!
//! `rejected` entries are of two kinds: forms `bir_ir::validate` refuses (the classifier names
//! them so the matrix is complete; validation stays the enforcer) and forms a kernel faults on
//! with a typed fault (unsupported-op, numerics). The executor lets those through to the kernel,
//! which raises the typed fault with its values.

pub use crate::exec::kit::facts::{Fact, Facts, InstFacts, Status, Verdict};
use bir_ir::{BirEnum, Diagnostics, Function, Instruction, Node, Op, Opcode, Operand, Program};
use serde_json::{Value, json};
use std::cell::{Cell, RefCell};
use std::fmt;

/// A partial assignment of facts for the matrix's enumeration: answers what it holds and
/// remembers the first fact it could not answer (answering 0 meanwhile).
/// The verdict for an instruction of opcode `op` whose facts `q` answers: its kernel table row's
/// classifier (`exec/table.rs`). The executor stops with its `not-implemented` fault before
/// running the kernel; see the module doc.
pub fn classify(op: Opcode, q: &impl Facts) -> Verdict {
    crate::exec::table::classify(op, q)
}

struct Explore<'a> {
    set: &'a [(Fact, u8)],
    missing: Cell<Option<Fact>>,
}

impl Facts for Explore<'_> {
    fn get(&self, fact: Fact) -> u8 {
        if let Some((_, v)) = self.set.iter().find(|(f, _)| *f == fact) {
            return *v;
        }
        if self.missing.get().is_none() {
            self.missing.set(Some(fact));
        }
        0
    }
}

/// Answers through `inner`, recording each fact asked (once, in asking order).
struct Recorded<'a, F> {
    inner: &'a F,
    seen: RefCell<Vec<(Fact, u8)>>,
}

impl<F: Facts> Facts for Recorded<'_, F> {
    fn get(&self, fact: Fact) -> u8 {
        let v = self.inner.get(fact);
        let mut seen = self.seen.borrow_mut();
        if !seen.iter().any(|(f, _)| *f == fact) {
            seen.push((fact, v));
        }
        v
    }
}

/// One combination of the matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixEntry {
    /// The opcode.
    pub opcode: Opcode,
    /// The mode and flag facts that decide the verdict, with their values (in asking order).
    pub mode: Vec<(Fact, u8)>,
    /// The dtype facts that decide it.
    pub dtypes: Vec<(Fact, u8)>,
    /// The verdict.
    pub status: Status,
    /// Why.
    pub reason: &'static str,
}

/// Every combination the executor distinguishes, per opcode in ordinal order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SupportMatrix {
    /// The entries.
    pub entries: Vec<MatrixEntry>,
}

/// Facts with their values, in asking order.
pub type FactValues = Vec<(Fact, u8)>;

/// The facts of `facts` split into (mode, dtypes).
fn split(facts: &[(Fact, u8)]) -> (FactValues, FactValues) {
    facts.iter().copied().partition(|(f, _)| !f.is_dtype())
}

/// The matrix: [`classify`] enumerated over every opcode and every value of each fact it asks.
pub fn matrix() -> SupportMatrix {
    let mut entries = Vec::new();
    for &op in Opcode::ALL {
        let mut stack: Vec<Vec<(Fact, u8)>> = vec![Vec::new()];
        while let Some(set) = stack.pop() {
            let q = Explore { set: &set, missing: Cell::new(None) };
            let verdict = classify(op, &q);
            match q.missing.get() {
                Some(fact) => {
                    // Reversed, so the stack pops values in order.
                    for v in (0..fact.arity()).rev() {
                        let mut next = set.clone();
                        next.push((fact, v));
                        stack.push(next);
                    }
                }
                None => {
                    let (mode, dtypes) = split(&set);
                    entries.push(MatrixEntry {
                        opcode: op,
                        mode,
                        dtypes,
                        status: verdict.status,
                        reason: verdict.reason,
                    });
                }
            }
        }
    }
    SupportMatrix { entries }
}

fn facts_text(facts: &[(Fact, u8)]) -> String {
    if facts.is_empty() {
        return "any".to_owned();
    }
    facts.iter().map(|(f, v)| format!("{}={}", f.name(), f.value(*v))).collect::<Vec<_>>().join(", ")
}

fn facts_json(facts: &[(Fact, u8)]) -> Value {
    Value::Object(facts.iter().map(|(f, v)| (f.name().to_owned(), Value::from(f.value(*v)))).collect())
}

impl SupportMatrix {
    /// How many entries have each status: (runs, not implemented, rejected).
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |s| self.entries.iter().filter(|e| e.status == s).count();
        (n(Status::Runs), n(Status::NotImplemented), n(Status::Rejected))
    }

    /// `{"entries": [{opcode, mode, dtypes, status, reason}], "counts": {...}}`; `mode` and
    /// `dtypes` map each deciding fact to its value (empty: any).
    pub fn to_json(&self) -> Value {
        let (r, n, j) = self.counts();
        json!({
            "counts": {"runs": r, "not_implemented": n, "rejected": j},
            "entries": self.entries.iter().map(|e| json!({
                "opcode": e.opcode.name(),
                "mode": facts_json(&e.mode),
                "dtypes": facts_json(&e.dtypes),
                "status": e.status.name(),
                "reason": e.reason,
            })).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for SupportMatrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (r, n, j) = self.counts();
        writeln!(f, "{} combinations: {r} run, {n} not implemented, {j} rejected", self.entries.len())?;
        for e in &self.entries {
            write!(
                f,
                "{:<15} {:<24} mode: {}; dtypes: {}",
                e.status.name(),
                e.opcode.name(),
                facts_text(&e.mode),
                facts_text(&e.dtypes)
            )?;
            if e.reason.is_empty() {
                writeln!(f)?;
            } else {
                writeln!(f, " ({})", e.reason)?;
            }
        }
        Ok(())
    }
}

/// How many instruction names a [`CheckEntry`] keeps.
pub const NAMES_KEPT: usize = 5;

/// One combination a program uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckEntry {
    /// The opcode.
    pub opcode: Opcode,
    /// The mode and flag facts the classifier asked, with the program's values.
    pub mode: Vec<(Fact, u8)>,
    /// The operand dtypes, `ins` then `outs` (`ins=[float32, bfloat16] outs=[float32]`).
    pub dtypes: String,
    /// The dtype facts the classifier asked, with the program's values.
    pub dtype_facts: Vec<(Fact, u8)>,
    /// The verdict.
    pub status: Status,
    /// Why (a validation diagnostic for `rejected` by validation).
    pub reason: String,
    /// The first [`NAMES_KEPT`] instruction names using it.
    pub instructions: Vec<String>,
    /// How many instructions use it.
    pub count: usize,
}

/// What [`check`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckReport {
    /// The overall verdict: `rejected` if anything is, else `not_implemented` if anything is,
    /// else `runs`.
    pub verdict: Status,
    /// The combinations, by first use.
    pub entries: Vec<CheckEntry>,
    /// Validation diagnostics that concern no instruction (memory placement, structure).
    pub problems: Vec<String>,
    /// Activations whose immediate operands already put every argument outside the function's
    /// documented valid range (docs/fidelity.md E6): a warning, not a verdict.
    pub ranges: Vec<RangeNote>,
}

/// An instruction whose immediates fix its function's argument outside the valid range.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeNote {
    /// The instruction.
    pub instruction: String,
    /// The function.
    pub func: &'static str,
    /// The documented range.
    pub range: &'static str,
    /// The argument every finite input gives.
    pub argument: f32,
}

/// The argument an Activation's immediates force on every finite input, when they force one
/// outside its function's valid range: a plain Activation whose scale is an immediate (or,
/// with no scale operand, the key) equal to 0 and whose bias is absent or an immediate gives
/// `fp32(±0 + bias)` = the bias for every finite x (E1, E2).
fn forced_out_of_range(i: &Instruction) -> Option<RangeNote> {
    let Op::Activation(a) = &i.op else { return None };
    let bir_ir::ActivationFunc::Known(func) = a.func else { return None };
    let range = numerics::activation::valid_range(func)?;
    if a.is_activate2 {
        return None;
    }
    let imm = |k: usize, default: f32| match i.ins.get(k) {
        None => Some(default),
        Some(Operand::Imm { value, .. }) => Some(value.as_f64() as f32),
        Some(_) => None,
    };
    if imm(1, a.scale.get())? != 0.0 {
        return None;
    }
    let argument = 0.0 + imm(2, 0.0)?;
    (!range.contains(argument)).then(|| RangeNote {
        instruction: i.name.clone(),
        func: func.name(),
        range: range.text,
        argument,
    })
}

/// The name of the instruction a diagnostic's context ends in (`… instruction #3 'NAME' (Op)`).
fn diagnostic_instruction(context: &str) -> Option<&str> {
    let at = context.rfind("instruction #")?;
    let rest = &context[at..];
    let open = rest.find('\'')?;
    let close = rest.rfind("' (")?;
    rest.get(open + 1..close)
}

fn dtypes_text(i: &Instruction) -> String {
    let d = |o: &Operand| match o {
        Operand::Ap(a) => a.dtype.name().to_owned(),
        Operand::Imm { dtype, .. } => format!("imm {}", dtype.name()),
        Operand::ImmArray { dtype, .. } => format!("imm array {}", dtype.name()),
        Operand::Register { dtype, .. } => format!("register {}", dtype.name()),
        Operand::Other(_) => o.kind_name().to_owned(),
    };
    let list = |l: &[Operand]| l.iter().map(d).collect::<Vec<_>>().join(", ");
    format!("ins=[{}] outs=[{}]", list(&i.ins), list(&i.outs))
}

/// Every (opcode, mode, dtype) combination `program` uses, with its status and the instructions
/// using it; validation diagnostics make their instruction `rejected`.
pub fn check(program: &Program) -> CheckReport {
    check_with(program, &bir_ir::ValidateOptions::default())
}

/// [`check`] with validation limits of the caller's (the CLI's `--memory-cap`,
/// `--max-instructions`).
pub fn check_with(program: &Program, limits: &bir_ir::ValidateOptions) -> CheckReport {
    let mut rejected: Vec<(String, String)> = Vec::new();
    let mut problems = Vec::new();
    if let Err(Diagnostics(diags)) = bir_ir::validate(program, limits) {
        for d in diags {
            let text = if d.field.is_empty() {
                format!("bir-ir validation [{}]: {}", d.kind.name(), d.message)
            } else {
                format!("bir-ir validation [{}]: {}: {}", d.kind.name(), d.field, d.message)
            };
            match diagnostic_instruction(&d.context) {
                Some(name) => rejected.push((name.to_owned(), text)),
                None => problems.push(format!("{}: {text}", d.location())),
            }
        }
    }
    let mut entries: Vec<CheckEntry> = Vec::new();
    let mut ranges = Vec::new();
    let mut add = |i: &Instruction, f: &Function, in_block: bool| {
        ranges.extend(forced_out_of_range(i));
        let q = Recorded { inner: &InstFacts::new(i, f, in_block), seen: RefCell::new(Vec::new()) };
        let verdict = classify(i.opcode(), &q);
        let (mode, dtype_facts) = split(&q.seen.into_inner());
        let (status, reason) = match rejected.iter().find(|(n, _)| *n == i.name) {
            Some((_, why)) => (Status::Rejected, why.clone()),
            None => (verdict.status, verdict.reason.to_owned()),
        };
        let dtypes = dtypes_text(i);
        let same = |e: &&mut CheckEntry| {
            e.opcode == i.opcode()
                && e.mode == mode
                && e.dtypes == dtypes
                && e.dtype_facts == dtype_facts
                && e.status == status
                && e.reason == reason
        };
        match entries.iter_mut().find(same) {
            Some(e) => {
                e.count += 1;
                if e.instructions.len() < NAMES_KEPT {
                    e.instructions.push(i.name.clone());
                }
            }
            None => entries.push(CheckEntry {
                opcode: i.opcode(),
                mode,
                dtypes,
                dtype_facts,
                status,
                reason,
                instructions: vec![i.name.clone()],
                count: 1,
            }),
        }
    };
    fn walk(nodes: &[Node], f: &Function, add: &mut dyn FnMut(&Instruction, &Function, bool)) {
        for node in nodes {
            match node {
                Node::Block(b) => walk(&b.body, f, add),
                Node::Loop(l) => walk(&l.body, f, add),
                Node::Inst(i) => {
                    add(i, f, false);
                    if let Op::DMABlock(b) = &i.op {
                        for d in &b.descriptors {
                            add(d, f, true);
                        }
                    }
                }
            }
        }
    }
    for f in &program.functions {
        walk(&f.body, f, &mut add);
    }
    let verdict = if !problems.is_empty() || entries.iter().any(|e| e.status == Status::Rejected) {
        Status::Rejected
    } else if entries.iter().any(|e| e.status == Status::NotImplemented) {
        Status::NotImplemented
    } else {
        Status::Runs
    };
    CheckReport { verdict, entries, problems, ranges }
}

impl CheckReport {
    /// `{"verdict", "entries": [{opcode, mode, dtypes, status, reason, instructions, count}],
    /// "problems"}`.
    pub fn to_json(&self) -> Value {
        json!({
            "verdict": self.verdict.name(),
            "entries": self.entries.iter().map(|e| json!({
                "opcode": e.opcode.name(),
                "mode": facts_json(&e.mode),
                "dtypes": e.dtypes,
                "dtype_facts": facts_json(&e.dtype_facts),
                "status": e.status.name(),
                "reason": e.reason,
                "instructions": e.instructions,
                "count": e.count,
            })).collect::<Vec<_>>(),
            "problems": self.problems,
            "ranges": self.ranges.iter().map(|r| json!({
                "instruction": r.instruction,
                "func": r.func,
                "range": r.range,
                "argument": r.argument,
            })).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.entries {
            write!(
                f,
                "{:<15} {} {}; mode: {}",
                e.status.name(),
                e.opcode.name(),
                e.dtypes,
                facts_text(&e.mode)
            )?;
            if e.dtype_facts.is_empty() {
                writeln!(f)?;
            } else {
                writeln!(f, "; dtypes: {}", facts_text(&e.dtype_facts))?;
            }
            if !e.reason.is_empty() {
                writeln!(f, "    {}", e.reason)?;
            }
            let more = e.count - e.instructions.len();
            let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
            writeln!(f, "    {} instruction(s): {}{tail}", e.count, e.instructions.join(", "))?;
        }
        for p in &self.problems {
            writeln!(f, "rejected        {p}")?;
        }
        for r in &self.ranges {
            writeln!(
                f,
                "range warning   {}: {}'s argument is {:?} for every finite input (its immediates fix it), outside the valid range {}",
                r.instruction, r.func, r.argument, r.range
            )?;
        }
        let n = |s| self.entries.iter().filter(|e| e.status == s).count();
        writeln!(
            f,
            "verdict: {} ({} combination(s): {} run, {} not implemented, {} rejected)",
            self.verdict.name(),
            self.entries.len(),
            n(Status::Runs),
            n(Status::NotImplemented),
            n(Status::Rejected)
        )
    }
}
