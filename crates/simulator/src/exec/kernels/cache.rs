//! TensorScalarCache — the reduce / cumulative / scan recurrence (seed 000 §4).
//!
//! Per partition row a running cache `c`; per element `t = op0(x, c)` then `u = op1(t, c)`
//! (each stage's operands swapped by its reverse flag), `c = u`. Reduce writes the final `c`;
//! Cumulative and TensorScan write every `u` at its element's position.
//!
//! Two choices the seed leaves open (docs/fidelity.md):
//! - S14: a set `reverse0` or `reverse1` also runs the scan from the last element to the first
//!   (the seed's prose: "the reverse0/reverse1 flags pick scan direction"); `Options` turns it off.
//! - S15: the cache is engine state that outlives the instruction, one value per partition row
//!   per engine, initially 0 — the engine's accumulator registers (`kit::registers`, E7), which
//!   Exponential shares on the VectorE. `Zero`/`ZeroAccumulate` reset it to 0 and `LoadAccumulate` loads it
//!   from `ins[1]` (the seed's two initialising cases; the one LoadAccumulate rule, L1); `Accumulate`, `AddAccumulate` and `Idle`
//!   continue from it, as AWS's chained `tensor_scalar_cumulative` calls do.

use crate::exec::kit::facts::{Fact, Facts, Verdict, acc_value};
use crate::exec::kit::{Cx, Res, Written, facts, fault, same_count};
use crate::fault::{FaultCause, Slot};
use bir_ir::ops::TensorScalarCacheFields;
use bir_ir::{AluOp, EngineAccumulationType, Instruction, Operand, TscMode};
use numerics::alu::{F32Op, F32Visitor, ts_ops};
use std::marker::PhantomData;

/// TensorScalarCache: the plain rule, and AddAccumulate (which has no TensorScalarCache
/// meaning) is refused by validation.
pub(crate) fn classify(q: &dyn Facts) -> Verdict {
    if let Some(v) = facts::classify_offsets(q) {
        return v;
    }
    if q.get(Fact::Acc) == acc_value(EngineAccumulationType::AddAccumulate) {
        return Verdict::rejected("bir-ir validation: AddAccumulate has no TensorScalarCache meaning");
    }
    Verdict::runs("")
}

/// One instruction's scan over rows of `free` values.
struct Scan<'a> {
    v: &'a [f32],
    free: usize,
    cache: &'a mut [f32],
    rev: (bool, bool),
    backward: bool,
    every: bool,
    out: &'a mut Vec<f32>,
    op1: AluOp,
}

impl F32Visitor for Scan<'_> {
    type Out = Result<(), numerics::NumericsError>;
    fn visit<O0: F32Op>(self) -> Self::Out {
        struct Second<'a, O0>(Scan<'a>, PhantomData<O0>);
        impl<O0: F32Op> F32Visitor for Second<'_, O0> {
            type Out = ();
            fn visit<O1: F32Op>(self) {
                let Scan { v, free, cache, rev: (r0, r1), backward, every, out, .. } = self.0;
                let step = |c: f32, x: f32| {
                    let t = if r0 { O0::apply(c, x) } else { O0::apply(x, c) };
                    if r1 { O1::apply(c, t) } else { O1::apply(t, c) }
                };
                for (row, c) in v.chunks_exact(free.max(1)).zip(cache.iter_mut()) {
                    if every {
                        let start = out.len();
                        out.resize(start + row.len(), 0.0);
                        let dst = &mut out[start..];
                        if backward {
                            for (d, &x) in dst.iter_mut().zip(row).rev() {
                                *c = step(*c, x);
                                *d = *c;
                            }
                        } else {
                            for (d, &x) in dst.iter_mut().zip(row) {
                                *c = step(*c, x);
                                *d = *c;
                            }
                        }
                    } else if backward {
                        *c = row.iter().rev().fold(*c, |c, &x| step(c, x));
                        out.push(*c);
                    } else {
                        *c = row.iter().fold(*c, |c, &x| step(c, x));
                        out.push(*c);
                    }
                }
            }
        }
        let op1 = self.op1;
        ts_ops::with(op1, Second::<O0>(self, PhantomData))
    }
}

/// The initial per-row cache an accumulation type asks for (seed 000 §4; S15).
fn initial_cache(
    cx: &mut Cx<'_>,
    i: &Instruction,
    acc: EngineAccumulationType,
    parts: usize,
) -> Res<Vec<f32>> {
    match acc {
        EngineAccumulationType::Zero | EngineAccumulationType::ZeroAccumulate => {
            Ok(crate::alloc::filled(parts, 0.0)?)
        }
        EngineAccumulationType::LoadAccumulate => match i.ins.get(1) {
            Some(Operand::Imm { value, .. }) => Ok(crate::alloc::filled(parts, value.as_f64() as f32)?),
            Some(op) => {
                let Some(ap) = op.as_ap() else {
                    return fault(FaultCause::OperandKind {
                        slot: Slot::In(1),
                        want: "an imm_value or an AP",
                    });
                };
                let a = cx.arg(Slot::In(1), ap);
                let mut v = Vec::new();
                cx.read_f32(a, &mut v)?;
                same_count(a.slot, parts, v.len(), "the initial value has one value per partition")?;
                Ok(v)
            }
            None => fault(FaultCause::BadField {
                field: "acc",
                why: "LoadAccumulate needs an initial value in ins[1]",
            }),
        },
        EngineAccumulationType::Accumulate
        | EngineAccumulationType::AddAccumulate
        | EngineAccumulationType::Idle => {
            let mut c = crate::alloc::copied(cx.engines.registers.of(i.engine))?;
            crate::alloc::resize(&mut c, parts, 0.0)?;
            Ok(c)
        }
    }
}

/// TensorScalarCache (seed 000 §4).
pub(crate) fn run(
    cx: &mut Cx<'_>,
    i: &Instruction,
    t: &TensorScalarCacheFields,
    regions: &mut Written,
) -> Res<()> {
    let (inp, out) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let (parts, free) = inp.shape()?;
    let mut cache = initial_cache(cx, i, t.acc, parts)?;
    let mut v = cx.pool.take_f32();
    let every = t.mode != TscMode::Reduce;
    let mut res = cx.pool.take_f32();
    let r = cx.read_f32(inp, &mut v).and_then(|()| {
        // The scan only appends: room for every output value, reserved fallibly up front.
        crate::alloc::reserve(&mut res, if every { v.len() } else { cache.len() })?;
        let scan = Scan {
            v: &v,
            free,
            cache: &mut cache,
            rev: (t.reverse0, t.reverse1),
            backward: cx.options.reverse_flags_reverse_scan && (t.reverse0 || t.reverse1),
            every,
            out: &mut res,
            op1: t.op1,
        };
        ts_ops::with(t.op0, scan)
            .map_err(|error| FaultCause::Op { field: "op0", error })?
            .map_err(|error| FaultCause::Op { field: "op1", error })?;
        cx.write_f32(out, &res, regions)
    });
    cx.pool.give_f32(v);
    cx.pool.give_f32(res);
    r?;
    cx.engines.registers.rows_mut(i.engine, cache.len())?.copy_from_slice(&cache);
    Ok(())
}
