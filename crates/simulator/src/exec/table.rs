//! The kernel table: one row per opcode the reference gives a kernel of its own (the `kernel`
//! rows of docs/bir-json.md's opcode table), keyed by opcode. Each row names the kernel function
//! that runs the instruction, the classifier that decides beforehand whether birsim runs its
//! form (`support`'s matrix and `check` enumerate these same functions), and how the kernel
//! writes ([`Writes`]: which outputs the `--expect` watch may take from the APs alone, and which
//! instructions the liveness analysis cannot see through). A row may instead say the opcode is
//! not implemented yet, with its reason.
//!
//! Adding a kernel is one row here plus its file under `kernels/` (ARCHITECTURE.md "Adding a
//! kernel"); `tests` below check that every kernel-category opcode has exactly one row.

/// The kernels (`exec/kernels/`): one file per instruction family, each a set of free functions
/// `run(cx, instruction, fields, written)` with their `classify`, listed in [`ROWS`] below. A
/// kernel imports only from `exec::kit` (the floor), `crate::fault`/`memory`/`alloc` and the
/// crates below the simulator — never from another kernel (`tests/structure.rs` reads the files
/// to check). Declared here so that adding one touches this file and its own.
#[path = "kernels"]
mod kernels {
    pub(crate) mod act_func_set;
    pub(crate) mod activation;
    pub(crate) mod bn_stats;
    pub(crate) mod branch;
    pub(crate) mod cache;
    pub(crate) mod copy;
    pub(crate) mod dge;
    pub(crate) mod dma;
    pub(crate) mod elementwise;
    pub(crate) mod exponential;
    pub(crate) mod indirect;
    pub(crate) mod iota;
    pub(crate) mod matmult;
    pub(crate) mod memset;
    pub(crate) mod mx;
    pub(crate) mod nonzero;
    pub(crate) mod rand_state;
    pub(crate) mod random;
    pub(crate) mod range_select;
    pub(crate) mod read_accumulator;
    pub(crate) mod reciprocal;
    pub(crate) mod reduce;
    pub(crate) mod register;
    pub(crate) mod select;
    pub(crate) mod sequence_bounds;
    pub(crate) mod stream;
    pub(crate) mod sync;
    pub(crate) mod top8;
    pub(crate) mod var_addr;
}

use super::kit::facts::{Facts, Verdict};
use super::kit::{Cx, Res, Written, bug};
use bir_ir::{Instruction, Op, OpCategory, Opcode};
use kernels::{
    act_func_set, activation, bn_stats, branch, cache, copy, dge, dma, elementwise, exponential, indirect,
    iota, matmult, memset, mx, nonzero, rand_state, random, range_select, read_accumulator, reciprocal,
    reduce, register, select, sequence_bounds, stream, sync, top8, var_addr,
};

/// A kernel: runs one instruction of its opcode (classified beforehand) in the context.
pub(crate) type RunFn = for<'p, 'i> fn(&mut Cx<'p>, &'i Instruction, &mut Written) -> Res<()>;

/// A classifier: decides from an instruction's facts whether its kernel runs it.
pub(crate) type ClassifyFn = fn(&dyn Facts) -> Verdict;

/// How a kernel writes memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Writes {
    /// Every element of its static output APs (the watch credits the instruction from the APs).
    Outputs,
    /// Only the elements its data picks (scatters, skipped gather rows, a predicate): the watch
    /// sees such a write only by the bytes changing.
    Picked,
    /// Locations its own operands do not name (descriptors defined elsewhere run): seen by the
    /// bytes changing, and a program holding one frees no location early.
    Elsewhere,
}

/// What a row holds.
pub(crate) enum Kernel {
    /// A kernel, its classifier and how it writes.
    Runs {
        /// The kernel.
        run: RunFn,
        /// Its classifier.
        classify: ClassifyFn,
        /// How it writes.
        writes: Writes,
    },
    /// No kernel yet, and why (the `not-implemented` fault's reason).
    Missing(&'static str),
}

/// One row of the table.
pub(crate) struct Row {
    /// The opcode it runs.
    pub(crate) opcode: Opcode,
    /// Its kernel.
    pub(crate) kernel: Kernel,
}

/// The reason of a row without a kernel whose fields bir-ir keeps raw.
const RAW: &str = "no kernel yet (fields kept raw)";

/// The reason of the batch-norm backward rows: no public source defines them (AWS documents
/// bn_stats and bn_aggr only; docs/fidelity.md Q12).
const NO_SOURCE: &str = "no public definition of its semantics (AWS documents bn_stats and bn_aggr only)";

/// BIRKernel's and NKIKernel's (B14): they name a kernel outside the program (KLR 7e15ca6
/// `kernel_name`, `func`), not a function of it.
const EXTERNAL_KERNEL: &str = "an external kernel named by the instruction; its body is not in the program";

/// A row without a kernel yet.
macro_rules! missing {
    ($op:ident, $why:expr) => {
        Row { opcode: Opcode::$op, kernel: Kernel::Missing($why) }
    };
}

/// A row with a kernel: `Op(fields) => kernel, classifier, writes` hands the kernel the
/// opcode's typed fields; `Op => …` a kernel that takes none.
macro_rules! run {
    ($op:ident($f:ident) => $run:path, $classify:path, $writes:ident) => {
        Row {
            opcode: Opcode::$op,
            kernel: Kernel::Runs {
                run: |cx, i, w| match &i.op {
                    Op::$op($f) => $run(cx, i, $f, w),
                    _ => mismatch(),
                },
                classify: $classify,
                writes: Writes::$writes,
            },
        }
    };
    ($op:ident => $run:path, $classify:path, $writes:ident) => {
        Row {
            opcode: Opcode::$op,
            kernel: Kernel::Runs { run: $run, classify: $classify, writes: Writes::$writes },
        }
    };
}

use super::kit::facts::plain;

/// The table, in ordinal order.
pub(crate) const ROWS: &[Row] = &[
    run!(GenericCopy => copy::run, plain, Outputs),
    run!(AbstractCopy => copy::run, plain, Outputs),
    run!(Activation(f) => activation::run, activation::classify, Outputs),
    run!(ReadActivationAccumulator => read_accumulator::run, plain, Outputs),
    run!(LoadActFuncSet => act_func_set::run, plain, Outputs),
    run!(Matmult(f) => matmult::run, matmult::classify, Outputs),
    missing!(MatmultSparse, RAW),
    run!(Memset(f) => memset::run, memset::classify, Outputs),
    missing!(GetGlobalRankId, RAW),
    run!(GroupResetSemaphores => sync::run, plain, Outputs),
    run!(Drain => sync::run, plain, Outputs),
    run!(Halt => sync::run, plain, Outputs),
    run!(Load => copy::run, plain, Outputs),
    run!(Pool(f) => reduce::pool, plain, Outputs),
    run!(Reciprocal => reciprocal::run, plain, Outputs),
    run!(Save => copy::run, plain, Outputs),
    run!(TensorCopy => copy::run, plain, Outputs),
    run!(TensorCopyDynamicSrc => copy::run, plain, Outputs),
    run!(TensorCopyDynamicDst => copy::run, plain, Outputs),
    run!(IndirectCopy(f) => indirect::indirect_copy, indirect::classify, Picked),
    run!(TensorReduce(f) => reduce::tensor_reduce, reduce::classify_reduce, Outputs),
    run!(TensorScalar(f) => elementwise::tensor_scalar, plain, Outputs),
    run!(TensorScalarPtr(f) => elementwise::tensor_scalar_ptr, elementwise::classify_ptr, Outputs),
    run!(TensorScalarCache(f) => cache::run, cache::classify, Outputs),
    run!(TensorTensor(f) => elementwise::tensor_tensor, plain, Outputs),
    run!(DMACopy(f) => dma::run, dma::classify, Outputs),
    missing!(GPSIMDSB2SB, RAW),
    run!(BNStats => bn_stats::stats, plain, Outputs),
    run!(BNStatsAggregate => bn_stats::aggregate, plain, Outputs),
    missing!(BNGradients, NO_SOURCE),
    missing!(BNBackprop, NO_SOURCE),
    missing!(BNBackprop2, NO_SOURCE),
    run!(StreamShuffle(f) => stream::shuffle, stream::classify, Outputs),
    run!(StreamTranspose => stream::transpose, stream::classify, Outputs),
    run!(ReadVarAddr => var_addr::run, plain, Outputs),
    run!(GenericIndirectLoad(f) => indirect::generic_indirect, indirect::classify_generic, Picked),
    run!(IndirectLoad(f) => indirect::indirect_load, indirect::classify, Picked),
    run!(GenericIndirectSave(f) => indirect::generic_indirect, indirect::classify_generic, Picked),
    run!(IndirectSave(f) => indirect::indirect_save, indirect::classify, Picked),
    run!(IndirectSaveAccumulate(f) => indirect::indirect_save_accumulate, indirect::classify, Picked),
    missing!(CollectiveCompute, RAW),
    missing!(CollectiveSend, RAW),
    missing!(CollectiveRecv, RAW),
    run!(Select => select::select, plain, Outputs),
    run!(CopyPredicated(f) => select::copy_predicated, select::classify_copy_predicated, Picked),
    missing!(CustomOp, RAW),
    missing!(BIRKernel, EXTERNAL_KERNEL),
    missing!(NKIKernel, EXTERNAL_KERNEL),
    missing!(DevicePrint, RAW),
    run!(GetRandState => rand_state::get_state, plain, Outputs),
    run!(SetRandState => rand_state::run, plain, Outputs),
    run!(Rand => random::rand, plain, Outputs),
    run!(Iota(f) => iota::iota, plain, Outputs),
    run!(TensorScalarAffineSelect(f) => iota::affine_select, plain, Outputs),
    run!(RangeSelect(f) => range_select::run, plain, Outputs),
    run!(GetSequenceBounds => sequence_bounds::run, plain, Outputs),
    run!(Dropout(f) => random::dropout, plain, Outputs),
    missing!(GetCurProcessingRankID, RAW),
    run!(DMATrigger(f) => dge::trigger, dge::classify_trigger, Elsewhere),
    run!(DMADescriptorCopy => dge::descriptor, dge::classify_copy, Outputs),
    run!(DMADescriptorCCE => dge::descriptor, dge::classify_cce, Outputs),
    run!(DMADescriptorTranspose => dge::descriptor, dge::classify_transpose, Outputs),
    run!(DMADescriptorReplicate => dge::descriptor, dge::classify_replicate, Outputs),
    run!(RegisterAlu(f) => register::register_alu_run, register::classify_alu, Outputs),
    run!(RegisterMove => register::register_move, plain, Outputs),
    run!(TensorLoad => register::tensor_load, plain, Outputs),
    run!(TensorSave => register::tensor_save, plain, Outputs),
    run!(CompareAndBranch(f) => branch::compare, plain, Outputs),
    run!(UnconditionalBranch(f) => branch::jump, plain, Outputs),
    run!(BranchHint => sync::run, plain, Outputs),
    run!(Return => branch::ret, plain, Outputs),
    run!(Exit => branch::exit, plain, Outputs),
    run!(Break => branch::brk, plain, Outputs),
    run!(Call(f) => branch::call, plain, Outputs),
    run!(SwitchQueueInstance(f) => dge::queue_instance, dge::classify_queue, Outputs),
    run!(ResetQueueInstance(f) => dge::queue_instance, dge::classify_queue, Outputs),
    run!(CoreBarrier => sync::run, plain, Outputs),
    run!(Max => top8::max, plain, Outputs),
    run!(MaxIndex => top8::max_index, plain, Outputs),
    run!(MatchReplace(f) => top8::replace, plain, Outputs),
    run!(MaxIndexAndMatchReplace(f) => top8::index_and_replace, plain, Outputs),
    run!(Gather => indirect::gather, indirect::classify, Picked),
    run!(TensorCompletion => sync::run, plain, Outputs),
    run!(MatmultMx(f) => mx::matmult, plain, Outputs),
    run!(QuantizeMx => mx::quantize, plain, Outputs),
    run!(Rand2 => random::rand2, plain, Outputs),
    run!(RandSetState => rand_state::set_state, plain, Outputs),
    run!(RandGetState => rand_state::get_state, plain, Outputs),
    run!(ActivationReadAccumulator => read_accumulator::run, plain, Outputs),
    run!(DveReadAccumulator => read_accumulator::run, plain, Outputs),
    run!(Exponential(f) => exponential::run, plain, Outputs),
    run!(NonzeroWithCount(f) => nonzero::run, plain, Picked),
    run!(DMABlock(f) => dge::block, dge::classify_block, Elsewhere),
    missing!(TongaReduceMacroSymbolic, RAW),
];
/// A row's fields of another opcode: the table is keyed by opcode, so this is a birsim bug.
#[cold]
fn mismatch() -> Res<()> {
    bug("a kernel table row ran an instruction of another opcode")
}

/// `INDEX[ordinal]`: the opcode's row in [`ROWS`], or `NONE`.
const NONE: u8 = u8::MAX;
const INDEX: [u8; 256] = {
    let mut index = [NONE; 256];
    let mut k = 0;
    while k < ROWS.len() {
        index[ROWS[k].opcode as usize] = k as u8;
        k += 1;
    }
    index
};

/// The opcode's row, if it has one (only kernel-category opcodes do).
#[inline]
pub(crate) fn row(op: Opcode) -> Option<&'static Row> {
    ROWS.get(usize::from(INDEX[usize::from(op.ordinal())]))
}

/// The verdict for an instruction of opcode `op` whose facts `q` answers: by the reference's
/// category first (base records and no-ops are skipped as the reference does; the loop opcodes
/// are loop nodes, never instructions), then by the opcode's row.
pub(crate) fn classify(op: Opcode, q: &dyn Facts) -> Verdict {
    match op.category() {
        OpCategory::Base => Verdict::runs("a base record: named and skipped, as the reference does"),
        OpCategory::NoOp => Verdict::runs("runs no kernel (its sync effects are not modelled)"),
        OpCategory::Control => {
            Verdict::no_kernel("structured control flow, read as a loop node, never as an instruction")
        }
        OpCategory::Kernel => match row(op).map(|r| &r.kernel) {
            Some(Kernel::Runs { classify, .. }) => classify(q),
            Some(Kernel::Missing(why)) => Verdict::no_kernel(why),
            None => Verdict::no_kernel(RAW),
        },
    }
}

/// How `op`'s kernel writes (base records, no-ops and missing kernels write nothing).
pub(crate) fn writes(op: Opcode) -> Writes {
    match row(op).map(|r| &r.kernel) {
        Some(Kernel::Runs { writes, .. }) => *writes,
        _ => Writes::Outputs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bir_ir::BirEnum;

    /// Every opcode the reference gives a kernel has exactly one row, and nothing else has one;
    /// rows are in ordinal order.
    #[test]
    fn every_kernel_opcode_has_one_row() {
        for &op in Opcode::ALL {
            let rows = ROWS.iter().filter(|r| r.opcode == op).count();
            let want = usize::from(op.category() == OpCategory::Kernel);
            assert_eq!(rows, want, "{op}: {rows} rows");
            assert_eq!(row(op).is_some(), want == 1, "{op}");
        }
        assert!(ROWS.windows(2).all(|w| w[0].opcode < w[1].opcode), "rows out of ordinal order");
    }

    /// The table against docs/bir-json.md's table of opcodes kept verbatim: each `kernel` row
    /// there has a row here (which may say "not implemented"), and every unmodelled kernel opcode
    /// is there.
    #[test]
    fn every_documented_kernel_row_is_in_the_table() {
        let doc = include_str!("../../../../docs/bir-json.md");
        let mut seen = 0;
        for line in doc.lines() {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            if let [_, ord, name, "kernel", _] = cells.as_slice()
                && ord.parse::<u8>().is_ok()
            {
                let name = name.trim_matches('`');
                let op = Opcode::from_name(name).unwrap_or_else(|| panic!("unknown opcode {name}"));
                assert!(row(op).is_some(), "{name} has no row");
                seen += 1;
            }
        }
        // The table lists the unmodelled opcodes (the modelled ones have sections of their own):
        // it shrinks as kernels land, but reading it must find its rows.
        let unmodelled =
            Opcode::ALL.iter().filter(|o| o.category() == OpCategory::Kernel && !o.is_modelled()).count();
        assert_eq!(seen, unmodelled, "kernel rows read from docs/bir-json.md's verbatim table");
    }
}
