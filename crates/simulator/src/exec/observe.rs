//! Observers of a run — the trace (kept or streamed), the `--expect` watch (write provenance),
//! `--stats` and the progress callback — kept apart from the instruction loop. Each costs one
//! branch per instruction when off; the loop calls [`Observers::after`] once an instruction
//! ran (docs/trace.md).

use super::kit::{Cx, Res, Written, fnv1a, operand};
use super::table::{self, Writes};
use bir_ir::{Instruction, LocId};

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
    /// A Matmult's accumulation group as it ran (issue #27 item 8), else `None`.
    pub matmul: Option<MatmulTrace>,
    /// An Activation's inputs outside its function's valid range (docs/fidelity.md E6), else 0.
    pub out_of_range: u64,
    /// The registers the instruction wrote, in order (docs/trace.md "registers").
    pub registers: Vec<super::RegisterWrite>,
    /// A branch instruction's decision (docs/trace.md "branch"), else `None`.
    pub branch: Option<BranchTrace>,
}

/// What a traced branch decided (CompareAndBranch, UnconditionalBranch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchTrace {
    /// CompareAndBranch's comparison held (always true for UnconditionalBranch).
    pub taken: bool,
    /// The block it set as the next one (`None`: the next block in order).
    pub target: Option<String>,
}

/// A traced instruction's register writes and branch decision.
#[derive(Debug, Default)]
pub(crate) struct Control {
    pub(crate) registers: Vec<super::RegisterWrite>,
    pub(crate) branch: Option<BranchTrace>,
}

/// One instruction whose Activation inputs left the function's documented valid range, over
/// the whole run (every execution of it summed; docs/fidelity.md E6).
#[derive(Clone, Debug, PartialEq)]
pub struct RangeWarning {
    /// The instruction's name.
    pub name: String,
    /// What it saw: the function, its range, the count and the first such input.
    pub note: super::kit::OutOfRange,
}

/// An instruction a checker reported (docs/fidelity.md B10, B11): the first finding and how many
/// executions of it had one.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckWarning {
    /// The instruction's name.
    pub name: String,
    /// Its first finding.
    pub first: super::Finding,
    /// Executions with a finding.
    pub count: u64,
}

/// What a traced Matmult did to its PSUM accumulation group (docs/trace.md "matmul").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatmulTrace {
    /// The flag bits either schema means (1 START, 2 STOP, 4 ACCUMULATE; fidelity M1).
    pub flags: u8,
    /// The 2 KiB banks a START clears.
    pub zero_banks: u32,
    /// The PSUM bank (0..8) holding the output's first element (its static AP).
    pub bank: u64,
}

impl MatmulTrace {
    /// The trace of instruction `i` of `f`, when it is a Matmult with an AP output.
    pub(crate) fn of(i: &Instruction, f: &bir_ir::Function) -> Option<MatmulTrace> {
        let bir_ir::Op::Matmult(m) = &i.op else { return None };
        let out = i.out_ap(0)?;
        let l = f.location(out.loc)?;
        let size = out.dtype.size().max(1) as i64;
        let pitch = (l.bytes_per_partition as i64 / size).max(1);
        let byte = l.addr.checked_add(out.offset.rem_euclid(pitch).unsigned_abs() * size as u64)?;
        Some(MatmulTrace { flags: m.flags.bits(), zero_banks: m.flags.zero_banks(), bank: byte / 2048 })
    }
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
    /// The bytes themselves, when the trace keeps data ([`crate::Simulator::enable_trace_data`]).
    pub data: Option<Vec<u8>>,
}

/// The instruction that last wrote a watched element ([`crate::Simulator::watch`]).
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
pub(crate) struct Watch {
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

/// A consumer of streamed trace entries.
pub(crate) type TraceSink<'p> = Box<dyn FnMut(&TraceEntry) + 'p>;

/// The most instructions between two looks at the clock for [`crate::Simulator::set_progress`]: small
/// enough that a run switching from tiny instructions to long ones is noticed after a few of
/// them, large enough that reading the clock costs nothing next to 256 instructions.
const PROGRESS_MAX_STRIDE: u64 = 256;

/// A progress callback ([`crate::Simulator::set_progress`]) and its pacing: the clock is read only
/// every `stride` instructions, the stride adapting so that it is read several times per
/// `interval` however long instructions take.
pub(crate) struct Progress<'p> {
    f: Box<dyn FnMut(u64, u64) + 'p>,
    /// The instructions the run will execute (loop iterations counted).
    total: u64,
    /// The least time between two calls.
    pub(crate) interval: std::time::Duration,
    /// When `f` was last called (or the callback set).
    last: std::time::Instant,
    /// Instructions between two looks at the clock.
    stride: u64,
    /// The count `f` was last given.
    reported: Option<u64>,
}

/// The observers of one run.
pub(crate) struct Observers<'p> {
    /// The kept trace (`Simulator::enable_trace`).
    pub(crate) trace: Option<Vec<TraceEntry>>,
    /// Where streamed trace entries go (`enable_trace_sink`), instead of `trace`.
    pub(crate) sink: Option<TraceSink<'p>>,
    /// Traced regions keep their bytes (`--trace-data`).
    pub(crate) trace_data: bool,
    /// Write provenance for a few byte ranges (`--expect`), off unless asked for.
    pub(crate) watch: Option<Box<Watch>>,
    /// `--stats`.
    pub(crate) stats: Option<Stats>,
    /// The run's valid-range warnings, one per instruction (docs/fidelity.md E6).
    pub(crate) ranges: Vec<RangeWarning>,
    /// The checkers' findings (uninitialised reads, non-finite outputs), one per instruction.
    pub(crate) findings: Vec<CheckWarning>,
    /// The progress callback, if any.
    pub(crate) progress: Option<Progress<'p>>,
    /// The executed count at which the progress clock is next read (`u64::MAX`: no callback),
    /// so an unset callback costs one comparison per instruction.
    pub(crate) progress_at: u64,
}

impl Default for Observers<'_> {
    fn default() -> Self {
        Observers {
            trace: None,
            sink: None,
            trace_data: false,
            watch: None,
            stats: None,
            ranges: Vec::new(),
            findings: Vec::new(),
            progress: None,
            progress_at: u64::MAX,
        }
    }
}

impl<'p> Observers<'p> {
    /// True when a trace is kept or streamed.
    pub(crate) fn tracing(&self) -> bool {
        self.trace.is_some() || self.sink.is_some()
    }

    /// True when instructions must be timed (a trace or statistics).
    pub(crate) fn timed(&self) -> bool {
        self.tracing() || self.stats.is_some()
    }

    /// Sets the watched ranges ([`crate::Simulator::watch`]).
    pub(crate) fn set_watch(&mut self, targets: Vec<(LocId, std::ops::Range<usize>)>) {
        let writers = vec![None; targets.len()];
        let targets = targets.into_iter().map(|(l, r)| (l, r, Vec::new())).collect();
        self.watch = Some(Box::new(Watch { targets, writers }));
    }

    /// The last writer of each watched range.
    pub(crate) fn writers(&self) -> &[Option<Writer>] {
        self.watch.as_ref().map_or(&[], |w| &w.writers)
    }

    /// Before the first instruction: what the watched bytes hold (the loaded inputs).
    pub(crate) fn start(&mut self, cx: &mut Cx<'p>) {
        if let Some(w) = self.watch.as_mut() {
            for (loc, range, last) in &mut w.targets {
                last.clear();
                last.extend_from_slice(watched(cx, *loc, range.clone()));
            }
        }
    }

    /// After instruction `i` (execution index `index`) ran in `elapsed_ns` and wrote `regions`:
    /// statistics, the watch, the trace entry.
    pub(crate) fn after(
        &mut self,
        cx: &mut Cx<'p>,
        i: &Instruction,
        index: u64,
        elapsed_ns: u64,
        regions: &Written,
        control: Control,
    ) -> Res<()> {
        if let Some(stats) = self.stats.as_mut() {
            stats.record(index, i, elapsed_ns, regions.bytes());
        }
        if let Some(note) = regions.out_of_range() {
            self.note_range(i, note)?;
        }
        if self.watch.is_some() {
            self.check_watch(cx, i, index);
        }
        if self.tracing() {
            let traced = self.trace_regions(cx, i)?;
            let entry = TraceEntry {
                index,
                name: i.name.clone(),
                opcode: i.opcode().name(),
                bytes_written: regions.bytes(),
                checksums: regions.checksums(),
                elapsed_ns,
                regions: traced,
                matmul: MatmulTrace::of(i, cx.f),
                out_of_range: regions.out_of_range().map_or(0, |n| n.count),
                registers: control.registers,
                branch: control.branch,
            };
            match (self.trace.as_mut(), self.sink.as_mut()) {
                (Some(trace), _) => crate::alloc::push(trace, entry)?,
                (None, Some(sink)) => sink(&entry),
                (None, None) => {}
            }
        }
        Ok(())
    }

    /// Adds a checker's finding to the run's warnings (one per instruction and checker, counted).
    #[cold]
    pub(crate) fn note_finding(&mut self, i: &Instruction, found: super::Finding) -> Res<()> {
        let same = |w: &CheckWarning| {
            w.name == i.name && std::mem::discriminant(&w.first) == std::mem::discriminant(&found)
        };
        match self.findings.iter_mut().find(|w| same(w)) {
            Some(w) => w.count = w.count.saturating_add(1),
            None => crate::alloc::push(
                &mut self.findings,
                CheckWarning { name: i.name.clone(), first: found, count: 1 },
            )?,
        }
        Ok(())
    }

    /// Adds an instruction's out-of-range inputs to the run's warnings (one per instruction).
    #[cold]
    fn note_range(&mut self, i: &Instruction, note: super::kit::OutOfRange) -> Res<()> {
        match self.ranges.iter_mut().find(|w| w.name == i.name) {
            Some(w) => w.note.count = w.note.count.saturating_add(note.count),
            None => crate::alloc::push(&mut self.ranges, RangeWarning { name: i.name.clone(), note })?,
        }
        Ok(())
    }

    /// Sets the progress callback, `total` instructions to run, `executed` so far.
    pub(crate) fn set_progress(&mut self, f: Box<dyn FnMut(u64, u64) + 'p>, total: u64, executed: u64) {
        let interval = self.progress.as_ref().map_or(std::time::Duration::from_millis(50), |p| p.interval);
        self.progress =
            Some(Progress { f, total, interval, last: std::time::Instant::now(), stride: 1, reported: None });
        self.progress_at = executed.saturating_add(1);
    }

    /// Reads the clock for the progress callback, calls it when `interval` has passed, and
    /// picks the next instruction count to look again.
    #[cold]
    pub(crate) fn progress_tick(&mut self, executed: u64) {
        let Some(p) = self.progress.as_mut() else {
            self.progress_at = u64::MAX;
            return;
        };
        let now = std::time::Instant::now();
        let since = now.duration_since(p.last);
        if since >= p.interval {
            (p.f)(executed, p.total);
            p.reported = Some(executed);
            p.last = now;
            // Late by more than an interval: look at the clock more often.
            if since > p.interval.saturating_mul(2) {
                p.stride = (p.stride / 2).max(1);
            }
        } else if since < p.interval / 8 {
            p.stride = p.stride.saturating_mul(2).min(PROGRESS_MAX_STRIDE);
        }
        self.progress_at = executed.saturating_add(p.stride);
    }

    /// The progress callback's last call, with the final count.
    pub(crate) fn progress_end(&mut self, executed: u64) {
        if let Some(p) = self.progress.as_mut()
            && p.reported != Some(executed)
        {
            (p.f)(executed, p.total);
            p.reported = Some(executed);
        }
    }

    /// Each static output AP of `i` read back (memory dtype, AP order) for the trace. An
    /// operand with a dynamic offset, or one that cannot be read, is left out.
    fn trace_regions(&self, cx: &mut Cx<'p>, i: &Instruction) -> Res<Vec<TraceRegion>> {
        let mut out = Vec::new();
        for (slot, ap) in i.outs.iter().enumerate() {
            let Some(ap) = ap.as_ap() else { continue };
            if ap.dynamic.is_some() {
                continue;
            }
            let a = cx.arg(crate::fault::Slot::Out(slot), ap);
            let Ok((partitions, free)) = a.shape() else { continue };
            let mut bytes = cx.pool.take();
            if cx.read_raw(a, &mut bytes).is_err() {
                cx.pool.give(bytes);
                continue;
            }
            let checksum = fnv1a(operand::FNV_BASIS, &bytes);
            let data = if self.trace_data { Some(crate::alloc::copied(&bytes)?) } else { None };
            cx.pool.give(bytes);
            let location = cx.f.locations.get(ap.loc.index()).map_or_else(String::new, |l| l.name.clone());
            let region = TraceRegion {
                slot,
                loc: ap.loc,
                location,
                dtype: cx.storage(ap),
                offset: ap.offset,
                pairs: ap.pairs.iter().map(|p| [p.step, p.num]).collect(),
                partitions: partitions as u64,
                free: free as u64,
                extent: cx.extent(ap).map(|r| [r.start as u64, r.end as u64]),
                checksum,
                data,
            };
            crate::alloc::push(&mut out, region)?;
        }
        Ok(out)
    }

    /// Updates the watched ranges' last writers after `i` ran.
    fn check_watch(&mut self, cx: &mut Cx<'p>, i: &Instruction, index: u64) {
        let Some(mut w) = self.watch.take() else { return };
        // Instructions whose outputs get only the elements their data picks (scatters, skipped
        // gather rows, a predicate) are seen by the bytes changing, never by their AP alone.
        // Watched locations are the entry function's: an instruction of a called function is
        // seen by the bytes changing (its APs name the callee's locations; fidelity B14).
        let whole_outs = table::writes(i.opcode()) == Writes::Outputs && cx.memory.current() == 0;
        let callee = cx.memory.enter(0);
        for (k, (loc, range, last)) in w.targets.iter_mut().enumerate() {
            let covered = whole_outs
                && i.outs.iter().filter_map(bir_ir::Operand::as_ap).any(|ap| {
                    ap.dynamic.is_none()
                        && cx.memory.same_buffer(ap.loc, *loc)
                        && covers(cx, ap, range.clone())
                });
            let now = watched(cx, *loc, range.clone());
            let changed = now != last.as_slice();
            if changed {
                last.clear();
                last.extend_from_slice(now);
            }
            if covered || changed {
                w.writers[k] = Some(Writer { index, name: i.name.clone(), opcode: i.opcode().name() });
            }
        }
        cx.memory.enter(callee);
        self.watch = Some(w);
    }
}

/// The bytes of a watched range (empty when it lies outside the buffer).
fn watched<'c>(cx: &'c mut Cx<'_>, loc: LocId, range: std::ops::Range<usize>) -> &'c [u8] {
    let touch = crate::memory::Touch { range: Some(range.clone()), covers: false };
    let (buf, _) = cx.memory.buffer_for(loc, &touch);
    buf.get(range).unwrap_or_default()
}

/// True when an element of `ap` (in its memory dtype) shares a byte with `range`.
fn covers(cx: &Cx<'_>, ap: &bir_ir::AccessPattern, range: std::ops::Range<usize>) -> bool {
    match cx.extent(ap) {
        Some(e) if e.start < range.end && range.start < e.end => {}
        _ => return false,
    }
    let mut p = access_pattern::Pattern::of(ap);
    let size = cx.storage(ap).size();
    p.elem_size = size;
    let mut hit = false;
    let layout = cx.memory.layout(ap.loc);
    let _ = access_pattern::for_each_element(&layout, &p, |_, b| {
        hit |= b < range.end && range.start < b + size;
    });
    hit
}
