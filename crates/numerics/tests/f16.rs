//! The fp32 → fp16 narrowing (`codec::f32_to_f16_bits`, written in this crate) against IEEE
//! round-to-nearest-even: every fp16 value and every rounding boundary between two of them, by
//! construction, and a dense sweep of fp32 against the `half` crate.

use numerics::NanSign;
use numerics::codec::{f16_to_f32_bits, f32_to_f16_bits};

fn narrow(bits: u32) -> u16 {
    f32_to_f16_bits(f32::from_bits(bits), NanSign::Keep, false)
}

/// Every finite fp16 value and infinity, both signs, comes back as itself.
#[test]
fn every_fp16_value_round_trips() {
    for h in (0..=0x7C00u16).chain(0x8000..=0xFC00) {
        assert_eq!(narrow(f16_to_f32_bits(h)), h, "{h:04X}");
    }
}

/// Between each two neighbouring fp16 magnitudes (the top one 2^16, which is Inf) the halfway
/// point goes to the even one, and the fp32 values just below and above it go down and up.
/// Halfway points need 12 significant bits, so they are exact in fp32.
#[test]
fn halfway_points_tie_to_even_and_their_neighbours_do_not() {
    for lo in 0..=0x7BFFu16 {
        let hi = lo + 1;
        let value = |h: u16| f64::from(f32::from_bits(f16_to_f32_bits(h)));
        // 0x7C00 is Inf; the rounding boundary below it is taken against 2^16.
        let (a, b) = (value(lo), if hi == 0x7C00 { 65536.0 } else { value(hi) });
        #[expect(clippy::cast_possible_truncation, reason = "the halfway point is exact in fp32")]
        let mid = ((a + b) / 2.0) as f32;
        assert_eq!(f64::from(mid), (a + b) / 2.0, "{lo:04X}");
        let even = if lo % 2 == 0 { lo } else { hi };
        for sign in [0u16, 0x8000] {
            let s = u32::from(sign) << 16;
            let m = mid.to_bits() | s;
            assert_eq!(narrow(m), even | sign, "halfway above {lo:04X}");
            assert_eq!(narrow(m - 1), lo | sign, "just below halfway above {lo:04X}");
            assert_eq!(narrow(m + 1), hi | sign, "just above halfway above {lo:04X}");
        }
    }
    // Above the last halfway point (65520) everything is Inf; below the first (2^-25), zero.
    assert_eq!(narrow(f32::MAX.to_bits()), 0x7C00);
    assert_eq!(narrow(f32::INFINITY.to_bits()), 0x7C00);
    assert_eq!(narrow(f32::NEG_INFINITY.to_bits()), 0xFC00);
    assert_eq!(narrow(0x3300_0000 - 1), 0);
    assert_eq!(narrow(1), 0);
    assert_eq!(narrow(0x8000_0001), 0x8000);
}

/// A sweep of 2^23 fp32 inputs (every 512th pattern, offset so both the kept and the dropped
/// bits vary) gives what the `half` crate gives. NaN is the profile's business, not tested here.
#[test]
fn dense_sweep_matches_the_half_crate() {
    let mut checked = 0u32;
    for k in 0..(1u32 << 23) {
        let bits = k.wrapping_mul(512).wrapping_add(k.wrapping_mul(0x9E37) & 0x1FF);
        let f = f32::from_bits(bits);
        if f.is_nan() {
            continue;
        }
        assert_eq!(narrow(bits), half::f16::from_f32(f).to_bits(), "{bits:08X}");
        checked += 1;
    }
    assert!(checked > 8_000_000);
}
