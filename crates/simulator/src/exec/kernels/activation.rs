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
//! result is written cast to the output's dtype. The whole input is read before anything is
//! written. Is_finite, Unknown and names with no closed form (KLR's Dsqrt, Ln_prime,
//! MemsetZero, unknown names) fault as the reference does ("unsupported activation function",
//! an `unsupported-op` fault), before anything is read. Arguments outside the function's
//! documented valid range (log, sin, arctan, sqrt, rsqrt, reciprocal) are counted for the run's
//! warnings and the trace, or fault under `ranges=fault` (docs/fidelity.md E6). Accumulators
//! (`acc`) and activate2 are not implemented yet (the classifier says so by name).

use crate::exec::kit::facts::{self, Fact, Facts, Verdict};
use crate::exec::kit::{Cx, OutOfRange, Res, ScalarArg, Written};
use crate::fault::FaultCause;
use bir_ir::ops::ActivationFields;
use bir_ir::{ActivationFunc, EngineAccumulationType, Instruction};

/// Runs the plain form; accumulators and activate2 are not implemented yet.
pub(crate) fn classify(q: &dyn Facts) -> Verdict {
    if let Some(v) = facts::classify_offsets(q) {
        return v;
    }
    if q.yes(Fact::Activate2) {
        return Verdict::not_implemented("Activation is_activate2 (activate2)");
    }
    if q.get(Fact::Acc) != facts::acc_value(EngineAccumulationType::Idle) {
        return Verdict::not_implemented("Activation accumulators (acc other than Idle)");
    }
    Verdict::runs("f(x·scale + bias) per element, the function's f64 closed form rounded to fp32")
}

/// Runs one Activation.
pub(crate) fn run(cx: &mut Cx<'_>, i: &Instruction, a: &ActivationFields, regions: &mut Written) -> Res<()> {
    let unsupported = || FaultCause::UnsupportedActivation { func: a.func.name().to_owned() };
    let ActivationFunc::Known(func) = a.func else { return Err(unsupported().into()) };
    let (src, dst) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let total = src.elements()?;
    let scale = param(cx, i, 1, total, a.scale.get())?;
    let bias = param(cx, i, 2, total, 0.0)?;
    let alpha = param(cx, i, 3, total, a.alpha.get())?;
    let mut v = cx.pool.take_f32();
    let r = cx.read_f32(src, &mut v).and_then(|()| {
        // Two passes, each rounded to fp32 as the reference's mulss then addss.
        scale.each(&mut v, |x, s| x * s);
        bias.each(&mut v, |t, b| t + b);
        if let Some(range) = numerics::activation::valid_range(func) {
            let mut outside = v.iter().filter(|u| !range.contains(**u));
            if let Some(&example) = outside.next() {
                let count = 1 + outside.count() as u64;
                let note = OutOfRange { count, example, func: func.name(), range: range.text };
                if cx.options.ranges_fault {
                    return Err(FaultCause::OutOfRange {
                        func: note.func,
                        range: note.range,
                        count,
                        example: example.to_bits(),
                    }
                    .into());
                }
                regions.note_out_of_range(note);
            }
        }
        let mut r = Ok(());
        alpha.each_chunk(&mut v, |chunk, a| r = r.and(numerics::activation::apply(func, chunk, a)));
        r.map_err(|_| unsupported())?;
        cx.write_f32(dst, &v, regions)
    });
    cx.pool.give_f32(v);
    r
}

/// A parameter: one value, or one per `stride` consecutive data elements.
enum Param {
    One(f32),
    Every { vals: Vec<f32>, stride: usize },
}

impl Param {
    /// `g(chunk, value)` for each run of elements sharing one value (all of `v`, or `stride`
    /// elements per value): the dispatch once per run, not per element.
    fn each_chunk(&self, v: &mut [f32], mut g: impl FnMut(&mut [f32], f32)) {
        match self {
            Param::One(c) => g(v, *c),
            Param::Every { vals, stride } => {
                v.chunks_mut((*stride).max(1)).zip(vals).for_each(|(chunk, &c)| g(chunk, c));
            }
        }
    }

    /// `x = op(x, value)` for every element, in a tight loop per run.
    fn each(&self, v: &mut [f32], op: impl Fn(f32, f32) -> f32) {
        self.each_chunk(v, |chunk, c| chunk.iter_mut().for_each(|x| *x = op(*x, c)));
    }
}

/// Parameter `ins[k]` for `total` data elements: an immediate, an AP of values each covering
/// `total / count` consecutive elements, or `default` when absent.
fn param(cx: &mut Cx<'_>, i: &Instruction, k: usize, total: usize, default: f32) -> Res<Param> {
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
