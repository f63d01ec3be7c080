//! Descriptor execution against a byte-addressed memory (contract §3; docs/dge.md "Execution").
//!
//! Descriptors run in list order; descriptor k sees what k − 1 wrote. Inside one descriptor:
//! every element chunk is bounds-checked first (a failing descriptor writes nothing, G40); when
//! its source and destination extents overlap it reads all its source elements before writing
//! (as `doCopy`, seed 000 §5.1), else it moves element by element. NONE is a byte copy of each
//! `elem_size` chunk; ADD/MULTIPLY/MAX/MIN combine `dst = dst op src` per value of the dtype
//! (G41): a float dtype decodes both chunks to fp32 (crates/numerics), combines (max/min as glibc
//! `fmaxf`/`fminf`: a NaN yields the other operand, a tie keeps dst; fidelity D4) and encodes
//! back round-to-nearest-even; an integer dtype combines at its width
//! ([`numerics::alu::int_combine`], as the ISA datapath does, X14: ADD/MULTIPLY wrap, MAX/MIN
//! signed for intN and unsigned for uintN).

use crate::descriptor::{ComputeOp, Descriptor};
use bir_ir::{AluOp, Dtype, DtypeClass};
use numerics::Profile;

/// A memory access a [`DescriptorMemory`] refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    /// No mapped byte range holds `addr .. addr + len`.
    #[error("bytes {addr:#x}..+{len} are not inside one mapped range")]
    Unmapped {
        /// First byte.
        addr: u64,
        /// Length.
        len: u64,
    },
    /// The memory could not provide the bytes (e.g. out of host memory).
    #[error("bytes at {addr:#x}: {why}")]
    Backing {
        /// First byte.
        addr: u64,
        /// What failed.
        why: String,
    },
}

/// Byte ranges by 64-bit address (contract §3). Implementations bounds-check every access and
/// return [`MemoryError`], never panic or touch bytes outside what they map.
pub trait DescriptorMemory {
    /// Checks that `addr .. addr + len` is one accessible range.
    fn check(&mut self, addr: u64, len: usize) -> Result<(), MemoryError>;
    /// Reads `out.len()` bytes at `addr`.
    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), MemoryError>;
    /// Writes `data` at `addr`.
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemoryError>;
    /// Copies `len` bytes from `src` to `dst` (as if read whole, then written). The default goes
    /// through a temporary; implementations override it with a direct copy.
    fn copy(&mut self, src: u64, dst: u64, len: usize) -> Result<(), MemoryError> {
        let mut tmp = vec![0u8; len];
        self.read(src, &mut tmp)?;
        self.write(dst, &tmp)
    }
}

/// Why a descriptor list stopped. `descriptor` is the failing one's position; the ones before it
/// were applied, it and the ones after were not.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// A memory access outside the mapped ranges.
    #[error("descriptor {descriptor}: {error}")]
    Memory {
        /// The descriptor's position.
        descriptor: usize,
        /// The refused access.
        error: MemoryError,
    },
    /// An element address outside the 64-bit space.
    #[error("descriptor {descriptor}: an element address leaves the 64-bit address space")]
    Address {
        /// The descriptor's position.
        descriptor: usize,
    },
    /// A compute op over a dtype or element size it cannot combine.
    #[error("descriptor {descriptor}: {why}")]
    Compute {
        /// The descriptor's position.
        descriptor: usize,
        /// What is wrong.
        why: String,
    },
}

/// glibc `fmaxf(dst, src)` / `fminf`: a NaN operand yields the other; a tie (±0) keeps `dst`
/// (D4) — numerics' one definition.
pub use numerics::alu::{fmaxf, fminf};

/// Runs `list` in order against `mem`; float compute ops encode under the refsim profile with
/// the FP8 config forced to 0 (no saturation), as the reference's accumulate path and the ISA
/// device profile do (G41; integer compute ops use no profile).
pub fn execute(list: &[Descriptor], mem: &mut impl DescriptorMemory) -> Result<(), ExecError> {
    execute_with(list, mem, &Profile::refsim().for_accumulate())
}

/// [`execute`] with an explicit numerics profile (how float compute ops encode).
///
/// Every descriptor is checked first (its extent, a compute op's dtype, every element chunk
/// against `mem`): an error names the first bad descriptor and nothing is written (G40). Then
/// the list runs in order. A run of NONE descriptors without dims that continue each other on
/// both sides (`src_{k+1} = src_k + elem_size`, the same for dst) and whose merged source and
/// destination ranges do not overlap is one copy: no piece could read what another writes, so
/// this is the serial result (G42).
pub fn execute_with(
    list: &[Descriptor],
    mem: &mut impl DescriptorMemory,
    profile: &Profile,
) -> Result<(), ExecError> {
    for (k, d) in list.iter().enumerate() {
        precheck(d, mem).map_err(|e| e.at(k))?;
    }
    let mut s = Scratch::default();
    let mut k = 0;
    while let Some(d) = list.get(k) {
        if d.compute_op == ComputeOp::None && d.dims().is_empty() {
            let (src, dst) = (d.src, d.dst);
            let mut len = u64::from(d.elem_size);
            let mut j = k + 1;
            while let Some(n) = list.get(j) {
                let continues = n.compute_op == ComputeOp::None
                    && n.dims().is_empty()
                    && src.checked_add(len) == Some(n.src)
                    && dst.checked_add(len) == Some(n.dst)
                    && len + u64::from(n.elem_size) <= 1 << 40;
                if !continues {
                    break;
                }
                len += u64::from(n.elem_size);
                j += 1;
            }
            let apart = src.checked_add(len).is_some_and(|se| se <= dst)
                || dst.checked_add(len).is_some_and(|de| de <= src);
            if j > k + 1 && apart {
                let n = len as usize;
                if mem.check(src, n).is_ok() && mem.check(dst, n).is_ok() {
                    mem.copy(src, dst, n).map_err(|e| Fail::Memory(e).at(k))?;
                    k = j;
                    continue;
                }
            }
        }
        run_one(d, mem, profile, &mut s).map_err(|e| e.at(k))?;
        k += 1;
    }
    Ok(())
}

/// Everything about `d` that can fail, checked before anything is written.
fn precheck(d: &Descriptor, mem: &mut impl DescriptorMemory) -> Result<(), Fail> {
    if d.extent(true).is_none() || d.extent(false).is_none() {
        return Err(Fail::Address);
    }
    if d.compute_op != ComputeOp::None {
        let (dt, elem) = (d.dtype, d.elem_size as usize);
        if !computes(dt) || !elem.is_multiple_of(dt.size()) {
            return Err(Fail::Compute(format!(
                "{} needs a float or integer dtype and elem_size a multiple of its size; got {dt:?} and {elem} bytes (G41)",
                d.compute_op.name()
            )));
        }
    }
    let elem = d.elem_size as usize;
    each(d, |a, b| {
        mem.check(a, elem)?;
        mem.check(b, elem)?;
        Ok(())
    })
}

#[derive(Default)]
struct Scratch {
    bytes: Vec<u8>,
    a: Vec<u8>,
    b: Vec<u8>,
    fa: Vec<f32>,
    fb: Vec<f32>,
}

enum Fail {
    Memory(MemoryError),
    Address,
    Compute(String),
}

impl Fail {
    fn at(self, descriptor: usize) -> ExecError {
        match self {
            Fail::Memory(error) => ExecError::Memory { descriptor, error },
            Fail::Address => ExecError::Address { descriptor },
            Fail::Compute(why) => ExecError::Compute { descriptor, why },
        }
    }
}

impl From<MemoryError> for Fail {
    fn from(e: MemoryError) -> Fail {
        Fail::Memory(e)
    }
}

/// Calls `f(src, dst)` for every element of `d` in order (dim 0 fastest).
#[inline]
fn each(d: &Descriptor, mut f: impl FnMut(u64, u64) -> Result<(), Fail>) -> Result<(), Fail> {
    let dims = d.dims();
    let Some(inner) = dims.first() else { return f(d.src, d.dst) };
    let mut idx = [0u32; crate::descriptor::MAX_DIMS];
    let (mut s, mut t) = (d.src, d.dst);
    loop {
        // The innermost dim as a plain loop.
        let (mut si, mut ti) = (s, t);
        for _ in 0..inner.num {
            f(si, ti)?;
            si = si.wrapping_add_signed(inner.src_step);
            ti = ti.wrapping_add_signed(inner.dst_step);
        }
        // Advance the outer odometer.
        let mut k = 1;
        loop {
            let Some(dim) = dims.get(k) else { return Ok(()) };
            idx[k] += 1;
            s = s.wrapping_add_signed(dim.src_step);
            t = t.wrapping_add_signed(dim.dst_step);
            if idx[k] < dim.num {
                break;
            }
            s = s.wrapping_add_signed(dim.src_step.wrapping_mul(-i64::from(dim.num)));
            t = t.wrapping_add_signed(dim.dst_step.wrapping_mul(-i64::from(dim.num)));
            idx[k] = 0;
            k += 1;
        }
    }
}

fn run_one(
    d: &Descriptor,
    mem: &mut impl DescriptorMemory,
    profile: &Profile,
    s: &mut Scratch,
) -> Result<(), Fail> {
    let elem = d.elem_size as usize;
    let (Some(se), Some(de)) = (d.extent(true), d.extent(false)) else { return Err(Fail::Address) };
    let overlap = se.0 < de.1 && de.0 < se.1;
    if d.compute_op == ComputeOp::None {
        if !overlap {
            return each(d, |a, b| Ok(mem.copy(a, b, elem)?));
        }
        snapshot(d, mem, &mut s.bytes)?;
        let mut k = 0;
        let bytes = &s.bytes;
        return each(d, |_, b| {
            mem.write(b, &bytes[k..k + elem])?;
            k += elem;
            Ok(())
        });
    }
    compute(d, mem, profile, s, overlap)
}

/// Every source element of `d`, in order, into `out`.
fn snapshot(d: &Descriptor, mem: &mut impl DescriptorMemory, out: &mut Vec<u8>) -> Result<(), Fail> {
    let elem = d.elem_size as usize;
    let total = usize::try_from(d.bytes()).map_err(|_| Fail::Address)?;
    out.clear();
    out.try_reserve(total).map_err(|_| Fail::Compute(format!("cannot hold {total} bytes")))?;
    out.resize(total, 0);
    let mut k = 0;
    each(d, |a, _| {
        mem.read(a, &mut out[k..k + elem])?;
        k += elem;
        Ok(())
    })
}

fn compute(
    d: &Descriptor,
    mem: &mut impl DescriptorMemory,
    profile: &Profile,
    s: &mut Scratch,
    overlap: bool,
) -> Result<(), Fail> {
    let (dt, elem) = (d.dtype, d.elem_size as usize);
    if dt.is_integer() {
        let op = match d.compute_op {
            ComputeOp::Add => AluOp::Add,
            ComputeOp::Multiply => AluOp::Mult,
            ComputeOp::Max => AluOp::Max,
            ComputeOp::Min => AluOp::Min,
            ComputeOp::None => return Ok(()),
        };
        return combine_int(d, mem, s, overlap, op);
    }
    let n = numerics::codec::values_in(dt, elem);
    match d.compute_op {
        ComputeOp::Add => combine(d, mem, profile, s, overlap, n, |a, b| a + b),
        ComputeOp::Multiply => combine(d, mem, profile, s, overlap, n, |a, b| a * b),
        ComputeOp::Max => combine(d, mem, profile, s, overlap, n, fmaxf),
        ComputeOp::Min => combine(d, mem, profile, s, overlap, n, fminf),
        ComputeOp::None => Ok(()),
    }
}

/// `dst = op(dst, src)` per value, one kernel per op (monomorphised on `op`).
fn combine(
    d: &Descriptor,
    mem: &mut impl DescriptorMemory,
    profile: &Profile,
    s: &mut Scratch,
    overlap: bool,
    n: usize,
    op: impl Fn(f32, f32) -> f32,
) -> Result<(), Fail> {
    let dt = d.dtype;
    let elem = d.elem_size as usize;
    if overlap {
        snapshot(d, mem, &mut s.bytes)?;
    }
    s.a.resize(elem, 0);
    s.fa.resize(n, 0.0);
    s.fb.resize(n, 0.0);
    let mut src = vec![0u8; elem];
    let mut k = 0usize;
    let num = |e: numerics::NumericsError| Fail::Compute(e.to_string());
    each(d, |a, b| {
        if overlap {
            src.copy_from_slice(&s.bytes[k..k + elem]);
            k += elem;
        } else {
            mem.read(a, &mut src)?;
        }
        mem.read(b, &mut s.a)?;
        numerics::codec::decode_to_f32(dt, &src, &mut s.fb, profile).map_err(num)?;
        numerics::codec::decode_to_f32(dt, &s.a, &mut s.fa, profile).map_err(num)?;
        for (x, y) in s.fa.iter_mut().zip(&s.fb) {
            *x = op(*x, *y);
        }
        numerics::codec::encode_from_f32(dt, &s.fa, &mut s.a, profile).map_err(num)?;
        mem.write(b, &s.a)?;
        Ok(())
    })
}

/// `dst = op(dst, src)` per integer value at the dtype's width ([`numerics::alu::int_combine`]),
/// elements in order as [`combine`] (a destination revisited folds serially).
fn combine_int(
    d: &Descriptor,
    mem: &mut impl DescriptorMemory,
    s: &mut Scratch,
    overlap: bool,
    op: AluOp,
) -> Result<(), Fail> {
    let elem = d.elem_size as usize;
    if overlap {
        snapshot(d, mem, &mut s.bytes)?;
    }
    s.a.resize(elem, 0);
    s.b.resize(elem, 0);
    let mut k = 0usize;
    each(d, |a, b| {
        if overlap {
            s.b.copy_from_slice(&s.bytes[k..k + elem]);
            k += elem;
        } else {
            mem.read(a, &mut s.b)?;
        }
        mem.read(b, &mut s.a)?;
        numerics::alu::int_combine(d.dtype, op, &mut s.a, &s.b).map_err(|e| Fail::Compute(e.to_string()))?;
        mem.write(b, &s.a)?;
        Ok(())
    })
}

/// A memory of disjoint flat byte ranges at fixed bases (tests, benches, the ISA DRAM regions).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlatMemory {
    regions: Vec<(u64, Vec<u8>)>,
}

impl FlatMemory {
    /// An empty memory.
    pub fn new() -> FlatMemory {
        FlatMemory::default()
    }

    /// Adds a range of `bytes` at `base`; `false` (and nothing added) if it overlaps another or
    /// leaves the 64-bit space.
    pub fn map(&mut self, base: u64, bytes: Vec<u8>) -> bool {
        let Some(end) = base.checked_add(bytes.len() as u64) else { return false };
        if self.regions.iter().any(|(b, r)| base < b + r.len() as u64 && *b < end) {
            return false;
        }
        self.regions.push((base, bytes));
        true
    }

    /// The bytes of the range mapped at `base`.
    pub fn region(&self, base: u64) -> Option<&[u8]> {
        self.regions.iter().find(|(b, _)| *b == base).map(|(_, r)| r.as_slice())
    }

    #[inline]
    fn find(&self, addr: u64, len: usize) -> Result<(usize, usize), MemoryError> {
        for (k, (b, r)) in self.regions.iter().enumerate() {
            if addr >= *b {
                let off = addr - b;
                if off <= r.len() as u64 && (len as u64) <= r.len() as u64 - off {
                    return Ok((k, off as usize));
                }
            }
        }
        Err(MemoryError::Unmapped { addr, len: len as u64 })
    }
}

impl DescriptorMemory for FlatMemory {
    fn check(&mut self, addr: u64, len: usize) -> Result<(), MemoryError> {
        self.find(addr, len).map(|_| ())
    }

    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), MemoryError> {
        let (k, off) = self.find(addr, out.len())?;
        out.copy_from_slice(&self.regions[k].1[off..off + out.len()]);
        Ok(())
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemoryError> {
        let (k, off) = self.find(addr, data.len())?;
        self.regions[k].1[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }

    fn copy(&mut self, src: u64, dst: u64, len: usize) -> Result<(), MemoryError> {
        let (ks, os) = self.find(src, len)?;
        let (kd, od) = self.find(dst, len)?;
        if ks == kd {
            self.regions[ks].1.copy_within(os..os + len, od);
            return Ok(());
        }
        let (lo, hi) = (ks.min(kd), ks.max(kd));
        let (a, b) = self.regions.split_at_mut(hi);
        let (x, y) = (&mut a[lo].1, &mut b[0].1);
        if ks < kd {
            y[od..od + len].copy_from_slice(&x[os..os + len]);
        } else {
            x[od..od + len].copy_from_slice(&y[os..os + len]);
        }
        Ok(())
    }
}

/// Whether a compute descriptor (ADD/MULTIPLY/MAX/MIN) can combine values of `dtype` (G41): a
/// float (decoded to fp32) or an integer (combined at its width, X14); not a packed `_x4` one.
pub fn computes(dtype: Dtype) -> bool {
    dtype.class() == DtypeClass::Float || dtype.is_integer()
}
