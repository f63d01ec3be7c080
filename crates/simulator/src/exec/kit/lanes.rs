//! Predicated lane merging (seed 000 §5.5; docs/fidelity.md K1, N9): `out ← a` where a flag is
//! set, as bits, over whole elements or the byte/nibble lanes of packed `_x4` containers. Select,
//! CopyPredicated, AffineSelect and the predicated write (`Cx::write_where`) share it.

use bir_ir::Dtype;

/// `out[e] = take[e] ? a[e] : b[e]` over elements of `N` bytes (`b` may be `out` itself).
fn merge<const N: usize>(take: &[bool], a: &[[u8; N]], out: &mut [[u8; N]]) {
    for ((o, t), v) in out.iter_mut().zip(take).zip(a) {
        if *t {
            *o = *v;
        }
    }
}

/// [`merge`] on bytes, dispatched once on element width: `out[e] = a[e]` where `take[e]`.
pub(crate) fn merge_bytes(take: &[bool], a: &[u8], size: usize, out: &mut [u8]) {
    fn go<const N: usize>(take: &[bool], a: &[u8], out: &mut [u8]) {
        merge::<N>(take, a.as_chunks::<N>().0, out.as_chunks_mut::<N>().0);
    }
    match size {
        1 => go::<1>(take, a, out),
        2 => go::<2>(take, a, out),
        4 => go::<4>(take, a, out),
        _ => go::<8>(take, a, out),
    }
}

/// `out` lane ← `a` lane where `take[lane]`, over values of `dt` (one flag per value, an `_x4`
/// container's lanes in N9 order), as bits: whole elements for a one-lane dtype, bytes for the
/// fp8 x4 dtypes (lane k = byte k of the little-endian container), nibbles for fp4 x4 (lane 2j
/// = the low nibble of byte j, lane 2j + 1 its high nibble). Dispatched once on the lane width.
pub(crate) fn merge_lanes(take: &[bool], a: &[u8], dt: Dtype, out: &mut [u8]) {
    let lanes = dt.lanes();
    if lanes == 1 {
        return merge_bytes(take, a, dt.size(), out);
    }
    if dt.size() * 8 / lanes == 8 {
        return merge_bytes(take, a, 1, out);
    }
    // Four-bit lanes: two per byte, the even lane in the low nibble.
    for ((o, v), [even, odd]) in out.iter_mut().zip(a).zip(take.as_chunks::<2>().0) {
        let mask = (u8::from(*even) * 0x0F) | (u8::from(*odd) * 0xF0);
        *o = (*o & !mask) | (*v & mask);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_by_width() {
        let take = [true, false, true];
        let mut out = vec![9u8, 9, 9, 9, 9, 9];
        merge_bytes(&take, &[1, 2, 3, 4, 5, 6], 2, &mut out);
        assert_eq!(out, [1, 2, 9, 9, 5, 6]);
    }

    /// K1 / N9 by hand. fp8 x4: lane k is byte k; lanes 0 and 3 taken. fp4 x4: the container
    /// 0x4321 (bytes 21 43) holds lanes 1, 2, 3, 4 (lane 0 the low nibble); lanes 1 and 2 taken
    /// from 0xDCBA (lanes A, B, C, D) give lanes 1, B, C, 4 = 0x4CB1, bytes B1 4C.
    #[test]
    fn merge_lanes_as_bytes_and_nibbles() {
        let mut out = vec![0x11, 0x22, 0x33, 0x44];
        merge_lanes(&[true, false, false, true], &[0xA0, 0xA1, 0xA2, 0xA3], Dtype::Float8E4m3fnX4, &mut out);
        assert_eq!(out, [0xA0, 0x22, 0x33, 0xA3]);
        let mut out = vec![0x21, 0x43];
        merge_lanes(&[false, true, true, false], &[0xBA, 0xDC], Dtype::Float4E2m1fnX4, &mut out);
        assert_eq!(out, [0xB1, 0x4C]);
        let mut out = vec![9u8, 9, 9, 9];
        merge_lanes(&[false, true], &[1, 2, 3, 4], Dtype::Bfloat16, &mut out);
        assert_eq!(out, [9, 9, 3, 4]);
    }

    /// The slow twin of [`merge_lanes`]: each container as its little-endian integer, lane k
    /// shifted out by k × the lane width (N9), picked, and shifted back.
    fn merge_twin(take: &[bool], a: &[u8], dt: Dtype, out: &[u8]) -> Vec<u8> {
        let (size, lanes) = (dt.size(), dt.lanes());
        let bits = 8 * size / lanes;
        let mask = u64::MAX >> (64 - bits);
        let word = |c: &[u8]| c.iter().rev().fold(0u64, |w, b| (w << 8) | u64::from(*b));
        let mut res = Vec::new();
        for (k, (o, v)) in out.chunks_exact(size).zip(a.chunks_exact(size)).enumerate() {
            let (o, v) = (word(o), word(v));
            let mut w = 0u64;
            for lane in 0..lanes {
                let from = if take[k * lanes + lane] { v } else { o };
                w |= from & (mask << (bits * lane));
            }
            res.extend_from_slice(&w.to_le_bytes()[..size]);
        }
        res
    }

    #[test]
    fn merge_lanes_matches_the_per_lane_twin() {
        let dts = [
            Dtype::Float4E2m1fnX4,
            Dtype::Float8E4m3fnX4,
            Dtype::Float8E5m2X4,
            Dtype::Bfloat16,
            Dtype::Int64,
        ];
        for dt in dts {
            let containers = 37;
            let bytes = |seed: u32| -> Vec<u8> {
                (0..containers * dt.size() as u32)
                    .map(|i| (i.wrapping_add(seed).wrapping_mul(2_654_435_761) >> 13) as u8)
                    .collect()
            };
            let (a, out) = (bytes(1), bytes(7));
            let take: Vec<bool> = (0..containers as usize * dt.lanes())
                .map(|i| (i.wrapping_mul(40_503) >> 5) % 3 == 0)
                .collect();
            let want = merge_twin(&take, &a, dt, &out);
            let mut got = out.clone();
            merge_lanes(&take, &a, dt, &mut got);
            assert_eq!(got, want, "{dt}");
            assert!(got != out && got != a, "{dt}: the mix takes from both sides");
        }
    }
}
