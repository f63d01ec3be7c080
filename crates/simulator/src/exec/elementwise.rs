//! TensorScalar, TensorScalarPtr and TensorTensor (seed 000 §2.2, §2.3).
//!
//! `out = op1(op0(x, s0), s1)`, each stage with its operands swapped when its `reverse` flag is
//! set, and a missing scalar passing the value through. The domain is chosen once per
//! instruction: int32 with `ts_int_ops` for bitvec instructions, 64-bit with `ta_ops` for
//! `is_tensor_scalar_addr`, else fp32 with `ts_ops`. Each stage is one monomorphic pass per op.

use super::{Res, Simulator, Written, elements, fault, i32_bytes, i32s, i64_bytes, i64s, imm_f32, pieces};
use crate::fault::FaultKind;
use bir_ir::ops::{TensorScalarFields, TensorScalarPtrFields, TensorTensorFields};
use bir_ir::{AccessPattern, AluClass, AluOp, Dtype, EngineAccumulationType, Instruction, Operand};
use numerics::alu::{F32Op, F32Visitor, I32Op, I32Visitor, I64Op, I64Visitor, ta_ops, ts_int_ops, ts_ops};
use numerics::minifloat::F32Slot;

/// The compute domain of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Domain {
    F32,
    I32,
    I64,
}

/// A stage's scalar: absent (pass through), one value, or one value per `stride` elements.
pub(crate) enum Scalars<T> {
    Absent,
    One(T),
    Every { vals: Vec<T>, stride: usize },
}

/// Applies one stage in place: `v = rev ? f(s, v) : f(v, s)`.
fn stage<T: Copy>(vals: &mut [T], s: &Scalars<T>, rev: bool, f: impl Fn(T, T) -> T) {
    match s {
        Scalars::Absent => {}
        Scalars::One(c) => {
            let c = *c;
            if rev {
                vals.iter_mut().for_each(|v| *v = f(c, *v));
            } else {
                vals.iter_mut().for_each(|v| *v = f(*v, c));
            }
        }
        Scalars::Every { vals: sv, stride } => {
            for (chunk, c) in vals.chunks_mut(*stride).zip(sv) {
                let c = *c;
                if rev {
                    chunk.iter_mut().for_each(|v| *v = f(c, *v));
                } else {
                    chunk.iter_mut().for_each(|v| *v = f(*v, c));
                }
            }
        }
    }
}

/// A stage over fp32 values held as `f32`s or as their little-endian bytes (so fp32 data needs no
/// decode pass).
struct StageF32<'a, S>(&'a mut [S], &'a Scalars<f32>, bool);
impl<S: F32Slot> F32Visitor for StageF32<'_, S> {
    type Out = ();
    fn visit<O: F32Op>(self) {
        let (vals, s, rev) = (self.0, self.1, self.2);
        match s {
            Scalars::Absent => {}
            Scalars::One(c) => {
                let c = *c;
                if rev {
                    vals.iter_mut().for_each(|v| *v = S::put(O::apply(c, v.get())));
                } else {
                    vals.iter_mut().for_each(|v| *v = S::put(O::apply(v.get(), c)));
                }
            }
            Scalars::Every { vals: sv, stride } => {
                for (chunk, c) in vals.chunks_mut(*stride).zip(sv) {
                    let c = *c;
                    if rev {
                        chunk.iter_mut().for_each(|v| *v = S::put(O::apply(c, v.get())));
                    } else {
                        chunk.iter_mut().for_each(|v| *v = S::put(O::apply(v.get(), c)));
                    }
                }
            }
        }
    }
}

struct StageI32<'a>(&'a mut [i32], &'a Scalars<i32>, bool);
impl I32Visitor for StageI32<'_> {
    type Out = ();
    fn visit<O: I32Op>(self) {
        stage(self.0, self.1, self.2, O::apply);
    }
}

struct StageI64<'a>(&'a mut [i64], &'a Scalars<i64>, bool);
impl I64Visitor for StageI64<'_> {
    type Out = ();
    fn visit<O: I64Op>(self) {
        stage(self.0, self.1, self.2, O::apply);
    }
}

/// A storage format the fused pass reads and writes directly: fp32 bytes, or bf16 bits.
pub(crate) trait Codec: Copy {
    /// One stored value.
    type C: Copy;
    fn decode(c: Self::C) -> f32;
    fn encode(self, f: f32) -> Self::C;
}

/// fp32 as little-endian bytes.
#[derive(Clone, Copy)]
pub(crate) struct Fp32;
impl Codec for Fp32 {
    type C = [u8; 4];
    #[inline(always)]
    fn decode(c: [u8; 4]) -> f32 {
        f32::from_le_bytes(c)
    }
    #[inline(always)]
    fn encode(self, f: f32) -> [u8; 4] {
        f.to_le_bytes()
    }
}

/// bf16 as little-endian bytes, narrowed with the profile's NaN rule.
#[derive(Clone, Copy)]
struct Bf16(numerics::NanSign);
impl Codec for Bf16 {
    type C = [u8; 2];
    #[inline(always)]
    fn decode(c: [u8; 2]) -> f32 {
        f32::from_bits(u32::from(u16::from_le_bytes(c)) << 16)
    }
    #[inline(always)]
    fn encode(self, f: f32) -> [u8; 2] {
        numerics::codec::f32_to_bf16_bits(f.to_bits(), self.0).to_le_bytes()
    }
}

/// Both stages fused into one pass, for immediate scalars: `v = op1(op0(v, c0), c1)` with each
/// stage's operands swapped by its reverse flag, from `src` (or in place) into `vals`.
struct Fused<'a, K: Codec> {
    codec: K,
    /// The source when it is not `vals` itself (a direct buffer-to-buffer pass).
    src: Option<&'a [K::C]>,
    vals: &'a mut [K::C],
    c: (f32, f32),
    rev: (bool, bool),
    op1: AluOp,
}

impl<K: Codec> F32Visitor for Fused<'_, K> {
    type Out = Result<(), numerics::NumericsError>;
    fn visit<O0: F32Op>(self) -> Self::Out {
        struct Second<'a, O0, K: Codec>(Fused<'a, K>, std::marker::PhantomData<O0>);
        impl<O0: F32Op, K: Codec> F32Visitor for Second<'_, O0, K> {
            type Out = ();
            fn visit<O1: F32Op>(self) {
                let Fused { codec, src, vals, c: (c0, c1), rev: (r0, r1), .. } = self.0;
                let f = |x: f32| {
                    let t = if r0 { O0::apply(c0, x) } else { O0::apply(x, c0) };
                    codec.encode(if r1 { O1::apply(c1, t) } else { O1::apply(t, c1) })
                };
                match src {
                    Some(src) => vals.iter_mut().zip(src).for_each(|(v, x)| *v = f(K::decode(*x))),
                    None => vals.iter_mut().for_each(|v| *v = f(K::decode(*v))),
                }
            }
        }
        let op1 = self.op1;
        ts_ops::with(op1, Second::<O0, K>(self, std::marker::PhantomData))
    }
}

/// Element-wise `a[k] = op(a[k], b[k])`.
struct PairF32<'a>(&'a mut [f32], &'a [f32]);
impl F32Visitor for PairF32<'_> {
    type Out = ();
    fn visit<O: F32Op>(self) {
        self.0.iter_mut().zip(self.1).for_each(|(a, b)| *a = O::apply(*a, *b));
    }
}

struct PairI32<'a>(&'a mut [i32], &'a [i32]);
impl I32Visitor for PairI32<'_> {
    type Out = ();
    fn visit<O: I32Op>(self) {
        self.0.iter_mut().zip(self.1).for_each(|(a, b)| *a = O::apply(*a, *b));
    }
}

/// The buffer byte range of an AP that is one contiguous run in a linear layout, if it is.
pub(crate) fn contiguous(
    layout: &access_pattern::Layout,
    ap: &AccessPattern,
) -> Res<Option<std::ops::Range<usize>>> {
    if ap.dynamic.is_some() || !layout.is_linear(ap.dtype.size()) {
        return Ok(None);
    }
    let p = access_pattern::Pattern::of(ap);
    access_pattern::check_bounds(layout, &p).map_err(super::ap_fault)?;
    let Ok(mut runs) = p.runs() else { return Ok(None) };
    if runs.remaining() != 1 || runs.stride() != 1 {
        return Ok(None);
    }
    let Some(run) = runs.next() else { return Ok(None) };
    let size = ap.dtype.size();
    let start = layout.origin() + run.start as usize * size;
    Ok(Some(start..start + run.len as usize * size))
}

/// The reference's bitvec predicate is not pinned (re-facts §2); ours: an instruction is bitvec
/// when any of its non-bypass ops is a bit operation (docs/fidelity.md S3, ASSUMED).
fn is_bitvec(ops: &[AluOp]) -> bool {
    ops.iter().any(|o| o.class() == AluClass::Bitvec)
}

/// fp32 → int32 as the reference casts (RNE, saturating).
fn f32_to_i32(x: f32, sim: &Simulator<'_>) -> Res<i32> {
    let mut out = [0u8; 4];
    numerics::cast(Dtype::Float32, &x.to_le_bytes(), Dtype::Int32, &mut out, sim.profile())?;
    Ok(i32::from_le_bytes(out))
}

impl<'p> Simulator<'p> {
    /// A scalar operand in a domain, for `total` data elements.
    fn scalars(&mut self, op: Option<&Operand>, domain: Domain, total: usize) -> Res<ScalarSet> {
        let Some(op) = op else { return Ok(ScalarSet::absent()) };
        if let Some(c) = imm_f32(op) {
            return ScalarSet::one(c, domain, self);
        }
        let Some(ap) = op.as_ap() else {
            return fault(FaultKind::Shape, "a scalar operand must be an AP or an imm_value");
        };
        let count = elements(ap)?;
        if count == 0 || !total.is_multiple_of(count) {
            return fault(
                FaultKind::Shape,
                format!(
                    "{count} scalars do not divide the {total} data elements evenly (one per partition or per element)"
                ),
            );
        }
        let stride = total / count;
        Ok(match domain {
            Domain::F32 => {
                ScalarSet { f: Scalars::Every { vals: self.read_f32(ap)?, stride }, ..ScalarSet::absent() }
            }
            Domain::I32 => ScalarSet {
                i: Scalars::Every { vals: i32s(&self.read_as(ap, Dtype::Int32)?), stride },
                ..ScalarSet::absent()
            },
            Domain::I64 => ScalarSet {
                l: Scalars::Every { vals: i64s(&self.read_as(ap, Dtype::Uint64)?), stride },
                ..ScalarSet::absent()
            },
        })
    }

    /// Runs the two stages over the instruction's data in `domain` and writes the output.
    #[allow(clippy::too_many_arguments, reason = "the two stages' fields")]
    fn two_stages(
        &mut self,
        i: &'p Instruction,
        domain: Domain,
        (op0, s0, rev0): (AluOp, ScalarSet, bool),
        (op1, s1, rev1): (AluOp, ScalarSet, bool),
        regions: &mut Written,
    ) -> Res<()> {
        let (inp, out) = (self.in_ap(i, 0)?, self.out_ap(i, 0)?);
        // fp32 with immediate (or absent) scalars runs partition block by partition block.
        let uniform = |s: &Scalars<f32>| !matches!(s, Scalars::Every { .. });
        if domain == Domain::F32
            && inp.dtype == out.dtype
            && matches!(inp.dtype, Dtype::Float32 | Dtype::Bfloat16)
            && let (Scalars::One(a), Scalars::One(b)) = (&s0.f, &s1.f)
            && self.tensor_scalar_direct(inp, out, op0, op1, (*a, *b), (rev0, rev1), regions)?
        {
            return Ok(());
        }
        if domain == Domain::F32
            && uniform(&s0.f)
            && uniform(&s1.f)
            && let Some(pieces) = pieces(&[inp, out])?
        {
            if inp.dtype == Dtype::Float32 && out.dtype == Dtype::Float32 {
                // fp32 in and out: the stages run on the bytes themselves, fused into one pass
                // when both scalars are immediates.
                let consts = match (&s0.f, &s1.f) {
                    (Scalars::One(a), Scalars::One(b)) => Some((*a, *b)),
                    _ => None,
                };
                let mut v: Vec<[u8; 4]> = Vec::new();
                for piece in &pieces {
                    v.resize(elements(&piece[0])?, [0; 4]);
                    self.read_into(&piece[0], v.as_flattened_mut())?;
                    if let Some(c) = consts {
                        ts_ops::with(
                            op0,
                            Fused { codec: Fp32, src: None, vals: &mut v, c, rev: (rev0, rev1), op1 },
                        )??;
                    } else {
                        ts_ops::with(op0, StageF32(&mut v, &s0.f, rev0))?;
                        ts_ops::with(op1, StageF32(&mut v, &s1.f, rev1))?;
                    }
                    self.write_slice(&piece[1], v.as_flattened(), regions)?;
                }
                return Ok(());
            }
            let mut v = Vec::new();
            for piece in &pieces {
                self.read_f32_into(&piece[0], &mut v)?;
                ts_ops::with(op0, StageF32(&mut v, &s0.f, rev0))?;
                ts_ops::with(op1, StageF32(&mut v, &s1.f, rev1))?;
                self.write_f32_from(&piece[1], &v, regions)?;
            }
            return Ok(());
        }
        match domain {
            Domain::F32 => {
                let mut v = self.read_f32(inp)?;
                ts_ops::with(op0, StageF32(&mut v, &s0.f, rev0))?;
                ts_ops::with(op1, StageF32(&mut v, &s1.f, rev1))?;
                self.write_f32(out, &v, regions)
            }
            Domain::I32 => {
                let mut v = i32s(&self.read_as(inp, Dtype::Int32)?);
                ts_int_ops::with(op0, StageI32(&mut v, &s0.i, rev0))?;
                ts_int_ops::with(op1, StageI32(&mut v, &s1.i, rev1))?;
                self.write_from(out, Dtype::Int32, &i32_bytes(&v), regions)
            }
            Domain::I64 => {
                let mut v = i64s(&self.read_as(inp, Dtype::Uint64)?);
                ta_ops::with(op0, StageI64(&mut v, &s0.l, rev0))?;
                ta_ops::with(op1, StageI64(&mut v, &s1.l, rev1))?;
                self.write_from(out, Dtype::Uint64, &i64_bytes(&v), regions)
            }
        }
    }

    /// The fused pass straight from the source buffer into a different destination buffer, for
    /// fp32 → fp32 or bf16 → bf16 when both APs are single contiguous runs. Returns false when
    /// that does not apply.
    #[allow(clippy::too_many_arguments, reason = "the two stages' fields")]
    fn tensor_scalar_direct(
        &mut self,
        inp: &AccessPattern,
        out: &AccessPattern,
        op0: AluOp,
        op1: AluOp,
        c: (f32, f32),
        rev: (bool, bool),
        regions: &mut Written,
    ) -> Res<bool> {
        if !self.uncast(inp) || !self.uncast(out) {
            return Ok(false);
        }
        let (Some(a), Some(b)) =
            (contiguous(&self.memory.layout(inp.loc), inp)?, contiguous(&self.memory.layout(out.loc), out)?)
        else {
            return Ok(false);
        };
        let nan = self.profile().nan_sign;
        let done = self.memory.with_two(inp.loc, out.loc, |sb, _, db, _| match inp.dtype {
            Dtype::Bfloat16 => {
                let (src, vals) = (sb[a.clone()].as_chunks::<2>().0, db[b.clone()].as_chunks_mut::<2>().0);
                ts_ops::with(op0, Fused { codec: Bf16(nan), src: Some(src), vals, c, rev, op1 })
            }
            _ => {
                let (src, vals) = (sb[a.clone()].as_chunks::<4>().0, db[b.clone()].as_chunks_mut::<4>().0);
                ts_ops::with(op0, Fused { codec: Fp32, src: Some(src), vals, c, rev, op1 })
            }
        });
        let Some(r) = done else { return Ok(false) };
        r??;
        let n = b.len() as u64;
        let memory = &mut self.memory;
        regions.record_region(|| memory.buffer_mut(out.loc).0[b.clone()].to_vec(), n);
        Ok(true)
    }

    /// TensorScalar: immediates `const0`/`const1` (seed 000 §2.2).
    pub(crate) fn tensor_scalar(
        &mut self,
        i: &'p Instruction,
        t: &TensorScalarFields,
        regions: &mut Written,
    ) -> Res<()> {
        let domain = if is_bitvec(&[t.op0, t.op1]) { Domain::I32 } else { Domain::F32 };
        let s0 = ScalarSet::one(t.const0.get(), domain, self)?;
        let s1 = ScalarSet::one(t.const1.get(), domain, self)?;
        self.two_stages(i, domain, (t.op0, s0, t.reverse0), (t.op1, s1, t.reverse1), regions)
    }

    /// TensorScalarPtr: scalars from `ins[1]` and `ins[2]` (seed 000 §2.2).
    pub(crate) fn tensor_scalar_ptr(
        &mut self,
        i: &'p Instruction,
        t: &TensorScalarPtrFields,
        regions: &mut Written,
    ) -> Res<()> {
        if t.apply_transpose
            || t.is_scalar_tensor_tensor
            || t.is_tensor_tensor_scan
            || t.acc.is_some_and(|a| a != EngineAccumulationType::Idle)
        {
            return fault(
                FaultKind::NotImplemented,
                "not implemented yet: TensorScalarPtr with apply_transpose, is_scalar_tensor_tensor, is_tensor_tensor_scan or acc",
            );
        }
        let domain = if t.is_tensor_scalar_addr {
            Domain::I64
        } else if is_bitvec(&[t.op0, t.op1]) {
            Domain::I32
        } else {
            Domain::F32
        };
        let total = elements(self.in_ap(i, 0)?)?;
        let s0 = self.scalars(i.ins.get(1), domain, total)?;
        let s1 = self.scalars(i.ins.get(2), domain, total)?;
        self.two_stages(i, domain, (t.op0, s0, t.reverse0), (t.op1, s1, t.reverse1), regions)
    }

    /// TensorTensor: `out = op(in0, in1)`, optionally accumulated into the output (seed 000 §2.3).
    pub(crate) fn tensor_tensor(
        &mut self,
        i: &'p Instruction,
        t: &TensorTensorFields,
        regions: &mut Written,
    ) -> Res<()> {
        let (a, b, out) = (self.in_ap(i, 0)?, self.in_ap(i, 1)?, self.out_ap(i, 0)?);
        let (na, nb) = (elements(a)?, elements(b)?);
        if na != nb {
            return fault(FaultKind::Shape, format!("ins[0] has {na} elements but ins[1] has {nb}"));
        }
        let accumulate =
            matches!(t.acc, Some(EngineAccumulationType::Accumulate | EngineAccumulationType::AddAccumulate));
        if a.dtype.is_integer() && b.dtype.is_integer() {
            let mut x = i32s(&self.read_as(a, Dtype::Int32)?);
            let y = i32s(&self.read_as(b, Dtype::Int32)?);
            ts_int_ops::with(t.op, PairI32(&mut x, &y))?;
            if accumulate {
                let prev = i32s(&self.read_as(out, Dtype::Int32)?);
                ts_int_ops::with(AluOp::Add, PairI32(&mut x, &prev))?;
            }
            return self.write_from(out, Dtype::Int32, &i32_bytes(&x), regions);
        }
        let mut x = self.read_f32(a)?;
        let y = self.read_f32(b)?;
        ts_ops::with(t.op, PairF32(&mut x, &y))?;
        if accumulate {
            let prev = self.read_f32(out)?;
            ts_ops::with(AluOp::Add, PairF32(&mut x, &prev))?;
        }
        self.write_f32(out, &x, regions)
    }
}

/// One stage's scalars in whichever domain the instruction uses.
pub(crate) struct ScalarSet {
    f: Scalars<f32>,
    i: Scalars<i32>,
    l: Scalars<i64>,
}

impl ScalarSet {
    fn absent() -> ScalarSet {
        ScalarSet { f: Scalars::Absent, i: Scalars::Absent, l: Scalars::Absent }
    }

    /// An fp32 immediate in `domain`: as is, RNE-saturated to int32, or by the 64-bit path's
    /// float conversion (re-facts §2).
    fn one(c: f32, domain: Domain, sim: &Simulator<'_>) -> Res<ScalarSet> {
        Ok(match domain {
            Domain::F32 => ScalarSet { f: Scalars::One(c), ..ScalarSet::absent() },
            Domain::I32 => ScalarSet { i: Scalars::One(f32_to_i32(c, sim)?), ..ScalarSet::absent() },
            Domain::I64 => {
                ScalarSet { l: Scalars::One(numerics::alu::f32_to_u64_addr(c) as i64), ..ScalarSet::absent() }
            }
        })
    }
}
