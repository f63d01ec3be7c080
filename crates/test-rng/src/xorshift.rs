//! Marsaglia's xorshift generators (64- and 32-bit) and Vigna's xorshift64* scrambling of the
//! 64-bit one: the small generators some property tests and benches were written against, kept
//! here so their draws stay exactly what they were.

/// xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift generators,
/// scrambled", ACM TOMS 42(4), 2016): the state advanced by the shifts 12, 25, 27 (right, left,
/// right), each output that new state times `0x2545_F491_4F6C_DD1D`.
#[derive(Clone, Debug)]
pub struct XorShift64Star {
    state: u64,
}

impl XorShift64Star {
    /// The stream seeded with `seed`, which must not be 0 (the all-zero state is the shifts'
    /// fixed point: every output would be 0). Panics on 0.
    pub const fn new(seed: u64) -> XorShift64Star {
        assert!(seed != 0, "xorshift64* needs a non-zero seed");
        XorShift64Star { state: seed }
    }

    /// The next 64 bits of the stream.
    pub fn next_u64(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// The next output reduced modulo `n`, a value in `0..n` (0 when `n` is 0); plain modulo, as
    /// [`SplitMix64::below`](crate::SplitMix64::below). Draws exactly one output.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// [`below`](Self::below) for lengths and indices: a value in `0..n` (0 when `n` is 0).
    pub fn below_usize(&mut self, n: usize) -> usize {
        // usize is at most 64 bits on every target Rust supports, so neither cast loses bits.
        self.below(n as u64) as usize
    }
}

/// xorshift64 (Marsaglia, "Xorshift RNGs", Journal of Statistical Software 8(14), 2003): the
/// state advanced by the shifts 13, 7, 17 (left, right, left); each output is the new state
/// itself, unscrambled.
#[derive(Clone, Debug)]
pub struct XorShift64 {
    state: u64,
}

impl XorShift64 {
    /// The stream seeded with `seed`, which must not be 0 (the all-zero state is the shifts'
    /// fixed point: every output would be 0). Panics on 0.
    pub const fn new(seed: u64) -> XorShift64 {
        assert!(seed != 0, "xorshift64 needs a non-zero seed");
        XorShift64 { state: seed }
    }

    /// The next 64 bits of the stream (the new state).
    pub fn next_u64(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    /// The next output reduced modulo `n`, a value in `0..n` (0 when `n` is 0); plain modulo, as
    /// [`SplitMix64::below`](crate::SplitMix64::below). Draws exactly one output.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// [`below`](Self::below) for lengths and indices: a value in `0..n` (0 when `n` is 0).
    pub fn below_usize(&mut self, n: usize) -> usize {
        // usize is at most 64 bits on every target Rust supports, so neither cast loses bits.
        self.below(n as u64) as usize
    }
}

/// xorshift32 (Marsaglia, "Xorshift RNGs", Journal of Statistical Software 8(14), 2003): a
/// 32-bit state advanced by the shifts 13, 17, 5 (left, right, left); each output is the new
/// state itself.
#[derive(Clone, Debug)]
pub struct XorShift32 {
    state: u32,
}

impl XorShift32 {
    /// The stream seeded with `seed`, which must not be 0 (the all-zero state is the shifts'
    /// fixed point: every output would be 0). Panics on 0.
    pub const fn new(seed: u32) -> XorShift32 {
        assert!(seed != 0, "xorshift32 needs a non-zero seed");
        XorShift32 { state: seed }
    }

    /// The next 32 bits of the stream (the new state).
    pub fn next_u32(&mut self) -> u32 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 17;
        self.state ^= self.state << 5;
        self.state
    }
}

#[cfg(test)]
mod tests {
    use super::{XorShift32, XorShift64, XorShift64Star};

    /// xorshift64* from seeds 1 and 0x9E37_79B9_7F4A_7C15, against values computed separately
    /// (Python, arbitrary-precision integers masked to 64 bits, from the paper's definition).
    #[test]
    fn xorshift64star_matches_the_reference_outputs() {
        let mut r = XorShift64Star::new(1);
        let want =
            [0x47E4_CE4B_896C_DD1D, 0xABCF_A6A8_E079_651D, 0xB9D1_0D8F_EB73_1F57, 0x4DB4_18A0_BB1B_019D];
        for w in want {
            assert_eq!(r.next_u64(), w);
        }
        let mut r = XorShift64Star::new(0x9E37_79B9_7F4A_7C15);
        let want =
            [0x0D83_B3E2_9A21_487A, 0x54C4_4C79_F1FE_9D67, 0xA845_F342_007A_0E78, 0x7D6E_0B87_8A79_4779];
        for w in want {
            assert_eq!(r.next_u64(), w);
        }
    }

    /// xorshift64 from Marsaglia's example seed 88172645463325252 (his paper's first outputs)
    /// and from seed 1, against values computed separately (Python, as above).
    #[test]
    fn xorshift64_matches_the_reference_outputs() {
        let mut r = XorShift64::new(88_172_645_463_325_252);
        let want = [8_748_534_153_485_358_512, 3_040_900_993_826_735_515, 3_453_997_556_048_239_312];
        for w in want {
            assert_eq!(r.next_u64(), w);
        }
        let mut r = XorShift64::new(1);
        let want = [0x4082_2041, 0x1000_4106_0C01_1441, 0x9B1E_842F_6E86_2629, 0xF554_F503_555D_8025];
        for w in want {
            assert_eq!(r.next_u64(), w);
        }
    }

    /// xorshift32 from Marsaglia's example seed 2463534242 (his paper's first output is
    /// 723471715) and from seed 0x1234_5678, against values computed separately (Python, masked
    /// to 32 bits).
    #[test]
    fn xorshift32_matches_the_reference_outputs() {
        let mut r = XorShift32::new(2_463_534_242);
        for w in [723_471_715, 2_497_366_906, 2_064_144_800, 2_008_045_182] {
            assert_eq!(r.next_u32(), w);
        }
        let mut r = XorShift32::new(0x1234_5678);
        for w in [0x8798_5AA5, 0x155B_24A3, 0x4820_F4C4, 0x81B3_AC98] {
            assert_eq!(r.next_u32(), w);
        }
    }

    #[test]
    fn below_draws_one_output_and_stays_in_range() {
        let (mut a, mut b) = (XorShift64Star::new(9), XorShift64Star::new(9));
        let (mut c, mut d) = (XorShift64::new(9), XorShift64::new(9));
        for n in [0u64, 1, 2, 3, 1000, u64::MAX] {
            let want = b.next_u64() % n.max(1);
            assert_eq!(a.below(n), want);
            assert!(want < n.max(1));
            let want = d.next_u64() % n.max(1);
            assert_eq!(c.below(n), want);
            assert!(want < n.max(1));
        }
        for n in [0usize, 1, 7, 4096] {
            assert_eq!(a.below_usize(n), (b.next_u64() % n.max(1) as u64) as usize);
            assert_eq!(c.below_usize(n), (d.next_u64() % n.max(1) as u64) as usize);
        }
    }

    #[test]
    fn a_zero_seed_is_refused() {
        assert!(std::panic::catch_unwind(|| XorShift64Star::new(0)).is_err());
        assert!(std::panic::catch_unwind(|| XorShift64::new(0)).is_err());
        assert!(std::panic::catch_unwind(|| XorShift32::new(0)).is_err());
    }
}
