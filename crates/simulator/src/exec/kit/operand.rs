//! Operand I/O — the one way kernels read and write memory (seed 000 §1.1: `ins` are read,
//! `outs` written; every operand is an AP read into a flat buffer or written from one, §1.3).
//!
//! - [`Cx::read`] / [`Cx::write`]: an AP's elements as bytes of any dtype. The
//!   conversion chain is always memory dtype → AP dtype → the kernel's dtype (re-facts §4: a
//!   MemoryObject read through an AP of another dtype is cast, element for element), and back.
//! - [`Cx::read_f32`] / [`Cx::write_f32`]: the same in the fp32 domain.
//! - [`Cx::accumulate`]: the read-modify-write fold every accumulating kernel shares
//!   (`cast_copy_or_accumulate`, re-facts §8).
//! - [`Cx::overlaps`]: whether an instruction's outputs share bytes with its inputs, decided
//!   once per instruction so kernels can pick a path that reads everything before writing (§5.1).
//!
//! Buffers come from a [`Pool`], so a kernel allocates nothing once the pool is warm.

use super::lanes::merge_lanes;
use super::{Cx, Res, Stop, bug, fault, unclassified};
use crate::fault::{FaultCause, Slot};
use crate::memory::Touch;
use access_pattern::{ApError, Pattern};
use bir_ir::{AccessPattern, Dtype, EngineAccumulationType, Instruction, MemoryReductionOp};
use std::ops::Range;

/// One operand of an instruction: which slot it is and its AP.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arg<'a> {
    pub(crate) slot: Slot,
    pub(crate) ap: &'a AccessPattern,
    /// The run's memory cap: no buffer sized from this operand may exceed it.
    pub(crate) cap: u64,
}

impl<'a> Arg<'a> {
    /// The same slot with another AP (a piece of it).
    pub(crate) fn with<'b>(self, ap: &'b AccessPattern) -> Arg<'b> {
        Arg { slot: self.slot, ap, cap: self.cap }
    }

    /// The AP's element count (checked arithmetic), refused when buffers of that many elements
    /// (at least 4 bytes each, the fp32 working width) would pass the run's memory cap: every
    /// kernel sizes its buffers from this count, so nothing is allocated past the cap.
    pub(crate) fn elements(self) -> Res<usize> {
        let n = Pattern::of(self.ap).elements().map_err(|e| self.access(e))?;
        let bytes = n.saturating_mul(self.ap.dtype.size().max(4) as u64);
        if bytes > self.cap {
            return fault(FaultCause::TooLarge { slot: self.slot, elements: n, bytes, cap: self.cap });
        }
        usize::try_from(n).map_err(|_| self.access(ApError::Overflow { dim: 0 }))
    }

    /// The values the operand holds: its elements × its dtype's lanes (an `_x4` container holds
    /// 4 values; docs/fidelity.md K1).
    pub(crate) fn values(self) -> Res<usize> {
        let n = self.elements()?;
        n.checked_mul(self.ap.dtype.lanes()).ok_or_else(|| self.access(ApError::Overflow { dim: 0 }))
    }

    /// Partitions (the first level's num) and free elements per partition.
    pub(crate) fn shape(self) -> Res<(usize, usize)> {
        let n = self.elements()?;
        let parts = self.ap.pairs.first().map_or(1, |p| p.num.max(1) as usize);
        Ok((parts, n / parts))
    }

    /// An AP error on this operand.
    #[cold]
    pub(crate) fn access(self, error: ApError) -> Stop {
        FaultCause::Access { slot: self.slot, error }.into()
    }

    /// A numerics error on this operand.
    #[cold]
    pub(crate) fn numerics(self, error: numerics::NumericsError) -> Stop {
        FaultCause::Numerics { slot: self.slot, error }.into()
    }
}

/// A count rule: `Ok` when an operand holds the `expected` number of values, else the located
/// `Count` fault naming it, both numbers and the rule.
#[inline]
pub(crate) fn same_count(slot: Slot, expected: usize, actual: usize, why: &'static str) -> Res<()> {
    if expected == actual {
        return Ok(());
    }
    fault(FaultCause::Count { slot, expected: expected as u64, actual: actual as u64, why })
}

/// Reused buffers. `take` hands out a cleared buffer (keeping its capacity), `give` returns it.
#[derive(Debug, Default)]
pub(crate) struct Pool {
    bytes: Vec<Vec<u8>>,
    f32s: Vec<Vec<f32>>,
}

impl Pool {
    /// The bytes its buffers keep (their capacity): memory an instruction's scratch budget
    /// counts as already spent.
    pub(crate) fn held(&self) -> u64 {
        let bytes: usize = self.bytes.iter().map(Vec::capacity).sum();
        let f32s: usize = self.f32s.iter().map(|v| v.capacity() * size_of::<f32>()).sum();
        (bytes as u64).saturating_add(f32s as u64)
    }

    pub(crate) fn take(&mut self) -> Vec<u8> {
        let mut v = self.bytes.pop().unwrap_or_default();
        v.clear();
        v
    }

    pub(crate) fn give(&mut self, v: Vec<u8>) {
        self.bytes.push(v);
    }

    pub(crate) fn take_f32(&mut self) -> Vec<f32> {
        let mut v = self.f32s.pop().unwrap_or_default();
        v.clear();
        v
    }

    pub(crate) fn give_f32(&mut self, v: Vec<f32>) {
        self.f32s.push(v);
    }
}

/// Casts `src` (values of `from`) into `out` (resized) as `to`, split across threads when
/// neither dtype packs lanes (each element converts on its own).
fn cast_into(
    a: Arg<'_>,
    from: Dtype,
    src: &[u8],
    to: Dtype,
    out: &mut Vec<u8>,
    (profile, par): (&numerics::Profile, super::Parallelism),
) -> Res<()> {
    let values = numerics::codec::values_in(from, src.len());
    crate::alloc::resize(out, values.div_ceil(to.lanes()) * to.size(), 0)?;
    if from.lanes() != 1 || to.lanes() != 1 || values * from.size() != src.len() {
        return numerics::cast(from, src, to, out, profile).map_err(|e| a.numerics(e));
    }
    let (fs, ts) = (from.size(), to.size());
    let par = super::Parallelism { grain: par.grain * ts, ..par };
    par.chunks(out, ts, |off, chunk| {
        let k = off / ts;
        numerics::cast(from, &src[k * fs..(k + chunk.len() / ts) * fs], to, chunk, profile)
    })
    .map_err(|e| a.numerics(e))
}

/// The AP dtype's bytes decoded to fp32 values in `out` (sized), split across threads.
fn decode_par(
    a: Arg<'_>,
    bytes: &[u8],
    out: &mut [f32],
    (profile, par): (&numerics::Profile, super::Parallelism),
) -> Res<()> {
    let dt = a.ap.dtype;
    if dt.lanes() != 1 {
        return numerics::decode_to_f32(dt, bytes, out, profile).map_err(|e| a.numerics(e));
    }
    let size = dt.size();
    par.chunks(out, 1, |off, chunk| {
        numerics::decode_to_f32(dt, &bytes[off * size..(off + chunk.len()) * size], chunk, profile)
    })
    .map_err(|e| a.numerics(e))
}

/// fp32 values encoded to the AP dtype's bytes in `out` (sized), split across threads.
fn encode_par(
    a: Arg<'_>,
    vals: &[f32],
    out: &mut [u8],
    (profile, par): (&numerics::Profile, super::Parallelism),
) -> Res<()> {
    let dt = a.ap.dtype;
    if dt.lanes() != 1 {
        return numerics::encode_from_f32(dt, vals, out, profile).map_err(|e| a.numerics(e));
    }
    let size = dt.size();
    let par = super::Parallelism { grain: par.grain * size, ..par };
    par.chunks(out, size, |off, chunk| {
        let k = off / size;
        numerics::encode_from_f32(dt, &vals[k..k + chunk.len() / size], chunk, profile)
    })
    .map_err(|e| a.numerics(e))
}

impl Cx<'_> {
    /// An fp32 value converted to `dt` (the project cast), as one element's bytes; for an `_x4`
    /// dtype one container with the value cast to the lane dtype in every lane (K1).
    pub(crate) fn f32_as(&self, a: Arg<'_>, v: f32, dt: Dtype) -> Res<Vec<u8>> {
        let mut out = vec![0u8; dt.size()];
        let lanes = [v; 4];
        numerics::encode_from_f32(dt, lanes.get(..dt.lanes()).unwrap_or(&lanes), &mut out, self.profile())
            .map_err(|e| a.numerics(e))?;
        Ok(out)
    }

    /// An operand with the run's memory cap.
    pub(crate) fn arg<'a>(&self, slot: Slot, ap: &'a AccessPattern) -> Arg<'a> {
        Arg { slot, ap, cap: self.options.memory_cap }
    }

    /// `ins[k]`, which validation made an AP.
    pub(crate) fn input<'i>(&self, i: &'i Instruction, k: usize) -> Res<Arg<'i>> {
        match i.in_ap(k) {
            Some(ap) => Ok(self.arg(Slot::In(k), ap)),
            None => bug("a validated input operand is not an access pattern"),
        }
    }

    /// A scalar operand `ins[k]` for `total` data elements (TensorScalarPtr's scalars, an
    /// Activation's parameters; re-facts §7): absent, an immediate, or an AP of values each
    /// covering `total / count` consecutive data elements (a count that does not divide `total`
    /// faults).
    pub(crate) fn scalar_arg<'i>(&self, i: &'i Instruction, k: usize, total: usize) -> Res<ScalarArg<'i>> {
        let ap = match i.ins.get(k) {
            None => return Ok(ScalarArg::Absent),
            Some(bir_ir::Operand::Imm { value, .. }) => return Ok(ScalarArg::Imm(value.as_f64() as f32)),
            Some(bir_ir::Operand::Ap(ap)) => ap,
            Some(_) => {
                return fault(FaultCause::OperandKind { slot: Slot::In(k), want: "an AP or an imm_value" });
            }
        };
        let a = self.arg(Slot::In(k), ap);
        let count = a.elements()?;
        if count == 0 || !total.is_multiple_of(count) {
            return fault(FaultCause::ScalarCount {
                slot: a.slot,
                scalars: count as u64,
                elements: total as u64,
            });
        }
        Ok(ScalarArg::Every { arg: a, stride: total / count })
    }

    /// `outs[k]`, which validation made an AP.
    pub(crate) fn output<'i>(&self, i: &'i Instruction, k: usize) -> Res<Arg<'i>> {
        match i.out_ap(k) {
            Some(ap) => Ok(self.arg(Slot::Out(k), ap)),
            None => bug("a validated output operand is not an access pattern"),
        }
    }

    /// The dtype a location's memory holds: its allocation's.
    pub(crate) fn storage(&self, ap: &AccessPattern) -> Dtype {
        self.f
            .locations
            .get(ap.loc.index())
            .and_then(|l| self.f.allocation(l.alloc))
            .map_or(ap.dtype, |a| a.dtype)
    }

    /// True when the AP reads its memory as the dtype it holds (no cast at the memory boundary).
    pub(crate) fn uncast(&self, ap: &AccessPattern) -> bool {
        self.storage(ap) == ap.dtype
    }

    /// The AP walked in elements of the memory's dtype.
    fn pattern<'a>(&self, a: Arg<'a>) -> Res<Pattern<'a>> {
        if a.ap.dynamic.is_some() {
            return unclassified("access patterns with a dynamic offset");
        }
        let mut p = Pattern::of(a.ap);
        p.elem_size = self.storage(a.ap).size();
        Ok(p)
    }

    /// The AP's elements as stored (memory dtype), into `out` (replacing its contents). The
    /// bytes are appended to the cleared vector, not written over a zero-filled one: the pool's
    /// buffers keep their capacity, so a read costs the copy alone.
    pub(crate) fn read_raw(&mut self, a: Arg<'_>, out: &mut Vec<u8>) -> Res<()> {
        let p = self.pattern(a)?;
        let n = a.elements()?;
        out.clear();
        crate::alloc::reserve(out, n * p.elem_size)?;
        let touch = Touch { range: self.extent(a.ap), covers: false };
        let (buf, layout) = self.memory.buffer_for(a.ap.loc, &touch);
        access_pattern::read_to_vec(buf, &layout, &p, out).map_err(|e| a.access(e))
    }

    /// Writes memory-dtype bytes through the AP, recording them for the trace.
    fn write_raw(&mut self, a: Arg<'_>, bytes: &[u8], regions: &mut Written) -> Res<()> {
        let p = self.pattern(a)?;
        let touch = self.write_touch(a.ap, &p);
        let (buf, layout) = self.memory.buffer_for(a.ap.loc, &touch);
        access_pattern::write(buf, &layout, &p, bytes).map_err(|e| a.access(e))?;
        regions.record(bytes);
        Ok(())
    }

    /// The AP's elements as values of `to`, into `out` (resized): memory dtype → AP dtype → `to`.
    pub(crate) fn read(&mut self, a: Arg<'_>, to: Dtype, out: &mut Vec<u8>) -> Res<()> {
        let storage = self.storage(a.ap);
        let dt = a.ap.dtype;
        if storage == dt && dt == to {
            return self.read_raw(a, out);
        }
        let mut raw = self.pool.take();
        let r = self.read_raw(a, &mut raw).and_then(|()| {
            if storage == dt || dt == to {
                cast_into(a, storage, &raw, to, out, (&self.profile, self.options.parallelism))
            } else {
                let mut mid = self.pool.take();
                let r = cast_into(a, storage, &raw, dt, &mut mid, (&self.profile, self.options.parallelism))
                    .and_then(|()| {
                        cast_into(a, dt, &mid, to, out, (&self.profile, self.options.parallelism))
                    });
                self.pool.give(mid);
                r
            }
        });
        self.pool.give(raw);
        r
    }

    /// The AP's elements decoded to fp32, into `out` (resized).
    pub(crate) fn read_f32(&mut self, a: Arg<'_>, out: &mut Vec<f32>) -> Res<()> {
        let mut bytes = self.pool.take();
        let r = self.read(a, a.ap.dtype, &mut bytes).and_then(|()| {
            crate::alloc::resize(out, numerics::codec::values_in(a.ap.dtype, bytes.len()), 0.0)?;
            decode_par(a, &bytes, out, (&self.profile, self.options.parallelism))
        });
        self.pool.give(bytes);
        r
    }

    /// Checks that an output AP holds exactly `values` values.
    fn holds(&self, a: Arg<'_>, values: usize) -> Res<()> {
        let n = a.elements()? * a.ap.dtype.lanes();
        same_count(a.slot, values, n, "an output holds exactly the values the operation produces")?;
        Ok(())
    }

    /// Writes values of `from` through the AP: `from` → AP dtype → memory dtype.
    pub(crate) fn write(&mut self, a: Arg<'_>, from: Dtype, bytes: &[u8], regions: &mut Written) -> Res<()> {
        self.holds(a, numerics::codec::values_in(from, bytes.len()))?;
        let storage = self.storage(a.ap);
        let dt = a.ap.dtype;
        if from == dt && dt == storage {
            return self.write_raw(a, bytes, regions);
        }
        let mut raw = self.pool.take();
        let r = if from == dt || dt == storage {
            cast_into(a, from, bytes, storage, &mut raw, (&self.profile, self.options.parallelism))
        } else {
            let mut mid = self.pool.take();
            let r = cast_into(a, from, bytes, dt, &mut mid, (&self.profile, self.options.parallelism))
                .and_then(|()| {
                    cast_into(a, dt, &mid, storage, &mut raw, (&self.profile, self.options.parallelism))
                });
            self.pool.give(mid);
            r
        };
        let r = r.and_then(|()| self.write_raw(a, &raw, regions));
        self.pool.give(raw);
        r
    }

    /// Writes values of the AP's dtype through the AP only where `take` (one flag per value, an
    /// `_x4` container's lanes in N9 order) is set. The values are converted to the memory's
    /// dtype as [`Cx::write`] converts them, then merged as bits into what the memory
    /// holds — whole elements, or the bytes (fp8) / nibbles (fp4) of a packed container
    /// ([`merge_lanes`]) — so a value not taken keeps its stored bits exactly, never decoded
    /// and re-encoded (fidelity D9, K1).
    pub(crate) fn write_where(
        &mut self,
        a: Arg<'_>,
        take: &[bool],
        bytes: &[u8],
        regions: &mut Written,
    ) -> Res<()> {
        let dt = a.ap.dtype;
        self.holds(a, numerics::codec::values_in(dt, bytes.len()))?;
        let storage = self.storage(a.ap);
        let (mut conv, mut held) = (self.pool.take(), self.pool.take());
        let r = (|| {
            let new: &[u8] = if storage == dt {
                bytes
            } else {
                cast_into(a, dt, bytes, storage, &mut conv, (&self.profile, self.options.parallelism))?;
                &conv
            };
            self.read_raw(a, &mut held)?;
            let values = numerics::codec::values_in(storage, held.len());
            if values != take.len() || held.len() != new.len() {
                return fault(FaultCause::Count {
                    slot: a.slot,
                    expected: take.len() as u64,
                    actual: values as u64,
                    why: "a predicated write merges one flag per value the output's memory holds",
                });
            }
            merge_lanes(take, new, storage, &mut held);
            self.write_raw(a, &held, regions)
        })();
        self.pool.give(conv);
        self.pool.give(held);
        r
    }

    /// Encodes fp32 values to the AP's dtype and writes them.
    pub(crate) fn write_f32(&mut self, a: Arg<'_>, vals: &[f32], regions: &mut Written) -> Res<()> {
        self.holds(a, vals.len())?;
        let dt = a.ap.dtype;
        let mut bytes = self.pool.take();
        let r = crate::alloc::resize(&mut bytes, vals.len().div_ceil(dt.lanes()) * dt.size(), 0)
            .map_err(Stop::from)
            .and_then(|()| {
                encode_par(a, vals, &mut bytes, (&self.profile, self.options.parallelism))
                    .and_then(|()| self.write(a, dt, &bytes, regions))
            });
        self.pool.give(bytes);
        r
    }

    /// The read-modify-write fold of every accumulating kernel (seed 000 §2.3
    /// `doEngineAccumReduce`, re-facts §8 `cast_copy_or_accumulate`): the result (values of
    /// `from`) is narrowed to the output's dtype as a plain write would narrow it, then added
    /// into what the output holds — floats widened to fp32 with the output as the second
    /// operand and narrowed back (FP8 under config 0), integers with wrap-around. Only the eight
    /// reducible dtypes accumulate; any other is a fault naming the dtype.
    pub(crate) fn accumulate(
        &mut self,
        a: Arg<'_>,
        acc: EngineAccumulationType,
        from: Dtype,
        result: &[u8],
        regions: &mut Written,
    ) -> Res<()> {
        let dt = a.ap.dtype;
        if !dt.is_reducible() {
            return fault(FaultCause::NotReducible { slot: a.slot, dtype: dt, acc });
        }
        self.holds(a, numerics::codec::values_in(from, result.len()))?;
        let (mut mine, mut prev) = (self.pool.take(), self.pool.take());
        let r = (|| {
            let src: &[u8] = if from == dt {
                result
            } else {
                cast_into(a, from, result, dt, &mut mine, (&self.profile, self.options.parallelism))?;
                &mine
            };
            self.read(a, dt, &mut prev)?;
            numerics::accumulate_slice(MemoryReductionOp::Add, dt, &mut prev, src, &self.profile)
                .map_err(|e| a.numerics(e))?;
            self.write(a, dt, &prev, regions)
        })();
        self.pool.give(mine);
        self.pool.give(prev);
        r
    }

    /// Writes fp32 results, or accumulates them into the output when `acc` asks to.
    pub(crate) fn finish_f32(
        &mut self,
        out: Arg<'_>,
        vals: &[f32],
        acc: Option<EngineAccumulationType>,
        regions: &mut Written,
    ) -> Res<()> {
        let Some(acc) = acc else { return self.write_f32(out, vals, regions) };
        let mut bytes = self.pool.take();
        let r = crate::alloc::extend(&mut bytes, vals.len() * 4, vals.iter().flat_map(|v| v.to_le_bytes()))
            .map_err(Into::into)
            .and_then(|()| self.accumulate(out, acc, Dtype::Float32, &bytes, regions));
        self.pool.give(bytes);
        r
    }

    /// Whether any output shares bytes with any input such that a chunked pass (read a piece,
    /// write a piece) could read bytes it already wrote. Identical APs whose elements are all
    /// distinct are safe (every element is read before its own write, and by nobody else).
    pub(crate) fn overlaps(&self, reads: &[Arg<'_>], writes: &[Arg<'_>]) -> bool {
        writes.iter().any(|w| {
            reads.iter().any(|r| {
                if !self.memory.same_buffer(r.ap.loc, w.ap.loc) {
                    return false;
                }
                if r.ap == w.ap && access_pattern::injective(w.ap) {
                    return false;
                }
                match (self.extent(r.ap), self.extent(w.ap)) {
                    (Some(a), Some(b)) => a.start < b.end && b.start < a.end,
                    // Out of bounds or overflowing: the kernel faults; take the safe path.
                    _ => true,
                }
            })
        })
    }

    /// What a write through `ap` touches: its extent, overwritten whole when the AP is one
    /// contiguous ascending run in a linear layout.
    fn write_touch(&self, ap: &AccessPattern, p: &Pattern<'_>) -> Touch {
        let range = self.extent(ap);
        let covers = range.is_some()
            && self.memory.layout(ap.loc).is_linear(p.elem_size)
            && p.runs().is_ok_and(|r| r.remaining() == 1 && r.stride() == 1);
        Touch { range, covers }
    }

    /// The buffer bytes an AP can touch (its lowest to its highest element).
    pub(crate) fn extent(&self, ap: &AccessPattern) -> Option<Range<usize>> {
        let size = self.storage(ap).size();
        let (mut lo, mut hi) = (ap.offset, ap.offset);
        for p in &ap.pairs {
            let d = p.num.checked_sub(1)?.checked_mul(p.step)?;
            if d < 0 {
                lo = lo.checked_add(d)?;
            } else {
                hi = hi.checked_add(d)?;
            }
        }
        let layout = self.memory.layout(ap.loc);
        let (a, b) = (layout.address(lo, size)?, layout.address(hi, size)?);
        Some(a.min(b)..a.max(b) + size)
    }

    /// Faults, as a read or write through it would, when `a` leaves its memory location:
    /// checked before the first of several outputs is written, so none is written when another
    /// would fault.
    pub(crate) fn check_access(&self, a: Arg<'_>) -> Res<()> {
        let p = self.pattern(a)?;
        access_pattern::check_bounds(&self.memory.layout(a.ap.loc), &p).map_err(|e| a.access(e))
    }

    /// The buffer byte range of an AP that is one contiguous ascending run over memory of its
    /// own dtype in a linear layout, if it is one.
    pub(crate) fn contiguous(&self, a: Arg<'_>) -> Res<Option<Range<usize>>> {
        let layout = self.memory.layout(a.ap.loc);
        if a.ap.dynamic.is_some() || !self.uncast(a.ap) || !layout.is_linear(a.ap.dtype.size()) {
            return Ok(None);
        }
        let p = Pattern::of(a.ap);
        access_pattern::check_bounds(&layout, &p).map_err(|e| a.access(e))?;
        let Ok(mut runs) = p.runs() else { return Ok(None) };
        if runs.remaining() != 1 || runs.stride() != 1 {
            return Ok(None);
        }
        let Some(run) = runs.next() else { return Ok(None) };
        let size = a.ap.dtype.size();
        let start = layout.origin() + run.start as usize * size;
        Ok(Some(start..start + run.len as usize * size))
    }
}

/// The accumulation an instruction's `acc` asks of its output, if it adds into it
/// (seed 000 §2.3, §3.1): `Accumulate`, `AddAccumulate` and `LoadAccumulate` — the one rule of
/// docs/fidelity.md L1 (ASSUMED): LoadAccumulate loads the accumulator from the initial-value
/// operand, and a kernel without one (TensorScalarPtr, TensorTensor, TensorReduce,
/// CopyPredicated's side output) loads it from the output, so it adds into what the output
/// holds; absent, `Idle`, `Zero` and `ZeroAccumulate` overwrite. TensorScalarCache, which has
/// the operand (`Imm1Ptr`, seed 000 §2.4), initialises its cache instead (exec/cache.rs).
pub(crate) fn adds(acc: Option<EngineAccumulationType>) -> Option<EngineAccumulationType> {
    acc.filter(|a| {
        matches!(
            a,
            EngineAccumulationType::Accumulate
                | EngineAccumulationType::AddAccumulate
                | EngineAccumulationType::LoadAccumulate
        )
    })
}

/// Records the table entries a scatter wrote (bytes and, when tracing, their contents in plan
/// order).
pub(crate) fn record_entries(
    memory: &mut crate::memory::Memory,
    table: Arg<'_>,
    entry: indirection::Entry<'_>,
    plan: &[indirection::plan::Step],
    regions: &mut Written,
) {
    let size = table.ap.dtype.size();
    let len = entry.len();
    regions.record_region(
        |h| {
            let (buf, layout) = memory.buffer_mut(table.ap.loc);
            let mut out = vec![0u8; plan.len() * len * size];
            let rows: Vec<indirection::plan::Step> = plan
                .iter()
                .enumerate()
                .map(|(k, s)| indirection::plan::Step { row: k, start: s.start })
                .collect();
            let _ = indirection::gather(buf, &layout, size, entry, &rows, &mut out);
            fnv1a(h, &out)
        },
        (plan.len() * len * size) as u64,
    );
}

/// The number of elements a chunked kernel processes at once: large enough to amortise per-chunk
/// work, small enough that the passes over a chunk stay in L1.
pub(crate) const CHUNK_ELEMENTS: usize = 1 << 15;

/// Partitions `[p0, p0 + k)` of an AP: the same free dims, its first level cut down.
pub(crate) fn sub_ap(ap: &AccessPattern, p0: usize, k: usize) -> AccessPattern {
    let mut a = ap.clone();
    if let Some(first) = a.pairs.first_mut() {
        a.offset += first.step * p0 as i64;
        first.num = k as i64;
    }
    a
}

/// Splits same-shaped APs into aligned pieces of about [`CHUNK_ELEMENTS`] elements, in element
/// order: blocks of whole partitions, or, when every AP's free part is one contiguous level,
/// pieces of a partition row. `None` when the APs cannot be split in step (different shapes, a
/// dynamic offset). The caller must have ruled out overlap ([`Cx::overlaps`]).
pub(crate) fn pieces(args: &[Arg<'_>]) -> Res<Option<Vec<Vec<AccessPattern>>>> {
    let mut first = None;
    for a in args {
        let s = a.shape()?;
        if *first.get_or_insert(s) != s || a.ap.dynamic.is_some() {
            return Ok(None);
        }
    }
    let Some((parts, free)) = first else { return Ok(None) };
    let per = (CHUNK_ELEMENTS / free.max(1)).clamp(1, parts.max(1));
    let row_contiguous = args.iter().all(|a| a.ap.pairs.len() == 2 && a.ap.pairs[1].step == 1);
    let mut out = Vec::new();
    if per == 1 && free > CHUNK_ELEMENTS && row_contiguous {
        for p in 0..parts {
            for j0 in (0..free).step_by(CHUNK_ELEMENTS) {
                let len = CHUNK_ELEMENTS.min(free - j0);
                out.push(
                    args.iter()
                        .map(|a| {
                            let mut s = sub_ap(a.ap, p, 1);
                            s.offset += j0 as i64;
                            s.pairs[1].num = len as i64;
                            s
                        })
                        .collect(),
                );
            }
        }
    } else {
        for p0 in (0..parts).step_by(per) {
            out.push(args.iter().map(|a| sub_ap(a.ap, p0, per.min(parts - p0))).collect());
        }
    }
    Ok(Some(out))
}

/// FNV-1a 64 offset basis.
pub(crate) const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// Continues an FNV-1a, 64-bit hash over `bytes`: a stable checksum for the trace, equal for a
/// region written in one piece or in chunks.
pub fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

/// A scalar operand ([`Cx::scalar_arg`]).
pub(crate) enum ScalarArg<'i> {
    /// No such operand.
    Absent,
    /// An immediate (its fp32 value).
    Imm(f32),
    /// An AP, each value covering `stride` consecutive data elements.
    Every { arg: Arg<'i>, stride: usize },
}

/// What an instruction wrote, for the trace: byte count and a running checksum of its output
/// region in AP order. Nothing is hashed when not tracing.
#[derive(Debug)]
pub(crate) struct Written {
    tracing: bool,
    bytes: u64,
    hash: u64,
    /// Inputs outside an activation function's valid range (docs/fidelity.md E6).
    out_of_range: Option<OutOfRange>,
}

/// An instruction's inputs outside its function's documented valid range (an Activation's,
/// docs/fidelity.md E6).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutOfRange {
    /// How many.
    pub count: u64,
    /// The first of them (the fp32 argument of the function).
    pub example: f32,
    /// The function's name.
    pub func: &'static str,
    /// The range as documented.
    pub range: &'static str,
}

impl Written {
    pub(crate) fn new(tracing: bool) -> Written {
        Written { tracing, bytes: 0, hash: FNV_BASIS, out_of_range: None }
    }

    /// Notes inputs outside the valid range of the instruction's function.
    pub(crate) fn note_out_of_range(&mut self, note: OutOfRange) {
        self.out_of_range = Some(note);
    }

    /// The inputs outside the valid range, if any were noted.
    pub(crate) fn out_of_range(&self) -> Option<OutOfRange> {
        self.out_of_range
    }

    /// Records a region written in place: `bytes` counts it; only when tracing, `hash` folds
    /// the region's bytes into the running checksum (`|h| fnv1a(h, region)`, no copy).
    pub(crate) fn record_region(&mut self, hash: impl FnOnce(u64) -> u64, bytes: u64) {
        self.bytes += bytes;
        if self.tracing {
            self.hash = hash(self.hash);
        }
    }

    pub(crate) fn record(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len() as u64;
        if self.tracing {
            self.hash = fnv1a(self.hash, bytes);
        }
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    pub(crate) fn checksums(&self) -> Vec<u64> {
        if self.bytes > 0 { vec![self.hash] } else { Vec::new() }
    }
}
