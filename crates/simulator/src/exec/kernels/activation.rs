//! Activation (4): the ScalarEngine's `dst = cast(f(x·scale + bias))` per element (engines.md
//! §2.1; docs/fidelity.md E1–E5).
//!
//! `ins = [data, scale?, bias?, alpha?]` (the reference's operand order, RE), each parameter an
//! fp32 immediate or an AP of one value per partition (any count that divides the data's
//! elements: one value per `elements / count` consecutive elements, as TensorScalarPtr's
//! scalars). A missing scale or alpha operand is the JSON key (`scale` 1.0, `alpha` 0.0); an
//! operand wins over its key (E1); a missing bias is +0. The data is read widened to fp32, the
//! affine step is an fp32 multiply then a separate fp32 add (no FMA, RE), the function comes
//! from `numerics::activation` (the exact path: f64 closed form, one rounding to fp32), and the
//! result is written cast to the output's dtype. The data is mapped in cache-sized blocks on
//! the threads (`kit::blocks`), straight between fp32 buffers when no range fault or accumulator
//! needs the values first; operands that overlap otherwise than exactly see the whole input read
//! before anything is written. Is_finite, Unknown and names with no closed form (KLR's Dsqrt, Ln_prime,
//! MemsetZero, unknown names) fault as the reference does ("unsupported activation function",
//! an `unsupported-op` fault), before anything is read. Arguments outside the function's
//! documented valid range (log, sin, arctan, sqrt, rsqrt, reciprocal) are counted for the run's
//! warnings and the trace, or fault under `ranges=fault` (docs/fidelity.md E6).
//!
//! `acc` drives the engine's accumulator registers (`kit::registers`, E7): the fp32 results
//! (before the output cast) fold into one register per row with `reduce_op` (add), serially;
//! Zero and ZeroAccumulate reset them first, Idle leaves them. LoadAccumulate has no source for
//! its initial value on Activation and is not implemented (by name).
//!
//! activate2 (`is_activate2`, E9): `ins = [data, imm0?, imm1?, alpha?]`, the affine step
//! replaced by `(data op0 imm0) op1 imm1` (each operand order swapped by its reverse flag; the
//! six (op0, op1) pairs AWS allows, checked by validation), then the function, then the fold
//! with any of add, max, min, abs_max, abs_min, whose reset is the fold's identity.

use crate::exec::kit::facts::{self, Fact, Facts, Verdict};
use crate::exec::kit::registers::{Accumulate, Param};
use crate::exec::kit::{Cx, OutOfRange, Res, Written, fault};
use crate::fault::{FaultCause, Slot};
use bir_ir::ops::ActivationFields;
use bir_ir::{ActivationFunc, AluOp, EngineAccumulationType, Instruction};
use numerics::activation::Fold;

/// Runs every form but LoadAccumulate (no source says where its initial value lives).
pub(crate) fn classify(q: &dyn Facts) -> Verdict {
    if let Some(v) = facts::classify_offsets(q) {
        return v;
    }
    if q.get(Fact::Acc) == facts::acc_value(EngineAccumulationType::LoadAccumulate) {
        return Verdict::not_implemented(
            "Activation acc LoadAccumulate (no source gives its initial value's operand)",
        );
    }
    if q.yes(Fact::Activate2) {
        return Verdict::runs("activate2: f((x op0 imm0) op1 imm1) per element, then the fold");
    }
    Verdict::runs("f(x·scale + bias) per element, the function's f64 closed form rounded to fp32")
}

/// Runs one Activation.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, a: &ActivationFields, regions: &mut Written) -> Res<()> {
    let unsupported = || FaultCause::UnsupportedActivation { func: a.func.name().to_owned() };
    let ActivationFunc::Known(func) = a.func else { return Err(unsupported().into()) };
    // Is_finite and Unknown fault before anything is read.
    numerics::activation::apply(func, &mut [], 0.0).map_err(|_| unsupported())?;
    let Some(fold) = Fold::of(a.reduce_op) else {
        return fault(FaultCause::BadField { field: "reduce_op", why: "not a fold of the accumulators" });
    };
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let (_, free) = src.shape()?;
    let total = src.elements()?;
    let stage = Stage::read(cx, i, a, total)?;
    let alpha = Param::read(cx, i, 3, total, a.alpha.get())?;
    let range = numerics::activation::valid_range(func);
    let acc = Accumulate { acc: a.acc, fold, load: None };
    // Straight into the output unless a range fault or the accumulators need the values first.
    let direct = (range.is_none() || !cx.options.ranges_fault) && !acc.active();
    // Per block: the stage, the count of arguments outside the valid range (with the first),
    // the function; each piece's count kept in `Outside`.
    let block = |at: usize, block: &mut [f32], out: &mut Outside| -> Res<()> {
        stage.run(at, block);
        if let Some(range) = range {
            for &u in block.iter().filter(|u| !range.contains(**u)) {
                out.first.get_or_insert(u);
                out.count += 1;
            }
        }
        let mut r = Ok(());
        alpha.each_run(at, block, |run, a| r = r.and(numerics::activation::apply(func, run, a)));
        r.map_err(|_| unsupported().into())
    };
    let mapped = cx.map_blocks(src, dst, direct, Outside::default, block, regions)?;
    let mut r = Ok(());
    // The pieces are in element order: the first piece with one holds the first argument.
    if let (Some(range), Some(example)) = (range, mapped.states.iter().find_map(|(_, o)| o.first)) {
        let count = mapped.states.iter().map(|(_, o)| o.count).sum();
        let note = OutOfRange { count, example, func: func.name(), range: range.text };
        if cx.options.ranges_fault {
            r = Err(FaultCause::OutOfRange {
                func: note.func,
                range: note.range,
                count,
                example: example.to_bits(),
            }
            .into());
        } else {
            regions.note_out_of_range(note);
        }
    }
    if let Some(v) = mapped.vals {
        r = r.and_then(|()| cx.write_f32(dst, &v, regions)).and_then(|()| acc.apply(cx, i.engine, &v, free));
        cx.pool.give_f32(v);
    }
    r
}

/// What a piece of the data found outside the function's valid range: how many, and the first
/// such argument.
#[derive(Default)]
struct Outside {
    count: u64,
    first: Option<f32>,
}

/// One activate2 tensor-scalar step: its fp32 operation, whether its operands are swapped,
/// its immediate.
type Step = (fn(f32, f32) -> f32, bool, Param);

/// The step before the function: Activation's `x·scale + bias` or activate2's
/// `(x op0 imm0) op1 imm1`.
enum Stage {
    /// `x·scale` then `+ bias`, two fp32 roundings (mulss, addss; E2).
    Affine { scale: Param, bias: Param },
    /// activate2's two tensor-scalar steps, each `None` when its op is bypass.
    TwoOps([Option<Step>; 2]),
}

impl Stage {
    fn read(cx: &mut Cx<'_>, i: &Instruction, a: &ActivationFields, total: usize) -> Res<Stage> {
        if !a.is_activate2 {
            let scale = Param::read(cx, i, 1, total, a.scale.get())?;
            let bias = Param::read(cx, i, 2, total, 0.0)?;
            return Ok(Stage::Affine { scale, bias });
        }
        let mut step = |k: usize, op: AluOp, rev: bool| -> Res<Option<Step>> {
            let f: fn(f32, f32) -> f32 = match op {
                AluOp::Bypass => return Ok(None),
                AluOp::Mult => |a, b| a * b,
                AluOp::Add => |a, b| a + b,
                AluOp::Subtract => |a, b| a - b,
                _ => {
                    let field = if k == 1 { "op0" } else { "op1" };
                    return fault(FaultCause::BadField {
                        field,
                        why: "activate2 allows only mult, add, subtract or bypass",
                    });
                }
            };
            if i.ins.len() <= k {
                return fault(FaultCause::OperandKind {
                    slot: Slot::In(k),
                    want: "present: activate2's op0 / op1 need imm0 in ins[1] / imm1 in ins[2]",
                });
            }
            Ok(Some((f, rev, Param::read(cx, i, k, total, 0.0)?)))
        };
        Ok(Stage::TwoOps([step(1, a.op0, a.reverse0)?, step(2, a.op1, a.reverse1)?]))
    }

    /// The stage on `v`, the data's elements from `offset` on.
    fn run(&self, offset: usize, v: &mut [f32]) {
        match self {
            Stage::Affine { scale, bias } => {
                // Two steps, each rounded to fp32 as the reference's mulss then addss.
                scale.each(offset, v, |x, s| x * s);
                bias.each(offset, v, |t, b| t + b);
            }
            Stage::TwoOps(steps) => {
                for &(f, rev, ref p) in steps.iter().flatten() {
                    if rev { p.each(offset, v, |x, c| f(c, x)) } else { p.each(offset, v, f) }
                }
            }
        }
    }
}
