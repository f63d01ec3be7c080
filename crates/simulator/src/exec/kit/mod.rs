//! The floor under the kernels: everything a kernel may use besides the lower crates.
//!
//! A kernel (a file of `exec/kernels/`) imports only from here, from `crate::fault` and from the
//! crates below the simulator — never from another kernel — so a new kernel is one row of
//! `exec/table.rs`, one kernel file and, where it has new math, one numerics module
//! (ARCHITECTURE.md "Adding a kernel").
//!
//! - [`Cx`], the execution context: memory, the fidelity profile, the options, engine state
//!   that outlives an instruction, the scratch pool, the entry function and the liveness facts;
//!   plus [`Stop`] / [`Res`], the two-word early stop every kernel returns (a guest fault or a
//!   bug), and its constructors [`fault`], [`bug`], [`unclassified`].
//! - [`operand`]: operand I/O (`Cx::read`, `write`, `accumulate`, …), the one way kernels touch
//!   memory; [`par`]: the parallel split.
//! - Shared datapaths: [`copy`] (`doCopy`, seed 000 §5.1), [`dma`] (DMACopy's modes and the
//!   HW-DGE bridge, run by DMACopy and by fired SW-DGE descriptors), [`fused`] (the fused
//!   fp32/bf16/fp8 element dispatch and its lookup tables), [`transpose`] (blocked tile
//!   transposes), [`lanes`] (predicated lane merging), [`rng`] (the random generators).
//! - [`tracked`]: the TRACKED write path of `runAP` into PSUM (seed 000 §1.3) and a START's
//!   bank clear, for the TensorEngine's writes.
//! - [`facts`]: what the support classifier may ask of an instruction (`Fact`, `InstFacts`) and
//!   its answers (`Verdict`); every kernel's `classify` speaks these.
//! - [`offsets`]: memory-held scalar dynamic offsets resolved into static APs before the kernel
//!   runs (seed 000 §5.1; D1, D18), so kernels see plain APs.
//! - [`liveness`]: each location's last use, so dead locations are freed.
//! - [`blocks`]: an fp32 map over an instruction's data in cache-sized blocks on the threads,
//!   straight between fp32 buffers when it can (Activation, Exponential).
//! - [`rows`]: row kernels, each output row a function of its input row (`Cx::map_rows`).
//! - [`registers`]: the engines' accumulator registers and the per-partition parameters
//!   (`Param`) that Activation and Exponential read.
//! - [`options`]: the run's switches ([`Options`]) and their one parser by name.

pub(crate) mod blocks;
pub(crate) mod copy;
pub(crate) mod dma;
pub mod facts;
pub(crate) mod fused;
pub(crate) mod lanes;
pub(crate) mod liveness;
pub(crate) mod offsets;
pub(crate) mod operand;
pub(crate) mod options;
pub(crate) mod par;
pub(crate) mod regfile;
pub(crate) mod registers;
pub(crate) mod rng;
pub(crate) mod rows;
pub(crate) mod tracked;
pub(crate) mod transpose;
pub(crate) mod uninit;

use crate::fault::{FaultCause, SimError};
use crate::memory::Memory;
use bir_ir::{Arch, Function, Instruction, LocId};
use numerics::Profile;

pub use operand::OutOfRange;
pub use operand::fnv1a;
pub(crate) use operand::{Arg, Pool, ScalarArg, Written, adds, pieces, record_entries, same_count, sub_ap};
pub use options::{OptionError, OptionSpec, OptionValues, OptionWord, Options};
pub use par::Parallelism;
pub use regfile::{RegisterWrite, UninitRegisters};
pub use uninit::{Check, Finding};

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
        match e.cap {
            None => FaultCause::OutOfMemory { bytes: e.bytes }.into(),
            Some(cap) => FaultCause::ScratchOverCap { bytes: e.bytes, cap }.into(),
        }
    }
}

impl From<FaultCause> for Stop {
    #[cold]
    fn from(c: FaultCause) -> Self {
        Stop::Fault(Box::new(c))
    }
}

/// What every kernel returns.
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

/// A kernel's defensive check of a form its `classify` refuses: the executor classifies every
/// instruction before its kernel runs, so reaching this is a birsim bug (the classifier and the
/// kernel disagree), never a `not-implemented` fault.
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
    /// The accumulator registers, per engine: Activation's, Exponential's and
    /// TensorScalarCache's running per-partition values (seed 000 §4; S15, E7).
    pub(crate) registers: registers::Registers,
    /// The random generators of Memset Random and SetRandState (seed 000 §5.4; D6, D7).
    pub(crate) random: rng::RandomState,
    /// The SW-DGE trigger cursors, keyed by trigger name (seed 000 §5.2; G1, G5).
    pub(crate) cursors: ::dge::swdge::Cursors,
    /// The 32-bit scalar registers, per engine (re-facts §5 RegState; B1).
    pub(crate) scalars: regfile::RegFiles,
}

/// Reused index and plan vectors of the indirect kernels (no allocation per instruction once
/// warm).
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// Decoded index lists, by operand slot.
    pub(crate) idx: Vec<Vec<u64>>,
    /// The plan's steps.
    pub(crate) plan: Vec<indirection::plan::Step>,
}

/// The execution context every kernel runs in: what an instruction may read or change.
pub(crate) struct Cx<'p> {
    /// The entry function (locations, allocations, DMABlocks).
    pub(crate) f: &'p Function,
    /// The program's NeuronCore generation.
    pub(crate) arch: Arch,
    /// The memory store.
    pub(crate) memory: Memory,
    /// The numerics fidelity profile.
    pub(crate) profile: Profile,
    /// The semantic switches and limits.
    pub(crate) options: Options,
    /// Engine state that outlives an instruction.
    pub(crate) engines: EngineState,
    /// Reused buffers (no fresh pages per instruction or chunk).
    pub(crate) pool: Pool,
    /// The indirect kernels' reused index and plan vectors.
    pub(crate) scratch: Scratch,
    /// DMABlock instructions by name, found on the first trigger fire.
    pub(crate) dma_blocks: Option<std::collections::HashMap<&'p str, &'p Instruction>>,
    /// Last uses, when dead locations are freed.
    pub(crate) liveness: Option<liveness::Liveness>,
    /// The running top-level instruction's unit (none inside a loop).
    pub(crate) unit: Option<liveness::UnitKey>,
    /// The running instruction's scalar dynamic offsets put an access out of bounds and it
    /// tolerates that (DMACopy with `oob_is_err` false, seed 000 §5.1; `offsets`): its `doCopy`
    /// copies only the element pairs whose both addresses are inside.
    pub(crate) oob_tolerated: bool,
    /// What the running control-flow instruction asks of the instruction loop.
    pub(crate) flow: Option<regfile::Flow>,
}

impl<'p> Cx<'p> {
    /// A context over `memory` for the entry function `f`.
    pub(crate) fn new(f: &'p Function, arch: Arch, memory: Memory, profile: Profile) -> Cx<'p> {
        Cx {
            f,
            arch,
            memory,
            profile,
            options: Options::default(),
            engines: EngineState::default(),
            pool: Pool::default(),
            scratch: Scratch::default(),
            dma_blocks: None,
            liveness: None,
            unit: None,
            oob_tolerated: false,
            flow: None,
        }
    }

    /// The numerics fidelity profile.
    pub(crate) fn profile(&self) -> &Profile {
        &self.profile
    }

    /// True when `loc` is not used after the running top-level instruction.
    pub(crate) fn dies_here(&self, loc: LocId) -> bool {
        match (&self.liveness, self.unit) {
            (Some(l), Some(u)) => l.dying(u).contains(&loc),
            _ => false,
        }
    }

    /// Creates (fallibly) the buffer of every location the instruction's operands name, its
    /// dynamic offsets' index APs included, so no kernel allocates a location's bytes: a
    /// host out of memory is a `budget` fault here, before the instruction changes anything.
    pub(crate) fn ensure_buffers(&mut self, i: &Instruction) -> Res<()> {
        for ap in i.ins.iter().chain(&i.outs).filter_map(bir_ir::Operand::as_ap) {
            let mut ap = Some(ap);
            while let Some(a) = ap {
                self.memory.ensure(a.loc)?;
                ap = match a.dynamic.as_deref().map(|d| &d.source) {
                    Some(bir_ir::OffsetSource::Vector(v) | bir_ir::OffsetSource::Scalar(v)) => Some(v),
                    _ => None,
                };
            }
        }
        Ok(())
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
