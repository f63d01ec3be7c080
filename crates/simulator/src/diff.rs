//! Explaining divergences (issue #15 item 2; docs/trace.md): [`diff_traces`] finds the first
//! instruction whose written bytes differ between two traces of one program, and
//! [`compare_expected`] compares an output with an expected array, exactly or within `N` ULP
//! of the value's own dtype ([`Tolerance`], docs/fidelity.md V4–V6). Both reports have
//! `Display` (the CLI's text) and `to_json`.
//!
//! Element values are shown as their container bits in hex and as numbers, decoded by the
//! [`numerics`] codec (bf16, fp8 and the packed `_x4` formats included).

use crate::Writer;
use crate::exec::BranchTrace;
use crate::npy::{Npy, descr_for};
use crate::trace::{RegionRecord, RegisterRecord, TraceRecord, checksum_str};
use bir_ir::{Dtype, DtypeClass};
use numerics::Profile;
use serde_json::{Value, json};
use std::fmt;

/// One element's value: its container bits (hex, little-endian read) and as a number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    /// `0x…`, two hex digits per container byte.
    pub hex: String,
    /// Decimal (floats as the shortest round-trip form; `_x4` as a lane list).
    pub value: String,
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.hex, self.value)
    }
}

impl Shown {
    fn to_json(&self) -> Value {
        json!({"hex": self.hex, "value": self.value})
    }
}

/// Shows one container of `dt` (`bytes.len() == dt.size()`).
pub fn show(dt: Dtype, bytes: &[u8], profile: &Profile) -> Shown {
    let mut hex = String::from("0x");
    for b in bytes.iter().rev() {
        hex.push_str(&format!("{b:02x}"));
    }
    let raw = bytes.iter().rev().fold(0u64, |v, b| v << 8 | u64::from(*b));
    let value = match dt.class() {
        DtypeClass::UnsignedInt => raw.to_string(),
        DtypeClass::SignedInt => {
            let shift = 64 - 8 * bytes.len() as u32;
            ((raw << shift) as i64 >> shift).to_string()
        }
        _ => {
            let mut out = [0f32; 4];
            let lanes = dt.lanes().min(4);
            match numerics::decode_to_f32(dt, bytes, &mut out[..lanes], profile) {
                Ok(()) if lanes == 1 => format!("{:?}", out[0]),
                Ok(()) => format!(
                    "[{}]",
                    out[..lanes].iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(", ")
                ),
                Err(_) => "?".into(),
            }
        }
    };
    Shown { hex, value }
}

/// How two values of one dtype compare under a ULP tolerance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ulp {
    /// Both are numbers this many units in the last place apart (integers: their difference).
    Apart(u128),
    /// Both are NaN (any payload): equal under a ULP tolerance (docs/fidelity.md V5).
    BothNan,
    /// One is NaN and the other is not: never within any tolerance.
    OneNan,
}

/// The ULP distance of two containers of `dt` (docs/fidelity.md V4): floats by their sign-
/// magnitude bits mapped onto one ordered integer line (−0 and +0 both 0, so they are 0 ULP
/// apart; the largest finite and ±Inf are 1 apart), per lane for the `_x4` dtypes (the largest
/// lane distance); E8M0 by its unsigned bits; integers by their difference.
pub fn ulp_distance(dt: Dtype, a: &[u8], b: &[u8], profile: &Profile) -> Ulp {
    let bits = |x: &[u8]| x.iter().rev().fold(0u128, |v, b| v << 8 | u128::from(*b));
    let (ra, rb) = (bits(a), bits(b));
    let width = 8 * a.len() as u32;
    match dt.class() {
        DtypeClass::UnsignedInt | DtypeClass::ScaleExponent => {
            if dt.class() == DtypeClass::ScaleExponent && (ra == 0xff || rb == 0xff) {
                return if ra == rb { Ulp::BothNan } else { Ulp::OneNan };
            }
            Ulp::Apart(ra.abs_diff(rb))
        }
        DtypeClass::SignedInt => {
            let signed = |r: u128| ((r << (128 - width)) as i128) >> (128 - width);
            Ulp::Apart(signed(ra).abs_diff(signed(rb)))
        }
        DtypeClass::Float | DtypeClass::PackedFloat => {
            let lanes = dt.lanes().clamp(1, 4);
            let (mut fa, mut fb) = ([0f32; 4], [0f32; 4]);
            let nan = numerics::decode_to_f32(dt, a, &mut fa[..lanes], profile)
                .and_then(|()| numerics::decode_to_f32(dt, b, &mut fb[..lanes], profile));
            let w = width / lanes as u32;
            let mut worst = Ulp::BothNan;
            for k in 0..lanes {
                let (na, nb) = match nan {
                    Ok(()) => (fa[k].is_nan(), fb[k].is_nan()),
                    Err(_) => (false, false),
                };
                let lane = match (na, nb) {
                    (true, true) => Ulp::BothNan,
                    (true, false) | (false, true) => return Ulp::OneNan,
                    _ => {
                        let mask = (1u128 << w) - 1;
                        let ord = |r: u128| {
                            let l = (r >> (w * k as u32)) & mask;
                            let mag = (l & (mask >> 1)) as i128;
                            if l >> (w - 1) == 1 { -mag } else { mag }
                        };
                        Ulp::Apart(ord(ra).abs_diff(ord(rb)))
                    }
                };
                worst = match (worst, lane) {
                    (Ulp::Apart(x), Ulp::Apart(y)) => Ulp::Apart(x.max(y)),
                    (Ulp::BothNan, l) => l,
                    (w, _) => w,
                };
            }
            worst
        }
    }
}

/// How an output must match its expected array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tolerance {
    /// Bit for bit (the default).
    Exact,
    /// At most this many ULP apart in the value's own dtype ([`ulp_distance`]).
    Ulp(u64),
}

impl Tolerance {
    /// Whether two containers of `dt` match.
    pub fn accepts(self, dt: Dtype, a: &[u8], b: &[u8], profile: &Profile) -> bool {
        match self {
            Tolerance::Exact => a == b,
            Tolerance::Ulp(n) => match ulp_distance(dt, a, b, profile) {
                Ulp::Apart(d) => d <= u128::from(n),
                Ulp::BothNan => true,
                Ulp::OneNan => false,
            },
        }
    }
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tolerance::Exact => f.write_str("exact"),
            Tolerance::Ulp(n) => write!(f, "within {n} ULP"),
        }
    }
}

/// One mismatching output element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Element index in C order over the tensor's shape.
    pub flat: u64,
    /// Its coordinates in the tensor's shape.
    pub coords: Vec<u64>,
    /// What the run produced.
    pub got: Shown,
    /// What the array expects.
    pub expected: Shown,
    /// Their ULP distance (`None` under an exact comparison, or when one is NaN).
    pub ulp: Option<u128>,
    /// The last instruction that wrote the element (write provenance), when looked up.
    pub writer: Option<Writer>,
}

/// The outcome of [`compare_expected`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectReport {
    /// The output's name.
    pub name: String,
    /// Its dtype.
    pub dtype: Dtype,
    /// Its shape.
    pub shape: Vec<u64>,
    /// The tolerance applied.
    pub tolerance: Tolerance,
    /// Elements (containers) compared.
    pub elements: u64,
    /// How many mismatch.
    pub mismatches: u64,
    /// The first [`ExpectReport::SHOWN`] mismatches, in element order.
    pub first: Vec<Mismatch>,
    /// Whether provenance was looked up for `first` (else `writer` is unknown, not "none").
    pub provenance: bool,
}

impl ExpectReport {
    /// How many mismatching elements are listed (and get provenance).
    pub const SHOWN: usize = 10;

    /// True when every element matched.
    pub fn matches(&self) -> bool {
        self.mismatches == 0
    }

    /// The JSON form.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name, "dtype": self.dtype.name(), "shape": self.shape,
            "tolerance": match self.tolerance { Tolerance::Exact => json!("exact"), Tolerance::Ulp(n) => json!({"ulp": n}) },
            "elements": self.elements, "mismatches": self.mismatches,
            "first": self.first.iter().map(|m| json!({
                "flat": m.flat, "coords": m.coords, "got": m.got.to_json(), "expected": m.expected.to_json(),
                "ulp": m.ulp.map(|u| u.to_string()),
                "writer": m.writer.as_ref().map(writer_json),
            })).collect::<Vec<_>>(),
        })
    }
}

fn writer_json(w: &Writer) -> Value {
    json!({"index": w.index, "name": w.name, "opcode": w.opcode})
}

impl fmt::Display for ExpectReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.matches() {
            return write!(f, "{}: matches ({}, {} element(s))", self.name, self.tolerance, self.elements);
        }
        write!(
            f,
            "{}: {} of {} element(s) differ ({})",
            self.name, self.mismatches, self.elements, self.tolerance
        )?;
        for m in &self.first {
            let coords = m.coords.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
            write!(f, "\n  [{coords}]: got {}, expected {}", m.got, m.expected)?;
            if let Some(u) = m.ulp {
                write!(f, ", {u} ULP apart")?;
            }
            if self.provenance {
                match &m.writer {
                    Some(w) => write!(f, "; last written by #{} '{}' ({})", w.index, w.name, w.opcode)?,
                    None => {
                        write!(f, "; written by no instruction (holds its loaded or uninitialised bytes)")?
                    }
                }
            }
        }
        if self.mismatches > self.first.len() as u64 {
            write!(f, "\n  … and {} more", self.mismatches - self.first.len() as u64)?;
        }
        Ok(())
    }
}

impl ExpectReport {
    /// The buffer byte ranges of the listed mismatches, for [`crate::Simulator::watch`] on a
    /// deterministic re-run (write provenance; it costs nothing unless a mismatch asks for it).
    pub fn watch_ranges(
        &self,
        sim: &crate::Simulator<'_>,
        t: &crate::io::Tensor,
    ) -> Vec<(bir_ir::LocId, std::ops::Range<usize>)> {
        let size = t.dtype.size();
        let loc = sim.function().locations.get(t.loc.index());
        self.first
            .iter()
            .map(|m| {
                let at = m.flat as usize * size;
                let r = loc.and_then(|l| sim.memory().tensor_range(l, t.loc, t.bytes(), at, size));
                (t.loc, r.unwrap_or(0..0))
            })
            .collect()
    }

    /// Attaches the re-run's last writers ([`crate::Simulator::writers`], in
    /// [`ExpectReport::watch_ranges`] order) to the listed mismatches.
    pub fn attach_writers(&mut self, writers: &[Option<Writer>]) {
        for (m, w) in self.first.iter_mut().zip(writers) {
            m.writer = w.clone();
        }
        self.provenance = true;
    }
}

/// Why an output cannot be compared with its expected array.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExpectError {
    /// The array's dtype is not the output's.
    #[error("--expect {name}: the array has dtype {got}, but '{name}' is {dtype} and needs {want}")]
    Dtype {
        /// Output name.
        name: String,
        /// The array's descriptor.
        got: String,
        /// The output's dtype.
        dtype: Dtype,
        /// The descriptor it needs.
        want: &'static str,
    },
    /// The array's shape is not the output's.
    #[error(
        "--expect {name}: the array has shape [{}], but '{name}' has tensor_shape [{}]",
        crate::io::dims_str(.got),
        crate::io::dims_str(.want)
    )]
    Shape {
        /// Output name.
        name: String,
        /// The array's shape.
        got: Vec<u64>,
        /// The output's.
        want: Vec<u64>,
    },
}

/// Checks that an expected array has the `.npy` descriptor and shape of output `name` (of
/// `dtype` and `shape`), so a run can refuse a wrong `--expect` before it starts.
pub fn check_expected(name: &str, dtype: Dtype, shape: &[u64], expected: &Npy) -> Result<(), ExpectError> {
    let want = descr_for(dtype);
    if expected.descr != want {
        return Err(ExpectError::Dtype { name: name.into(), got: expected.descr.clone(), dtype, want });
    }
    if expected.shape != shape {
        return Err(ExpectError::Shape {
            name: name.into(),
            got: expected.shape.clone(),
            want: shape.to_vec(),
        });
    }
    Ok(())
}

/// Compares an output (`got`, as [`crate::io::read`] returns it, of dtype `dtype`) with an
/// expected array, element by element under `tolerance`. The array must have the output's
/// `.npy` descriptor (bf16/fp8 as raw bits, as for `--input`) and shape.
pub fn compare_expected(
    name: &str,
    dtype: Dtype,
    got: &Npy,
    expected: &Npy,
    tolerance: Tolerance,
    profile: &Profile,
) -> Result<ExpectReport, ExpectError> {
    check_expected(name, dtype, &got.shape, expected)?;
    if expected.data.len() != got.data.len() {
        return Err(ExpectError::Shape {
            name: name.into(),
            got: expected.shape.clone(),
            want: got.shape.clone(),
        });
    }
    let size = dtype.size();
    let mut r = ExpectReport {
        name: name.into(),
        dtype,
        shape: got.shape.clone(),
        tolerance,
        elements: (got.data.len() / size) as u64,
        mismatches: 0,
        first: Vec::new(),
        provenance: false,
    };
    for (k, (a, b)) in got.data.chunks_exact(size).zip(expected.data.chunks_exact(size)).enumerate() {
        if tolerance.accepts(dtype, a, b, profile) {
            continue;
        }
        r.mismatches += 1;
        if r.first.len() < ExpectReport::SHOWN {
            let ulp = match (tolerance, ulp_distance(dtype, a, b, profile)) {
                (Tolerance::Ulp(_), Ulp::Apart(d)) => Some(d),
                _ => None,
            };
            r.first.push(Mismatch {
                flat: k as u64,
                coords: unravel(k as u64, &got.shape),
                got: show(dtype, a, profile),
                expected: show(dtype, b, profile),
                ulp,
                writer: None,
            });
        }
    }
    Ok(r)
}

/// C-order coordinates of element `k` in `shape`.
fn unravel(mut k: u64, shape: &[u64]) -> Vec<u64> {
    let mut c = vec![0; shape.len()];
    for (d, n) in shape.iter().enumerate().rev() {
        if *n > 0 {
            c[d] = k % n;
            k /= n;
        }
    }
    c
}

/// An instruction in a report: execution index, name, opcode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct At {
    /// Execution index.
    pub index: u64,
    /// Instruction name.
    pub name: String,
    /// Opcode.
    pub opcode: String,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{} '{}' ({})", self.index, self.name, self.opcode)
    }
}

impl At {
    fn of(r: &TraceRecord) -> At {
        At { index: r.index, name: r.name.clone(), opcode: r.opcode.clone() }
    }
    fn to_json(&self) -> Value {
        json!({"index": self.index, "name": self.name, "opcode": self.opcode})
    }
}

/// The first differing element of a region, both values shown in the region's dtype.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementDiff {
    /// `[partition, free index]` in the region's AP order.
    pub coords: [u64; 2],
    /// Trace A's value.
    pub a: Shown,
    /// Trace B's value.
    pub b: Shown,
}

/// How one output region differs between the traces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionDiff {
    /// Index in `outs`.
    pub slot: usize,
    /// Memory location (A's name; B's too unless `layout` says otherwise).
    pub location: String,
    /// Dtype of the bytes.
    pub dtype: Dtype,
    /// Partitions × free elements.
    pub shape: [u64; 2],
    /// Both checksums.
    pub checksums: [u64; 2],
    /// When both traces hold data: differing elements and the first of them.
    pub elements: Option<(u64, ElementDiff)>,
    /// Both traces held the bytes, so `elements: None` means the values agree.
    pub compared: bool,
    /// When the two regions are not the same place (location, dtype or AP differ): B's.
    pub layout: Option<String>,
}

/// The first diverging instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// Which instruction.
    pub at: At,
    /// Its differing regions (empty when only the write checksum or byte count differs).
    pub regions: Vec<RegionDiff>,
    /// A's and B's bytes written and write checksums.
    pub written: [(u64, Vec<u64>); 2],
    /// A's and B's register writes, when they differ.
    pub registers: Option<[Vec<RegisterRecord>; 2]>,
    /// A's and B's branch decisions, when they differ.
    pub branch: Option<[Option<BranchTrace>; 2]>,
}

/// What [`diff_traces`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffReport {
    /// Instructions in trace A and trace B.
    pub lengths: [u64; 2],
    /// The first instruction whose written bytes differ.
    pub first: Option<Divergence>,
    /// How many later instructions (of the common part) diverge too.
    pub later: u64,
    /// The next of them.
    pub next: Option<At>,
    /// Where the two runs' instruction sequences part after the first divergence (A's and B's
    /// instruction there): nothing later is compared.
    pub parted: Option<[At; 2]>,
}

/// Two traces that are not of one program.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the traces are of different programs: at position {position} trace A ran {a} and trace B ran {b}")]
pub struct DiffError {
    /// Position (0-based line among the records) where the instruction sequences part.
    pub position: u64,
    /// A's instruction there.
    pub a: At,
    /// B's instruction there.
    pub b: At,
}

fn layout_str(r: &RegionRecord) -> String {
    let ap: Vec<String> = r.ap.iter().map(|[s, n]| format!("[{s},{n}]")).collect();
    format!("'{}' {} @{} {}", r.location, r.dtype, r.offset, ap.join(""))
}

fn region_diff(a: &RegionRecord, b: &RegionRecord, profile: &Profile) -> Option<RegionDiff> {
    let same_place = a.location == b.location && a.dtype == b.dtype && a.offset == b.offset && a.ap == b.ap;
    let data_differs = matches!((&a.data, &b.data), (Some(x), Some(y)) if x != y);
    if same_place && a.checksum == b.checksum && !data_differs {
        return None;
    }
    let compared = a.data.is_some() && b.data.is_some() && a.dtype == b.dtype;
    let elements = match (&a.data, &b.data) {
        (Some(x), Some(y)) if a.dtype == b.dtype => {
            let size = a.dtype.size();
            let mut n = 0u64;
            let mut first = None;
            for (k, (p, q)) in x.chunks_exact(size).zip(y.chunks_exact(size)).enumerate() {
                if p != q {
                    n += 1;
                    let free = a.free.max(1);
                    first.get_or_insert_with(|| ElementDiff {
                        coords: [k as u64 / free, k as u64 % free],
                        a: show(a.dtype, p, profile),
                        b: show(a.dtype, q, profile),
                    });
                }
            }
            first.map(|f| (n, f))
        }
        _ => None,
    };
    Some(RegionDiff {
        slot: a.slot,
        location: a.location.clone(),
        dtype: a.dtype,
        shape: [a.partitions, a.free],
        checksums: [a.checksum, b.checksum],
        elements,
        compared,
        layout: (!same_place).then(|| layout_str(b)),
    })
}

/// The divergence of one instruction present in both traces, if its writes differ.
fn compare(a: &TraceRecord, b: &TraceRecord, profile: &Profile) -> Option<Divergence> {
    let mut regions: Vec<RegionDiff> =
        a.regions.iter().zip(&b.regions).filter_map(|(x, y)| region_diff(x, y, profile)).collect();
    // A region only one trace has.
    let (longer, is_a) =
        if a.regions.len() > b.regions.len() { (&a.regions, true) } else { (&b.regions, false) };
    for r in longer.iter().skip(a.regions.len().min(b.regions.len())) {
        regions.push(RegionDiff {
            slot: r.slot,
            location: r.location.clone(),
            dtype: r.dtype,
            shape: [r.partitions, r.free],
            checksums: if is_a { [r.checksum, 0] } else { [0, r.checksum] },
            elements: None,
            compared: false,
            layout: Some(format!("only in trace {}", if is_a { "A" } else { "B" })),
        });
    }
    let written_differs = a.bytes_written != b.bytes_written || a.checksums != b.checksums;
    let registers = (a.registers != b.registers).then(|| [a.registers.clone(), b.registers.clone()]);
    let branch = (a.branch != b.branch).then(|| [a.branch.clone(), b.branch.clone()]);
    (written_differs || !regions.is_empty() || registers.is_some() || branch.is_some()).then(|| Divergence {
        at: At::of(a),
        regions,
        written: [(a.bytes_written, a.checksums.clone()), (b.bytes_written, b.checksums.clone())],
        registers,
        branch,
    })
}

/// Compares two traces of one program (docs/trace.md): the first instruction whose written
/// bytes differ — by each output region's checksum, and element by element when both traces
/// hold data (`--trace-data`) — or whose register writes or branch decision differ, and how
/// many later instructions diverge too. Timings are ignored. After a divergence the two runs
/// may take different paths: where their instruction sequences then part, the comparison
/// stops ([`DiffReport::parted`]). Sequences that part with no divergence before are an error
/// naming the first position where they do (traces of different programs); a trace that is a
/// prefix of the other (a run that faulted) is compared over the common part.
pub fn diff_traces(a: &[TraceRecord], b: &[TraceRecord]) -> Result<DiffReport, DiffError> {
    diff_traces_with(a, b, &Profile::refsim())
}

/// [`diff_traces`], decoding values for display under `profile`.
pub fn diff_traces_with(
    a: &[TraceRecord],
    b: &[TraceRecord],
    profile: &Profile,
) -> Result<DiffReport, DiffError> {
    let mut d = TraceDiff::new(*profile);
    for (x, y) in a.iter().zip(b) {
        d.push(x, y)?;
    }
    Ok(d.finish([a.len() as u64, b.len() as u64]))
}

/// [`diff_traces`] one pair of records at a time, so two traces can be compared while they are
/// read, holding one line of each (`birsim diff`): [`TraceDiff::push`] each pair of the common
/// part in order, then [`TraceDiff::finish`] with both traces' lengths.
#[derive(Clone, Debug)]
pub struct TraceDiff {
    profile: Profile,
    position: u64,
    first: Option<Divergence>,
    later: u64,
    next: Option<At>,
    parted: Option<[At; 2]>,
}

impl TraceDiff {
    /// An empty comparison, decoding values for display under `profile`.
    pub fn new(profile: Profile) -> Self {
        TraceDiff { profile, position: 0, first: None, later: 0, next: None, parted: None }
    }

    /// Compares the next pair of records; an error when they are not the same instruction
    /// (traces of different programs).
    pub fn push(&mut self, x: &TraceRecord, y: &TraceRecord) -> Result<(), DiffError> {
        if self.parted.is_some() {
            return Ok(());
        }
        if x.name != y.name || x.opcode != y.opcode {
            if self.first.is_some() {
                // The runs diverged before (a branch, a register, data): their paths part here.
                self.parted = Some([At::of(x), At::of(y)]);
                return Ok(());
            }
            return Err(DiffError { position: self.position, a: At::of(x), b: At::of(y) });
        }
        self.position += 1;
        if let Some(d) = compare(x, y, &self.profile) {
            if self.first.is_none() {
                self.first = Some(d);
            } else {
                self.later += 1;
                self.next.get_or_insert_with(|| At::of(x));
            }
        }
        Ok(())
    }

    /// The report, given the number of records in trace A and trace B.
    pub fn finish(self, lengths: [u64; 2]) -> DiffReport {
        DiffReport { lengths, first: self.first, later: self.later, next: self.next, parted: self.parted }
    }
}

impl DiffReport {
    /// True when the traces agree on every common instruction and have the same length.
    pub fn same(&self) -> bool {
        self.first.is_none() && self.lengths[0] == self.lengths[1]
    }

    /// The JSON form (`birsim diff --json`).
    pub fn to_json(&self) -> Value {
        json!({
            "instructions": self.lengths,
            "same": self.same(),
            "first": self.first.as_ref().map(|d| json!({
                "instruction": d.at.to_json(),
                "bytes_written": [d.written[0].0, d.written[1].0],
                "checksums": [
                    d.written[0].1.iter().map(|c| checksum_str(*c)).collect::<Vec<_>>(),
                    d.written[1].1.iter().map(|c| checksum_str(*c)).collect::<Vec<_>>(),
                ],
                "regions": d.regions.iter().map(|r| json!({
                    "slot": r.slot, "location": r.location, "dtype": r.dtype.name(), "shape": r.shape,
                    "checksums": [checksum_str(r.checksums[0]), checksum_str(r.checksums[1])],
                    "layout_b": r.layout,
                    "differing_elements": r.elements.as_ref().map(|e| e.0),
                    "first_element": r.elements.as_ref().map(|(_, e)| json!({
                        "coords": e.coords, "a": e.a.to_json(), "b": e.b.to_json(),
                    })),
                })).collect::<Vec<_>>(),
                "registers": d.registers.as_ref().map(|r| r.iter().map(|w| w.iter().map(|x| json!({
                    "engine": x.engine, "name": x.name, "value": x.value,
                })).collect::<Vec<_>>()).collect::<Vec<_>>()),
                "branch": d.branch.as_ref().map(|b| b.iter().map(|x| x.as_ref().map(|x| json!({
                    "taken": x.taken, "target": x.target,
                }))).collect::<Vec<_>>()),
            })),
            "later_divergent": self.later,
            "next": self.next.as_ref().map(At::to_json),
            "parted": self.parted.as_ref().map(|[a, b]| json!([a.to_json(), b.to_json()])),
        })
    }
}

impl fmt::Display for DiffReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [la, lb] = self.lengths;
        write!(f, "trace A: {la} instruction(s), trace B: {lb} instruction(s)")?;
        if la != lb {
            let (short, n) = if la < lb { ("A", la) } else { ("B", lb) };
            write!(f, "\ntrace {short} stops after {n} instruction(s); compared the first {n}")?;
        }
        let Some(d) = &self.first else {
            return write!(f, "\nno divergence: every compared instruction wrote the same bytes");
        };
        write!(f, "\nfirst divergence: {}", d.at)?;
        for r in &d.regions {
            write!(
                f,
                "\n  outs[{}] '{}' {} [{}, {}]: ",
                r.slot, r.location, r.dtype, r.shape[0], r.shape[1]
            )?;
            if let Some(l) = &r.layout {
                write!(f, "a different region in trace B ({l}); ")?;
            }
            match &r.elements {
                Some((n, e)) => write!(
                    f,
                    "{n} of {} element(s) differ; first at [{}, {}]: A {}, B {}",
                    r.shape[0] * r.shape[1],
                    e.coords[0],
                    e.coords[1],
                    e.a,
                    e.b
                )?,
                None if r.compared => write!(f, "the same {} element value(s)", r.shape[0] * r.shape[1])?,
                None => write!(
                    f,
                    "checksum {} vs {} (run both with --trace-data to see the values)",
                    checksum_str(r.checksums[0]),
                    checksum_str(r.checksums[1])
                )?,
            }
        }
        if let Some([a, b]) = &d.branch {
            let show = |x: &Option<BranchTrace>| match x {
                None => "no decision".to_owned(),
                Some(x) => format!(
                    "{} -> {}",
                    if x.taken { "taken" } else { "not taken" },
                    x.target
                        .as_deref()
                        .map_or_else(|| "the next block".to_owned(), |t| format!("block '{t}'"))
                ),
            };
            write!(f, "\n  branch: A {}, B {}", show(a), show(b))?;
        }
        if let Some([a, b]) = &d.registers {
            let show = |w: &[RegisterRecord]| {
                let parts: Vec<String> =
                    w.iter().map(|x| format!("{} '{}' = {:#010x}", x.engine, x.name, x.value)).collect();
                if parts.is_empty() { "none".to_owned() } else { parts.join(", ") }
            };
            write!(f, "\n  registers written: A {}, B {}", show(a), show(b))?;
        }
        if d.regions.is_empty() && d.registers.is_none() && d.branch.is_none() {
            let show = |(n, c): &(u64, Vec<u64>)| {
                format!("{n} byte(s) {}", c.iter().map(|c| checksum_str(*c)).collect::<Vec<_>>().join(","))
            };
            write!(f, "\n  written bytes differ: A {}, B {}", show(&d.written[0]), show(&d.written[1]))?;
        }
        match &self.next {
            Some(n) => write!(f, "\nlater: {} more instruction(s) diverge, the next {n}", self.later)?,
            None => write!(f, "\nlater: no other instruction diverges")?,
        }
        if let Some([a, b]) = &self.parted {
            write!(
                f,
                "\nthe runs part there after: trace A runs {a}, trace B runs {b}; nothing later is compared"
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn p() -> Profile {
        Profile::refsim()
    }

    // Hand-derived distances on the ordered sign-magnitude line (docs/fidelity.md V4).
    #[rstest]
    #[case::f32_two_up(Dtype::Float32, 0x3f80_0000, 0x3f80_0002, 2)]
    #[case::f32_zeros(Dtype::Float32, 0x0000_0000, 0x8000_0000, 0)]
    #[case::f32_across_zero(Dtype::Float32, 0x0000_0001, 0x8000_0001, 2)]
    #[case::f32_max_to_inf(Dtype::Float32, 0x7f7f_ffff, 0x7f80_0000, 1)]
    #[case::bf16_three(Dtype::Bfloat16, 0x3f80, 0x3f83, 3)]
    #[case::bf16_across_zero(Dtype::Bfloat16, 0x8001, 0x0002, 3)]
    #[case::e4m3fn_across_zero(Dtype::Float8E4m3fn, 0x01, 0x81, 2)]
    #[case::e5m2_max_to_inf(Dtype::Float8E5, 0x7b, 0x7c, 1)]
    #[case::e5m2_neg(Dtype::Float8E5, 0xbc, 0xbe, 2)]
    #[case::int32(Dtype::Int32, 0xffff_ffff, 0x0000_0001, 2)]
    #[case::uint8(Dtype::Uint8, 0xff, 0x01, 254)]
    fn ulp_boundaries(#[case] dt: Dtype, #[case] a: u64, #[case] b: u64, #[case] n: u128) {
        let (a, b) = (&a.to_le_bytes()[..dt.size()], &b.to_le_bytes()[..dt.size()]);
        assert_eq!(ulp_distance(dt, a, b, &p()), Ulp::Apart(n));
        let n = n as u64;
        assert!(Tolerance::Ulp(n).accepts(dt, a, b, &p()), "exactly {n} ULP passes");
        if n > 0 {
            assert!(!Tolerance::Ulp(n - 1).accepts(dt, a, b, &p()), "{} ULP fails", n - 1);
        }
        assert_eq!(Tolerance::Exact.accepts(dt, a, b, &p()), a == b);
    }

    #[rstest]
    #[case::f32_payloads(Dtype::Float32, 0x7fc0_0000, 0xffc0_0001, Ulp::BothNan)]
    #[case::f32_nan_vs_inf(Dtype::Float32, 0x7fc0_0000, 0x7f80_0000, Ulp::OneNan)]
    #[case::e4m3fn_nan_vs_max(Dtype::Float8E4m3fn, 0x7f, 0x7e, Ulp::OneNan)]
    #[case::bf16_nans(Dtype::Bfloat16, 0x7fc1, 0xffff, Ulp::BothNan)]
    fn nan_rules(#[case] dt: Dtype, #[case] a: u64, #[case] b: u64, #[case] want: Ulp) {
        let (a, b) = (&a.to_le_bytes()[..dt.size()], &b.to_le_bytes()[..dt.size()]);
        assert_eq!(ulp_distance(dt, a, b, &p()), want);
        assert_eq!(Tolerance::Ulp(1_000_000).accepts(dt, a, b, &p()), want == Ulp::BothNan);
        assert!(!Tolerance::Exact.accepts(dt, a, b, &p()));
    }

    /// The packed x4 dtypes: lane 0 in the low byte; the distance is the largest lane's.
    #[test]
    fn packed_lanes() {
        let a = [0x01, 0x38, 0x00, 0x00];
        let b = [0x81, 0x3a, 0x00, 0x00];
        assert_eq!(ulp_distance(Dtype::Float8E4m3fnX4, &a, &b, &p()), Ulp::Apart(2));
    }

    #[rstest]
    #[case::bf16_one(Dtype::Bfloat16, &[0x80, 0x3f], "0x3f80 (1.0)")]
    #[case::bf16_neg_zero(Dtype::Bfloat16, &[0x00, 0x80], "0x8000 (-0.0)")]
    #[case::e4m3fn_max(Dtype::Float8E4m3fn, &[0x7e], "0x7e (448.0)")]
    #[case::e5m2_inf(Dtype::Float8E5, &[0x7c], "0x7c (inf)")]
    #[case::int16(Dtype::Int16, &[0xfe, 0xff], "0xfffe (-2)")]
    #[case::f32_half(Dtype::Float32, &[0, 0, 0, 0x3f], "0x3f000000 (0.5)")]
    fn shown(#[case] dt: Dtype, #[case] bytes: &[u8], #[case] want: &str) {
        assert_eq!(show(dt, bytes, &p()).to_string(), want);
    }

    #[test]
    fn coordinates_are_c_order() {
        assert_eq!(unravel(7, &[2, 3, 2]), vec![1, 0, 1]);
        assert_eq!(unravel(0, &[4]), vec![0]);
    }
}
