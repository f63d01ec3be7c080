//! Small deterministic generators the workspace's property tests and benches share for their
//! random inputs, so a failure reproduces from its seed: [`SplitMix64`] (Steele, Lea and Flood,
//! "Fast splittable pseudorandom number generators", 2014), the default for new code, and the
//! xorshift family ([`XorShift64Star`], [`XorShift64`], [`XorShift32`]) that older tests were written against.
//! Dev-only: no library crate depends on it outside `[dev-dependencies]` (xtask's tidy test
//! checks), and it is no part of what the simulator computes (its Memset generators live in
//! `simulator::exec::random`).

mod xorshift;

pub use xorshift::{XorShift32, XorShift64, XorShift64Star};

/// A SplitMix64 stream: a 64-bit counter advanced by the golden-ratio increment, each output
/// that counter put through a 64-bit finaliser.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// The stream seeded with `seed`; its first output is the finaliser of
    /// `seed + 0x9E37_79B9_7F4A_7C15`.
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 bits of the stream.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next output reduced modulo `n`, a value in `0..n` (0 when `n` is 0). Plain modulo,
    /// so very slightly biased toward small values unless `n` is a power of two: fine for
    /// test inputs. Draws exactly one output.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// [`below`](Self::below) for lengths and indices: a value in `0..n` (0 when `n` is 0).
    pub fn below_usize(&mut self, n: usize) -> usize {
        // usize is at most 64 bits on every target Rust supports, so neither cast loses bits.
        self.below(n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    /// The reference outputs (Vigna's splitmix64.c) from seed 0 and from seed 1234567.
    #[test]
    fn matches_the_reference_outputs() {
        let mut r = SplitMix64::new(0);
        let want = [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F];
        for w in want {
            assert_eq!(r.next_u64(), w);
        }
        let mut r = SplitMix64::new(1_234_567);
        let want = [6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423];
        for w in want {
            assert_eq!(r.next_u64(), w);
        }
    }

    #[test]
    fn below_draws_one_output_and_stays_in_range() {
        let (mut a, mut b) = (SplitMix64::new(9), SplitMix64::new(9));
        for n in [0u64, 1, 2, 3, 1000, u64::MAX] {
            let want = b.next_u64() % n.max(1);
            assert_eq!(a.below(n), want);
            assert!(want < n.max(1));
        }
        for n in [0usize, 1, 7, 4096] {
            let want = (b.next_u64() % n.max(1) as u64) as usize;
            assert_eq!(a.below_usize(n), want);
        }
    }
}
