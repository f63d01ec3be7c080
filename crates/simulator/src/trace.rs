//! The JSONL trace (`birsim run --trace`, docs/trace.md): one [`TraceRecord`] per executed
//! instruction, written by [`TraceRecord::to_json`] and read back by [`parse_trace`] for
//! `birsim diff` ([`crate::diff`]). The in-memory form is [`crate::TraceEntry`]; this module is
//! its file form, and the only place that knows the JSON field names.

use crate::exec::{BranchTrace, MatmulTrace, TraceEntry, TraceRegion};
use bir_ir::{BirEnum, Dtype};
use serde_json::{Value, json};

/// One line of a trace file: an executed instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// Execution index (0-based, loop iterations counted).
    pub index: u64,
    /// Instruction name.
    pub name: String,
    /// Opcode name.
    pub opcode: String,
    /// Bytes the instruction wrote.
    pub bytes_written: u64,
    /// FNV-1a 64 of everything it wrote, in write order (one value, or none when it wrote
    /// nothing).
    pub checksums: Vec<u64>,
    /// Wall-clock nanoseconds (never compared).
    pub elapsed_ns: u64,
    /// Each output operand's region after the instruction (empty in traces from before the
    /// field existed).
    pub regions: Vec<RegionRecord>,
    /// A Matmult's group flags and PSUM bank (absent for other opcodes).
    pub matmul: Option<MatmulTrace>,
    /// An Activation's inputs outside its function's valid range (absent: 0).
    pub out_of_range: u64,
    /// The registers the instruction wrote, in order (absent: none).
    pub registers: Vec<RegisterRecord>,
    /// A branch's decision (absent for other opcodes).
    pub branch: Option<BranchTrace>,
}

/// One register write in file form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterRecord {
    /// The engine whose file holds it (its JSON name).
    pub engine: String,
    /// The register's name.
    pub name: String,
    /// Its new 32 bits.
    pub value: u32,
}

/// One output operand's region ([`TraceRegion`] in file form).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionRecord {
    /// Index in the instruction's `outs`.
    pub slot: usize,
    /// Memory location name.
    pub location: String,
    /// Dtype of the bytes (the location's, as stored).
    pub dtype: Dtype,
    /// AP element offset.
    pub offset: i64,
    /// AP `[step, num]` levels.
    pub ap: Vec<[i64; 2]>,
    /// Partitions (first level's num).
    pub partitions: u64,
    /// Free elements per partition.
    pub free: u64,
    /// Buffer byte range the AP spans, when known.
    pub extent: Option<[u64; 2]>,
    /// FNV-1a 64 of the region's bytes in AP order.
    pub checksum: u64,
    /// The bytes (`--trace-data`), in AP order.
    pub data: Option<Vec<u8>>,
}

impl From<&TraceRegion> for RegionRecord {
    fn from(r: &TraceRegion) -> Self {
        RegionRecord {
            slot: r.slot,
            location: r.location.clone(),
            dtype: r.dtype,
            offset: r.offset,
            ap: r.pairs.clone(),
            partitions: r.partitions,
            free: r.free,
            extent: r.extent,
            checksum: r.checksum,
            data: r.data.clone(),
        }
    }
}

impl From<&TraceEntry> for TraceRecord {
    fn from(e: &TraceEntry) -> Self {
        TraceRecord {
            index: e.index,
            name: e.name.clone(),
            opcode: e.opcode.to_owned(),
            bytes_written: e.bytes_written,
            checksums: e.checksums.clone(),
            elapsed_ns: e.elapsed_ns,
            regions: e.regions.iter().map(RegionRecord::from).collect(),
            matmul: e.matmul,
            out_of_range: e.out_of_range,
            registers: e
                .registers
                .iter()
                .map(|r| RegisterRecord {
                    engine: r.engine.name().to_owned(),
                    name: r.name.clone(),
                    value: r.value,
                })
                .collect(),
            branch: e.branch.clone(),
        }
    }
}

/// A checksum as the trace spells it.
pub fn checksum_str(c: u64) -> String {
    format!("fnv1a64:{c:016x}")
}

/// Bytes as lowercase hex, two digits a byte, in order.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        s.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    s
}

impl RegionRecord {
    /// The JSON object of one region.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "slot": self.slot, "location": self.location, "dtype": self.dtype.name(),
            "offset": self.offset, "ap": self.ap, "partitions": self.partitions, "free": self.free,
            "extent": self.extent, "checksum": checksum_str(self.checksum),
        });
        if let (Some(d), Some(o)) = (&self.data, v.as_object_mut()) {
            o.insert("data".into(), Value::String(hex(d)));
        }
        v
    }
}

impl TraceRecord {
    /// The JSON object of one line (docs/trace.md).
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "index": self.index, "name": self.name, "opcode": self.opcode,
            "bytes_written": self.bytes_written,
            "checksums": self.checksums.iter().map(|c| checksum_str(*c)).collect::<Vec<_>>(),
            "elapsed_ns": self.elapsed_ns,
            "regions": self.regions.iter().map(RegionRecord::to_json).collect::<Vec<_>>(),
        });
        if let (Some(m), Some(o)) = (self.matmul, v.as_object_mut()) {
            o.insert(
                "matmul".into(),
                json!({ "flags": m.flags, "zero_banks": m.zero_banks, "bank": m.bank }),
            );
        }
        if let (n @ 1.., Some(o)) = (self.out_of_range, v.as_object_mut()) {
            o.insert("out_of_range".into(), json!(n));
        }
        if let (false, Some(o)) = (self.registers.is_empty(), v.as_object_mut()) {
            let regs =
                self.registers.iter().map(|r| json!({"engine": r.engine, "name": r.name, "value": r.value}));
            o.insert("registers".into(), Value::Array(regs.collect()));
        }
        if let (Some(b), Some(o)) = (&self.branch, v.as_object_mut()) {
            o.insert("branch".into(), json!({"taken": b.taken, "target": b.target}));
        }
        v
    }

    /// Parses one trace line.
    pub fn parse(line: &str) -> Result<TraceRecord, FieldError> {
        Self::parse_bytes(line.as_bytes())
    }

    /// Parses one trace line given as bytes (UTF-8 is checked as JSON is read).
    pub fn parse_bytes(line: &[u8]) -> Result<TraceRecord, FieldError> {
        let v: Value = serde_json::from_slice(line)
            .map_err(|e| FieldError { field: String::new(), message: format!("not JSON: {e}") })?;
        let o = Obj { v: &v, path: String::new() };
        let checksums = o
            .array("checksums")?
            .iter()
            .enumerate()
            .map(|(k, c)| parse_checksum(c, &format!("checksums[{k}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let regions = match o.get("regions") {
            None => Vec::new(),
            Some(_) => o
                .array("regions")?
                .iter()
                .enumerate()
                .map(|(k, r)| region(&Obj { v: r, path: format!("regions[{k}].") }))
                .collect::<Result<Vec<_>, _>>()?,
        };
        Ok(TraceRecord {
            index: o.u64("index")?,
            name: o.str("name")?.to_owned(),
            opcode: o.str("opcode")?.to_owned(),
            bytes_written: o.u64("bytes_written")?,
            checksums,
            elapsed_ns: o.get("elapsed_ns").map_or(Ok(0), |_| o.u64("elapsed_ns"))?,
            regions,
            matmul: match o.get("matmul") {
                None => None,
                Some(m) => {
                    let m = Obj { v: m, path: "matmul.".to_owned() };
                    let small = |k: &str, max: u64| {
                        m.u64(k).and_then(|v| {
                            if v <= max { Ok(v) } else { Err(m.err(k, format!("{v} is above {max}"))) }
                        })
                    };
                    Some(MatmulTrace {
                        flags: small("flags", 7)? as u8,
                        zero_banks: small("zero_banks", 8)? as u32,
                        bank: small("bank", 7)?,
                    })
                }
            },
            out_of_range: o.get("out_of_range").map_or(Ok(0), |_| o.u64("out_of_range"))?,
            registers: match o.get("registers") {
                None => Vec::new(),
                Some(_) => o
                    .array("registers")?
                    .iter()
                    .enumerate()
                    .map(|(k, r)| {
                        let r = Obj { v: r, path: format!("registers[{k}].") };
                        let value = r.u64("value")?;
                        Ok(RegisterRecord {
                            engine: r.str("engine")?.to_owned(),
                            name: r.str("name")?.to_owned(),
                            value: u32::try_from(value)
                                .map_err(|_| r.err("value", format!("{value} is above 4294967295")))?,
                        })
                    })
                    .collect::<Result<Vec<_>, FieldError>>()?,
            },
            branch: match o.get("branch") {
                None => None,
                Some(b) => {
                    let b = Obj { v: b, path: "branch.".to_owned() };
                    let taken = match b.get("taken") {
                        Some(Value::Bool(t)) => *t,
                        _ => return Err(b.err("taken", "expected true or false".to_owned())),
                    };
                    let target = match b.get("target") {
                        None | Some(Value::Null) => None,
                        Some(_) => Some(b.str("target")?.to_owned()),
                    };
                    Some(BranchTrace { taken, target })
                }
            },
        })
    }
}

fn region(o: &Obj<'_>) -> Result<RegionRecord, FieldError> {
    let dtype = o.str("dtype")?;
    let dtype = Dtype::from_name(dtype).ok_or_else(|| o.err("dtype", format!("unknown dtype `{dtype}`")))?;
    let ap = o
        .array("ap")?
        .iter()
        .map(|p| match p.as_array().map(Vec::as_slice) {
            Some([s, n]) => s.as_i64().zip(n.as_i64()).map(|(s, n)| [s, n]),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| o.err("ap", "expected a list of [step, num] integer pairs".into()))?;
    let extent = match o.get("extent") {
        None | Some(Value::Null) => None,
        Some(e) => match e.as_array().map(Vec::as_slice) {
            Some([a, b]) => a.as_u64().zip(b.as_u64()).map(|(a, b)| [a, b]),
            _ => None,
        }
        .map(Some)
        .ok_or_else(|| o.err("extent", "expected [start, end] or null".into()))?,
    };
    let data = match o.get("data") {
        None => None,
        Some(_) => Some(
            unhex(o.str("data")?)
                .ok_or_else(|| o.err("data", "expected an even number of hex digits".into()))?,
        ),
    };
    let (partitions, free) = (o.u64("partitions")?, o.u64("free")?);
    let r = RegionRecord {
        slot: usize::try_from(o.u64("slot")?).map_err(|_| o.err("slot", "too large".into()))?,
        location: o.str("location")?.to_owned(),
        dtype,
        offset: o.i64("offset")?,
        ap,
        partitions,
        free,
        extent,
        checksum: parse_checksum(o.get("checksum").unwrap_or(&Value::Null), &format!("{}checksum", o.path))?,
        data,
    };
    if let Some(d) = &r.data {
        let want = partitions.checked_mul(free).and_then(|n| n.checked_mul(dtype.size() as u64));
        if want != Some(d.len() as u64) {
            return Err(o.err(
                "data",
                format!(
                    "{} bytes, but {partitions} × {free} {} elements need {}",
                    d.len(),
                    dtype.name(),
                    want.map_or_else(|| "more than 2^64".to_owned(), |w| w.to_string())
                ),
            ));
        }
    }
    Ok(r)
}

fn parse_checksum(v: &Value, field: &str) -> Result<u64, FieldError> {
    v.as_str()
        .and_then(|s| s.strip_prefix("fnv1a64:"))
        .filter(|h| h.len() == 16)
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .ok_or_else(|| FieldError {
            field: field.to_owned(),
            message: "expected \"fnv1a64:\" and 16 hex digits".into(),
        })
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    s.as_bytes().chunks_exact(2).map(|p| Some(digit(p[0])? << 4 | digit(p[1])?)).collect()
}

/// A JSON object being read, with the field path for errors.
struct Obj<'a> {
    v: &'a Value,
    path: String,
}

impl<'a> Obj<'a> {
    fn get(&self, k: &str) -> Option<&'a Value> {
        self.v.get(k)
    }
    fn err(&self, k: &str, message: String) -> FieldError {
        FieldError { field: format!("{}{k}", self.path), message }
    }
    fn need(&self, k: &str) -> Result<&'a Value, FieldError> {
        if !self.v.is_object() {
            return Err(FieldError {
                field: self.path.trim_end_matches('.').to_owned(),
                message: "expected an object".into(),
            });
        }
        self.get(k).ok_or_else(|| self.err(k, "missing".into()))
    }
    fn u64(&self, k: &str) -> Result<u64, FieldError> {
        self.need(k)?.as_u64().ok_or_else(|| self.err(k, "expected a non-negative integer".into()))
    }
    fn i64(&self, k: &str) -> Result<i64, FieldError> {
        self.need(k)?.as_i64().ok_or_else(|| self.err(k, "expected an integer".into()))
    }
    fn str(&self, k: &str) -> Result<&'a str, FieldError> {
        self.need(k)?.as_str().ok_or_else(|| self.err(k, "expected a string".into()))
    }
    fn array(&self, k: &str) -> Result<&'a [Value], FieldError> {
        self.need(k)?.as_array().map(Vec::as_slice).ok_or_else(|| self.err(k, "expected an array".into()))
    }
}

/// What is wrong with one trace line: the field (empty: the line itself) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", if field.is_empty() { String::new() } else { format!("field `{field}`: ") })]
pub struct FieldError {
    /// Field path, e.g. `regions[0].dtype`.
    pub field: String,
    /// Why it was refused.
    pub message: String,
}

/// A bad trace file: which file, which line (1-based), what.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {error}")]
pub struct TraceError {
    /// The file as the user named it.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// The field and reason.
    pub error: FieldError,
}

/// Parses a whole JSONL trace (`file` names it in errors). Blank lines are skipped; the first
/// bad line is the error.
pub fn parse_trace(file: &str, text: &str) -> Result<Vec<TraceRecord>, TraceError> {
    TraceReader::new(file, text.as_bytes(), u64::MAX).collect()
}

/// The longest trace line [`TraceReader`] accepts by default: 256 MiB, the line of an
/// instruction whose output regions hold 128 MiB together with `--trace-data` (two hex digits a
/// byte) — more than all of a gen3 core's SBUF (24 MiB) and PSUM (2 MiB). Only a DMA of a larger
/// DRAM region writes a longer line; `birsim diff --max-line` raises the limit for it.
pub const MAX_LINE: u64 = 256 << 20;

/// Reads a JSONL trace one line at a time, holding one line at once, and never more than
/// `max_line` bytes of it: a longer line (a file with no newline, `/dev/zero`) is an error at
/// that line, after reading `max_line + 1` bytes of it. Blank lines are skipped.
pub struct TraceReader<R> {
    file: String,
    reader: R,
    max_line: u64,
    line: usize,
    buf: Vec<u8>,
    done: bool,
}

impl<R: std::io::BufRead> TraceReader<R> {
    /// A reader of `reader` (`file` names it in errors) with lines of at most `max_line` bytes.
    pub fn new(file: &str, reader: R, max_line: u64) -> Self {
        TraceReader { file: file.to_owned(), reader, max_line, line: 0, buf: Vec::new(), done: false }
    }

    fn error(&self, message: String) -> TraceError {
        TraceError {
            file: self.file.clone(),
            line: self.line,
            error: FieldError { field: String::new(), message },
        }
    }

    /// The length of the next non-blank line (held in `buf`, without its line ending); `None`
    /// at the end of the file.
    fn next_line(&mut self) -> Result<Option<usize>, TraceError> {
        use std::io::{BufRead as _, Read};
        loop {
            self.buf.clear();
            self.line += 1;
            let n = (&mut self.reader)
                .take(self.max_line.saturating_add(1))
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| self.error(format!("cannot read: {e}")))?;
            if n == 0 {
                return Ok(None);
            }
            let content = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
            let content = content.strip_suffix(b"\r").unwrap_or(content);
            if content.len() as u64 > self.max_line {
                return Err(self.error(format!(
                    "the line is longer than {} bytes, the limit of one trace line (raise it with --max-line)",
                    self.max_line
                )));
            }
            if !content.iter().all(u8::is_ascii_whitespace) {
                return Ok(Some(content.len()));
            }
        }
    }
}

impl<R: std::io::BufRead> Iterator for TraceReader<R> {
    type Item = Result<TraceRecord, TraceError>;

    /// The next record; after the first error, `None`.
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = match self.next_line() {
            Ok(None) => None,
            Ok(Some(len)) => Some(TraceRecord::parse_bytes(&self.buf[..len]).map_err(|error| TraceError {
                file: self.file.clone(),
                line: self.line,
                error,
            })),
            Err(e) => Some(Err(e)),
        };
        self.done = !matches!(item, Some(Ok(_)));
        item
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line() -> TraceRecord {
        TraceRecord {
            index: 3,
            name: "ts".into(),
            opcode: "TensorScalar".into(),
            bytes_written: 4,
            checksums: vec![0x0123_4567_89ab_cdef],
            elapsed_ns: 9,
            regions: vec![RegionRecord {
                slot: 0,
                location: "b".into(),
                dtype: Dtype::Bfloat16,
                offset: 2,
                ap: vec![[2, 1], [1, 2]],
                partitions: 1,
                free: 2,
                extent: Some([4, 8]),
                checksum: 0xffff_0000_ffff_0000,
                data: Some(vec![0x80, 0x3f, 0x00, 0xc0]),
            }],
            matmul: None,
            out_of_range: 0,
            registers: Vec::new(),
            branch: None,
        }
    }

    /// Register writes and a branch decision round-trip; none of either writes no key.
    #[test]
    fn registers_and_a_branch_round_trip_and_are_absent_when_empty() {
        let r = TraceRecord {
            registers: vec![RegisterRecord { engine: "Pool".into(), name: "n".into(), value: 0xFFFF_FFFE }],
            branch: Some(BranchTrace { taken: false, target: None }),
            ..line()
        };
        let text = r.to_json().to_string();
        assert!(text.contains(r#""registers":[{"engine":"Pool","name":"n","value":4294967294}]"#), "{text}");
        assert!(text.contains(r#""branch":{"taken":false,"target":null}"#), "{text}");
        assert_eq!(TraceRecord::parse(&text).unwrap(), r);
        let plain = line().to_json().to_string();
        assert!(!plain.contains("registers") && !plain.contains("branch"), "{plain}");
    }

    #[test]
    fn an_out_of_range_count_round_trips_and_zero_is_absent() {
        let r = TraceRecord { out_of_range: 3, ..line() };
        let text = r.to_json().to_string();
        assert!(text.contains(r#""out_of_range":3"#), "{text}");
        assert_eq!(TraceRecord::parse(&text).unwrap(), r);
        assert!(!line().to_json().to_string().contains("out_of_range"));
    }

    #[test]
    fn a_matmul_line_carries_its_flags_and_bank() {
        let r = TraceRecord {
            opcode: "Matmult".into(),
            matmul: Some(MatmulTrace { flags: 5, zero_banks: 2, bank: 3 }),
            ..line()
        };
        let text = r.to_json().to_string();
        assert!(text.contains(r#""matmul":{"bank":3,"flags":5,"zero_banks":2}"#), "{text}");
        assert_eq!(TraceRecord::parse(&text), Ok(r));
        let bad = text.replace(r#""bank":3"#, r#""bank":9"#);
        assert!(TraceRecord::parse(&bad).is_err());
    }

    #[test]
    fn a_line_reads_back_as_written() {
        let r = line();
        let text = r.to_json().to_string();
        assert!(text.contains(r#""data":"803f00c0""#), "{text}");
        assert!(text.contains(r#""checksum":"fnv1a64:ffff0000ffff0000""#), "{text}");
        assert_eq!(TraceRecord::parse(&text), Ok(r));
    }

    #[test]
    fn old_lines_without_regions_parse() {
        let t = r#"{"index":0,"name":"a","opcode":"Load","bytes_written":0,"checksums":[],"elapsed_ns":1}"#;
        assert_eq!(TraceRecord::parse(t).map(|r| r.regions.len()), Ok(0));
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let good = line().to_json().to_string();
        let bad_dtype = good.replace("bfloat16", "bfloat17");
        let e = parse_trace("t.jsonl", &format!("{good}\n\n{bad_dtype}\n")).unwrap_err();
        assert_eq!(e.to_string(), "t.jsonl:3: field `regions[0].dtype`: unknown dtype `bfloat17`");
        let e = parse_trace("t.jsonl", "{\"index\":1").unwrap_err();
        assert!(e.to_string().starts_with("t.jsonl:1: not JSON:"), "{e}");
        let short = good.replace("803f00c0", "803f");
        let e = parse_trace("x", &short).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x:1: field `regions[0].data`: 2 bytes, but 1 × 2 bfloat16 elements need 4"
        );
        let e = parse_trace("x", &good.replace("\"index\":3", "\"index\":-3")).unwrap_err();
        assert_eq!(e.to_string(), "x:1: field `index`: expected a non-negative integer");
        let e = parse_trace("x", &good.replace("fnv1a64:0123", "fnv1a64:012")).unwrap_err();
        assert_eq!(e.to_string(), "x:1: field `checksums[0]`: expected \"fnv1a64:\" and 16 hex digits");
    }
}
