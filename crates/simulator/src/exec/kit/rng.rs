//! The random generators of Memset Random and SetRandState (seed 000 §5.4, re-facts §7;
//! docs/fidelity.md D6, D7), kept per run in [`super::EngineState`].
//!
//! - The host generator: one `std::mt19937_64` per run, seeded 42, reseeded by SetRandState;
//!   each draw is libstdc++'s `std::uniform_int_distribution<uint32_t>` over the full range
//!   (reject `y ≥ 0xFFFF_FFFF_0000_0000`, return `y / 0xFFFF_FFFF`). CONFIRMED.
//! - The Pool generator: one Xorwow per output partition row (re-facts §7 step; D7 seeding).
//! - The Vector generator: four Xorwow lanes per partition row (re-facts §7: Rand2's 24-word
//!   state; docs/fidelity.md R1), all words 0xFFFFFFFF until set.
//! - [`Lanes`]: the generators an instruction of the random family draws from (its engine's
//!   rows), copied out and put back only when the instruction succeeds (R1, R2).
//! - Element bits (D6): elements in the output AP's order; an element of at most 4 bytes takes
//!   the low bytes of one 32-bit draw, an 8-byte element two draws, low word first.
//!
//! Both generators fill whole slices in tight loops: the MT table is regenerated 312 words at a
//! time and tempered in one pass.

const NN: usize = 312;
const MM: usize = 156;
const MATRIX_A: u64 = 0xB502_6F5A_A966_19E9;
const UPPER: u64 = 0xFFFF_FFFF_8000_0000;
const LOWER: u64 = 0x7FFF_FFFF;

/// The 64-bit Mersenne Twister (`std::mt19937_64`), textbook constants.
#[derive(Clone)]
pub(crate) struct Mt19937_64 {
    mt: Box<[u64; NN]>,
    idx: usize,
}

impl std::fmt::Debug for Mt19937_64 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mt19937_64 {{ idx: {} }}", self.idx)
    }
}

impl Mt19937_64 {
    /// `std::mt19937_64(seed)`.
    pub(crate) fn new(seed: u64) -> Self {
        let mut g = Mt19937_64 { mt: Box::new([0; NN]), idx: NN };
        g.seed(seed);
        g
    }

    /// `engine.seed(seed)`.
    pub(crate) fn seed(&mut self, seed: u64) {
        self.mt[0] = seed;
        for i in 1..NN {
            let p = self.mt[i - 1];
            self.mt[i] = 6_364_136_223_846_793_005u64.wrapping_mul(p ^ (p >> 62)).wrapping_add(i as u64);
        }
        self.idx = NN;
    }

    /// Regenerates the table (the twist); outputs are tempered as they are drawn.
    fn refill(&mut self) {
        let mt = &mut *self.mt;
        let twist = |a: u64, b: u64, c: u64| {
            let y = (a & UPPER) | (b & LOWER);
            c ^ (y >> 1) ^ ((y & 1).wrapping_neg() & MATRIX_A)
        };
        for i in 0..NN - MM {
            mt[i] = twist(mt[i], mt[i + 1], mt[i + MM]);
        }
        for i in NN - MM..NN - 1 {
            mt[i] = twist(mt[i], mt[i + 1], mt[i + MM - NN]);
        }
        mt[NN - 1] = twist(mt[NN - 1], mt[0], mt[MM - 1]);
        self.idx = 0;
    }

    /// The next raw 64-bit output (the oracle test compares these).
    #[cfg(test)]
    pub(crate) fn next_u64(&mut self) -> u64 {
        if self.idx >= NN {
            self.refill();
        }
        let v = temper(self.mt[self.idx]);
        self.idx += 1;
        v
    }

    /// `std::uniform_int_distribution<uint32_t>(0, 0xFFFFFFFF)(engine)` into every slot of `out`
    /// (libstdc++'s fallback downscaling: reject `y ≥ 2^32·(2^32−1)`, then `y / (2^32−1)`).
    pub(crate) fn fill_uniform_u32<T: Draw>(&mut self, out: &mut [T]) {
        let mut k = 0;
        while k < out.len() {
            if self.idx >= NN {
                self.refill();
            }
            let n = (NN - self.idx).min(out.len() - k);
            let words = &self.mt[self.idx..self.idx + n];
            let slots = &mut out[k..k + n];
            // One branch-free pass over the block (it vectorises); a rejection (chance 2^-32 per
            // draw) anywhere in it sends the block through the careful loop below instead.
            let mut rejected = false;
            for (o, &x) in slots.iter_mut().zip(words) {
                let y = temper(x);
                rejected |= y >= PAST;
                *o = T::of(div_2_32_minus_1(y));
            }
            let mut done = n;
            if rejected {
                done = 0;
                for (o, &x) in slots.iter_mut().zip(words) {
                    let y = temper(x);
                    if y >= PAST {
                        break;
                    }
                    *o = T::of(div_2_32_minus_1(y));
                    done += 1;
                }
            }
            self.idx += done;
            k += done;
            if done < n {
                // The rejected draw is consumed and nothing is stored for it.
                self.idx += 1;
            }
        }
    }
}

/// A slot one 32-bit draw fills: a `u32`, or its four little-endian bytes in memory.
pub(crate) trait Draw: Copy {
    /// The slot holding `v`.
    fn of(v: u32) -> Self;
}

impl Draw for u32 {
    #[inline(always)]
    fn of(v: u32) -> Self {
        v
    }
}

impl Draw for [u8; 4] {
    #[inline(always)]
    fn of(v: u32) -> Self {
        v.to_le_bytes()
    }
}

/// libstdc++'s rejection bound for a 32-bit range on a 64-bit engine: `2^32 · (2^32 − 1)`.
const PAST: u64 = 0xFFFF_FFFF_0000_0000;

/// MT19937-64 tempering.
#[inline(always)]
fn temper(x: u64) -> u64 {
    let mut y = x;
    y ^= (y >> 29) & 0x5555_5555_5555_5555;
    y ^= (y << 17) & 0x71D6_7FFF_EDA6_0000;
    y ^= (y << 37) & 0xFFF7_EEE0_0000_0000;
    y ^ (y >> 43)
}

/// `y / (2^32 − 1)` for `y < PAST`: with `y = h·2^32 + l`, `y = h·(2^32 − 1) + (h + l)` and
/// `h + l ≤ 2^33 − 3`, so the quotient is `h + (h + l + 1) >> 32`.
#[inline(always)]
fn div_2_32_minus_1(y: u64) -> u32 {
    let (h, l) = (y >> 32, y & 0xFFFF_FFFF);
    (h + ((h + l + 1) >> 32)) as u32
}

/// Xorwow (re-facts §7): state `s0..s4` and a Weyl counter, all mod 2^32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Xorwow {
    s: [u32; 5],
    counter: u32,
}

impl Xorwow {
    /// Row `r`'s initial state (D7): all ones except `s4 = 0xFFFFFFFF ^ r`, counter 0; after a
    /// SetRandState with seed `S`, `s0 = S_lo32`, `s1 = S_hi32`.
    pub(crate) fn for_row(row: u32, seed: Option<u64>) -> Self {
        let mut s = [u32::MAX; 5];
        s[4] = u32::MAX ^ row;
        if let Some(seed) = seed {
            s[0] = seed as u32;
            s[1] = (seed >> 32) as u32;
        }
        Xorwow { s, counter: 0 }
    }

    /// The next 32-bit draw.
    #[inline]
    pub(crate) fn next_u32(&mut self) -> u32 {
        let [s0, s1, s2, s3, s4] = self.s;
        let t = s0 ^ (s0 >> 2);
        let n4 = (s4 ^ (s4 << 4)) ^ (t ^ (t << 1));
        self.s = [s1, s2, s3, s4, n4];
        self.counter = self.counter.wrapping_add(362_437);
        self.counter.wrapping_add(n4)
    }

    pub(crate) fn fill(&mut self, out: &mut [u32]) {
        out.iter_mut().for_each(|o| *o = self.next_u32());
    }

    /// A Vector lane never set: every word 0xFFFFFFFF (re-facts §7 "default seed all ones");
    /// after a SetRandState with seed `S`, `s0 = S_lo32`, `s1 = S_hi32` (R1).
    fn lane(seed: Option<u64>) -> Self {
        let mut w = [u32::MAX; 6];
        if let Some(seed) = seed {
            (w[0], w[1]) = (seed as u32, (seed >> 32) as u32);
        }
        Xorwow::from_words(w)
    }

    /// The state as RandGetState stores it: `[s0, s1, s2, s3, s4, counter]`.
    pub(crate) fn words(&self) -> [u32; 6] {
        let [s0, s1, s2, s3, s4] = self.s;
        [s0, s1, s2, s3, s4, self.counter]
    }

    /// The state RandSetState restores from `words()`'s layout; an all-zero `s0..s4` (which
    /// would draw only the counter) gets `s4 = 1` (re-facts §7).
    pub(crate) fn from_words(w: [u32; 6]) -> Self {
        let mut s = [w[0], w[1], w[2], w[3], w[4]];
        if s == [0; 5] {
            s[4] = 1;
        }
        Xorwow { s, counter: w[5] }
    }
}

/// The engines with random generators of their own (validation allows the random family only
/// on these two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RngEngine {
    /// GpSimd: one Xorwow per row (6 state words).
    Pool,
    /// VectorE: four Xorwow lanes per row (24 state words).
    Vector,
}

impl RngEngine {
    /// The engine's generator, if it has one.
    pub(crate) fn of(e: bir_ir::EngineType) -> Option<RngEngine> {
        match e {
            bir_ir::EngineType::Pool => Some(RngEngine::Pool),
            bir_ir::EngineType::Dve => Some(RngEngine::Vector),
            _ => None,
        }
    }

    /// Xorwow lanes per row.
    pub(crate) fn lanes(self) -> usize {
        match self {
            RngEngine::Pool => 1,
            RngEngine::Vector => 4,
        }
    }
}

/// Copies of the generators of an instruction's rows (`lanes` per row, row-major), drawn from
/// and then put back with [`RandomState::put`] once the instruction's writes succeeded.
pub(crate) struct Lanes {
    /// Whose generators these are.
    pub(crate) engine: RngEngine,
    /// The generators, `engine.lanes()` per row.
    pub(crate) gens: Vec<Xorwow>,
}

impl Lanes {
    /// Fills `out` (rows of `n` draws, one row per `lanes` generators): element `e` of row `r`
    /// takes the next draw of lane `e % lanes` of row `r` (R1).
    pub(crate) fn draw(&mut self, n: usize, out: &mut [u32]) {
        let k = self.engine.lanes();
        for (row, g) in out.chunks_mut(n.max(1)).zip(self.gens.chunks_exact_mut(k)) {
            if k == 1 {
                g[0].fill(row);
            } else {
                for (e, o) in row.iter_mut().enumerate() {
                    *o = g[e % k].next_u32();
                }
            }
        }
    }
}

/// The generators of one run.
#[derive(Debug)]
pub(crate) struct RandomState {
    pub(crate) host: Mt19937_64,
    /// Pool rows created so far (row r at index r).
    rows: Vec<Xorwow>,
    /// The seed of the last SetRandState, for rows not yet created.
    pool_seed: Option<u64>,
    /// Vector rows created so far (four lanes each, row r at index r).
    vector: Vec<[Xorwow; 4]>,
    /// The seed of the last SetRandState, for Vector rows not yet created.
    vector_seed: Option<u64>,
}

impl Default for RandomState {
    fn default() -> Self {
        RandomState {
            host: Mt19937_64::new(42),
            rows: Vec::new(),
            pool_seed: None,
            vector: Vec::new(),
            vector_seed: None,
        }
    }
}

impl RandomState {
    /// SetRandState: reseeds the host generator and resets every Pool row (D7) and Vector lane
    /// (R1).
    pub(crate) fn reseed_all(&mut self, seed: u64) {
        self.host.seed(seed);
        self.reseed_pool(seed);
        self.vector.clear();
        self.vector_seed = Some(seed);
    }

    pub(crate) fn reseed_pool(&mut self, seed: u64) {
        self.rows.clear();
        self.pool_seed = Some(seed);
    }

    pub(crate) fn row(&mut self, r: usize) -> &mut Xorwow {
        while self.rows.len() <= r {
            let next = self.rows.len() as u32;
            self.rows.push(Xorwow::for_row(next, self.pool_seed));
        }
        &mut self.rows[r]
    }

    /// Copies of the first `rows` rows' generators of `engine` (created as never set where
    /// new), to draw from and [`put`](Self::put) back.
    pub(crate) fn take(&mut self, engine: RngEngine, rows: usize) -> Lanes {
        let gens = match engine {
            RngEngine::Pool => (0..rows).map(|r| *self.row(r)).collect(),
            RngEngine::Vector => {
                while self.vector.len() < rows {
                    self.vector.push([Xorwow::lane(self.vector_seed); 4]);
                }
                self.vector[..rows].iter().flatten().copied().collect()
            }
        };
        Lanes { engine, gens }
    }

    /// Puts generators taken with [`take`](Self::take) (and drawn from, or set) back.
    pub(crate) fn put(&mut self, lanes: Lanes) {
        match lanes.engine {
            RngEngine::Pool => {
                for (r, g) in lanes.gens.into_iter().enumerate() {
                    *self.row(r) = g;
                }
            }
            RngEngine::Vector => {
                for (row, g) in self.vector.iter_mut().zip(lanes.gens.chunks_exact(4)) {
                    row.copy_from_slice(g);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Output of tests/oracle/mt19937.cpp (libstdc++, g++ -O2), committed.
    const ORACLE: &str = include_str!("../../../tests/data/mt19937_64.txt");

    fn sections() -> Vec<Vec<u64>> {
        let mut out: Vec<Vec<u64>> = Vec::new();
        for line in ORACLE.lines() {
            if line.starts_with('#') {
                out.push(Vec::new());
            } else {
                out.last_mut().unwrap().push(line.parse().unwrap());
            }
        }
        out
    }

    #[test]
    fn mt19937_64_raw_outputs_match_libstdcxx() {
        let s = sections();
        assert_eq!(s[0].len(), 10_000);
        let mut g = Mt19937_64::new(42);
        for (k, &want) in s[0].iter().enumerate() {
            assert_eq!(g.next_u64(), want, "draw {k}");
        }
    }

    #[test]
    fn uniform_u32_matches_libstdcxx_in_one_fill_and_in_odd_pieces() {
        let s = sections();
        let want: Vec<u32> = s[1].iter().map(|&v| v as u32).collect();
        let mut g = Mt19937_64::new(42);
        let mut got = vec![0u32; want.len()];
        g.fill_uniform_u32(&mut got);
        assert_eq!(got, want);
        // Pieces of odd sizes, crossing table refills.
        let mut g = Mt19937_64::new(42);
        let mut got = Vec::new();
        for n in (1..).step_by(37) {
            let take = n.min(want.len() - got.len());
            let mut part = vec![0u32; take];
            g.fill_uniform_u32(&mut part);
            got.extend(part);
            if got.len() == want.len() {
                break;
            }
        }
        assert_eq!(got, want);
        // Reseeding.
        let want7: Vec<u32> = s[2].iter().map(|&v| v as u32).collect();
        g.seed(7);
        let mut got = vec![0u32; want7.len()];
        g.fill_uniform_u32(&mut got);
        assert_eq!(got, want7);
    }

    /// Inverts [`temper`] step by step (each xor-shift is undone by repeating it until the
    /// shifted-in bits are exhausted).
    fn untemper(y: u64) -> u64 {
        let mut x = y;
        x ^= x >> 43;
        x ^= (x << 37) & 0xFFF7_EEE0_0000_0000;
        let mut t = x;
        for _ in 0..4 {
            t = x ^ ((t << 17) & 0x71D6_7FFF_EDA6_0000);
        }
        let mut u = t;
        for _ in 0..3 {
            u = t ^ ((u >> 29) & 0x5555_5555_5555_5555);
        }
        u
    }

    /// A rejected draw (tempered value ≥ 2^32·(2^32−1)) is consumed and skipped, in the
    /// branch-free block and across a block boundary, as libstdc++'s loop does.
    #[test]
    fn a_rejected_draw_is_skipped() {
        let outputs: [u64; 6] = [5, u64::MAX, 0xFFFF_FFFE_FFFF_FFFF, 0xFFFF_FFFF_0000_0000, 1 << 40, 7];
        for &y in &outputs {
            assert_eq!(temper(untemper(y)), y, "{y:#x}");
        }
        for start in [0, NN - 3] {
            let mut g = Mt19937_64::new(1);
            g.idx = start;
            for (k, &y) in outputs.iter().enumerate().take(3) {
                g.mt[start + k] = untemper(y);
            }
            let mut out = [0u32; 2];
            g.fill_uniform_u32(&mut out);
            // 5 / (2^32−1) = 0; u64::MAX is rejected; 0xFFFFFFFEFFFFFFFF / (2^32−1) = 0xFFFFFFFF.
            assert_eq!(out, [(5u64 / 0xFFFF_FFFF) as u32, (0xFFFF_FFFE_FFFF_FFFFu64 / 0xFFFF_FFFF) as u32]);
            assert_eq!(g.idx, start + 3);
        }
    }

    /// Xorwow from all-ones state, row 0, worked by hand: s0 = 0xFFFFFFFF, t = s0 ^ (s0 >> 2)
    /// = 0xC0000000; t ^ (t << 1) = 0xC0000000 ^ 0x80000000 = 0x40000000; s4 = 0xFFFFFFFF,
    /// s4 ^ (s4 << 4) = 0x0000000F; new s4 = 0x4000000F; counter = 362437 = 0x587C5;
    /// draw = 0x4000000F + 0x587C5 = 0x400587D4.
    /// The shortcut against the division it replaces, at the edges and on a sweep.
    #[test]
    fn division_shortcut() {
        let edge = [
            0,
            1,
            0xFFFF_FFFE,
            0xFFFF_FFFF,
            0x1_0000_0000,
            PAST - 1,
            PAST - 0xFFFF_FFFF,
            0xFFFF_FFFE_FFFF_FFFF,
        ];
        for y in edge.into_iter().chain((0..100_000u64).map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15) % PAST))
        {
            assert_eq!(u64::from(div_2_32_minus_1(y)), y / 0xFFFF_FFFF, "{y:#x}");
        }
    }

    #[test]
    fn xorwow_first_draw_by_hand() {
        let mut x = Xorwow::for_row(0, None);
        assert_eq!(x.next_u32(), 0x4005_87D4);
        // Row 1: s4 = 0xFFFFFFFE; s4 ^ (s4 << 4) = 0xFFFFFFFE ^ 0xFFFFFFE0 = 0x0000001E;
        // new s4 = 0x4000001E; draw = 0x4000001E + 0x587C5 = 0x400587E3.
        let mut x = Xorwow::for_row(1, None);
        assert_eq!(x.next_u32(), 0x4005_87E3);
        // Seeded with S = 0x0000_0001_0000_0000 (s0 = 0, s1 = 1), row 0: t = 0; new s4 =
        // 0x0000000F; draw = 0xF + 0x587C5 = 0x587D4.
        let mut x = Xorwow::for_row(0, Some(1 << 32));
        assert_eq!(x.next_u32(), 0x0005_87D4);
    }

    #[test]
    fn xorwow_matches_the_c_oracle() {
        const XW: &str = include_str!("../../../tests/data/xorwow.txt");
        let mut cur: Option<Xorwow> = None;
        let mut checked = 0;
        for line in XW.lines() {
            if let Some(rest) = line.strip_prefix("# row ") {
                let mut it = rest.split_whitespace();
                let row: u32 = it.next().unwrap().parse().unwrap();
                let seed = it.next().map(|s| s.parse::<u64>().unwrap());
                cur = Some(Xorwow::for_row(row, seed));
            } else if !line.starts_with('#') {
                let want: u32 = line.parse().unwrap();
                assert_eq!(cur.as_mut().unwrap().next_u32(), want);
                checked += 1;
            }
        }
        assert!(checked >= 10_000);
    }
}
