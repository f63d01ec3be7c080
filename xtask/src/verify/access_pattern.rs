//! The `access-pattern` suite: element byte addresses from the NumPy oracle
//! (`conformance/access-pattern/make_cases.py`), checked through `for_each_element`, `read` and
//! `write`.

use super::Outcome;
use super::case::Case;
use access_pattern::{ApError, Layout, Pattern, for_each_element, read, write};
use bir_ir::ApPair;
use serde_json::Value;

fn int(v: &Value, key: &str) -> Result<i64, String> {
    v.get(key).and_then(Value::as_i64).ok_or_else(|| format!("case file: `{key}` must be an integer"))
}

fn layout(v: &Value) -> Result<(Layout, usize), String> {
    let u = |k: &str| {
        int(v, k).and_then(|n| u64::try_from(n).map_err(|_| format!("case file: `{k}` is negative")))
    };
    let origin = u("origin")? as usize;
    match v.get("kind").and_then(Value::as_str) {
        Some("flat") => {
            let bytes = u("bytes")?;
            Ok((Layout::flat(origin, bytes), origin + bytes as usize))
        }
        Some("partitioned") => {
            let (parts, pb, row) = (u("partitions")?, u("partition_bytes")?, u("row_stride")?);
            let l = Layout::partitioned(origin, parts, pb, row);
            Ok((l, l.span().ok_or("case file: layout too large")?))
        }
        _ => Err("case file: layout kind must be flat or partitioned".into()),
    }
}

pub fn run(case: &Case) -> Outcome {
    match check(case) {
        Ok(()) => Outcome::Pass,
        Err(e) => Outcome::Fail(e),
    }
}

fn check(case: &Case) -> Result<(), String> {
    let text =
        std::fs::read_to_string(&case.program).map_err(|e| format!("{}: {e}", case.program.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", case.program.display()))?;
    let pat = &v["pattern"];
    let pairs: Vec<ApPair> = pat["ap"]
        .as_array()
        .ok_or("case file: pattern.ap must be an array")?
        .iter()
        .map(|p| Some(ApPair::new(p.get(0)?.as_i64()?, p.get(1)?.as_i64()?)))
        .collect::<Option<_>>()
        .ok_or("case file: bad [step, num] pair")?;
    let size = int(pat, "elem_size")? as usize;
    let p = Pattern { pairs: &pairs, offset: int(pat, "offset")?, elem_size: size };
    let (layout, buf_len) = layout(&v["layout"])?;
    let mut got = Vec::new();
    let walked = for_each_element(&layout, &p, |_, at| got.push(at as i64));
    let expect = &v["expect"];
    if expect.get("error").and_then(Value::as_str) == Some("out-of-bounds") {
        return match walked {
            Err(ApError::OutOfBounds { .. }) => Ok(()),
            other => Err(format!("oracle: out of bounds; birsim: {other:?}")),
        };
    }
    walked.map_err(|e| format!("oracle: in bounds; birsim: {e}"))?;
    let want: Vec<i64> = expect["addresses"]
        .as_array()
        .ok_or("case file: expect.addresses missing")?
        .iter()
        .map(|a| a.as_i64().ok_or("case file: bad address"))
        .collect::<Result<_, _>>()?;
    if let Some(k) = (0..want.len().max(got.len())).find(|&k| want.get(k) != got.get(k)) {
        return Err(format!(
            "element {k}: oracle address {:?}, birsim {:?} ({} vs {} elements)",
            want.get(k),
            got.get(k),
            want.len(),
            got.len()
        ));
    }
    // read gathers the bytes at the oracle's addresses; write scatters to them in order.
    let buf: Vec<u8> = (0..buf_len).map(|i| (i.wrapping_mul(131) >> 3) as u8).collect();
    let mut out = vec![0u8; want.len() * size];
    read(&buf, &layout, &p, &mut out).map_err(|e| e.to_string())?;
    let mut dst = vec![0u8; buf_len];
    write(&mut dst, &layout, &p, &out).map_err(|e| e.to_string())?;
    let mut expect_dst = vec![0u8; buf_len];
    for (k, &a) in want.iter().enumerate() {
        let a = a as usize;
        if out[k * size..(k + 1) * size] != buf[a..a + size] {
            return Err(format!("read: element {k} differs from the bytes at oracle address {a}"));
        }
        expect_dst[a..a + size].copy_from_slice(&out[k * size..(k + 1) * size]);
    }
    if dst != expect_dst {
        return Err("write: the scattered buffer differs from writing at the oracle addresses".into());
    }
    Ok(())
}
