//! `cargo xtask exhaustive-fp8`: every one of the 2^32 fp32 inputs through the fast FP8 encoder,
//! compared with a slow, obviously correct reference written here a different way (nearest
//! representable value by binary search in f64, ties to the even code, overflow when the
//! nearest value is one step past the largest finite one). Opt-in: minutes, not for CI.
//!
//! `cargo xtask exhaustive-exp`: every fp32 through Activation Exp's fast path
//! (`numerics::activation::exp_slice`) against `libm::exp` rounded to fp32, the value the fast
//! path promises (docs/fidelity.md E3).

use numerics::minifloat::{E3M4, E4M3, E4M3FN, E5M2, Encoder, Format, NanOut, Policy, Style};
use std::sync::atomic::{AtomicU64, Ordering};

struct Reference {
    f: Format,
    saturate: bool,
    /// (value, code) of every finite non-negative code, ascending.
    values: Vec<(f64, u32)>,
    /// The value one step above the largest finite one.
    next: f64,
}

impl Reference {
    fn new(f: Format, saturate: bool) -> Reference {
        let mut values: Vec<(f64, u32)> = (0..f.sign_bit())
            .map(|c| (f64::from(f32::from_bits(f.decode_bits(c))), c))
            .filter(|(v, _)| v.is_finite())
            .collect();
        values.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (max, _) = values[values.len() - 1];
        let (below, _) = values[values.len() - 2];
        // Above the top binade's max the step is the same as just below it.
        Reference { f, saturate, values, next: max + (max - below) }
    }

    fn encode(&self, bits: u32) -> u8 {
        let x = f32::from_bits(bits);
        let sign = if x.is_sign_negative() { self.f.sign_bit() } else { 0 };
        if x.is_nan() {
            return (sign | self.f.nan_code()) as u8;
        }
        let a = f64::from(x.abs());
        let max_code = self.f.max_code();
        let (max, _) = self.values[self.values.len() - 1];
        let code = if a > max {
            let (d_max, d_next) = (a - max, self.next - a);
            // The virtual code above max has the opposite parity of max_code.
            let overflow = d_next < d_max || (d_next == d_max && max_code & 1 == 1);
            if overflow {
                return (if self.saturate {
                    sign | max_code
                } else if self.f.style == Style::Ieee {
                    sign | self.f.inf_code()
                } else {
                    sign | self.f.nan_code()
                }) as u8;
            }
            max_code
        } else {
            let i = self.values.partition_point(|(v, _)| *v <= a);
            let (lo, lo_code) = self.values[i - 1];
            if lo == a || i == self.values.len() {
                lo_code
            } else {
                let (hi, hi_code) = self.values[i];
                let (dl, dh) = (a - lo, hi - a);
                if dl < dh || (dl == dh && lo_code & 1 == 0) { lo_code } else { hi_code }
            }
        };
        (sign | code) as u8
    }
}

/// The formats checked, by BIR dtype name.
const FORMATS: [(&str, Format); 4] =
    [("float8_e4m3fn", E4M3FN), ("float8e5", E5M2), ("float8e4", E4M3), ("float8e3", E3M4)];

/// The format names asked for (all when none), or `None` for `-h`/`--help`.
pub fn parse(args: &[String]) -> Result<Option<Vec<String>>, String> {
    let mut names = Vec::new();
    for a in args {
        match a.as_str() {
            "--help" | "-h" => return Ok(None),
            n if FORMATS.iter().any(|(name, _)| *name == n) => names.push(a.clone()),
            other => {
                let known: Vec<&str> = FORMATS.iter().map(|(name, _)| *name).collect();
                return Err(format!("unknown format or option `{other}` (formats: {})", known.join(", ")));
            }
        }
    }
    Ok(Some(names))
}

pub fn run(names: &[String]) -> bool {
    let formats = FORMATS;
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let mut ok = true;
    for (name, f) in formats {
        if !names.is_empty() && !names.iter().any(|n| n == name) {
            continue;
        }
        for saturate in [false, true] {
            let fast = Encoder::new(f, Policy { saturate, nan: NanOut::Keep });
            let slow = Reference::new(f, saturate);
            let bad = AtomicU64::new(0);
            let first = std::sync::Mutex::new(Vec::new());
            let start = std::time::Instant::now();
            std::thread::scope(|s| {
                for t in 0..threads as u64 {
                    let (fast, slow, bad, first) = (&fast, &slow, &bad, &first);
                    s.spawn(move || {
                        let (lo, hi) =
                            ((1u64 << 32) * t / threads as u64, (1u64 << 32) * (t + 1) / threads as u64);
                        for b in lo..hi {
                            let b = b as u32;
                            let (g, w) = (fast.encode(b), slow.encode(b));
                            if g != w {
                                bad.fetch_add(1, Ordering::Relaxed);
                                if let Ok(mut v) = first.lock()
                                    && v.len() < 5
                                {
                                    v.push(format!("fp32 {b:08X}: reference {w:02X}, encoder {g:02X}"));
                                }
                            }
                        }
                    });
                }
            });
            let n = bad.load(Ordering::Relaxed);
            println!("{name:<14} saturate={saturate:<5} {n} mismatches of 2^32 ({:.0?})", start.elapsed());
            for line in first.lock().map(|v| v.clone()).unwrap_or_default() {
                println!("    {line}");
            }
            ok &= n == 0;
        }
    }
    ok
}

/// `exhaustive-exp`: true when every fp32 gives libm's bits (NaNs: any NaN for a NaN).
pub fn exp() -> bool {
    let threads = std::thread::available_parallelism().map_or(1, usize::from) as u64;
    let bad = AtomicU64::new(0);
    let first = std::sync::Mutex::new(Vec::new());
    let start = std::time::Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let (bad, first) = (&bad, &first);
            s.spawn(move || {
                let (lo, hi) = ((1u64 << 32) * t / threads, (1u64 << 32) * (t + 1) / threads);
                let mut xs = Vec::with_capacity(1 << 16);
                for base in (lo..hi).step_by(1 << 16) {
                    xs.clear();
                    xs.extend((base..hi.min(base + (1 << 16))).map(|b| f32::from_bits(b as u32)));
                    let mut ys = xs.clone();
                    numerics::activation::exp_slice(&mut ys);
                    for (x, y) in xs.iter().zip(&ys) {
                        let want = libm::exp(f64::from(*x)) as f32;
                        if y.to_bits() != want.to_bits() && !(y.is_nan() && want.is_nan()) {
                            bad.fetch_add(1, Ordering::Relaxed);
                            if let Ok(mut v) = first.lock()
                                && v.len() < 5
                            {
                                v.push(format!(
                                    "fp32 {:08X}: libm {:08X}, fast {:08X}",
                                    x.to_bits(),
                                    want.to_bits(),
                                    y.to_bits()
                                ));
                            }
                        }
                    }
                }
            });
        }
    });
    let n = bad.load(Ordering::Relaxed);
    println!("exp            {n} mismatches of 2^32 ({:.0?})", start.elapsed());
    for line in first.lock().map(|v| v.clone()).unwrap_or_default() {
        println!("    {line}");
    }
    n == 0
}
