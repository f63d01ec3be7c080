//! TensorScalar, TensorScalarPtr and TensorTensor (seed 000 §2.2, §2.3).
//!
//! `out = op1(op0(x, s0), s1)`, each stage with its operands swapped when its `reverse` flag is
//! set, and a missing scalar passing the value through. The domain is chosen once per
//! instruction: int32 with `ts_int_ops` for bitvec instructions, 64-bit with `ta_ops` for
//! `is_tensor_scalar_addr`, else fp32 with `ts_ops`. Each stage is one monomorphic pass per op.
//! An accumulating TensorTensor folds its result into the output through the shared accumulate
//! (`doEngineAccumReduce`, §2.3). TensorScalarPtr's `apply_transpose`, `is_scalar_tensor_tensor`,
//! `is_tensor_tensor_scan` (nki `scalar_tensor_tensor` / `tensor_tensor_scan`) and accumulating
//! `acc` forms run over the whole tensor in the instruction's domain (fp32, or the int32 /
//! 64-bit words of the integer paths with the same stage passes). In every accumulating kernel
//! here `acc` Accumulate, AddAccumulate and LoadAccumulate add into the output, Idle, Zero and
//! ZeroAccumulate overwrite (docs/fidelity.md L1, D15, T1–T6).
//!
//! The fused immediate-scalar pass over an FP8 tensor large enough runs as a lookup table
//! of itself (`numerics::lut`): the pass's kernel run once over every code, then one lookup per
//! element; the same bytes and faults as the direct pass (docs/fidelity.md F1).

use crate::exec::kit::facts::{Fact, Facts, Verdict};
use crate::exec::kit::fused::{Direct, Pass, Store, has_store, with_store};
use crate::exec::kit::transpose::stream_transpose_index;
use crate::exec::kit::{
    Arg, Cx, Parallelism, Res, ScalarArg, Stop, Written, adds, facts, fault, fnv1a, pieces, same_count,
};
use crate::fault::{FaultCause, Slot};
use crate::memory::Touch;
use bir_ir::ops::{TensorScalarFields, TensorScalarPtrFields, TensorTensorFields};
use bir_ir::{AluClass, AluOp, Dtype, EngineAccumulationType, Instruction};
use numerics::alu::{F32Op, F32Visitor, I32Op, I32Visitor, I64Op, I64Visitor, ta_ops, ts_int_ops, ts_ops};
use numerics::codec::{Codec, Slot as Plain};
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

/// Applies one stage in place: `v = rev ? f(s, v) : f(v, s)`, with `f` a functor's `apply` so
/// the loop is monomorphic.
#[inline(always)]
fn stage<S: Copy, T: Copy>(
    vals: &mut [S],
    s: &Scalars<T>,
    rev: bool,
    get: impl Fn(S) -> T,
    put: impl Fn(T) -> S,
    f: impl Fn(T, T) -> T,
) {
    let run = |chunk: &mut [S], c: T| {
        if rev {
            chunk.iter_mut().for_each(|v| *v = put(f(c, get(*v))));
        } else {
            chunk.iter_mut().for_each(|v| *v = put(f(get(*v), c)));
        }
    };
    match s {
        Scalars::Absent => {}
        Scalars::One(c) => run(vals, *c),
        Scalars::Every { vals: sv, stride } => {
            for (chunk, c) in vals.chunks_mut(*stride).zip(sv) {
                run(chunk, *c);
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
        stage(self.0, self.1, self.2, S::get, S::put, O::apply);
    }
}

struct StageI32<'a>(&'a mut [[u8; 4]], &'a Scalars<i32>, bool);
impl I32Visitor for StageI32<'_> {
    type Out = ();
    fn visit<O: I32Op>(self) {
        stage(self.0, self.1, self.2, i32::from_le_bytes, i32::to_le_bytes, O::apply);
    }
}

struct StageI64<'a>(&'a mut [[u8; 8]], &'a Scalars<i64>, bool);
impl I64Visitor for StageI64<'_> {
    type Out = ();
    fn visit<O: I64Op>(self) {
        stage(self.0, self.1, self.2, i64::from_le_bytes, i64::to_le_bytes, O::apply);
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
                if K::DECODES_BY_TABLE {
                    // Decode a block (table lookups), then a branch-free compute + encode loop
                    // over it that vectorises.
                    let mut buf = [0f32; 512];
                    let mut at = 0;
                    while at < vals.len() {
                        let n = (vals.len() - at).min(buf.len());
                        let block = &mut vals[at..at + n];
                        let from = src.map_or(&*block, |s| &s[at..at + n]);
                        buf.iter_mut().zip(from).for_each(|(b, x)| *b = codec.decode(*x));
                        block.iter_mut().zip(&buf).for_each(|(v, x)| *v = f(*x));
                        at += n;
                    }
                    return;
                }
                match src {
                    Some(src) => vals.iter_mut().zip(src).for_each(|(v, x)| *v = f(codec.decode(*x))),
                    None => vals.iter_mut().for_each(|v| *v = f(codec.decode(*v))),
                }
            }
        }
        let op1 = self.op1;
        ts_ops::with(op1, Second::<O0, K>(self, std::marker::PhantomData))
    }
}

/// TensorScalar's two stages from `src` (or in place) into `dst`, chunked across threads; with
/// immediate scalars each output element is a function of its own input element's bits alone
/// (the codec carries the profile's NaN and FP8 rules, both fixed for the instruction; the fused
/// kernel reads no neighbour, position or state, and faults on nothing but an op outside
/// `ts_ops`, which it does before touching an element), so an FP8 store may run it as a lookup
/// table (`Store::by_table`, docs/fidelity.md F1).
struct StagesPass<'a> {
    direct: Direct<'a>,
    ops: StageOps,
}

/// Both stages' ops, immediates and reverse flags.
type StageOps = (AluOp, AluOp, (f32, f32), (bool, bool));

/// The fused two-stage kernel over one slice: `vals[k] = op1(op0(src[k], c0), c1)` (or in place).
/// The direct pass runs it over each chunk; [`stages_by_table`] over every code once.
fn stages_kernel<K: Codec>(codec: K, src: Option<&[K::C]>, vals: &mut [K::C], ops: StageOps) -> Res<()> {
    let (op0, op1, c, rev) = ops;
    ts_ops::with(op0, Fused { codec, src, vals, c, rev, op1 })
        .map_err(op_error("op0"))?
        .map_err(op_error("op1"))
}

impl Pass for StagesPass<'_> {
    fn run<K: Store>(mut self, codec: K) -> Res<()> {
        let ops = self.ops;
        if let Some(r) =
            codec.by_table(&mut self.direct, |k, every, table| stages_kernel(k, Some(every), table, ops))
        {
            return r;
        }
        let Direct { par, src, dst, .. } = self.direct;
        let src = src.map(K::view);
        par.chunks(K::view_mut(dst), 1, |off, chunk| {
            stages_kernel(codec, src.map(|s| &s[off..off + chunk.len()]), chunk, ops)
        })
    }
}

/// TensorTensor's `dst = op(a, b)`, or `dst = op(dst, dst)` in place, chunked across threads.
struct PairPass<'a> {
    par: Parallelism,
    ab: Option<(&'a [u8], &'a [u8])>,
    dst: &'a mut [u8],
    op: AluOp,
}

impl Pass for PairPass<'_> {
    fn run<K: Store>(self, codec: K) -> Res<()> {
        /// The two inputs of one chunk, or none when the pass runs in place.
        type Inputs<'a, C> = Option<(&'a [C], &'a [C])>;
        struct Go<'a, K: Codec>(K, Inputs<'a, K::C>, &'a mut [K::C]);
        impl<K: Codec> F32Visitor for Go<'_, K> {
            type Out = ();
            fn visit<O: F32Op>(self) {
                let Go(codec, ab, out) = self;
                match ab {
                    Some((a, b)) => out.iter_mut().zip(a.iter().zip(b)).for_each(|(o, (x, y))| {
                        *o = codec.encode(O::apply(codec.decode(*x), codec.decode(*y)));
                    }),
                    None => out.iter_mut().for_each(|o| {
                        let x = codec.decode(*o);
                        *o = codec.encode(O::apply(x, x));
                    }),
                }
            }
        }
        let op = self.op;
        let ab = self.ab.map(|(a, b)| (K::view(a), K::view(b)));
        self.par.chunks(K::view_mut(self.dst), 1, |off, chunk| {
            let ab = ab.map(|(a, b)| (&a[off..off + chunk.len()], &b[off..off + chunk.len()]));
            ts_ops::with(op, Go(codec, ab, chunk)).map_err(op_error("op"))
        })
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

struct PairI32<'a>(&'a mut [[u8; 4]], &'a [[u8; 4]]);
impl I32Visitor for PairI32<'_> {
    type Out = ();
    fn visit<O: I32Op>(self) {
        self.0.iter_mut().zip(self.1).for_each(|(a, b)| {
            *a = O::apply(i32::from_le_bytes(*a), i32::from_le_bytes(*b)).to_le_bytes();
        });
    }
}

/// Element-wise `a[k] = rev ? f(b[k], a[k]) : f(a[k], b[k])`, values held as `S`, computed as `T`.
#[inline(always)]
fn pair_rev<S: Copy, T: Copy>(
    a: &mut [S],
    b: &[S],
    rev: bool,
    get: impl Fn(S) -> T,
    put: impl Fn(T) -> S,
    f: impl Fn(T, T) -> T,
) {
    if rev {
        a.iter_mut().zip(b).for_each(|(a, b)| *a = put(f(get(*b), get(*a))));
    } else {
        a.iter_mut().zip(b).for_each(|(a, b)| *a = put(f(get(*a), get(*b))));
    }
}

/// [`pair_rev`] in each domain (the scalar-tensor-tensor second stage).
struct PairRevF32<'a>(&'a mut [f32], &'a [f32], bool);
impl F32Visitor for PairRevF32<'_> {
    type Out = ();
    fn visit<O: F32Op>(self) {
        pair_rev(self.0, self.1, self.2, |v| v, |v| v, O::apply);
    }
}

struct PairRevI32<'a>(&'a mut [[u8; 4]], &'a [[u8; 4]], bool);
impl I32Visitor for PairRevI32<'_> {
    type Out = ();
    fn visit<O: I32Op>(self) {
        pair_rev(self.0, self.1, self.2, i32::from_le_bytes, i32::to_le_bytes, O::apply);
    }
}

struct PairRevI64<'a>(&'a mut [[u8; 8]], &'a [[u8; 8]], bool);
impl I64Visitor for PairRevI64<'_> {
    type Out = ();
    fn visit<O: I64Op>(self) {
        pair_rev(self.0, self.1, self.2, i64::from_le_bytes, i64::to_le_bytes, O::apply);
    }
}

/// The tensor-tensor scan over values held as `S` and computed as `T`: per row of `free`
/// elements, `r = inits[row]`, then `r = op1(op0(x, r), y)` (operands swapped by the reverse
/// flags), written over `x`.
struct Scan<'a, S, T> {
    x: &'a mut [S],
    y: &'a [S],
    inits: &'a [T],
    free: usize,
    rev: (bool, bool),
    op1: AluOp,
}

/// The scan's loop, both ops resolved.
#[inline(always)]
fn scan_rows<S: Copy, T: Copy>(
    s: Scan<'_, S, T>,
    get: impl Fn(S) -> T,
    put: impl Fn(T) -> S,
    f0: impl Fn(T, T) -> T,
    f1: impl Fn(T, T) -> T,
) {
    let Scan { x, y, inits, free, rev: (r0, r1), .. } = s;
    if free == 0 {
        return;
    }
    for ((xr, yr), init) in x.chunks_mut(free).zip(y.chunks(free)).zip(inits) {
        let mut r = *init;
        for (xv, yv) in xr.iter_mut().zip(yr) {
            let (xe, ye) = (get(*xv), get(*yv));
            let u = if r0 { f0(r, xe) } else { f0(xe, r) };
            r = if r1 { f1(ye, u) } else { f1(u, ye) };
            *xv = put(r);
        }
    }
}

/// The scan's two-level dispatch (op0, then op1 inside it) in one domain.
macro_rules! scan_visitor {
    ($visitor:ident, $op:ident, $table:ident, $s:ty, $t:ty, $get:expr, $put:expr) => {
        impl $visitor for Scan<'_, $s, $t> {
            type Out = Result<(), numerics::NumericsError>;
            fn visit<O0: $op>(self) -> Self::Out {
                struct Second<'a, O0>(Scan<'a, $s, $t>, std::marker::PhantomData<O0>);
                impl<O0: $op> $visitor for Second<'_, O0> {
                    type Out = ();
                    fn visit<O1: $op>(self) {
                        scan_rows(self.0, $get, $put, O0::apply, O1::apply);
                    }
                }
                let op1 = self.op1;
                $table::with(op1, Second::<O0>(self, std::marker::PhantomData))
            }
        }
    };
}

scan_visitor!(F32Visitor, F32Op, ts_ops, f32, f32, |v: f32| v, |v: f32| v);
scan_visitor!(I32Visitor, I32Op, ts_int_ops, [u8; 4], i32, i32::from_le_bytes, i32::to_le_bytes);
scan_visitor!(I64Visitor, I64Op, ta_ops, [u8; 8], i64, i64::from_le_bytes, i64::to_le_bytes);

/// An integer compute domain of TensorScalarPtr (seed 000 §2.2): int32 with `ts_int_ops`
/// (bitvec) or 64-bit with `ta_ops` (`is_tensor_scalar_addr`). Its values live as little-endian
/// words of its container dtype; the stage, pair and scan passes are the shared ones above.
trait IntDomain {
    /// The container the data is converted to on read and from on write.
    const DTYPE: Dtype;
    const DOMAIN: Domain;
    type W: Copy;
    type T: Copy + Default;
    fn words(b: &mut [u8]) -> &mut [Self::W];
    fn words_of(b: &[u8]) -> &[Self::W];
    fn pick(s: &ScalarSet) -> &Scalars<Self::T>;
    fn stage(
        op: AluOp,
        v: &mut [Self::W],
        s: &Scalars<Self::T>,
        rev: bool,
    ) -> Result<(), numerics::NumericsError>;
    fn pair(op: AluOp, v: &mut [Self::W], z: &[Self::W], rev: bool) -> Result<(), numerics::NumericsError>;
    fn scan(op0: AluOp, s: Scan<'_, Self::W, Self::T>) -> Res<()>;
}

struct Int32;
impl IntDomain for Int32 {
    const DTYPE: Dtype = Dtype::Int32;
    const DOMAIN: Domain = Domain::I32;
    type W = [u8; 4];
    type T = i32;
    fn words(b: &mut [u8]) -> &mut [[u8; 4]] {
        b.as_chunks_mut::<4>().0
    }
    fn words_of(b: &[u8]) -> &[[u8; 4]] {
        b.as_chunks::<4>().0
    }
    fn pick(s: &ScalarSet) -> &Scalars<i32> {
        &s.i
    }
    fn stage(
        op: AluOp,
        v: &mut [[u8; 4]],
        s: &Scalars<i32>,
        rev: bool,
    ) -> Result<(), numerics::NumericsError> {
        ts_int_ops::with(op, StageI32(v, s, rev))
    }
    fn pair(op: AluOp, v: &mut [[u8; 4]], z: &[[u8; 4]], rev: bool) -> Result<(), numerics::NumericsError> {
        ts_int_ops::with(op, PairRevI32(v, z, rev))
    }
    fn scan(op0: AluOp, s: Scan<'_, [u8; 4], i32>) -> Res<()> {
        ts_int_ops::with(op0, s).map_err(op_error("op0"))?.map_err(op_error("op1"))
    }
}

struct Int64;
impl IntDomain for Int64 {
    const DTYPE: Dtype = Dtype::Uint64;
    const DOMAIN: Domain = Domain::I64;
    type W = [u8; 8];
    type T = i64;
    fn words(b: &mut [u8]) -> &mut [[u8; 8]] {
        b.as_chunks_mut::<8>().0
    }
    fn words_of(b: &[u8]) -> &[[u8; 8]] {
        b.as_chunks::<8>().0
    }
    fn pick(s: &ScalarSet) -> &Scalars<i64> {
        &s.l
    }
    fn stage(
        op: AluOp,
        v: &mut [[u8; 8]],
        s: &Scalars<i64>,
        rev: bool,
    ) -> Result<(), numerics::NumericsError> {
        ta_ops::with(op, StageI64(v, s, rev))
    }
    fn pair(op: AluOp, v: &mut [[u8; 8]], z: &[[u8; 8]], rev: bool) -> Result<(), numerics::NumericsError> {
        ta_ops::with(op, PairRevI64(v, z, rev))
    }
    fn scan(op0: AluOp, s: Scan<'_, [u8; 8], i64>) -> Res<()> {
        ta_ops::with(op0, s).map_err(op_error("op0"))?.map_err(op_error("op1"))
    }
}

/// `apply_transpose`'s 32 × 32 partition transpose (StreamTranspose's mapping, as TensorReduce's;
/// seed 000 §3.1, §5.3): element (p, e) of `src` (rows of `free`) moves to partition
/// `(p & !31) | (e & 31)`, element `(e & !31) | (p & 31)` of `dst` (the same length).
fn transpose32<W: Copy>(src: &[W], dst: &mut [W], free: usize) {
    if free == 0 {
        return;
    }
    for (p, row) in src.chunks(free).enumerate() {
        for (e, v) in row.iter().enumerate() {
            if let Some(d) = dst.get_mut(stream_transpose_index(p, e, free)) {
                *d = *v;
            }
        }
    }
}

/// The per-partition initial values of a scan from its `ins[2]` scalar set: absent → the
/// domain's zero, an immediate for every row, an AP with one value per partition.
fn row_inits<T: Copy + Default>(s: &Scalars<T>, parts: usize, free: usize) -> Res<Vec<T>> {
    Ok(match s {
        Scalars::Absent => crate::alloc::filled(parts, T::default())?,
        Scalars::One(c) => crate::alloc::filled(parts, *c)?,
        Scalars::Every { vals, stride } if *stride == free => crate::alloc::copied(vals)?,
        Scalars::Every { vals, .. } => {
            return fault(FaultCause::ScalarCount {
                slot: Slot::In(2),
                scalars: vals.len() as u64,
                elements: parts as u64,
            });
        }
    })
}

/// The reference's bitvec predicate is not pinned (re-facts §2); ours: an instruction is bitvec
/// when any of its non-bypass ops is a bit operation (docs/fidelity.md S3, ASSUMED).
pub(crate) fn is_bitvec(ops: &[AluOp]) -> bool {
    ops.iter().any(|o| o.class() == AluClass::Bitvec)
}

/// TensorScalarPtr (`tensor_scalar_ptr`): every form (plain, apply_transpose,
/// scalar-tensor-tensor, scan, any `acc`) runs in the domain its flags and ops pick (fidelity
/// S3, T1-T5), except a scan with scalar-tensor-tensor (a bad-field fault, T6).
pub(crate) fn classify_ptr(q: &dyn Facts) -> Verdict {
    if let Some(v) = facts::classify_offsets(q) {
        return v;
    }
    let scan = q.yes(Fact::Scan);
    if scan && q.yes(Fact::ScalarTensorTensor) {
        return Verdict::rejected(
            "is_tensor_tensor_scan with is_scalar_tensor_tensor (a bad-field fault, T6)",
        );
    }
    match (scan, q.yes(Fact::Addr), q.yes(Fact::IntOps)) {
        (true, true, _) => Verdict::runs("tensor_tensor_scan on the 64-bit path (ta_ops)"),
        (true, false, true) => Verdict::runs("tensor_tensor_scan on the int32 path (ts_int_ops)"),
        (true, false, false) => Verdict::runs("tensor_tensor_scan in fp32 (ts_ops)"),
        (false, true, _) => Verdict::runs("the 64-bit path (ta_ops), every form and acc"),
        (false, false, true) => Verdict::runs("the int32 path (ts_int_ops), every form and acc"),
        (false, false, false) => Verdict::runs("fp32 (ts_ops), every form and acc"),
    }
}

/// An op field's numerics error.
#[cold]
fn op_error(field: &'static str) -> impl FnOnce(numerics::NumericsError) -> Stop {
    move |error| FaultCause::Op { field, error }.into()
}

/// An fp32 immediate in `domain`: as is, RNE-saturated to int32, or by the 64-bit path's
/// float conversion (re-facts §2).
fn scalar_one(cx: &Cx<'_>, c: f32, domain: Domain) -> Res<ScalarSet> {
    Ok(match domain {
        Domain::F32 => ScalarSet { f: Scalars::One(c), ..ScalarSet::absent() },
        Domain::I32 => {
            let mut out = [0u8; 4];
            numerics::cast(Dtype::Float32, &c.to_le_bytes(), Dtype::Int32, &mut out, cx.profile())
                .map_err(op_error("scalar"))?;
            ScalarSet { i: Scalars::One(i32::from_le_bytes(out)), ..ScalarSet::absent() }
        }
        Domain::I64 => {
            ScalarSet { l: Scalars::One(numerics::alu::f32_to_u64_addr(c) as i64), ..ScalarSet::absent() }
        }
    })
}

/// A scalar operand (`ins[k]`) in a domain, for `total` data elements.
fn scalars(cx: &mut Cx<'_>, i: &Instruction, k: usize, domain: Domain, total: usize) -> Res<ScalarSet> {
    let (a, stride) = match cx.scalar_arg(i, k, total)? {
        ScalarArg::Absent => return Ok(ScalarSet::absent()),
        ScalarArg::Imm(c) => return scalar_one(cx, c, domain),
        ScalarArg::Every { arg, stride } => (arg, stride),
    };
    Ok(match domain {
        Domain::F32 => {
            let mut vals = Vec::new();
            cx.read_f32(a, &mut vals)?;
            ScalarSet { f: Scalars::Every { vals, stride }, ..ScalarSet::absent() }
        }
        Domain::I32 => {
            let mut bytes = Vec::new();
            cx.read(a, Dtype::Int32, &mut bytes)?;
            let c = bytes.as_chunks::<4>().0;
            let vals = crate::alloc::collected(c.len(), c.iter().map(|c| i32::from_le_bytes(*c)))?;
            ScalarSet { i: Scalars::Every { vals, stride }, ..ScalarSet::absent() }
        }
        Domain::I64 => {
            let mut bytes = Vec::new();
            cx.read(a, Dtype::Uint64, &mut bytes)?;
            let c = bytes.as_chunks::<8>().0;
            let vals = crate::alloc::collected(c.len(), c.iter().map(|c| i64::from_le_bytes(*c)))?;
            ScalarSet { l: Scalars::Every { vals, stride }, ..ScalarSet::absent() }
        }
    })
}

/// Runs the two stages over the instruction's data in `domain` and writes the output.
fn two_stages(
    cx: &mut Cx<'_>,
    i: &Instruction,
    domain: Domain,
    stages: [(AluOp, ScalarSet, bool); 2],
    regions: &mut Written,
) -> Res<()> {
    let [(op0, s0, rev0), (op1, s1, rev1)] = stages;
    let (inp, out) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let consts = match (&s0.f, &s1.f) {
        (Scalars::One(a), Scalars::One(b)) if domain == Domain::F32 => Some((*a, *b)),
        _ => None,
    };
    if let Some(c) = consts
        && inp.ap.dtype == out.ap.dtype
        && has_store(inp.ap.dtype)
        && tensor_scalar_direct(cx, inp, out, op0, op1, c, (rev0, rev1), regions)?
    {
        return Ok(());
    }
    let uniform = |s: &Scalars<f32>| !matches!(s, Scalars::Every { .. });
    if domain == Domain::F32
        && uniform(&s0.f)
        && uniform(&s1.f)
        && !cx.overlaps(&[inp], &[out])
        && let Some(pieces) = pieces(&[inp, out])?
    {
        if inp.ap.dtype == Dtype::Float32 && out.ap.dtype == Dtype::Float32 {
            // fp32 in and out: the stages run on the bytes themselves, fused into one pass
            // when both scalars are immediates.
            let mut bytes = cx.pool.take();
            let r = (|| {
                for piece in &pieces {
                    let (pi, po) = (inp.with(&piece[0]), out.with(&piece[1]));
                    cx.read(pi, Dtype::Float32, &mut bytes)?;
                    let v = bytes.as_chunks_mut::<4>().0;
                    if let Some(c) = consts {
                        let fused =
                            Fused { codec: Plain::new(), src: None, vals: v, c, rev: (rev0, rev1), op1 };
                        ts_ops::with(op0, fused).map_err(op_error("op0"))?.map_err(op_error("op1"))?;
                    } else {
                        ts_ops::with(op0, StageF32(v, &s0.f, rev0)).map_err(op_error("op0"))?;
                        ts_ops::with(op1, StageF32(v, &s1.f, rev1)).map_err(op_error("op1"))?;
                    }
                    cx.write(po, Dtype::Float32, &bytes, regions)?;
                }
                Ok(())
            })();
            cx.pool.give(bytes);
            return r;
        }
        let mut v = cx.pool.take_f32();
        let r = (|| {
            for piece in &pieces {
                cx.read_f32(inp.with(&piece[0]), &mut v)?;
                ts_ops::with(op0, StageF32(&mut v, &s0.f, rev0)).map_err(op_error("op0"))?;
                ts_ops::with(op1, StageF32(&mut v, &s1.f, rev1)).map_err(op_error("op1"))?;
                cx.write_f32(out.with(&piece[1]), &v, regions)?;
            }
            Ok(())
        })();
        cx.pool.give_f32(v);
        return r;
    }
    // The whole tensor: every input read before the output is written.
    match domain {
        Domain::F32 => {
            let mut v = cx.pool.take_f32();
            let r = (|| {
                cx.read_f32(inp, &mut v)?;
                ts_ops::with(op0, StageF32(&mut v, &s0.f, rev0)).map_err(op_error("op0"))?;
                ts_ops::with(op1, StageF32(&mut v, &s1.f, rev1)).map_err(op_error("op1"))?;
                cx.write_f32(out, &v, regions)
            })();
            cx.pool.give_f32(v);
            r
        }
        Domain::I32 => {
            let mut b = cx.pool.take();
            let r = (|| {
                cx.read(inp, Dtype::Int32, &mut b)?;
                let v = b.as_chunks_mut::<4>().0;
                ts_int_ops::with(op0, StageI32(v, &s0.i, rev0)).map_err(op_error("op0"))?;
                ts_int_ops::with(op1, StageI32(v, &s1.i, rev1)).map_err(op_error("op1"))?;
                cx.write(out, Dtype::Int32, &b, regions)
            })();
            cx.pool.give(b);
            r
        }
        Domain::I64 => {
            let mut b = cx.pool.take();
            let r = (|| {
                cx.read(inp, Dtype::Uint64, &mut b)?;
                let v = b.as_chunks_mut::<8>().0;
                ta_ops::with(op0, StageI64(v, &s0.l, rev0)).map_err(op_error("op0"))?;
                ta_ops::with(op1, StageI64(v, &s1.l, rev1)).map_err(op_error("op1"))?;
                cx.write(out, Dtype::Uint64, &b, regions)
            })();
            cx.pool.give(b);
            r
        }
    }
}

/// The fused pass straight from the source buffer into a different destination buffer (or in
/// place when the APs are the same), when input and output are one dtype with a [`Store`]
/// (fp32, bf16, the FP8 formats) and single contiguous runs. Returns false when that does not
/// apply.
#[expect(clippy::too_many_arguments, reason = "the two stages' fields")]
fn tensor_scalar_direct(
    cx: &mut Cx<'_>,
    inp: Arg<'_>,
    out: Arg<'_>,
    op0: AluOp,
    op1: AluOp,
    c: (f32, f32),
    rev: (bool, bool),
    regions: &mut Written,
) -> Res<bool> {
    let (Some(a), Some(b)) = (cx.contiguous(inp)?, cx.contiguous(out)?) else {
        return Ok(false);
    };
    if a.len() != b.len() {
        return Ok(false); // the general path reports the count mismatch
    }
    let (profile, par) = (*cx.profile(), cx.options.parallelism);
    let ops = (op0, op1, c, rev);
    let dt = out.ap.dtype;
    let touch = Touch { range: Some(b.clone()), covers: inp.ap != out.ap };
    let (mut table, mut codes) = (cx.pool.take(), cx.pool.take());
    let lut = Some((&mut table, &mut codes));
    let r = if inp.ap == out.ap {
        // In place over one run: each element is read before its own write, by nobody else.
        let (buf, _) = cx.memory.buffer_for(out.ap.loc, &touch);
        let pass = StagesPass { direct: Direct { par, src: None, dst: &mut buf[b.clone()], lut }, ops };
        Some(with_store(dt, &profile, pass).unwrap_or(Ok(())))
    } else {
        let ts = Touch { range: Some(a.clone()), covers: false };
        cx.memory.with_two((inp.ap.loc, &ts), (out.ap.loc, &touch), |sb, _, db, _| {
            let pass = StagesPass {
                direct: Direct { par, src: Some(&sb[a.clone()]), dst: &mut db[b.clone()], lut },
                ops,
            };
            with_store(dt, &profile, pass).unwrap_or(Ok(()))
        })
    };
    cx.pool.give(table);
    cx.pool.give(codes);
    let Some(r) = r else { return Ok(false) };
    r?;
    let memory = &mut cx.memory;
    regions.record_region(|h| fnv1a(h, &memory.buffer_for(out.ap.loc, &touch).0[b.clone()]), b.len() as u64);
    Ok(true)
}

/// TensorTensor straight between buffers: inputs and output of one dtype with a [`Store`],
/// each a single contiguous run, and either the output in a buffer neither input lives in, or
/// all three the same AP (`out = op(out, out)` in place). One fused pass per op over chunks of
/// the output, in parallel. Returns false when that does not apply.
fn tensor_tensor_direct(
    cx: &mut Cx<'_>,
    a: Arg<'_>,
    b: Arg<'_>,
    out: Arg<'_>,
    op: AluOp,
    regions: &mut Written,
) -> Res<bool> {
    let (Some(ra), Some(rb), Some(ro)) = (cx.contiguous(a)?, cx.contiguous(b)?, cx.contiguous(out)?) else {
        return Ok(false);
    };
    if ra.len() != ro.len() || rb.len() != ro.len() {
        return Ok(false); // the general path reports the count mismatch
    }
    let (profile, par) = (*cx.profile(), cx.options.parallelism);
    let dt = out.ap.dtype;
    let in_place = a.ap == out.ap && b.ap == out.ap;
    let to = Touch { range: Some(ro.clone()), covers: !in_place };
    if in_place {
        let (buf, _) = cx.memory.buffer_for(out.ap.loc, &to);
        let pass = PairPass { par, ab: None, dst: &mut buf[ro.clone()], op };
        with_store(dt, &profile, pass).unwrap_or(Ok(()))?;
    } else {
        let ta = Touch { range: Some(ra.clone()), covers: false };
        let tb = Touch { range: Some(rb.clone()), covers: false };
        let done = cx.memory.with_reads_write(
            &[(a.ap.loc, &ta), (b.ap.loc, &tb)],
            (out.ap.loc, &to),
            |srcs, dst| {
                let pass = PairPass {
                    par,
                    ab: Some((&srcs[0][ra.clone()], &srcs[1][rb.clone()])),
                    dst: &mut dst[ro.clone()],
                    op,
                };
                with_store(dt, &profile, pass).unwrap_or(Ok(()))
            },
        );
        let Some(r) = done else { return Ok(false) };
        r?;
    }
    let memory = &mut cx.memory;
    regions.record_region(|h| fnv1a(h, &memory.buffer_for(out.ap.loc, &to).0[ro.clone()]), ro.len() as u64);
    Ok(true)
}

/// TensorScalar: immediates `const0`/`const1` (seed 000 §2.2).
pub(crate) fn tensor_scalar(
    cx: &mut Cx<'_>,
    i: &Instruction,
    t: &TensorScalarFields,
    regions: &mut Written,
) -> Res<()> {
    let domain = if is_bitvec(&[t.op0, t.op1]) { Domain::I32 } else { Domain::F32 };
    let s0 = scalar_one(cx, t.const0.get(), domain)?;
    let s1 = scalar_one(cx, t.const1.get(), domain)?;
    two_stages(cx, i, domain, [(t.op0, s0, t.reverse0), (t.op1, s1, t.reverse1)], regions)
}

/// TensorScalarPtr: scalars from `ins[1]` and `ins[2]` (seed 000 §2.2), in the domain the
/// instruction selects (S3, T1). The plain form runs the shared two stages; `apply_transpose`,
/// `is_scalar_tensor_tensor`, `is_tensor_tensor_scan` and the accumulating `acc` values run
/// over the whole tensor in that domain (docs/fidelity.md D15, T1–T6).
pub(crate) fn tensor_scalar_ptr(
    cx: &mut Cx<'_>,
    i: &Instruction,
    t: &TensorScalarPtrFields,
    regions: &mut Written,
) -> Res<()> {
    if t.is_tensor_tensor_scan && t.is_scalar_tensor_tensor {
        return fault(FaultCause::BadField {
            field: "is_scalar_tensor_tensor",
            why: "cannot be combined with is_tensor_tensor_scan (ins[2] would be both the full operand1 \
                  tensor and the scan's initial value)",
        });
    }
    let domain = if t.is_tensor_scalar_addr {
        Domain::I64
    } else if is_bitvec(&[t.op0, t.op1]) {
        Domain::I32
    } else {
        Domain::F32
    };
    let acc = adds(t.acc);
    if t.apply_transpose || t.is_scalar_tensor_tensor || t.is_tensor_tensor_scan || acc.is_some() {
        return match domain {
            Domain::F32 if t.is_tensor_tensor_scan => tensor_tensor_scan(cx, i, t, acc, regions),
            Domain::F32 => tensor_scalar_ptr_f32(cx, i, t, acc, regions),
            Domain::I32 => tensor_scalar_ptr_int::<Int32>(cx, i, t, acc, regions),
            Domain::I64 => tensor_scalar_ptr_int::<Int64>(cx, i, t, acc, regions),
        };
    }
    let total = cx.input(i, 0)?.elements()?;
    let s0 = scalars(cx, i, 1, domain, total)?;
    let s1 = scalars(cx, i, 2, domain, total)?;
    two_stages(cx, i, domain, [(t.op0, s0, t.reverse0), (t.op1, s1, t.reverse1)], regions)
}

/// `ins[k]` of a form that needs a full tensor there (the scalar-tensor-tensor operand1, the
/// scan's data1): an AP, else a located `shape` fault (validation checks only `ins[0]`).
fn tensor_operand<'p>(cx: &Cx<'_>, i: &'p Instruction, k: usize, want: &'static str) -> Res<Arg<'p>> {
    match i.in_ap(k) {
        Some(ap) => Ok(cx.arg(Slot::In(k), ap)),
        None => fault(FaultCause::OperandKind { slot: Slot::In(k), want }),
    }
}

/// `ins[0]`'s shape when `apply_transpose` can take it: partitions and free size multiples of
/// 32, else a `shape` fault.
fn transpose_shape(inp: Arg<'_>) -> Res<(usize, usize)> {
    let (parts, free) = inp.shape()?;
    if !parts.is_multiple_of(32) || !free.is_multiple_of(32) {
        return fault(FaultCause::Dims {
            slot: inp.slot,
            why: "apply_transpose needs partitions and free size that are multiples of 32",
        });
    }
    Ok((parts, free))
}

/// TensorScalarPtr's fp32 forms beyond the plain two stages (seed 000 §2.2; nki
/// `scalar_tensor_tensor`): `apply_transpose` (the input cast to fp32 and 32 × 32
/// partition-transposed with StreamTranspose's mapping, as TensorReduce's), the
/// scalar-tensor-tensor second stage `op1(t, ins[2])` with a full tensor, and the
/// accumulating `acc` values through the shared accumulate.
fn tensor_scalar_ptr_f32(
    cx: &mut Cx<'_>,
    i: &Instruction,
    t: &TensorScalarPtrFields,
    acc: Option<EngineAccumulationType>,
    regions: &mut Written,
) -> Res<()> {
    let (inp, out) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let total = inp.elements()?;
    let mut v = cx.pool.take_f32();
    let mut w = cx.pool.take_f32();
    let r = (|| {
        cx.read_f32(inp, &mut v)?;
        if t.apply_transpose {
            let (_, free) = transpose_shape(inp)?;
            w.clear();
            crate::alloc::resize(&mut w, v.len(), 0.0)?;
            transpose32(&v, &mut w, free);
            std::mem::swap(&mut v, &mut w);
        }
        let s0 = scalars(cx, i, 1, Domain::F32, total)?;
        ts_ops::with(t.op0, StageF32(&mut v, &s0.f, t.reverse0)).map_err(op_error("op0"))?;
        if t.is_scalar_tensor_tensor {
            let b = tensor_operand(cx, i, 2, "an AP: the scalar_tensor_tensor operand1 tensor")?;
            cx.read_f32(b, &mut w)?;
            same_count(
                b.slot,
                v.len(),
                w.len(),
                "scalar_tensor_tensor's operand1 holds one value per data element",
            )?;
            ts_ops::with(t.op1, PairRevF32(&mut v, &w, t.reverse1)).map_err(op_error("op1"))?;
        } else {
            let s1 = scalars(cx, i, 2, Domain::F32, total)?;
            ts_ops::with(t.op1, StageF32(&mut v, &s1.f, t.reverse1)).map_err(op_error("op1"))?;
        }
        cx.finish_f32(out, &v, acc, regions)
    })();
    cx.pool.give_f32(v);
    cx.pool.give_f32(w);
    r
}

/// TensorScalarPtr `is_tensor_tensor_scan` in fp32 (nki `tensor_tensor_scan`): per
/// partition, `r = init` (`ins[2]`: an fp32 immediate or one value per partition), then for
/// each element `r = op1(op0(data0, r), data1)`, `reverse0` swapping op0's operands and
/// `reverse1` making data1 op1's left operand; every `r` written (or accumulated). With
/// `apply_transpose`, data0 alone is transposed first (T2).
fn tensor_tensor_scan(
    cx: &mut Cx<'_>,
    i: &Instruction,
    t: &TensorScalarPtrFields,
    acc: Option<EngineAccumulationType>,
    regions: &mut Written,
) -> Res<()> {
    let (a, out) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let b = tensor_operand(cx, i, 1, "an AP: the tensor_tensor_scan data1 tensor")?;
    let (parts, free) = if t.apply_transpose { transpose_shape(a)? } else { a.shape()? };
    let init = scalars(cx, i, 2, Domain::F32, parts * free)?;
    let inits = row_inits(&init.f, parts, free)?;
    let mut x = cx.pool.take_f32();
    let mut y = cx.pool.take_f32();
    let r = (|| {
        cx.read_f32(a, &mut x)?;
        if t.apply_transpose {
            y.clear();
            crate::alloc::resize(&mut y, x.len(), 0.0)?;
            transpose32(&x, &mut y, free);
            std::mem::swap(&mut x, &mut y);
        }
        cx.read_f32(b, &mut y)?;
        same_count(
            b.slot,
            x.len(),
            y.len(),
            "tensor_tensor_scan's two data inputs hold the same number of elements",
        )?;
        let scan = Scan { x: &mut x, y: &y, inits: &inits, free, rev: (t.reverse0, t.reverse1), op1: t.op1 };
        ts_ops::with(t.op0, scan).map_err(op_error("op0"))?.map_err(op_error("op1"))?;
        cx.finish_f32(out, &x, acc, regions)
    })();
    cx.pool.give_f32(x);
    cx.pool.give_f32(y);
    r
}

/// TensorScalarPtr's forms beyond the plain two stages on an integer path (T1–T5): the data
/// converted to the domain's container (int32 / uint64) and, with `apply_transpose`, its
/// words permuted (no fp32 step); then the stages (the second against a full `ins[2]` tensor
/// for scalar-tensor-tensor) or the scan against `ins[1]`, in `ts_int_ops` / `ta_ops`; the
/// result written or accumulated (wrapping) through the shared accumulate.
fn tensor_scalar_ptr_int<D: IntDomain>(
    cx: &mut Cx<'_>,
    i: &Instruction,
    t: &TensorScalarPtrFields,
    acc: Option<EngineAccumulationType>,
    regions: &mut Written,
) -> Res<()> {
    let (inp, out) = (cx.input(i, 0)?, cx.output(i, 0)?);
    let (parts, free) = if t.apply_transpose { transpose_shape(inp)? } else { inp.shape()? };
    let total = parts * free;
    let (mut x, mut w) = (cx.pool.take(), cx.pool.take());
    let r = (|| {
        cx.read(inp, D::DTYPE, &mut x)?;
        if t.apply_transpose {
            crate::alloc::resize(&mut w, x.len(), 0)?;
            transpose32(D::words_of(&x), D::words(&mut w), free);
            std::mem::swap(&mut x, &mut w);
        }
        let count = |b: &[u8]| D::words_of(b).len();
        if t.is_tensor_tensor_scan {
            let b = tensor_operand(cx, i, 1, "an AP: the tensor_tensor_scan data1 tensor")?;
            let init = scalars(cx, i, 2, D::DOMAIN, total)?;
            let inits = row_inits(D::pick(&init), parts, free)?;
            cx.read(b, D::DTYPE, &mut w)?;
            same_count(
                b.slot,
                count(&x),
                count(&w),
                "tensor_tensor_scan's two data inputs hold the same number of elements",
            )?;
            let scan = Scan {
                x: D::words(&mut x),
                y: D::words_of(&w),
                inits: &inits,
                free,
                rev: (t.reverse0, t.reverse1),
                op1: t.op1,
            };
            D::scan(t.op0, scan)?;
        } else {
            let s0 = scalars(cx, i, 1, D::DOMAIN, total)?;
            D::stage(t.op0, D::words(&mut x), D::pick(&s0), t.reverse0).map_err(op_error("op0"))?;
            if t.is_scalar_tensor_tensor {
                let z = tensor_operand(cx, i, 2, "an AP: the scalar_tensor_tensor operand1 tensor")?;
                cx.read(z, D::DTYPE, &mut w)?;
                same_count(
                    z.slot,
                    count(&x),
                    count(&w),
                    "scalar_tensor_tensor's operand1 holds one value per data element",
                )?;
                D::pair(t.op1, D::words(&mut x), D::words_of(&w), t.reverse1).map_err(op_error("op1"))?;
            } else {
                let s1 = scalars(cx, i, 2, D::DOMAIN, total)?;
                D::stage(t.op1, D::words(&mut x), D::pick(&s1), t.reverse1).map_err(op_error("op1"))?;
            }
        }
        match acc {
            Some(acc) => cx.accumulate(out, acc, D::DTYPE, &x, regions),
            None => cx.write(out, D::DTYPE, &x, regions),
        }
    })();
    cx.pool.give(x);
    cx.pool.give(w);
    r
}

/// TensorTensor: `out = op(in0, in1)`, optionally accumulated into the output (seed 000 §2.3;
/// `acc` Accumulate, AddAccumulate, LoadAccumulate add, the others overwrite: fidelity S5, L1).
pub(crate) fn tensor_tensor(
    cx: &mut Cx<'_>,
    i: &Instruction,
    t: &TensorTensorFields,
    regions: &mut Written,
) -> Res<()> {
    let (a, b, out) = (cx.input(i, 0)?, cx.input(i, 1)?, cx.output(i, 0)?);
    let (na, nb) = (a.elements()?, b.elements()?);
    same_count(b.slot, na, nb, "TensorTensor's two inputs hold the same number of elements")?;
    let acc = adds(t.acc);
    if a.ap.dtype.is_integer() && b.ap.dtype.is_integer() {
        let (mut x, mut y) = (cx.pool.take(), cx.pool.take());
        let r = (|| {
            cx.read(a, Dtype::Int32, &mut x)?;
            cx.read(b, Dtype::Int32, &mut y)?;
            ts_int_ops::with(t.op, PairI32(x.as_chunks_mut::<4>().0, y.as_chunks::<4>().0))
                .map_err(op_error("op"))?;
            match acc {
                Some(acc) => cx.accumulate(out, acc, Dtype::Int32, &x, regions),
                None => cx.write(out, Dtype::Int32, &x, regions),
            }
        })();
        cx.pool.give(x);
        cx.pool.give(y);
        return r;
    }
    if acc.is_none()
        && a.ap.dtype == b.ap.dtype
        && a.ap.dtype == out.ap.dtype
        && has_store(a.ap.dtype)
        && tensor_tensor_direct(cx, a, b, out, t.op, regions)?
    {
        return Ok(());
    }
    let chunks = if cx.overlaps(&[a, b], &[out]) { None } else { pieces(&[a, b, out])? };
    let whole;
    let list: &[Vec<bir_ir::AccessPattern>] = match &chunks {
        Some(p) => p,
        None => {
            whole = [vec![a.ap.clone(), b.ap.clone(), out.ap.clone()]];
            &whole
        }
    };
    let (mut x, mut y) = (cx.pool.take_f32(), cx.pool.take_f32());
    let r = (|| {
        for piece in list {
            cx.read_f32(a.with(&piece[0]), &mut x)?;
            cx.read_f32(b.with(&piece[1]), &mut y)?;
            ts_ops::with(t.op, PairF32(&mut x, &y)).map_err(op_error("op"))?;
            cx.finish_f32(out.with(&piece[2]), &x, acc, regions)?;
        }
        Ok(())
    })();
    cx.pool.give_f32(x);
    cx.pool.give_f32(y);
    r
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
}

#[cfg(test)]
mod tests {
    //! The lookup-table form of the fused TensorScalar pass against the direct pass it replaces
    //! (its slow twin: the same [`StagesPass`] without table buffers), bit for bit.
    use super::{Res, StageOps, StagesPass};
    use crate::exec::kit::Parallelism;
    use crate::exec::kit::fused::{Direct, with_store};
    use bir_ir::{AluOp, Dtype};
    use numerics::Profile;
    use numerics::alu::ts_ops;

    /// Test inputs from the crate's own Mersenne Twister (Memset's generator), not another copy.
    struct Rng(crate::exec::kit::rng::Mt19937_64);
    impl Rng {
        fn new(seed: u64) -> Rng {
            Rng(crate::exec::kit::rng::Mt19937_64::new(seed))
        }
        fn next(&mut self) -> u64 {
            self.0.next_u64()
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// The pass over `x` (into a fresh buffer, or in place), with or without table buffers: the
    /// result bytes, or the pass's error (as text), and whether a table was built.
    fn pass(
        dt: Dtype,
        profile: &Profile,
        x: &[u8],
        in_place: bool,
        ops: StageOps,
        par: Parallelism,
        table: bool,
    ) -> (Result<Vec<u8>, String>, bool) {
        let (mut t, mut c) = (Vec::new(), Vec::new());
        let mut dst = if in_place { x.to_vec() } else { vec![0xA5; x.len()] };
        let lut = if table { Some((&mut t, &mut c)) } else { None };
        let direct = Direct { par, src: if in_place { None } else { Some(x) }, dst: &mut dst, lut };
        let pass = StagesPass { direct, ops };
        let r: Option<Res<()>> = with_store(dt, profile, pass);
        let r = match r {
            Some(Ok(())) => Ok(dst),
            Some(Err(e)) => Err(format!("{e:?}")),
            None => Err("no store".to_owned()),
        };
        (r, !t.is_empty())
    }

    /// Every code once (shuffled), then random codes, `extra` more than the table's break-even
    /// point; NaN payloads, ±0, ±Inf and subnormals are among the codes.
    fn codes(rng: &mut Rng, size: usize, extra: usize) -> Vec<u8> {
        let count = 1usize << (8 * size);
        let mut v: Vec<u8> = (0..count).flat_map(|k| (k as u16).to_le_bytes()[..size].to_vec()).collect();
        for k in (1..count).rev() {
            let j = rng.below(k + 1);
            for b in 0..size {
                v.swap(k * size + b, j * size + b);
            }
        }
        let more = 3 * count + extra;
        v.extend((0..more * size).map(|_| rng.next() as u8));
        v
    }

    #[test]
    fn the_table_pass_is_the_direct_pass_for_every_code() {
        let mut rng = Rng::new(9);
        let dts = [Dtype::Float8E4m3fn, Dtype::Float8E5, Dtype::Float8E4, Dtype::Float8E3];
        let consts = [1.5, 0.25, -0.0, f32::NAN, f32::INFINITY, 1e-3, -300.0, 7.0];
        for round in 0..30 {
            let dt = dts[round % dts.len()];
            let profile = if round % 2 == 0 { Profile::refsim() } else { Profile::nki() };
            let extra = 1 + 2 * rng.below(500);
            let x = codes(&mut rng, dt.size(), extra);
            let ops = ts_ops::MEMBERS;
            let (o0, o1) = (ops[rng.below(ops.len())], ops[rng.below(ops.len())]);
            let c = (consts[rng.below(consts.len())], consts[rng.below(consts.len())]);
            let stage_ops = (o0, o1, c, (rng.below(2) == 1, rng.below(2) == 1));
            let in_place = round % 3 == 0;
            let threads = [1, 2, 7][round % 3];
            let par = Parallelism { threads, grain: 1 + rng.below(3000) };
            let (want, _) = pass(dt, &profile, &x, in_place, stage_ops, par, false);
            let (got, built) = pass(dt, &profile, &x, in_place, stage_ops, par, true);
            assert!(built, "round {round}: no table was built");
            let (want, got) = (want.unwrap(), got.unwrap());
            if let Some(k) = (0..x.len()).find(|&k| want[k] != got[k]) {
                panic!(
                    "round {round} ({dt}, {stage_ops:?}, {threads} threads): byte {k} from input {:#04x}: direct {:#04x}, table {:#04x}",
                    x[k], want[k], got[k]
                );
            }
        }
    }

    #[test]
    fn small_passes_stay_direct_and_an_op_fault_is_the_same() {
        let profile = Profile::refsim();
        let par = Parallelism { threads: 2, grain: 7 };
        let mut rng = Rng::new(4);
        // One element short of the break-even point: no table.
        let x: Vec<u8> = (0..4 * 256 - 1).map(|_| rng.next() as u8).collect();
        let ops = (AluOp::Mult, AluOp::Add, (1.5, 0.25), (false, false));
        let (_, built) = pass(Dtype::Float8E4m3fn, &profile, &x, false, ops, par, true);
        assert!(!built);
        // bf16 stays on its (vectorised) direct pass at any size.
        let x: Vec<u8> = (0..8 << 16).map(|_| rng.next() as u8).collect();
        let (_, built) = pass(Dtype::Bfloat16, &profile, &x, false, ops, par, true);
        assert!(!built);
        // An op outside ts_ops faults alike with and without a table (and before any write).
        let x = codes(&mut rng, 1, 11);
        for bad in [(AluOp::BitwiseAnd, AluOp::Add), (AluOp::Add, AluOp::BitwiseOr)] {
            let ops = (bad.0, bad.1, (1.5, 0.25), (false, true));
            let (want, _) = pass(Dtype::Float8E5, &profile, &x, true, ops, par, false);
            let (got, _) = pass(Dtype::Float8E5, &profile, &x, true, ops, par, true);
            assert!(want.is_err(), "{bad:?}");
            assert_eq!(want, got, "{bad:?}");
        }
    }
}
