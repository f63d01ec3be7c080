//! Fidelity profiles: the reference interpreter (`refsim`, re-facts §4) and the NKI CPU simulator
//! (`nki`, ml_dtypes 0.6 / NumPy), as named presets of independent knobs (docs/fidelity.md N*).

/// What a NaN becomes when encoded into a narrower float.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NanSign {
    /// The canonical positive quiet NaN (refsim: bf16 0x7FC0, fp16 0x7E00, sign dropped).
    Drop,
    /// The canonical quiet NaN with the input's sign (ml_dtypes).
    Keep,
}

/// Float → integer conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatToInt {
    /// Round to nearest even, then clamp to the range; NaN → MAX (sign clear) or MIN (sign
    /// set), unsigned: 0 if the sign is set, else MAX (re-facts §4, the reference).
    RneSaturate,
    /// Truncate toward zero, then clamp; NaN → 0 (Rust `as`).
    TruncSaturate,
}

/// Integer → integer conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntToInt {
    /// Through fp32 (exact only up to 2^24), then the float → int rule (re-facts §4).
    ViaFp32,
    /// Exact two's-complement truncation / extension (NumPy `astype`).
    Wrap,
}

/// How the MX scale format E8M0 converts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum E8m0Mode {
    /// As a plain uint8 (the reference's casts, re-facts §4).
    RawByte,
    /// As 2^(code − 127), 0xFF = NaN (ml_dtypes `float8_e8m0fnu`).
    Exponent,
}

/// A fidelity profile. Use [`Profile::refsim`] (the default) or [`Profile::nki`], then change
/// any knob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// FP8 conversion config byte 0: overflow and ±Inf saturate to ±max (`fp8_sis`). On in
    /// `refsim` (libBIR's default config 0x0001, re-facts §4); off gives ±Inf on overflow, which
    /// AWS documents for the hardware's FP32_MIN downcast (docs/fidelity.md N2, N19).
    pub fp8_saturate: bool,
    /// FP8 conversion config byte 1: NaN → signed zero (`fp8_sns`).
    pub fp8_nan_suppress: bool,
    /// NaN sign on narrowing.
    pub nan_sign: NanSign,
    /// fp16 NaN keeps its top payload bits (NumPy) instead of becoming canonical.
    pub f16_nan_payload: bool,
    /// Float → int rule.
    pub float_to_int: FloatToInt,
    /// Int → int rule.
    pub int_to_int: IntToInt,
    /// E8M0 conversion.
    pub e8m0: E8m0Mode,
}

impl Profile {
    /// The reference interpreter: FP8 {saturate on, NaN-suppress off}, sign-dropping NaN,
    /// RNE + saturating float → int, int → int through fp32, E8M0 as a raw byte.
    pub const fn refsim() -> Profile {
        Profile {
            fp8_saturate: true,
            fp8_nan_suppress: false,
            nan_sign: NanSign::Drop,
            f16_nan_payload: false,
            float_to_int: FloatToInt::RneSaturate,
            int_to_int: IntToInt::ViaFp32,
            e8m0: E8m0Mode::RawByte,
        }
    }

    /// The NKI CPU simulator: ml_dtypes 0.6 for every float format (non-saturating,
    /// sign-keeping NaN), NumPy fp16 and integer `astype` (wrap).
    pub const fn nki() -> Profile {
        Profile {
            fp8_saturate: false,
            fp8_nan_suppress: false,
            nan_sign: NanSign::Keep,
            f16_nan_payload: true,
            float_to_int: FloatToInt::RneSaturate,
            int_to_int: IntToInt::Wrap,
            e8m0: E8m0Mode::Exponent,
        }
    }

    /// A preset by name (`refsim` or `nki`).
    pub fn named(name: &str) -> Option<Profile> {
        match name {
            "refsim" => Some(Profile::refsim()),
            "nki" => Some(Profile::nki()),
            _ => None,
        }
    }

    /// This profile with the FP8 config forced to 0 (no saturation, no NaN suppression), as the
    /// reference's accumulate path does (re-facts §4).
    pub const fn for_accumulate(self) -> Profile {
        Profile { fp8_saturate: false, fp8_nan_suppress: false, ..self }
    }
}

impl Default for Profile {
    fn default() -> Self {
        Profile::refsim()
    }
}
