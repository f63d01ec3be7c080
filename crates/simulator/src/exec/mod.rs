//! The instruction visitor (re-facts §5): runs a validated program in order, one typed dispatch
//! per instruction. This module is plumbing only — the run loop, the dispatch, the trace and the
//! engine state; operand I/O lives in [`operand`], kernels in their own modules.

mod cache;
mod copy;
mod dma;
mod elementwise;
mod iota;
mod operand;
mod random;
mod reduce;
mod select;
mod stream;

use crate::fault::{Fault, FaultCause, SimError};
use crate::memory::Memory;
use bir_ir::{EngineType, Function, Instruction, MemsetMode, Node, Op, OpCategory, Validated};
use numerics::Profile;

pub use operand::fnv1a;
pub(crate) use operand::{Arg, Written};

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
}

/// Semantic switches the sources leave open, beside the numerics [`Profile`]
/// (docs/fidelity.md names each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// TensorScalarCache: a set `reverse0` or `reverse1` runs the scan from the last element to
    /// the first (seed 000 §4 prose, ASSUMED S14). When false the flags only swap operands (the
    /// seed's pseudocode).
    pub reverse_flags_reverse_scan: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { reverse_flags_reverse_scan: true }
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

/// A form of an opcode this version does not run yet.
#[cold]
pub(crate) fn not_implemented<T>(feature: &'static str) -> Res<T> {
    fault(FaultCause::NotImplemented { feature })
}

/// Engine-side state that outlives an instruction.
#[derive(Debug, Default)]
pub(crate) struct EngineState {
    /// TensorScalarCache's running per-partition cache, per engine (seed 000 §4; S15).
    pub(crate) caches: Vec<(EngineType, Vec<f32>)>,
    /// The random generators of Memset Random and SetRandState (seed 000 §5.4; D6, D7).
    pub(crate) random: random::RandomState,
}

/// Runs programs. Create one per program run.
pub struct Simulator<'p> {
    f: &'p Function,
    /// The memory store; load inputs before [`Simulator::run`], read outputs after.
    pub memory: Memory,
    profile: Profile,
    options: Options,
    trace: Option<Vec<TraceEntry>>,
    executed: u64,
    context: Vec<String>,
    engines: EngineState,
    /// Reused buffers (no fresh pages per instruction or chunk).
    pool: operand::Pool,
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
            executed: 0,
            context: Vec::new(),
            engines: EngineState::default(),
            pool: operand::Pool::default(),
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
        let body = &self.f.body;
        match self.nodes(body) {
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
                    // Validation bounded the trip count.
                    for _ in 0..l.trip_count().unwrap_or(0) {
                        self.nodes(&l.body)?;
                    }
                    self.context.pop();
                }
                Node::Inst(i) => {
                    if let Err(stop) = self.instruction(i) {
                        let mut at = self.context.clone();
                        at.push(format!("instruction #{index} '{}' ({})", i.name, i.opcode()));
                        return Err((at.join(" › "), i, stop));
                    }
                }
            }
        }
        Ok(())
    }

    fn instruction(&mut self, i: &'p Instruction) -> Res<()> {
        let mut regions = Written::new(self.trace.is_some());
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
            op => match op.opcode().category() {
                // Base records and no-ops: named and skipped, as the reference does.
                OpCategory::Base | OpCategory::NoOp => {}
                _ => return fault(FaultCause::OpcodeNotImplemented(op.opcode())),
            },
        }
        self.executed += 1;
        if let Some(trace) = self.trace.as_mut() {
            trace.push(TraceEntry {
                index: self.executed - 1,
                name: i.name.clone(),
                opcode: i.opcode().name(),
                bytes_written: regions.bytes(),
                checksums: regions.checksums(),
            });
        }
        Ok(())
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
