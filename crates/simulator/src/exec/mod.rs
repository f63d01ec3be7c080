//! The instruction visitor (re-facts §5): runs a validated program in order, one table dispatch
//! per instruction. This module is the instruction loop only — the budget, the one support
//! decision, the dispatch through the kernel table (`table.rs`), liveness; blocks, branches and
//! loops are `flow.rs`; the kernels live in `kernels/` on the floor of `kit/`, the trace, watch,
//! statistics and progress in `observe.rs`.

mod flow;
pub(crate) mod kit;
mod observe;
pub(crate) mod table;

use crate::fault::{Fault, FaultCause, SimError};
use crate::memory::Memory;
use bir_ir::{Function, Instruction, LocId, Op, OpCategory, Validated};
use flow::Place;
use kit::facts::InstFacts;
use kit::liveness::{self, Liveness};
use kit::regfile::Flow;
use kit::{Cx, Res, Stop, Written, bug, fault};
use numerics::Profile;

pub use kit::{Check, Finding, RegisterWrite, UninitRegisters};
pub use kit::{OptionError, OptionSpec, OptionValues, OptionWord, Options, OutOfRange, Parallelism, fnv1a};
use observe::Control;
pub use observe::{
    BranchTrace, CheckWarning, MatmulTrace, RangeWarning, Stats, TraceEntry, TraceRegion, Writer,
};

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every instruction ran.
    Finished,
    /// The program faulted; memory holds what was written before the fault.
    Faulted(Fault),
}

/// Runs programs. Create one per program run.
pub struct Simulator<'p> {
    /// The execution context the kernels run in (memory, profile, options, engine state).
    cx: Cx<'p>,
    /// Trace, watch, statistics, progress.
    obs: observe::Observers<'p>,
    /// Instructions executed so far (loop iterations counted).
    executed: u64,
    /// Where the running instruction sits (blocks and loops), for fault locations: names only,
    /// formatted when a fault needs them (formatting each loop trip cost a NoOp most of its time).
    context: Vec<Place<'p>>,
    /// Loop nesting of the running instruction.
    depth: usize,
    /// Control-flow state: the next-block slot, loop variables, progress (`flow.rs`).
    flow: flow::State<'p>,
}

impl<'p> Simulator<'p> {
    /// A simulator for a validated program under a fidelity profile.
    pub fn new(program: Validated<'p>, profile: Profile) -> Simulator<'p> {
        let functions = &program.program().functions;
        let f = &functions[0];
        Simulator {
            cx: Cx::new(f, program.program().arch, Memory::new(&program), profile),
            obs: observe::Observers::default(),
            executed: 0,
            context: Vec::new(),
            depth: 0,
            flow: flow::State::new(functions),
        }
    }

    /// The memory store: load inputs before [`Simulator::run`], read outputs after.
    pub fn memory(&self) -> &Memory {
        &self.cx.memory
    }

    /// The memory store, to load inputs.
    pub fn memory_mut(&mut self) -> &mut Memory {
        &mut self.cx.memory
    }

    /// Frees every location after its last use, except those in `keep` (the outputs the caller
    /// will read), and lets a whole-location copy out of a dying location move its buffer. Only
    /// `keep` can be read meaningfully after the run. Programs with DMA descriptor blocks keep
    /// everything.
    pub fn free_dead_locations(&mut self, keep: &[LocId]) {
        let elsewhere = |op| table::writes(op) == table::Writes::Elsewhere;
        self.cx.liveness = Liveness::new(self.cx.f, keep, elsewhere);
    }

    /// Frees the locations whose last use is `unit`.
    fn retire(&mut self, unit: liveness::UnitKey) {
        if let Some(l) = &self.cx.liveness {
            for loc in l.dying(unit) {
                self.cx.memory.free(*loc);
            }
        }
    }

    /// Sets the semantic switches.
    pub fn set_options(&mut self, options: Options) {
        self.cx.options = options;
    }

    /// Records a [`TraceEntry`] per executed instruction from now on.
    pub fn enable_trace(&mut self) {
        self.obs.trace = Some(Vec::new());
    }

    /// Hands each executed instruction's [`TraceEntry`] to `sink` as it completes, keeping
    /// nothing in memory (the CLI streams `--trace` to its file this way).
    pub fn enable_trace_sink(&mut self, sink: impl FnMut(&TraceEntry) + 'p) {
        self.obs.trace = None;
        self.obs.sink = Some(Box::new(sink));
    }

    /// Traced regions keep their bytes ([`TraceRegion::data`]) from now on.
    pub fn enable_trace_data(&mut self) {
        self.obs.trace_data = true;
    }

    /// Records, for each `(location, buffer byte range)`, the last instruction that wrote
    /// there ([`Simulator::writers`]): one whose static output AP covers one of the bytes, or
    /// after which the bytes changed (a data-dependent write such as a scatter or a DMA
    /// trigger; docs/fidelity.md V3). Ranges come from [`Memory::tensor_range`]. Costs one
    /// branch per instruction when not called.
    pub fn watch(&mut self, targets: Vec<(LocId, std::ops::Range<usize>)>) {
        self.obs.set_watch(targets);
    }

    /// The last writer of each watched range, in [`Simulator::watch`] order (`None`: nothing
    /// wrote it; it holds what was loaded or the uninitialised marker).
    pub fn writers(&self) -> &[Option<Writer>] {
        self.obs.writers()
    }

    /// Collects [`Stats`] from now on.
    pub fn enable_stats(&mut self) {
        self.obs.stats = Some(Stats::default());
    }

    /// Calls `f(executed, total)` as the run goes, at most about every 50 ms (see
    /// [`Simulator::set_progress_interval`]), and once more when it ends (finished or faulted)
    /// with the final count; `total` is the number of instructions the run executes, loop
    /// iterations counted, so a finished run's last call has `executed == total`. The counts
    /// increase from call to call. For progress bars; costs one comparison per instruction
    /// when not set.
    pub fn set_progress(&mut self, f: impl FnMut(u64, u64) + 'p) {
        self.obs.set_progress(Box::new(f), bir_ir::executed(&self.cx.f.body), self.executed);
    }

    /// The least time between two calls of the [`Simulator::set_progress`] callback (default
    /// 50 ms; zero calls back after every instruction). Does nothing without a callback.
    pub fn set_progress_interval(&mut self, interval: std::time::Duration) {
        if let Some(p) = self.obs.progress.as_mut() {
            p.interval = interval;
        }
    }

    /// The statistics collected so far.
    pub fn stats(&self) -> Option<&Stats> {
        self.obs.stats.as_ref()
    }

    /// The instructions whose Activation inputs left their function's documented valid range
    /// so far, in the order first seen (docs/fidelity.md E6).
    pub fn range_warnings(&self) -> &[RangeWarning] {
        &self.obs.ranges
    }

    /// The instructions the checkers reported so far (uninitialised reads, non-finite
    /// outputs; docs/fidelity.md B10, B11), in the order first seen.
    pub fn check_warnings(&self) -> &[CheckWarning] {
        &self.obs.findings
    }

    /// Every warning of the run so far, one line each, as `birsim run` prints them after the
    /// `birsim: warning: ` prefix and the Python package returns them: the Activation range
    /// warnings (E6), then the checkers' (B10, B11).
    pub fn warnings(&self) -> Vec<String> {
        let ranges = self.obs.ranges.iter().map(|w| {
            let n = &w.note;
            format!(
                "'{}' ({}): {} input(s) outside the hardware's valid range {} (e.g. {:?}); the hardware's result there is invalid",
                w.name, n.func, n.count, n.range, n.example
            )
        });
        let checks = self.obs.findings.iter().map(|w| match w.count {
            1 => format!("'{}': {}", w.name, w.first),
            n => format!("'{}' ({n} executions): first, {}", w.name, w.first),
        });
        ranges.chain(checks).collect()
    }

    /// The trace recorded so far.
    pub fn trace(&self) -> &[TraceEntry] {
        self.obs.trace.as_deref().unwrap_or_default()
    }

    /// The entry function.
    pub fn function(&self) -> &'p Function {
        self.cx.f
    }

    /// Instructions executed so far.
    pub fn executed(&self) -> u64 {
        self.executed
    }

    /// Runs the entry function to the end or to the first fault.
    pub fn run(&mut self) -> Result<Outcome, SimError> {
        self.obs.start(&mut self.cx);
        let body = &self.cx.f.body;
        let result = self.region(body);
        self.obs.progress_end(self.executed);
        match result {
            Ok(_) => Ok(Outcome::Finished),
            Err((at, name, opcode, Stop::Fault(cause))) => Ok(Outcome::Faulted(Fault {
                kind: cause.kind(),
                at,
                instruction: name.to_owned(),
                opcode,
                cause: *cause,
            })),
            Err((_, _, _, Stop::Bug(e))) => Err(*e),
        }
    }

    fn instruction(&mut self, i: &'p Instruction) -> Res<()> {
        if self.executed >= self.cx.options.max_instructions {
            return fault(FaultCause::InstructionBudget { limit: self.cx.options.max_instructions });
        }
        let op = i.opcode();
        // The one not-implemented decision (the table's classifiers): a kernel never makes it
        // itself.
        if let Some(cause) = table::classify(op, &InstFacts::new(i, self.cx.f, false)).fault(op) {
            return fault(cause);
        }
        self.cx.ensure_buffers(i)?;
        let tracing = self.obs.tracing();
        let mut regions = Written::new(tracing);
        if tracing {
            self.cx.engines.scalars.log = Some(Vec::new());
        }
        let timed = self.obs.timed().then(std::time::Instant::now);
        // Memory-held scalar dynamic offsets become static APs here, once, before the kernel
        // (kit::offsets; D1, D18): kernels see plain APs. The observers see the resolved APs,
        // except when the instruction tolerates an out-of-bounds access (they then go by the
        // bytes that changed).
        let resolved = match op.category() {
            OpCategory::Kernel => self.cx.resolve_offsets(i)?,
            _ => kit::offsets::Resolved { inst: None, tolerated: false },
        };
        let run_i = resolved.inst.as_ref().unwrap_or(i);
        let seen = if resolved.tolerated { i } else { run_i };
        // The reference's checkers (kit::uninit; B10, B11).
        let mut findings = Vec::new();
        if let Some(found) = self.cx.first_uninit_read(run_i) {
            if self.cx.options.uninit_reads == Check::Fault {
                return fault(found.fault());
            }
            findings.push(found);
        }
        match (op.category(), table::row(op).map(|r| &r.kernel)) {
            (OpCategory::Kernel, Some(table::Kernel::Runs { run, .. })) => {
                // Every buffer the kernel allocates counts against the memory cap, together
                // with what the pool keeps from earlier instructions (docs/robustness.md).
                let cap = self.cx.options.memory_cap;
                let _budget = crate::alloc::scratch_budget(cap.saturating_sub(self.cx.pool.held()), cap);
                self.cx.oob_tolerated = resolved.tolerated;
                let r = run(&mut self.cx, run_i, &mut regions);
                self.cx.oob_tolerated = false;
                r?
            }
            // Base records and no-ops: named and skipped, as the reference does.
            (OpCategory::Base | OpCategory::NoOp, _) => {}
            _ => return bug("support::classify let through an opcode with no kernel"),
        }
        let writes = table::writes(op);
        self.cx.mark_outputs(run_i, writes != table::Writes::Outputs)?;
        if writes == table::Writes::Outputs
            && let Some(found) = self.cx.first_non_finite(run_i)?
        {
            if self.cx.options.nan_outputs == Check::Fault {
                return fault(found.fault());
            }
            findings.push(found);
        }
        self.executed += 1;
        if !flow::is_control(op) {
            self.flow.progress += 1;
        }
        let elapsed_ns = timed.map_or(0, |t| u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
        let control = if tracing {
            let branch = match (self.cx.flow, &i.op) {
                (Some(Flow::Branch { taken }), Op::UnconditionalBranch(b)) => {
                    Some(BranchTrace { taken, target: Some(b.target.clone()) })
                }
                (Some(Flow::Branch { taken }), Op::CompareAndBranch(c)) => {
                    let target = if taken { &c.on_true } else { &c.on_false };
                    Some(BranchTrace { taken, target: target.clone() })
                }
                _ => None,
            };
            Control { registers: self.cx.engines.scalars.log.take().unwrap_or_default(), branch }
        } else {
            Control::default()
        };
        for found in findings {
            self.obs.note_finding(i, found)?;
        }
        self.obs.after(&mut self.cx, seen, self.executed - 1, elapsed_ns, &regions, control)
    }
}
