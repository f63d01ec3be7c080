//! The instruction visitor (re-facts §5): runs a validated program in order, one typed dispatch
//! per instruction. This module is plumbing only — the run loop, the dispatch, the trace and the
//! engine state; operand I/O lives in [`operand`], kernels in their own modules.

mod cache;
mod copy;
mod dge;
mod dma;
mod elementwise;
mod indirect;
mod iota;
mod liveness;
mod operand;
mod par;
mod random;
mod reduce;
mod select;
mod stream;

use crate::fault::{Fault, FaultCause, SimError};
use crate::memory::Memory;
use crate::support::InstFacts;
use bir_ir::{EngineType, Function, Instruction, LocId, MemsetMode, Node, Op, OpCategory, Validated};
use numerics::Profile;

pub(crate) use dge::without_level;
pub(crate) use elementwise::is_bitvec;
pub use operand::fnv1a;
pub(crate) use operand::{Arg, Written, distinct_pairs};
pub use par::Parallelism;

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every instruction ran.
    Finished,
    /// The program faulted; memory holds what was written before the fault.
    Faulted(Fault),
}

/// One executed instruction, for `--trace`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEntry {
    /// Execution index (0-based, loop iterations counted).
    pub index: u64,
    /// Instruction name.
    pub name: String,
    /// Opcode name.
    pub opcode: &'static str,
    /// Bytes written by the instruction.
    pub bytes_written: u64,
    /// FNV-1a 64 of each written region's bytes, in AP order.
    pub checksums: Vec<u64>,
    /// Wall-clock time the instruction took, in nanoseconds.
    pub elapsed_ns: u64,
    /// Each output operand's region as it stands after the instruction (docs/trace.md).
    pub regions: Vec<TraceRegion>,
}

/// One output operand of a traced instruction: where it lies and what it holds after the
/// instruction ran, read back through its AP in AP order (docs/trace.md, docs/fidelity.md V1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRegion {
    /// The operand's index in `outs`.
    pub slot: usize,
    /// Its memory location.
    pub loc: LocId,
    /// The memory location's name.
    pub location: String,
    /// The dtype the bytes hold (the location's allocation dtype: memory as stored).
    pub dtype: bir_ir::Dtype,
    /// The AP's element offset.
    pub offset: i64,
    /// The AP's `[step, num]` levels.
    pub pairs: Vec<[i64; 2]>,
    /// Partitions (the first level's num) × free elements per partition: element `k` in AP
    /// order is at `[k / free, k % free]`.
    pub partitions: u64,
    /// Free elements per partition.
    pub free: u64,
    /// The buffer bytes the AP spans (lowest to highest element), when known.
    pub extent: Option<[u64; 2]>,
    /// FNV-1a 64 of the region's bytes in AP order.
    pub checksum: u64,
    /// The bytes themselves, when the trace keeps data ([`Simulator::enable_trace_data`]).
    pub data: Option<Vec<u8>>,
}

/// The instruction that last wrote a watched element ([`Simulator::watch`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Writer {
    /// Execution index (0-based, loop iterations counted).
    pub index: u64,
    /// Instruction name.
    pub name: String,
    /// Opcode name.
    pub opcode: &'static str,
}

/// Byte ranges of one buffer whose last writer a run records (write provenance).
#[derive(Debug)]
struct Watch {
    /// (location, buffer byte range, the bytes there after the last instruction).
    targets: Vec<(LocId, std::ops::Range<usize>, Vec<u8>)>,
    writers: Vec<Option<Writer>>,
}

/// Time and bytes per opcode, and the slowest instructions, for `--stats`.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Per opcode name: (instructions executed, total nanoseconds, bytes written), by first use.
    pub per_opcode: Vec<(&'static str, u64, u64, u64)>,
    /// The slowest instructions: (nanoseconds, execution index, name, opcode), slowest first.
    pub slowest: Vec<(u64, u64, String, &'static str)>,
}

impl Stats {
    /// How many slow instructions are kept.
    pub const SLOWEST: usize = 10;

    fn record(&mut self, index: u64, i: &Instruction, ns: u64, bytes: u64) {
        let op = i.opcode().name();
        match self.per_opcode.iter_mut().find(|e| e.0 == op) {
            Some(e) => {
                e.1 += 1;
                e.2 += ns;
                e.3 += bytes;
            }
            None => self.per_opcode.push((op, 1, ns, bytes)),
        }
        if self.slowest.len() < Self::SLOWEST || self.slowest.last().is_some_and(|s| s.0 < ns) {
            let at = self.slowest.partition_point(|s| s.0 >= ns);
            self.slowest.insert(at, (ns, index, i.name.clone(), op));
            self.slowest.truncate(Self::SLOWEST);
        }
    }
}

/// Semantic switches the sources leave open, beside the numerics [`Profile`]
/// (docs/fidelity.md names each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// TensorScalarCache: a set `reverse0` or `reverse1` runs the scan from the last element to
    /// the first (seed 000 §4 prose, ASSUMED S14). When false the flags only swap operands (the
    /// seed's pseudocode).
    pub reverse_flags_reverse_scan: bool,
    /// Threads per kernel and the smallest chunk worth one; results are identical for every
    /// setting.
    pub parallelism: Parallelism,
    /// The most instructions a run executes (loop iterations counted) before it stops with a
    /// `budget` fault; validation refuses programs that statically exceed its own budget.
    pub max_instructions: u64,
    /// The most bytes one operand's buffers may take (default: validation's 4 GiB memory cap);
    /// an instruction that would need more stops with a `budget` fault before allocating.
    pub memory_cap: u64,
    /// What an indirect instruction does with an index that is not −1 but lands outside its
    /// table (docs/fidelity.md I2): fault (default) or skip it like −1.
    pub indirect_oob: indirection::Oob,
    /// What a DMABlock met in the instruction stream does (docs/fidelity.md G4): skip it (a
    /// definition; default) or run its descriptors once there. Fired blocks run either way.
    pub dma_block_in_stream: ::dge::swdge::BlockInStream,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            reverse_flags_reverse_scan: true,
            parallelism: Parallelism::default(),
            max_instructions: bir_ir::ValidateOptions::default().max_instructions,
            memory_cap: bir_ir::ValidateOptions::default().memory_cap_bytes,
            indirect_oob: indirection::Oob::Fault,
            dma_block_in_stream: ::dge::swdge::BlockInStream::Skip,
        }
    }
}

/// A kernel's early stop: a guest fault, or a bug. Boxed, so every kernel's `Result` error is
/// two words.
#[derive(Debug)]
pub(crate) enum Stop {
    Fault(Box<FaultCause>),
    Bug(Box<SimError>),
}

impl From<SimError> for Stop {
    #[cold]
    fn from(e: SimError) -> Self {
        Stop::Bug(Box::new(e))
    }
}

impl From<crate::alloc::OutOfMemory> for Stop {
    #[cold]
    fn from(e: crate::alloc::OutOfMemory) -> Self {
        FaultCause::OutOfMemory { bytes: e.bytes }.into()
    }
}

impl From<FaultCause> for Stop {
    #[cold]
    fn from(c: FaultCause) -> Self {
        Stop::Fault(Box::new(c))
    }
}

pub(crate) type Res<T> = Result<T, Stop>;

/// A guest fault as an `Err`.
#[cold]
pub(crate) fn fault<T>(cause: FaultCause) -> Res<T> {
    Err(Stop::Fault(Box::new(cause)))
}

/// A bug as an `Err`.
#[cold]
pub(crate) fn bug<T>(what: &'static str) -> Res<T> {
    Err(Stop::Bug(Box::new(SimError::new(what))))
}

/// A kernel's defensive check of a form [`crate::support::classify`] refuses: the executor
/// classifies every instruction before its kernel runs, so reaching this is a birsim bug (the
/// classifier and the kernel disagree), never a `not-implemented` fault.
#[cold]
pub(crate) fn unclassified<T>(feature: &'static str) -> Res<T> {
    Err(Stop::Bug(Box::new(SimError {
        what: "support::classify let through a form its kernel does not run",
        detail: Some(feature.to_owned()),
    })))
}

/// Engine-side state that outlives an instruction.
#[derive(Debug, Default)]
pub(crate) struct EngineState {
    /// TensorScalarCache's running per-partition cache, per engine (seed 000 §4; S15).
    pub(crate) caches: Vec<(EngineType, Vec<f32>)>,
    /// The random generators of Memset Random and SetRandState (seed 000 §5.4; D6, D7).
    pub(crate) random: random::RandomState,
    /// The SW-DGE trigger cursors, keyed by trigger name (seed 000 §5.2; G1, G5).
    pub(crate) cursors: ::dge::swdge::Cursors,
}

/// A consumer of streamed trace entries.
type TraceSink<'p> = Box<dyn FnMut(&TraceEntry) + 'p>;

/// The most instructions between two looks at the clock for [`Simulator::set_progress`]: small
/// enough that a run switching from tiny instructions to long ones is noticed after a few of
/// them, large enough that reading the clock costs nothing next to 256 instructions.
const PROGRESS_MAX_STRIDE: u64 = 256;

/// A progress callback ([`Simulator::set_progress`]) and its pacing: the clock is read only
/// every `stride` instructions, the stride adapting so that it is read several times per
/// `interval` however long instructions take.
struct Progress<'p> {
    f: Box<dyn FnMut(u64, u64) + 'p>,
    /// The instructions the run will execute (loop iterations counted).
    total: u64,
    /// The least time between two calls.
    interval: std::time::Duration,
    /// When `f` was last called (or the callback set).
    last: std::time::Instant,
    /// Instructions between two looks at the clock.
    stride: u64,
    /// The count `f` was last given.
    reported: Option<u64>,
}

/// Runs programs. Create one per program run.
pub struct Simulator<'p> {
    f: &'p Function,
    /// The memory store; load inputs before [`Simulator::run`], read outputs after.
    pub memory: Memory,
    profile: Profile,
    options: Options,
    trace: Option<Vec<TraceEntry>>,
    /// Where streamed trace entries go (`enable_trace_sink`), instead of `trace`.
    sink: Option<TraceSink<'p>>,
    executed: u64,
    context: Vec<String>,
    engines: EngineState,
    /// Reused buffers (no fresh pages per instruction or chunk).
    pool: operand::Pool,
    /// The indirect kernels' reused index and plan vectors.
    scratch: indirect::Scratch,
    /// Last uses, when dead locations are freed ([`Simulator::free_dead_locations`]).
    liveness: Option<liveness::Liveness>,
    /// DMABlock instructions by name, found on the first trigger fire.
    dma_blocks: Option<std::collections::HashMap<&'p str, &'p Instruction>>,
    /// Loop nesting of the running instruction.
    depth: usize,
    /// The running top-level instruction's unit (none inside a loop).
    unit: Option<liveness::UnitKey>,
    stats: Option<Stats>,
    /// Traced regions keep their bytes (`--trace-data`).
    trace_data: bool,
    /// Write provenance for a few byte ranges (`--expect`), off unless asked for.
    watch: Option<Box<Watch>>,
    /// The progress callback, if any.
    progress: Option<Progress<'p>>,
    /// The executed count at which the progress clock is next read (`u64::MAX`: no callback),
    /// so an unset callback costs one comparison per instruction.
    progress_at: u64,
}

impl<'p> Simulator<'p> {
    /// A simulator for a validated program under a fidelity profile.
    pub fn new(program: Validated<'p>, profile: Profile) -> Simulator<'p> {
        Simulator {
            f: &program.program().functions[0],
            memory: Memory::new(&program),
            profile,
            options: Options::default(),
            trace: None,
            sink: None,
            executed: 0,
            context: Vec::new(),
            engines: EngineState::default(),
            pool: operand::Pool::default(),
            scratch: indirect::Scratch::default(),
            liveness: None,
            dma_blocks: None,
            depth: 0,
            unit: None,
            stats: None,
            trace_data: false,
            watch: None,
            progress: None,
            progress_at: u64::MAX,
        }
    }

    /// Frees every location after its last use, except those in `keep` (the outputs the caller
    /// will read), and lets a whole-location copy out of a dying location move its buffer. Only
    /// `keep` can be read meaningfully after the run. Programs with DMA descriptor blocks keep
    /// everything.
    pub fn free_dead_locations(&mut self, keep: &[LocId]) {
        self.liveness = liveness::Liveness::new(self.f, keep);
    }

    /// Frees the locations whose last use is `unit`.
    fn retire(&mut self, unit: liveness::UnitKey) {
        if let Some(l) = &self.liveness {
            for loc in l.dying(unit) {
                self.memory.free(*loc);
            }
        }
    }

    /// True when `loc` is not used after the running top-level instruction.
    pub(crate) fn dies_here(&self, loc: LocId) -> bool {
        match (&self.liveness, self.unit) {
            (Some(l), Some(u)) => l.dying(u).contains(&loc),
            _ => false,
        }
    }

    /// Sets the semantic switches.
    pub fn set_options(&mut self, options: Options) {
        self.options = options;
    }

    /// Records a [`TraceEntry`] per executed instruction from now on.
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    /// Hands each executed instruction's [`TraceEntry`] to `sink` as it completes, keeping
    /// nothing in memory (the CLI streams `--trace` to its file this way).
    pub fn enable_trace_sink(&mut self, sink: impl FnMut(&TraceEntry) + 'p) {
        self.trace = None;
        self.sink = Some(Box::new(sink));
    }

    /// Traced regions keep their bytes ([`TraceRegion::data`]) from now on.
    pub fn enable_trace_data(&mut self) {
        self.trace_data = true;
    }

    /// Records, for each `(location, buffer byte range)`, the last instruction that wrote
    /// there ([`Simulator::writers`]): one whose static output AP covers one of the bytes, or
    /// after which the bytes changed (a data-dependent write such as a scatter or a DMA
    /// trigger; docs/fidelity.md V3). Ranges come from [`Memory::tensor_range`]. Costs one
    /// branch per instruction when not called.
    pub fn watch(&mut self, targets: Vec<(LocId, std::ops::Range<usize>)>) {
        let writers = vec![None; targets.len()];
        let targets = targets.into_iter().map(|(l, r)| (l, r, Vec::new())).collect();
        self.watch = Some(Box::new(Watch { targets, writers }));
    }

    /// The last writer of each watched range, in [`Simulator::watch`] order (`None`: nothing
    /// wrote it; it holds what was loaded or the uninitialised marker).
    pub fn writers(&self) -> &[Option<Writer>] {
        self.watch.as_ref().map_or(&[], |w| &w.writers)
    }

    /// Collects [`Stats`] from now on.
    pub fn enable_stats(&mut self) {
        self.stats = Some(Stats::default());
    }

    /// Calls `f(executed, total)` as the run goes, at most about every 50 ms (see
    /// [`Simulator::set_progress_interval`]), and once more when it ends (finished or faulted)
    /// with the final count; `total` is the number of instructions the run executes, loop
    /// iterations counted, so a finished run's last call has `executed == total`. The counts
    /// increase from call to call. For progress bars; costs one comparison per instruction
    /// when not set.
    pub fn set_progress(&mut self, f: impl FnMut(u64, u64) + 'p) {
        let interval = self.progress.as_ref().map_or(std::time::Duration::from_millis(50), |p| p.interval);
        self.progress = Some(Progress {
            f: Box::new(f),
            total: bir_ir::executed(&self.f.body),
            interval,
            last: std::time::Instant::now(),
            stride: 1,
            reported: None,
        });
        self.progress_at = self.executed.saturating_add(1);
    }

    /// The least time between two calls of the [`Simulator::set_progress`] callback (default
    /// 50 ms; zero calls back after every instruction). Does nothing without a callback.
    pub fn set_progress_interval(&mut self, interval: std::time::Duration) {
        if let Some(p) = self.progress.as_mut() {
            p.interval = interval;
        }
    }

    /// Reads the clock for the progress callback, calls it when `interval` has passed, and
    /// picks the next instruction count to look again.
    #[cold]
    fn progress_tick(&mut self) {
        let Some(p) = self.progress.as_mut() else {
            self.progress_at = u64::MAX;
            return;
        };
        let now = std::time::Instant::now();
        let since = now.duration_since(p.last);
        if since >= p.interval {
            (p.f)(self.executed, p.total);
            p.reported = Some(self.executed);
            p.last = now;
            // Late by more than an interval: look at the clock more often.
            if since > p.interval.saturating_mul(2) {
                p.stride = (p.stride / 2).max(1);
            }
        } else if since < p.interval / 8 {
            p.stride = p.stride.saturating_mul(2).min(PROGRESS_MAX_STRIDE);
        }
        self.progress_at = self.executed.saturating_add(p.stride);
    }

    /// The progress callback's last call, with the final count.
    fn progress_end(&mut self) {
        if let Some(p) = self.progress.as_mut()
            && p.reported != Some(self.executed)
        {
            (p.f)(self.executed, p.total);
            p.reported = Some(self.executed);
        }
    }

    /// The statistics collected so far.
    pub fn stats(&self) -> Option<&Stats> {
        self.stats.as_ref()
    }

    /// The trace recorded so far.
    pub fn trace(&self) -> &[TraceEntry] {
        self.trace.as_deref().unwrap_or_default()
    }

    /// The entry function.
    pub fn function(&self) -> &'p Function {
        self.f
    }

    /// Instructions executed so far.
    pub fn executed(&self) -> u64 {
        self.executed
    }

    /// Runs the entry function to the end or to the first fault.
    pub fn run(&mut self) -> Result<Outcome, SimError> {
        if let Some(mut w) = self.watch.take() {
            // What the watched bytes hold before the first instruction (the loaded inputs).
            for (loc, range, last) in &mut w.targets {
                last.clear();
                last.extend_from_slice(self.watched(*loc, range.clone()));
            }
            self.watch = Some(w);
        }
        let body = &self.f.body;
        let result = self.nodes(body);
        self.progress_end();
        match result {
            Ok(()) => Ok(Outcome::Finished),
            Err((at, i, Stop::Fault(cause))) => Ok(Outcome::Faulted(Fault {
                kind: cause.kind(),
                at,
                instruction: i.name.clone(),
                opcode: i.opcode(),
                cause: *cause,
            })),
            Err((_, _, Stop::Bug(e))) => Err(*e),
        }
    }

    fn nodes(&mut self, nodes: &'p [Node]) -> Result<(), (String, &'p Instruction, Stop)> {
        for (index, node) in nodes.iter().enumerate() {
            match node {
                Node::Block(b) => {
                    self.context.push(format!("block '{}'", b.name));
                    self.nodes(&b.body)?;
                    self.context.pop();
                }
                Node::Loop(l) => {
                    self.context.push(format!("loop #{index} '{}'", l.name));
                    self.depth += 1;
                    // Validation bounded the trip count.
                    for _ in 0..l.trip_count().unwrap_or(0) {
                        self.nodes(&l.body)?;
                    }
                    self.depth -= 1;
                    self.context.pop();
                    if self.depth == 0 {
                        self.retire(liveness::node_key(node));
                    }
                }
                Node::Inst(i) => {
                    let top = self.depth == 0;
                    self.unit = top.then(|| liveness::inst_key(i));
                    if let Err(stop) = self.instruction(i) {
                        let mut at = self.context.clone();
                        at.push(format!("instruction #{index} '{}' ({})", i.name, i.opcode()));
                        return Err((at.join(" › "), i, stop));
                    }
                    if self.executed >= self.progress_at {
                        self.progress_tick();
                    }
                    if top {
                        self.retire(liveness::inst_key(i));
                    }
                }
            }
        }
        Ok(())
    }

    fn instruction(&mut self, i: &'p Instruction) -> Res<()> {
        if self.executed >= self.options.max_instructions {
            return fault(FaultCause::InstructionBudget { limit: self.options.max_instructions });
        }
        // The one not-implemented decision (support.rs): a kernel never makes it itself.
        if let Some(cause) =
            crate::support::classify(i.opcode(), &InstFacts::new(i, self.f, false)).fault(i.opcode())
        {
            return fault(cause);
        }
        self.ensure_buffers(i)?;
        let tracing = self.trace.is_some() || self.sink.is_some();
        let mut regions = Written::new(tracing);
        let timed = (tracing || self.stats.is_some()).then(std::time::Instant::now);
        match &i.op {
            Op::GenericCopy(_) | Op::AbstractCopy(_) | Op::TensorCopy(_) | Op::Load(_) | Op::Save(_) => {
                self.copy(i, &mut regions)?
            }
            Op::Memset(m) if m.mode == MemsetMode::Random => self.memset_random(i, m, &mut regions)?,
            Op::Memset(m) => self.memset(i, m, &mut regions)?,
            Op::SetRandState(_) => self.set_rand_state(i)?,
            Op::DMACopy(f) => self.dma_copy(i, f, &mut regions)?,
            Op::StreamShuffle(f) => self.stream_shuffle(i, f, &mut regions)?,
            Op::StreamTranspose(_) => self.stream_transpose(i, &mut regions)?,
            Op::Iota(f) => self.iota(i, f, &mut regions)?,
            Op::TensorScalarAffineSelect(f) => self.affine_select(i, f, &mut regions)?,
            Op::Select(_) => self.select(i, &mut regions)?,
            Op::CopyPredicated(f) => self.copy_predicated(i, f, &mut regions)?,
            Op::TensorScalar(t) => self.tensor_scalar(i, t, &mut regions)?,
            Op::TensorScalarPtr(t) => self.tensor_scalar_ptr(i, t, &mut regions)?,
            Op::TensorTensor(t) => self.tensor_tensor(i, t, &mut regions)?,
            Op::TensorReduce(t) => self.tensor_reduce(i, t, &mut regions)?,
            Op::Pool(p) => self.pool(i, p, &mut regions)?,
            Op::TensorScalarCache(t) => self.tensor_scalar_cache(i, t, &mut regions)?,
            Op::IndirectLoad(f) => self.indirect_load(i, f, &mut regions)?,
            Op::IndirectSave(f) => self.indirect_save(i, f, &mut regions)?,
            Op::IndirectSaveAccumulate(f) => self.indirect_save_accumulate(i, f, &mut regions)?,
            Op::GenericIndirectLoad(f) | Op::GenericIndirectSave(f) => {
                self.generic_indirect(i, f, &mut regions)?
            }
            Op::IndirectCopy(f) => self.indirect_copy(i, f, &mut regions)?,
            Op::Gather(_) => self.gather(i, &mut regions)?,
            Op::DMATrigger(f) => self.dma_trigger(i, f, &mut regions)?,
            Op::DMABlock(f) => self.dma_block_in_stream(i, f, &mut regions)?,
            Op::SwitchQueueInstance(f) | Op::ResetQueueInstance(f) => self.queue_instance(i, f),
            op => match op.opcode().category() {
                // Base records and no-ops: named and skipped, as the reference does.
                OpCategory::Base | OpCategory::NoOp => {}
                _ => return bug("support::classify let through an opcode with no kernel"),
            },
        }
        self.executed += 1;
        let elapsed_ns = timed.map_or(0, |t| u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
        if let Some(stats) = self.stats.as_mut() {
            stats.record(self.executed - 1, i, elapsed_ns, regions.bytes());
        }
        if self.watch.is_some() {
            self.check_watch(i);
        }
        if tracing {
            let traced = self.trace_regions(i)?;
            let entry = TraceEntry {
                index: self.executed - 1,
                name: i.name.clone(),
                opcode: i.opcode().name(),
                bytes_written: regions.bytes(),
                checksums: regions.checksums(),
                elapsed_ns,
                regions: traced,
            };
            match (self.trace.as_mut(), self.sink.as_mut()) {
                (Some(trace), _) => crate::alloc::push(trace, entry)?,
                (None, Some(sink)) => sink(&entry),
                (None, None) => {}
            }
        }
        Ok(())
    }

    /// Creates (fallibly) the buffer of every location the instruction's operands name, its
    /// dynamic offsets' index vectors included, so no kernel allocates a location's bytes: a
    /// host out of memory is a `budget` fault here, before the instruction changes anything.
    pub(crate) fn ensure_buffers(&mut self, i: &Instruction) -> Res<()> {
        for ap in i.ins.iter().chain(&i.outs).filter_map(bir_ir::Operand::as_ap) {
            self.memory.ensure(ap.loc)?;
            if let Some(d) = &ap.dynamic
                && let bir_ir::OffsetSource::Vector(v) = &d.source
            {
                self.memory.ensure(v.loc)?;
            }
        }
        Ok(())
    }

    /// Each static output AP of `i` read back (memory dtype, AP order) for the trace. An
    /// operand with a dynamic offset, or one that cannot be read, is left out.
    fn trace_regions(&mut self, i: &'p Instruction) -> Res<Vec<TraceRegion>> {
        let mut out = Vec::new();
        for (slot, ap) in i.outs.iter().enumerate() {
            let Some(ap) = ap.as_ap() else { continue };
            if ap.dynamic.is_some() {
                continue;
            }
            let a = self.arg(crate::fault::Slot::Out(slot), ap);
            let Ok((partitions, free)) = a.shape() else { continue };
            let mut bytes = self.pool.take();
            if self.read_raw(a, &mut bytes).is_err() {
                self.pool.give(bytes);
                continue;
            }
            let checksum = fnv1a(operand::FNV_BASIS, &bytes);
            let data = if self.trace_data { Some(crate::alloc::copied(&bytes)?) } else { None };
            self.pool.give(bytes);
            let location = self.f.locations.get(ap.loc.index()).map_or_else(String::new, |l| l.name.clone());
            let region = TraceRegion {
                slot,
                loc: ap.loc,
                location,
                dtype: self.storage(ap),
                offset: ap.offset,
                pairs: ap.pairs.iter().map(|p| [p.step, p.num]).collect(),
                partitions: partitions as u64,
                free: free as u64,
                extent: self.extent(ap).map(|r| [r.start as u64, r.end as u64]),
                checksum,
                data,
            };
            crate::alloc::push(&mut out, region)?;
        }
        Ok(out)
    }

    /// Updates the watched ranges' last writers after `i` ran.
    fn check_watch(&mut self, i: &'p Instruction) {
        let Some(mut w) = self.watch.take() else { return };
        let index = self.executed - 1;
        // Instructions whose outputs get only the elements their data picks (scatters, skipped
        // gather rows, a predicate) are seen by the bytes changing, never by their AP alone.
        let whole_outs = !matches!(
            i.op,
            Op::IndirectLoad(_)
                | Op::IndirectSave(_)
                | Op::IndirectSaveAccumulate(_)
                | Op::GenericIndirectLoad(_)
                | Op::GenericIndirectSave(_)
                | Op::IndirectCopy(_)
                | Op::Gather(_)
                | Op::CopyPredicated(_)
                | Op::DMATrigger(_)
                | Op::DMABlock(_)
        );
        for (k, (loc, range, last)) in w.targets.iter_mut().enumerate() {
            let covered = whole_outs
                && i.outs.iter().filter_map(bir_ir::Operand::as_ap).any(|ap| {
                    ap.dynamic.is_none()
                        && self.memory.same_buffer(ap.loc, *loc)
                        && self.covers(ap, range.clone())
                });
            let now = self.watched(*loc, range.clone());
            let changed = now != last.as_slice();
            if changed {
                last.clear();
                last.extend_from_slice(now);
            }
            if covered || changed {
                w.writers[k] = Some(Writer { index, name: i.name.clone(), opcode: i.opcode().name() });
            }
        }
        self.watch = Some(w);
    }

    /// The bytes of a watched range (empty when it lies outside the buffer).
    fn watched(&mut self, loc: LocId, range: std::ops::Range<usize>) -> &[u8] {
        let touch = crate::memory::Touch { range: Some(range.clone()), covers: false };
        let (buf, _) = self.memory.buffer_for(loc, &touch);
        buf.get(range).unwrap_or_default()
    }

    /// True when an element of `ap` (in its memory dtype) shares a byte with `range`.
    fn covers(&self, ap: &bir_ir::AccessPattern, range: std::ops::Range<usize>) -> bool {
        match self.extent(ap) {
            Some(e) if e.start < range.end && range.start < e.end => {}
            _ => return false,
        }
        let mut p = access_pattern::Pattern::of(ap);
        let size = self.storage(ap).size();
        p.elem_size = size;
        let mut hit = false;
        let layout = self.memory.layout(ap.loc);
        let _ = access_pattern::for_each_element(&layout, &p, |_, b| {
            hit |= b < range.end && range.start < b + size;
        });
        hit
    }

    pub(crate) fn profile(&self) -> &Profile {
        &self.profile
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel returns `Res`: its error must stay two words, so the hot paths pass a
    /// pointer, never a whole fault.
    #[test]
    fn stop_is_two_words() {
        assert_eq!(size_of::<Stop>(), 2 * size_of::<usize>());
        assert_eq!(size_of::<Res<()>>(), 2 * size_of::<usize>());
    }
}
