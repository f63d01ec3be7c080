//! The ISA machine state files (docs/isa.md "Files and CLI", contract §6): `STATE.json` naming
//! its SBUF / PSUM / DRAM / Pool_Buffer images as uint8 `.npy` files, the registers and the run
//! options, read into an [`indirection::isa::machine::Machine`] and written back in the same form.
//!
//! The library opens no file: [`read_state`] asks its caller for each named image (with the most
//! bytes it may hold), [`write_state`] returns the files to write. Every image is checked (dtype
//! `|u1`, shape, size) before the machine is built, and every buffer a file sizes is allocated
//! through [`crate::alloc`]; the sum of the DRAM images is capped ([`StateLimits`]).

use crate::npy::{Npy, header_bytes};
use bir_ir::{BirEnum, Dtype};
use indirection::isa::Generation;
use indirection::isa::machine::{
    BoundRule, Dup, IcOob, IsaOptions, IsaProfile, Machine, PARTITIONS, POOL_BUFFER_MAX_ELEMENTS, PSUM_BYTES,
    REGISTERS, Space,
};
use serde_json::{Map, Value, json};

/// Bounds on what a state file may ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateLimits {
    /// Total bytes of all DRAM images (default 4 GiB, the CLI's memory cap).
    pub dram_bytes: u64,
    /// DRAM regions (default 1024).
    pub dram_regions: usize,
}

impl Default for StateLimits {
    fn default() -> Self {
        StateLimits { dram_bytes: 4 << 30, dram_regions: 1024 }
    }
}

/// Why a state cannot be read: the file (`STATE.json` or an image) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {message}")]
pub struct StateFileError {
    /// The file (`STATE.json`, or the image's name).
    pub file: String,
    /// What is wrong, naming the field.
    pub message: String,
}

fn err<T>(file: &str, message: impl Into<String>) -> Result<T, StateFileError> {
    Err(StateFileError { file: file.to_owned(), message: message.into() })
}

/// A state as read: the machine, the options and the image file names (reused when writing).
#[derive(Clone, Debug)]
pub struct IsaState {
    /// The machine.
    pub machine: Machine,
    /// The run options.
    pub options: IsaOptions,
    /// Image file names: SBUF, PSUM, the Pool_Buffer and one per DRAM region (in order).
    pub names: StateNames,
}

/// The image file names of a state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateNames {
    /// SBUF's image (default `sbuf.npy`).
    pub sbuf: String,
    /// PSUM's image (default `psum.npy`).
    pub psum: String,
    /// The Pool_Buffer's (default `pool.npy`).
    pub pool: String,
    /// Each DRAM region's.
    pub dram: Vec<String>,
}

const STATE: &str = "STATE.json";

/// How [`read_state`] reads an image: `open(name, max_bytes)` gives a file of the state
/// directory, at most `max_bytes` long, or says why not.
pub type Opener<'a> = dyn FnMut(&str, u64) -> Result<Vec<u8>, String> + 'a;

/// A plain file name inside the state directory: no separators, not `.`/`..`, ends in `.npy`.
fn plain_name(v: &Value, field: &str) -> Result<String, StateFileError> {
    let Some(s) = v.as_str() else { return err(STATE, format!("{field}: expected a file name string")) };
    let ok = !s.is_empty()
        && !s.contains(['/', '\\', '\0'])
        && s != "."
        && s != ".."
        && s.ends_with(".npy")
        && !s.eq_ignore_ascii_case("state.json");
    if !ok {
        return err(
            STATE,
            format!("{field}: `{s}` must be a plain `.npy` file name inside the state directory"),
        );
    }
    Ok(s.to_owned())
}

/// A u64 given as a number or a `0x…` / decimal string.
fn number(v: &Value, field: &str) -> Result<u64, StateFileError> {
    let bad = || err(STATE, format!("{field}: expected a non-negative integer or a \"0x…\" string, got {v}"));
    match v {
        Value::Number(n) => n.as_u64().map_or_else(bad, Ok),
        Value::String(s) => {
            let t = s.trim();
            let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                Some(h) => u64::from_str_radix(&h.replace('_', ""), 16),
                None => t.parse(),
            };
            r.map_or_else(|_| bad(), Ok)
        }
        _ => bad(),
    }
}

fn u32_field(v: &Value, field: &str) -> Result<u32, StateFileError> {
    let n = number(v, field)?;
    u32::try_from(n).map_or_else(|_| err(STATE, format!("{field}: {n} does not fit in 32 bits")), Ok)
}

fn object<'a>(v: &'a Value, field: &str, keys: &[&str]) -> Result<&'a Map<String, Value>, StateFileError> {
    let Some(o) = v.as_object() else { return err(STATE, format!("{field}: expected an object")) };
    if let Some(k) = o.keys().find(|k| !keys.contains(&k.as_str())) {
        return err(STATE, format!("{field}: unknown key `{k}` (expected {})", keys.join(", ")));
    }
    Ok(o)
}

/// Reads an image through `open(name, max_bytes)` and checks it is uint8 with `ok(shape)`.
fn image(open: &mut Opener<'_>, name: &str, max_data: u64, what: &str) -> Result<Npy, StateFileError> {
    // A header is at most a few KiB for these shapes; 1 MiB covers any NumPy writes.
    let bytes = open(name, max_data.saturating_add(1 << 20)).or_else(|e| err(name, e))?;
    let npy = Npy::parse(&bytes).or_else(|e| err(name, e.to_string()))?;
    if npy.descr != "|u1" {
        return err(name, format!("{what}: dtype {}, expected uint8 (|u1)", npy.descr));
    }
    Ok(npy)
}

/// Reads a `STATE.json` (`json`) and every image it names (`open(name, max_bytes)` returns a
/// file of the state directory, at most `max_bytes` long, or why not). Nothing is built until
/// everything is checked.
pub fn read_state(
    json: &[u8],
    open: &mut Opener<'_>,
    limits: &StateLimits,
) -> Result<IsaState, StateFileError> {
    let v: Value = serde_json::from_slice(json).or_else(|e| err(STATE, format!("not JSON: {e}")))?;
    let top =
        object(&v, "the state", &["gen", "options", "sbuf", "psum", "dram", "registers", "pool_buffer"])?;
    let g = match top.get("gen") {
        Some(Value::String(s)) => Generation::from_name(s)
            .map_or_else(|| err(STATE, format!("gen: `{s}` (expected v2, v3, v4 or v5)")), Ok)?,
        Some(other) => return err(STATE, format!("gen: expected a string, got {other}")),
        None => return err(STATE, "gen: missing (v2, v3, v4 or v5)"),
    };
    let options = read_options(top.get("options"))?;
    let mut names = StateNames {
        sbuf: "sbuf.npy".into(),
        psum: "psum.npy".into(),
        pool: "pool.npy".into(),
        dram: Vec::new(),
    };
    let mut machine = Machine::new(g);
    let mut used: Vec<String> = Vec::new();
    let mut claim = |name: &str, field: &str| -> Result<(), StateFileError> {
        if used.iter().any(|u| u == name) {
            return err(STATE, format!("{field}: `{name}` is named twice"));
        }
        used.push(name.to_owned());
        Ok(())
    };
    for (key, space) in [("sbuf", Space::Sbuf), ("psum", Space::Psum)] {
        let Some(f) = top.get(key).filter(|f| !f.is_null()) else { continue };
        let name = plain_name(f, key)?;
        claim(&name, key)?;
        let max = machine.partition_bytes(space);
        let npy = image(open, &name, (PARTITIONS * max) as u64, key)?;
        let [rows, cols] = npy.shape[..] else {
            return err(&name, format!("{key}: shape {:?}, expected [128, B]", npy.shape));
        };
        if rows != PARTITIONS as u64 || cols > max as u64 {
            return err(&name, format!("{key}: shape [{rows}, {cols}], expected [128, B] with B <= {max}"));
        }
        machine.load_image(space, cols as usize, &npy.data).or_else(|e| err(&name, e.to_string()))?;
        match space {
            Space::Sbuf => names.sbuf = name,
            Space::Psum => names.psum = name,
        }
    }
    if let Some(d) = top.get("dram").filter(|d| !d.is_null()) {
        let Some(list) = d.as_array() else { return err(STATE, "dram: expected a list of regions") };
        if list.len() > limits.dram_regions {
            return err(STATE, format!("dram: {} regions, at most {}", list.len(), limits.dram_regions));
        }
        let mut total = 0u64;
        for (k, r) in list.iter().enumerate() {
            let field = format!("dram[{k}]");
            let o = object(r, &field, &["name", "base", "file"])?;
            let rname = match o.get("name") {
                Some(Value::String(s)) if !s.is_empty() => s.clone(),
                _ => return err(STATE, format!("{field}.name: expected a non-empty string")),
            };
            let base = number(o.get("base").unwrap_or(&Value::Null), &format!("{field}.base"))?;
            let file = plain_name(o.get("file").unwrap_or(&Value::Null), &format!("{field}.file"))?;
            claim(&file, &field)?;
            let left = limits.dram_bytes.saturating_sub(total);
            let npy = image(open, &file, left, &field)?;
            if npy.shape.len() != 1 {
                return err(&file, format!("{field}: shape {:?}, expected a 1-D uint8 array", npy.shape));
            }
            total = total.saturating_add(npy.data.len() as u64);
            if total > limits.dram_bytes {
                return err(&file, format!("the DRAM images exceed the cap of {} bytes", limits.dram_bytes));
            }
            machine.add_dram(rname, base, npy.data).or_else(|e| err(STATE, format!("{field}: {e}")))?;
            names.dram.push(file);
        }
    }
    if let Some(r) = top.get("registers").filter(|r| !r.is_null()) {
        let Some(list) = r.as_array() else { return err(STATE, "registers: expected a list of 64 numbers") };
        if list.len() != REGISTERS {
            return err(STATE, format!("registers: {} numbers, expected 64", list.len()));
        }
        for (k, x) in list.iter().enumerate() {
            machine.registers[k] = u32_field(x, &format!("registers[{k}]"))?;
        }
    }
    if let Some(p) = top.get("pool_buffer").filter(|p| !p.is_null()) {
        let o = object(p, "pool_buffer", &["dtype", "count", "start_index", "mask", "file"])?;
        let dtype = match o.get("dtype") {
            Some(Value::String(s)) => <Dtype as BirEnum>::from_name(s)
                .map_or_else(|| err(STATE, format!("pool_buffer.dtype: unknown dtype `{s}`")), Ok)?,
            _ => return err(STATE, "pool_buffer.dtype: expected a BIR dtype name (e.g. float32)"),
        };
        let get = |k: &str| o.get(k).unwrap_or(&Value::Null);
        let count = number(get("count"), "pool_buffer.count")?;
        if count > POOL_BUFFER_MAX_ELEMENTS as u64 {
            return err(STATE, format!("pool_buffer.count: {count}, at most {POOL_BUFFER_MAX_ELEMENTS}"));
        }
        let start = u32_field(get("start_index"), "pool_buffer.start_index")?;
        let mask = u32_field(get("mask"), "pool_buffer.mask")?;
        let file = plain_name(get("file"), "pool_buffer.file")?;
        claim(&file, "pool_buffer")?;
        let row = count as usize * dtype.size();
        let npy = image(open, &file, (PARTITIONS * row) as u64, "pool_buffer")?;
        if npy.shape != [PARTITIONS as u64, row as u64] {
            return err(
                &file,
                format!("pool_buffer: shape {:?}, expected [128, {row}] (count x size)", npy.shape),
            );
        }
        machine
            .set_pool_buffer(dtype, count as usize, start, mask, npy.data)
            .or_else(|e| err(&file, e.to_string()))?;
        names.pool = file;
    }
    Ok(IsaState { machine, options, names })
}

fn read_options(v: Option<&Value>) -> Result<IsaOptions, StateFileError> {
    let mut o = IsaOptions::default();
    let Some(v) = v.filter(|v| !v.is_null()) else { return Ok(o) };
    let m = object(v, "options", &["profile", "ic_oob", "bound_rule", "dup"])?;
    fn pick<T>(
        m: &Map<String, Value>,
        key: &str,
        named: fn(&str) -> Option<T>,
        names: &str,
    ) -> Result<Option<T>, StateFileError> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => named(s).map(Some).map_or_else(
                || err(STATE, format!("options.{key}: `{s}` (expected one of: {})", names.trim())),
                Ok,
            ),
            Some(other) => err(STATE, format!("options.{key}: expected a string, got {other}")),
        }
    }
    if let Some(p) = pick(m, "profile", IsaProfile::named, IsaProfile::NAMES)? {
        o.profile = p;
    }
    if let Some(p) = pick(m, "ic_oob", IcOob::named, IcOob::NAMES)? {
        o.ic_oob = p;
    }
    if let Some(p) = pick(m, "bound_rule", BoundRule::named, BoundRule::NAMES)? {
        o.bound_rule = p;
    }
    if let Some(p) = pick(m, "dup", Dup::named, Dup::NAMES)? {
        o.dup = p;
    }
    Ok(o)
}

/// The result form (contract §6): `state.json` first, then SBUF and PSUM at full size, each
/// DRAM region, and the Pool_Buffer when loaded, as `(file name, bytes)`.
pub fn write_state(
    m: &Machine,
    options: &IsaOptions,
    names: &StateNames,
) -> Result<Vec<(String, Vec<u8>)>, crate::OutOfMemory> {
    let g = m.generation();
    let image = |shape: &[u64], data: &[u8]| -> Result<Vec<u8>, crate::OutOfMemory> {
        let h = header_bytes("|u1", shape);
        let mut out = Vec::new();
        crate::alloc::reserve(&mut out, h.len() + data.len())?;
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        Ok(out)
    };
    let mut files = Vec::new();
    let sb = m.partition_bytes(Space::Sbuf) as u64;
    files.push((names.sbuf.clone(), image(&[PARTITIONS as u64, sb], m.sbuf())?));
    files.push((names.psum.clone(), image(&[PARTITIONS as u64, PSUM_BYTES as u64], m.psum())?));
    let mut dram = Vec::new();
    for (k, r) in m.dram().iter().enumerate() {
        let file = names.dram.get(k).cloned().unwrap_or_else(|| format!("{}.npy", r.name));
        files.push((file.clone(), image(&[r.bytes.len() as u64], &r.bytes)?));
        dram.push(json!({"name": r.name, "base": format!("{:#x}", r.base), "file": file}));
    }
    let pb = &m.pool_buffer;
    let pool = if pb.loaded {
        let row = (pb.count * pb.dtype.size()) as u64;
        files.push((names.pool.clone(), image(&[PARTITIONS as u64, row], &pb.data)?));
        json!({"dtype": pb.dtype.name(), "count": pb.count, "start_index": pb.start_index, "mask": pb.mask, "file": names.pool})
    } else {
        Value::Null
    };
    let state = json!({
        "gen": g.name(),
        "options": {
            "profile": options.profile.name(),
            "ic_oob": options.ic_oob.name(),
            "bound_rule": options.bound_rule.name(),
            "dup": options.dup.name(),
        },
        "sbuf": names.sbuf,
        "psum": names.psum,
        "dram": dram,
        "registers": m.registers.to_vec(),
        "pool_buffer": pool,
    });
    let text = serde_json::to_string_pretty(&state).unwrap_or_default() + "\n";
    files.insert(0, ("state.json".to_owned(), text.into_bytes()));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn npy(shape: &[u64], data: Vec<u8>) -> Vec<u8> {
        Npy { descr: "|u1".into(), shape: shape.to_vec(), data }.to_bytes()
    }

    fn reader(files: HashMap<&'static str, Vec<u8>>) -> impl FnMut(&str, u64) -> Result<Vec<u8>, String> {
        move |name, max| match files.get(name) {
            Some(b) if b.len() as u64 <= max => Ok(b.clone()),
            Some(_) => Err(format!("larger than {max} bytes")),
            None => Err("no such file".into()),
        }
    }

    #[test]
    fn a_full_state_reads_and_writes_back() {
        let mut sb = vec![0u8; 128 * 4];
        sb[4..8].copy_from_slice(&[1, 2, 3, 4]);
        let files = HashMap::from([
            ("s.npy", npy(&[128, 4], sb)),
            ("t.npy", npy(&[6], vec![9, 8, 7, 6, 5, 4])),
            ("p.npy", npy(&[128, 8], vec![0xAB; 1024])),
        ]);
        let json = br#"{"gen": "v3", "options": {"profile": "nki", "dup": "serial"}, "sbuf": "s.npy",
            "dram": [{"name": "table", "base": "0x100000", "file": "t.npy"}],
            "registers": [7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "0x10"],
            "pool_buffer": {"dtype": "bfloat16", "count": 4, "start_index": 8, "mask": 3, "file": "p.npy"}}"#;
        let s = read_state(json, &mut reader(files), &StateLimits::default()).unwrap();
        assert_eq!(s.options.profile, IsaProfile::Nki);
        assert_eq!(s.options.dup, Dup::Serial);
        assert_eq!(s.options.ic_oob, IcOob::ZeroLanes);
        let m = &s.machine;
        assert_eq!(m.generation(), Generation::V3);
        // Image row 1 is partition 1 (224 KiB per partition on v3); the rest stays 0.
        assert_eq!(&m.sbuf()[224 << 10..(224 << 10) + 5], [1, 2, 3, 4, 0]);
        assert_eq!(&m.sbuf()[..8], [0; 8]);
        assert_eq!((m.dram()[0].base, m.dram()[0].bytes.len()), (0x10_0000, 6));
        assert_eq!((m.registers[0], m.registers[63]), (7, 16));
        assert_eq!((m.pool_buffer.count, m.pool_buffer.dtype), (4, Dtype::Bfloat16));
        let out = write_state(m, &s.options, &s.names).unwrap();
        let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["state.json", "s.npy", "psum.npy", "t.npy", "p.npy"]);
        let sbuf = Npy::parse(&out[1].1).unwrap();
        assert_eq!(sbuf.shape, [128, 224 << 10]);
        // The written form reads back to the same machine.
        let back: HashMap<&'static str, Vec<u8>> =
            out.iter().skip(1).map(|(n, b)| (&*Box::leak(n.clone().into_boxed_str()), b.clone())).collect();
        let again = read_state(&out[0].1, &mut reader(back), &StateLimits::default()).unwrap();
        assert_eq!(again.machine, s.machine);
        assert_eq!(again.options, s.options);
    }

    #[test]
    fn bad_states_name_the_file_and_field() {
        let none = || reader(HashMap::new());
        let lim = StateLimits::default();
        let e = |json: &str| read_state(json.as_bytes(), &mut none(), &lim).unwrap_err().to_string();
        assert!(e(r#"{"gen": "v9"}"#).contains("gen: `v9`"));
        assert!(e(r#"{"gen": "v2", "extra": 1}"#).contains("unknown key `extra`"));
        assert!(e(r#"{"gen": "v2", "options": {"ic_oob": "clip"}}"#).contains("options.ic_oob"));
        assert!(e(r#"{"gen": "v2", "sbuf": "../x.npy"}"#).contains("plain `.npy` file name"));
        assert!(e(r#"{"gen": "v2", "sbuf": "x.npy"}"#).starts_with("x.npy: no such file"));
        assert!(e(r#"{"gen": "v2", "registers": [1, 2]}"#).contains("expected 64"));
        assert!(
            e(r#"{"gen": "v2", "dram": [{"name": "a", "base": -1, "file": "a.npy"}]}"#)
                .contains("dram[0].base")
        );
        let big = HashMap::from([("s.npy", npy(&[128, (192 << 10) + 1], vec![0; 128 * ((192 << 10) + 1)]))]);
        let r = read_state(br#"{"gen": "v2", "sbuf": "s.npy"}"#, &mut reader(big), &lim).unwrap_err();
        assert_eq!(r.file, "s.npy");
        let f32img = HashMap::from([(
            "s.npy",
            Npy { descr: "<f4".into(), shape: vec![128, 1], data: vec![0; 512] }.to_bytes(),
        )]);
        let r = read_state(br#"{"gen": "v2", "sbuf": "s.npy"}"#, &mut reader(f32img), &lim).unwrap_err();
        assert!(r.message.contains("uint8"), "{r}");
        let dram = HashMap::from([("a.npy", npy(&[16], vec![0; 16]))]);
        let small = StateLimits { dram_bytes: 8, ..lim };
        let j = br#"{"gen": "v2", "dram": [{"name": "a", "base": 0, "file": "a.npy"}]}"#;
        assert!(read_state(j, &mut reader(dram), &small).is_err(), "the DRAM cap holds");
        let two = HashMap::from([("a.npy", npy(&[16], vec![0; 16])), ("b.npy", npy(&[16], vec![0; 16]))]);
        let j = br#"{"gen": "v2", "dram": [{"name": "a", "base": 0, "file": "a.npy"}, {"name": "b", "base": 8, "file": "b.npy"}]}"#;
        assert!(read_state(j, &mut reader(two), &lim).unwrap_err().message.contains("overlaps"));
    }
}
