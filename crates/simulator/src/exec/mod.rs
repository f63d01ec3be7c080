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
        let written_before = self.trace.as_ref().map(|_| ());
        let mut regions = Vec::new();
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
        if let (Some(trace), Some(())) = (self.trace.as_mut(), written_before) {
            trace.push(TraceEntry {
                index: self.executed - 1,
                name: i.name.clone(),
                opcode: i.opcode().name(),
                bytes_written: regions.iter().map(|r: &Vec<u8>| r.len() as u64).sum(),
                checksums: regions.iter().map(|r| fnv1a(r)).collect(),
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

    /// The AP's elements as bytes of its dtype, in AP order.
    pub(crate) fn read_bytes(&mut self, ap: &AccessPattern) -> Res<Vec<u8>> {
        let p = Self::pattern(ap)?;
        let n = p.elements().map_err(ap_fault)? as usize;
        let mut out = vec![0u8; n * ap.dtype.size()];
        let (buf, layout) = self.memory.buffer_mut(ap.loc);
        access_pattern::read(buf, &layout, &p, &mut out).map_err(ap_fault)?;
        Ok(out)
    }

    /// Writes bytes of the AP's dtype through the AP; returns them for the trace.
    pub(crate) fn write_bytes(
        &mut self,
        ap: &AccessPattern,
        bytes: Vec<u8>,
        regions: &mut Vec<Vec<u8>>,
    ) -> Res<()> {
        let p = Self::pattern(ap)?;
        let (buf, layout) = self.memory.buffer_mut(ap.loc);
        access_pattern::write(buf, &layout, &p, &bytes).map_err(ap_fault)?;
        regions.push(bytes);
        Ok(())
    }

    /// The AP's elements decoded to fp32.
    pub(crate) fn read_f32(&mut self, ap: &AccessPattern) -> Res<Vec<f32>> {
        let bytes = self.read_bytes(ap)?;
        let mut out = vec![0f32; numerics::codec::values_in(ap.dtype, bytes.len())];
        numerics::decode_to_f32(ap.dtype, &bytes, &mut out, &self.profile)?;
        Ok(out)
    }

    /// Encodes fp32 values to the AP's dtype and writes them through it.
    pub(crate) fn write_f32(
        &mut self,
        ap: &AccessPattern,
        vals: &[f32],
        regions: &mut Vec<Vec<u8>>,
    ) -> Res<()> {
        let n = elements(ap)?;
        if n * ap.dtype.lanes() != vals.len() {
            return fault(
                FaultKind::Shape,
                format!(
                    "the output AP holds {} values but the operation produced {}",
                    n * ap.dtype.lanes(),
                    vals.len()
                ),
            );
        }
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
        regions: &mut Vec<Vec<u8>>,
    ) -> Res<()> {
        let n = elements(ap)?;
        let values = numerics::codec::values_in(from, bytes.len());
        if n * ap.dtype.lanes() != values {
            return fault(
                FaultKind::Shape,
                format!(
                    "the output AP holds {} values but the operation produced {values}",
                    n * ap.dtype.lanes()
                ),
            );
        }
        let mut out = vec![0u8; n * ap.dtype.size()];
        numerics::cast(from, bytes, ap.dtype, &mut out, &self.profile)?;
        self.write_bytes(ap, out, regions)
    }
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

fn ap_fault(e: ApError) -> Stop {
    let kind = match e {
        ApError::OutOfBounds { .. } => FaultKind::OutOfBounds,
        _ => FaultKind::Shape,
    };
    Stop::Fault(kind, e.to_string())
}

/// FNV-1a, 64-bit: a stable checksum for the trace.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
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
