//! The engines' accumulator registers and the per-partition parameters that feed them
//! (docs/fidelity.md E7, S15).
//!
//! Every engine has one fp32 register per row (the r-th partition of an instruction's data,
//! 0-based), +0 until written, kept across instructions: the ScalarE's `reduce_regs` that
//! Activation folds into (AWS `activation`, `activate2`; RE: `doEngineAccumReduce` into a
//! per-engine fp32 accumulator), the VectorE's that Exponential and TensorScalarCache share (AWS:
//! "shared across Vector Engine accumulation instructions"), read out by
//! (Read)ActivationAccumulator and DveReadAccumulator. An instruction uses the file of the
//! engine its `engine` key names.
//!
//! [`Param`] is a parameter operand read as fp32 — one immediate, or one value per run of
//! consecutive data elements (a [P, 1] tile) — as Activation's scale, bias and alpha,
//! activate2's immediates and Exponential's `max_value` and `reduce_init` are.

use super::{Cx, Res, ScalarArg, fault};
use crate::fault::FaultCause;
use bir_ir::{EngineAccumulationType as Acc, EngineType, Instruction};
use numerics::activation::Fold;

/// The accumulator files, by engine.
#[derive(Debug, Default)]
pub(crate) struct Registers(Vec<(EngineType, Vec<f32>)>);

impl Registers {
    /// `engine`'s registers as last left (empty if never written: every register reads +0).
    pub(crate) fn of(&self, engine: EngineType) -> &[f32] {
        self.0.iter().find(|(e, _)| *e == engine).map_or(&[], |(_, r)| r.as_slice())
    }

    /// `engine`'s first `rows` registers, the ones never written created as +0.
    pub(crate) fn rows_mut(&mut self, engine: EngineType, rows: usize) -> Res<&mut [f32]> {
        let k = match self.0.iter().position(|(e, _)| *e == engine) {
            Some(k) => k,
            None => {
                self.0.push((engine, Vec::new()));
                self.0.len() - 1
            }
        };
        let r = &mut self.0[k].1;
        if r.len() < rows {
            crate::alloc::resize(r, rows, 0.0)?;
        }
        Ok(&mut r[..rows])
    }
}

/// What an instruction's `acc` does to its engine's registers (E7): reset them (to the fold's
/// identity) or load them, then fold the results in, or leave them.
pub(crate) struct Accumulate<'a> {
    /// The command (absent is Idle).
    pub(crate) acc: Option<Acc>,
    /// The fold.
    pub(crate) fold: Fold,
    /// LoadAccumulate's initial values, if the instruction has them.
    pub(crate) load: Option<&'a Param>,
}

impl Accumulate<'_> {
    /// Whether the command touches the registers (not Idle or absent).
    pub(crate) fn active(&self) -> bool {
        self.acc.is_some_and(|a| a != Acc::Idle)
    }

    /// The command's own faults, checked before the instruction reads or writes anything:
    /// LoadAccumulate without its initial values.
    pub(crate) fn check(&self) -> Res<()> {
        if self.acc == Some(Acc::LoadAccumulate) && self.load.is_none() {
            return fault(FaultCause::BadField {
                field: "acc",
                why: "LoadAccumulate needs its initial values (reduce_init) in ins[2]",
            });
        }
        Ok(())
    }

    /// Applies the command to `engine`'s registers for `vals`, rows of `free` fp32 results
    /// (pre-cast: the register sees the fp32 value). Called after the instruction's writes
    /// succeeded, so a faulting instruction changes no register; [`Accumulate::check`] ran
    /// before anything.
    pub(crate) fn apply(&self, cx: &mut Cx<'_>, engine: EngineType, vals: &[f32], free: usize) -> Res<()> {
        let Some(acc) = self.acc.filter(|a| *a != Acc::Idle) else { return Ok(()) };
        self.check()?;
        let rows = vals.len().checked_div(free).unwrap_or(0);
        let regs = cx.engines.registers.rows_mut(engine, rows)?;
        match (acc, self.load) {
            (Acc::Zero | Acc::ZeroAccumulate, _) => regs.fill(self.fold.identity()),
            (Acc::LoadAccumulate, Some(load)) => load.rows(regs, free),
            _ => {}
        }
        if acc != Acc::Zero {
            for (r, row) in regs.iter_mut().zip(vals.chunks_exact(free.max(1))) {
                *r = self.fold.over(*r, row);
            }
        }
        Ok(())
    }
}

/// A parameter: one value, or one per `stride` consecutive data elements.
pub(crate) enum Param {
    /// One value for every element.
    One(f32),
    /// Values each covering `stride` consecutive elements.
    Every {
        /// The values.
        vals: Vec<f32>,
        /// Elements per value.
        stride: usize,
    },
}

impl Param {
    /// Parameter `ins[k]` of an instruction over `total` data elements: an immediate, an AP of
    /// values each covering `total / count` consecutive elements, or `default` when absent.
    pub(crate) fn read(cx: &mut Cx<'_>, i: &Instruction, k: usize, total: usize, default: f32) -> Res<Param> {
        Ok(match cx.scalar_arg(i, k, total)? {
            ScalarArg::Absent => Param::One(default),
            ScalarArg::Imm(c) => Param::One(c),
            ScalarArg::Every { arg, stride } => {
                let mut vals = Vec::new();
                cx.read_f32(arg, &mut vals)?;
                Param::Every { vals, stride }
            }
        })
    }

    /// Parameter `ins[k]` read as [`Param::read`] does, spelled out as one value per element
    /// (each row's elements share the row's value): for kernels that compare or combine two
    /// parameters element by element (RangeSelect's bounds, Rand2's range, Dropout's prob).
    pub(crate) fn per_element(cx: &mut Cx<'_>, i: &Instruction, k: usize, total: usize) -> Res<Vec<f32>> {
        let p = Param::read(cx, i, k, total, 0.0)?;
        let mut v = Vec::new();
        crate::alloc::resize(&mut v, total, 0.0)?;
        p.each_run(0, &mut v, |run, c| run.fill(c));
        Ok(v)
    }

    /// `g(run, value)` for each run of elements of `v` sharing one value, `v` being the data's
    /// elements from `offset` on (a piece of a parallel split may start inside a run): the
    /// dispatch once per run, not per element.
    pub(crate) fn each_run(&self, offset: usize, v: &mut [f32], mut g: impl FnMut(&mut [f32], f32)) {
        match self {
            Param::One(c) => g(v, *c),
            Param::Every { vals, stride } => {
                let stride = (*stride).max(1);
                let (mut k, mut rest) = (offset / stride, v);
                let mut len = stride - offset % stride;
                while !rest.is_empty() {
                    let Some(&c) = vals.get(k) else { return };
                    let (run, tail) = rest.split_at_mut(len.min(rest.len()));
                    g(run, c);
                    (k, rest, len) = (k + 1, tail, stride);
                }
            }
        }
    }

    /// `x = op(x, value)` for every element of `v` (the data's elements from `offset` on), in
    /// a tight loop per run.
    pub(crate) fn each(&self, offset: usize, v: &mut [f32], op: impl Fn(f32, f32) -> f32) {
        self.each_run(offset, v, |run, c| run.iter_mut().for_each(|x| *x = op(*x, c)));
    }

    /// The value of each row of `free` elements into `regs` (a register per row).
    fn rows(&self, regs: &mut [f32], free: usize) {
        for (r, reg) in regs.iter_mut().enumerate() {
            *reg = match self {
                Param::One(c) => *c,
                Param::Every { vals, stride } => {
                    vals.get(r * free / (*stride).max(1)).copied().unwrap_or(0.0)
                }
            };
        }
    }
}
