//! The instruction visitor (re-facts §5): runs a validated program in order, one typed dispatch
//! per instruction, and the operand plumbing every kernel shares (seed 000 §1.1: `ins` are read,
//! `outs` written; every operand is an AP read into a flat buffer or written from one).

mod copy;
mod elementwise;
mod reduce;

use crate::fault::{Fault, FaultKind, SimError};
use crate::memory::Memory;
use access_pattern::{ApError, Pattern};
use bir_ir::{AccessPattern, Dtype, Function, Instruction, Node, Op, OpCategory, Operand, Validated};
use numerics::Profile;

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

/// A kernel's result: a guest fault, or a bug.
pub(crate) enum Stop {
    Fault(FaultKind, String),
    Bug(SimError),
}

impl From<SimError> for Stop {
    fn from(e: SimError) -> Self {
        Stop::Bug(e)
    }
}

impl From<numerics::NumericsError> for Stop {
    fn from(e: numerics::NumericsError) -> Self {
        let kind = match e {
            numerics::NumericsError::UnsupportedOp { .. } => FaultKind::UnsupportedOp,
            numerics::NumericsError::LengthMismatch { .. } => FaultKind::Shape,
            _ => FaultKind::Numerics,
        };
        Stop::Fault(kind, e.to_string())
    }
}

pub(crate) type Res<T> = Result<T, Stop>;

pub(crate) fn fault<T>(kind: FaultKind, msg: impl Into<String>) -> Res<T> {
    Err(Stop::Fault(kind, msg.into()))
}

/// Runs programs. Create one per program run.
pub struct Simulator<'p> {
    f: &'p Function,
    /// The memory store; load inputs before [`Simulator::run`], read outputs after.
    pub memory: Memory,
    profile: Profile,
    trace: Option<Vec<TraceEntry>>,
    executed: u64,
    context: Vec<String>,
    /// Reused buffers of the chunked kernels (no fresh pages per chunk).
    scratch_bytes: Vec<u8>,
    scratch_out: Vec<u8>,
}

impl<'p> Simulator<'p> {
    /// A simulator for a validated program under a fidelity profile.
    pub fn new(program: Validated<'p>, profile: Profile) -> Simulator<'p> {
        Simulator {
            f: &program.program().functions[0],
            memory: Memory::new(&program),
            profile,
            trace: None,
            executed: 0,
            context: Vec::new(),
            scratch_bytes: Vec::new(),
            scratch_out: Vec::new(),
        }
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
            Err((at, Stop::Fault(kind, message))) => Ok(Outcome::Faulted(Fault { kind, at, message })),
            Err((_, Stop::Bug(e))) => Err(e),
        }
    }

    fn nodes(&mut self, nodes: &'p [Node]) -> Result<(), (String, Stop)> {
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
                        return Err((at.join(" › "), stop));
                    }
                }
            }
        }
        Ok(())
    }

    fn instruction(&mut self, i: &'p Instruction) -> Res<()> {
        let mut regions = Written { tracing: self.trace.is_some(), ..Written::default() };
        match &i.op {
            Op::GenericCopy(_) | Op::AbstractCopy(_) | Op::TensorCopy(_) | Op::Load(_) | Op::Save(_) => {
                self.copy(i, &mut regions)?
            }
            Op::Memset(m) => self.memset(i, m, &mut regions)?,
            Op::TensorScalar(t) => self.tensor_scalar(i, t, &mut regions)?,
            Op::TensorScalarPtr(t) => self.tensor_scalar_ptr(i, t, &mut regions)?,
            Op::TensorTensor(t) => self.tensor_tensor(i, t, &mut regions)?,
            Op::TensorReduce(t) => self.tensor_reduce(i, t, &mut regions)?,
            Op::Pool(p) => self.pool(i, p, &mut regions)?,
            Op::TensorScalarCache(t) => self.tensor_scalar_cache(i, t, &mut regions)?,
            op => match op.opcode().category() {
                // Base records and no-ops: named and skipped, as the reference does.
                OpCategory::Base | OpCategory::NoOp => {}
                _ => {
                    return fault(FaultKind::NotImplemented, format!("not implemented yet: {}", op.opcode()));
                }
            },
        }
        self.executed += 1;
        if let Some(trace) = self.trace.as_mut() {
            trace.push(TraceEntry {
                index: self.executed - 1,
                name: i.name.clone(),
                opcode: i.opcode().name(),
                bytes_written: regions.bytes,
                checksums: if regions.bytes > 0 { vec![regions.hash] } else { Vec::new() },
            });
        }
        Ok(())
    }

    // ----- operand plumbing -----

    pub(crate) fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The `k`-th input, which must be an AP.
    pub(crate) fn in_ap(&self, i: &'p Instruction, k: usize) -> Res<&'p AccessPattern> {
        i.in_ap(k).ok_or_else(|| Stop::Bug(SimError(format!("validated ins[{k}] is not an AP"))))
    }

    /// The `k`-th output AP.
    pub(crate) fn out_ap(&self, i: &'p Instruction, k: usize) -> Res<&'p AccessPattern> {
        i.out_ap(k).ok_or_else(|| Stop::Bug(SimError(format!("validated outs[{k}] is not an AP"))))
    }

    fn pattern(ap: &AccessPattern) -> Res<Pattern<'_>> {
        if ap.dynamic.is_some() {
            return fault(
                FaultKind::NotImplemented,
                "not implemented yet: access patterns with a dynamic offset",
            );
        }
        Ok(Pattern::of(ap))
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

    /// The AP's elements as bytes of its dtype, in AP order. When the memory holds another dtype,
    /// the elements are addressed in that dtype and converted (re-facts §4: a MemoryObject read
    /// through an AP of another dtype is cast, element for element).
    pub(crate) fn read_bytes(&mut self, ap: &AccessPattern) -> Res<Vec<u8>> {
        let storage = self.storage(ap);
        let mut p = Self::pattern(ap)?;
        p.elem_size = storage.size();
        let n = p.elements().map_err(ap_fault)? as usize;
        let mut raw = vec![0u8; n * storage.size()];
        let (buf, layout) = self.memory.buffer_mut(ap.loc);
        access_pattern::read(buf, &layout, &p, &mut raw).map_err(ap_fault)?;
        if storage == ap.dtype {
            return Ok(raw);
        }
        let values = numerics::codec::values_in(storage, raw.len());
        let mut out = vec![0u8; values / ap.dtype.lanes() * ap.dtype.size()];
        numerics::cast(storage, &raw, ap.dtype, &mut out, &self.profile)?;
        Ok(out)
    }

    /// Writes bytes of the AP's dtype through the AP (converted to the memory's dtype when it
    /// holds another), recording them for the trace.
    pub(crate) fn write_bytes(
        &mut self,
        ap: &AccessPattern,
        bytes: Vec<u8>,
        regions: &mut Written,
    ) -> Res<()> {
        let storage = self.storage(ap);
        let mut p = Self::pattern(ap)?;
        p.elem_size = storage.size();
        let raw = if storage == ap.dtype {
            bytes
        } else {
            let values = numerics::codec::values_in(ap.dtype, bytes.len());
            let mut raw = vec![0u8; values / storage.lanes() * storage.size()];
            numerics::cast(ap.dtype, &bytes, storage, &mut raw, &self.profile)?;
            raw
        };
        let (buf, layout) = self.memory.buffer_mut(ap.loc);
        access_pattern::write(buf, &layout, &p, &raw).map_err(ap_fault)?;
        regions.record(&raw);
        Ok(())
    }

    /// Reads the AP's element bytes into `out` (exactly their size).
    pub(crate) fn read_into(&mut self, ap: &AccessPattern, out: &mut [u8]) -> Res<()> {
        if !self.uncast(ap) {
            let bytes = self.read_bytes(ap)?;
            out.copy_from_slice(&bytes);
            return Ok(());
        }
        let p = Self::pattern(ap)?;
        let (buf, layout) = self.memory.buffer_mut(ap.loc);
        access_pattern::read(buf, &layout, &p, out).map_err(ap_fault)
    }

    /// Writes element bytes through the AP, recording them for the trace.
    pub(crate) fn write_slice(&mut self, ap: &AccessPattern, bytes: &[u8], regions: &mut Written) -> Res<()> {
        if !self.uncast(ap) {
            return self.write_bytes(ap, bytes.to_vec(), regions);
        }
        let p = Self::pattern(ap)?;
        let (buf, layout) = self.memory.buffer_mut(ap.loc);
        access_pattern::write(buf, &layout, &p, bytes).map_err(ap_fault)?;
        regions.record(bytes);
        Ok(())
    }

    /// The AP's elements decoded to fp32 into `out` (resized), through a reused byte buffer.
    pub(crate) fn read_f32_into(&mut self, ap: &AccessPattern, out: &mut Vec<f32>) -> Res<()> {
        if !self.uncast(ap) {
            *out = self.read_f32(ap)?;
            return Ok(());
        }
        let p = Self::pattern(ap)?;
        let n = p.elements().map_err(ap_fault)? as usize;
        let mut bytes = std::mem::take(&mut self.scratch_bytes);
        bytes.resize(n * ap.dtype.size(), 0);
        let (buf, layout) = self.memory.buffer_mut(ap.loc);
        let r = access_pattern::read(buf, &layout, &p, &mut bytes).map_err(ap_fault);
        out.resize(n * ap.dtype.lanes(), 0.0);
        let r = r.and_then(|()| Ok(numerics::decode_to_f32(ap.dtype, &bytes, out, &self.profile)?));
        self.scratch_bytes = bytes;
        r
    }

    /// Encodes fp32 values to the AP's dtype through a reused buffer and writes them.
    pub(crate) fn write_f32_from(
        &mut self,
        ap: &AccessPattern,
        vals: &[f32],
        regions: &mut Written,
    ) -> Res<()> {
        if !self.uncast(ap) {
            return self.write_f32(ap, vals, regions);
        }
        let p = Self::pattern(ap)?;
        let n = holds(ap, vals.len())?;
        let mut bytes = std::mem::take(&mut self.scratch_out);
        bytes.resize(n * ap.dtype.size(), 0);
        let r = numerics::encode_from_f32(ap.dtype, vals, &mut bytes, &self.profile)
            .map_err(Stop::from)
            .and_then(|()| {
                let (buf, layout) = self.memory.buffer_mut(ap.loc);
                access_pattern::write(buf, &layout, &p, &bytes).map_err(ap_fault)
            });
        regions.record(&bytes);
        self.scratch_out = bytes;
        r
    }

    /// Copies an AP's elements to another AP of the same dtype through a reused buffer.
    pub(crate) fn copy_same(
        &mut self,
        src: &AccessPattern,
        dst: &AccessPattern,
        regions: &mut Written,
    ) -> Res<()> {
        if !self.uncast(src) || !self.uncast(dst) {
            let bytes = self.read_bytes(src)?;
            if bytes.len() != elements(dst)? * dst.dtype.size() {
                return fault(
                    FaultKind::Shape,
                    "the source and destination hold different numbers of elements",
                );
            }
            return self.write_bytes(dst, bytes, regions);
        }
        let (ps, pd) = (Self::pattern(src)?, Self::pattern(dst)?);
        let (ns, nd) = (ps.elements().map_err(ap_fault)?, pd.elements().map_err(ap_fault)?);
        if ns != nd {
            return fault(FaultKind::Shape, format!("the source has {ns} elements but the destination {nd}"));
        }
        let mut bytes = std::mem::take(&mut self.scratch_bytes);
        bytes.resize(ns as usize * src.dtype.size(), 0);
        let (buf, layout) = self.memory.buffer_mut(src.loc);
        let r = access_pattern::read(buf, &layout, &ps, &mut bytes).map_err(ap_fault).and_then(|()| {
            let (buf, layout) = self.memory.buffer_mut(dst.loc);
            access_pattern::write(buf, &layout, &pd, &bytes).map_err(ap_fault)
        });
        regions.record(&bytes);
        self.scratch_bytes = bytes;
        r
    }

    /// The AP's elements decoded to fp32.
    pub(crate) fn read_f32(&mut self, ap: &AccessPattern) -> Res<Vec<f32>> {
        let bytes = self.read_bytes(ap)?;
        let mut out = vec![0f32; numerics::codec::values_in(ap.dtype, bytes.len())];
        numerics::decode_to_f32(ap.dtype, &bytes, &mut out, &self.profile)?;
        Ok(out)
    }

    /// Encodes fp32 values to the AP's dtype and writes them through it.
    pub(crate) fn write_f32(&mut self, ap: &AccessPattern, vals: &[f32], regions: &mut Written) -> Res<()> {
        let n = holds(ap, vals.len())?;
        let mut bytes = vec![0u8; n * ap.dtype.size()];
        numerics::encode_from_f32(ap.dtype, vals, &mut bytes, &self.profile)?;
        self.write_bytes(ap, bytes, regions)
    }

    /// The AP's elements cast to `to` (the int32 / uint64 compute domains), as bytes.
    pub(crate) fn read_as(&mut self, ap: &AccessPattern, to: Dtype) -> Res<Vec<u8>> {
        let bytes = self.read_bytes(ap)?;
        let n = numerics::codec::values_in(ap.dtype, bytes.len());
        let mut out = vec![0u8; n / to.lanes() * to.size()];
        numerics::cast(ap.dtype, &bytes, to, &mut out, &self.profile)?;
        Ok(out)
    }

    /// Casts bytes of `from` to the output AP's dtype and writes them.
    pub(crate) fn write_from(
        &mut self,
        ap: &AccessPattern,
        from: Dtype,
        bytes: &[u8],
        regions: &mut Written,
    ) -> Res<()> {
        let n = holds(ap, numerics::codec::values_in(from, bytes.len()))?;
        let mut out = vec![0u8; n * ap.dtype.size()];
        numerics::cast(from, bytes, ap.dtype, &mut out, &self.profile)?;
        self.write_bytes(ap, out, regions)
    }
}

/// The number of elements a chunked kernel processes at once: large enough to amortise per-chunk
/// work, small enough that the passes over a chunk stay in L1.
const CHUNK_ELEMENTS: usize = 1 << 15;

/// Partitions `[p0, p0 + k)` of an AP: the same free dims, its first level cut down.
pub(crate) fn sub_ap(ap: &AccessPattern, p0: usize, k: usize) -> AccessPattern {
    let mut a = ap.clone();
    if let Some(first) = a.pairs.first_mut() {
        a.offset += first.step * p0 as i64;
        first.num = k as i64;
    }
    a
}

/// How to split APs of one elementwise instruction into partition blocks: `Some((parts, per))`
/// when every AP has the same partition count and free size (so blocks line up), with `per`
/// partitions per block; `None` when they differ (process whole tensors).
pub(crate) fn partition_blocks(aps: &[&AccessPattern]) -> Res<Option<(usize, usize)>> {
    let mut first = None;
    for ap in aps {
        let s = shape(ap)?;
        if *first.get_or_insert(s) != s || ap.dynamic.is_some() {
            return Ok(None);
        }
    }
    Ok(first.map(|(parts, free)| (parts, (CHUNK_ELEMENTS / free.max(1)).clamp(1, parts.max(1)))))
}

/// Splits same-shaped APs into aligned pieces of about [`CHUNK_ELEMENTS`] elements, in element
/// order: blocks of whole partitions, or, when every AP's free part is one contiguous level,
/// pieces of a partition row. `None` when the APs cannot be split in step.
pub(crate) fn pieces(aps: &[&AccessPattern]) -> Res<Option<Vec<Vec<AccessPattern>>>> {
    let Some((parts, per)) = partition_blocks(aps)? else { return Ok(None) };
    let (_, free) = shape(aps[0])?;
    let row_contiguous = aps.iter().all(|a| a.pairs.len() == 2 && a.pairs[1].step == 1);
    let mut out = Vec::new();
    if per == 1 && free > CHUNK_ELEMENTS && row_contiguous {
        for p in 0..parts {
            for j0 in (0..free).step_by(CHUNK_ELEMENTS) {
                let len = CHUNK_ELEMENTS.min(free - j0);
                out.push(
                    aps.iter()
                        .map(|a| {
                            let mut s = sub_ap(a, p, 1);
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
            out.push(aps.iter().map(|a| sub_ap(a, p0, per.min(parts - p0))).collect());
        }
    }
    Ok(Some(out))
}

/// The elements of an output AP, checked to hold exactly `values` values.
fn holds(ap: &AccessPattern, values: usize) -> Res<usize> {
    let n = elements(ap)?;
    if n * ap.dtype.lanes() != values {
        return fault(
            FaultKind::Shape,
            format!(
                "the output AP holds {} values but the operation produced {values}",
                n * ap.dtype.lanes()
            ),
        );
    }
    Ok(n)
}

/// Elements of an AP.
pub(crate) fn elements(ap: &AccessPattern) -> Res<usize> {
    Pattern::of(ap).elements().map(|n| n as usize).map_err(ap_fault)
}

/// Partitions (the first level's num) and free elements per partition of an AP.
pub(crate) fn shape(ap: &AccessPattern) -> Res<(usize, usize)> {
    let n = elements(ap)?;
    let parts = ap.pairs.first().map_or(1, |p| p.num.max(1) as usize);
    Ok((parts, n / parts))
}

pub(crate) fn ap_fault(e: ApError) -> Stop {
    let kind = match e {
        ApError::OutOfBounds { .. } => FaultKind::OutOfBounds,
        _ => FaultKind::Shape,
    };
    Stop::Fault(kind, e.to_string())
}

/// FNV-1a 64 offset basis.
const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// Continues an FNV-1a, 64-bit hash over `bytes`: a stable checksum for the trace, equal for a
/// region written in one piece or in chunks.
pub fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

/// What an instruction wrote, for the trace: byte count and a running checksum of its output
/// region in AP order. Nothing is kept when not tracing.
#[derive(Debug)]
pub(crate) struct Written {
    tracing: bool,
    bytes: u64,
    hash: u64,
}

impl Default for Written {
    fn default() -> Self {
        Written { tracing: false, bytes: 0, hash: FNV_BASIS }
    }
}

impl Written {
    /// Records a region written in place: `bytes` counts it, `read` fetches it only when tracing.
    pub(crate) fn record_region(&mut self, read: impl FnOnce() -> Vec<u8>, bytes: u64) {
        self.bytes += bytes;
        if self.tracing {
            self.hash = fnv1a(self.hash, &read());
        }
    }

    fn record(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len() as u64;
        if self.tracing {
            self.hash = fnv1a(self.hash, bytes);
        }
    }
}

/// Bytes of `i32`s.
pub(crate) fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes.as_chunks::<4>().0.iter().map(|c| i32::from_le_bytes(*c)).collect()
}

/// Bytes of `i64`s.
pub(crate) fn i64s(bytes: &[u8]) -> Vec<i64> {
    bytes.as_chunks::<8>().0.iter().map(|c| i64::from_le_bytes(*c)).collect()
}

/// `i32`s as bytes.
pub(crate) fn i32_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `i64`s as bytes.
pub(crate) fn i64_bytes(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A scalar operand: an immediate or an AP's values (one per partition or per element).
pub(crate) fn imm_f32(op: &Operand) -> Option<f32> {
    match op {
        Operand::Imm { value, .. } => Some(value.as_f64() as f32),
        _ => None,
    }
}
