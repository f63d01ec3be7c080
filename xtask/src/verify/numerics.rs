//! The `numerics` suite: encode and decode vectors from ml_dtypes / NumPy
//! (`conformance/numerics/make_vectors.py`), compared bit for bit with hex in failures.

use super::Outcome;
use super::case::Case;
use bir_ir::{BirEnum, Dtype};
use numerics::{Profile, decode_to_f32, encode_from_f32};
use serde_json::Value;

pub fn run(case: &Case) -> Outcome {
    match check(case) {
        Ok(()) => Outcome::Pass,
        Err(e) => Outcome::Fail(e),
    }
}

fn field<'v>(v: &'v Value, key: &str) -> Result<&'v str, String> {
    v.get(key).and_then(Value::as_str).ok_or_else(|| format!("case file: `{key}` missing"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().rev().map(|b| format!("{b:02X}")).collect()
}

fn check(case: &Case) -> Result<(), String> {
    let text =
        std::fs::read_to_string(&case.program).map_err(|e| format!("{}: {e}", case.program.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let dir = case.program.parent().and_then(|p| p.parent()).ok_or("case outside a suite")?;
    let dtype = Dtype::from_name(field(&v, "dtype")?).ok_or("case file: unknown dtype")?;
    let profile = Profile::named(field(&v, "profile")?).ok_or("case file: unknown profile")?;
    let read = |key: &str| -> Result<Vec<u8>, String> {
        let p = dir.join(field(&v, key)?);
        std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))
    };
    let (inputs, expected) = (read("inputs")?, read("expected")?);
    let size = dtype.size();
    match field(&v, "kind")? {
        "encode" => {
            let xs: Vec<f32> =
                inputs.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            let lanes = dtype.lanes();
            let want_len = xs.len() / lanes * size;
            lengths(
                inputs.len().is_multiple_of(4) && xs.len().is_multiple_of(lanes),
                expected.len(),
                want_len,
            )?;
            let mut got = vec![0u8; want_len];
            encode_from_f32(dtype, &xs, &mut got, &profile).map_err(|e| e.to_string())?;
            let bad: Vec<String> = got
                .chunks_exact(size)
                .zip(expected.chunks_exact(size))
                .enumerate()
                .filter(|(_, (g, e))| g != e)
                .map(|(k, (g, e))| {
                    let ins: Vec<String> = xs[k * lanes..(k + 1) * lanes]
                        .iter()
                        .map(|x| format!("{:08X}", x.to_bits()))
                        .collect();
                    format!("  fp32 {} → expected {}, birsim {}", ins.join(" "), hex(e), hex(g))
                })
                .collect();
            report(bad, got.len() / size)
        }
        "decode" => {
            let n = inputs.len() / size * dtype.lanes();
            lengths(inputs.len().is_multiple_of(size), expected.len(), n * 4)?;
            let mut got = vec![0f32; n];
            decode_to_f32(dtype, &inputs, &mut got, &profile).map_err(|e| e.to_string())?;
            let bad: Vec<String> = got
                .iter()
                .zip(expected.chunks_exact(4))
                .enumerate()
                .filter(|(_, (g, e))| g.to_bits().to_le_bytes() != **e)
                .map(|(k, (g, e))| {
                    let c = &inputs[k / dtype.lanes() * size..(k / dtype.lanes() + 1) * size];
                    format!(
                        "  code {} lane {} → expected {}, birsim {:08X}",
                        hex(c),
                        k % dtype.lanes(),
                        hex(e),
                        g.to_bits()
                    )
                })
                .collect();
            report(bad, n)
        }
        other => Err(format!("case file: unknown kind `{other}`")),
    }
}

/// The expected file must hold exactly one value per input value (`zip` alone would pass a
/// short file), and the inputs must be whole values.
fn lengths(whole_inputs: bool, expected: usize, want: usize) -> Result<(), String> {
    if !whole_inputs {
        return Err("case file: the inputs are not a whole number of values".into());
    }
    if expected != want {
        return Err(format!("the expected file has {expected} bytes, the inputs call for {want}"));
    }
    Ok(())
}

fn report(bad: Vec<String>, total: usize) -> Result<(), String> {
    if bad.is_empty() {
        return Ok(());
    }
    let shown: Vec<&String> = bad.iter().take(8).collect();
    Err(format!(
        "{} of {total} values differ; first ones:\n{}",
        bad.len(),
        shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::lengths;

    #[test]
    fn an_expected_file_of_another_length_fails() {
        assert!(lengths(true, 8, 8).is_ok());
        assert!(lengths(true, 4, 8).unwrap_err().contains("has 4 bytes"), "short");
        assert!(lengths(true, 12, 8).is_err(), "long");
        assert!(lengths(false, 8, 8).is_err(), "partial input value");
    }
}
