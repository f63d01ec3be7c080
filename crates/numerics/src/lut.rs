//! Lookup tables for elementwise functions of a 1- or 2-byte element (issue "Fast end to end":
//! the bf16 and FP8 TensorScalar targets).
//!
//! When each output element depends only on the bits of its own input element (no neighbour, no
//! position, no state), the whole function is a table of one output per input code: 256 entries
//! for a 1-byte element, 65536 for a 2-byte one. [`Lut::build`] fills that table by running the
//! caller's own slice kernel once over a buffer holding every code in order, so each entry is
//! what that kernel gives for that code, bit for bit; [`Lut::map`] then replaces the kernel by one
//! load per element. Whether a kernel is such a function is the caller's to decide (the
//! simulator's TensorScalar fast path, docs/fidelity.md F1); nothing here knows an op or a dtype.
//!
//! The table lives in a byte buffer the caller lends ([`Lut::build`] takes it, [`Lut::into_storage`]
//! gives it back), so a kernel that builds one per instruction allocates nothing once warm. The
//! map loop indexes a fixed-size array view of the table by a `u8` / `u16`, so it has no bounds
//! check and no branch per element.

use std::marker::PhantomData;

/// An element held as bits: one byte, or 2, 4 or 8 little-endian bytes, viewed in place from a
/// byte buffer.
pub trait Bits: Copy + Send + Sync + 'static {
    /// Bytes per element.
    const SIZE: usize;
    /// `b` as elements (a trailing partial element is left out).
    fn view(b: &[u8]) -> &[Self];
    /// `b` as mutable elements (a trailing partial element is left out).
    fn view_mut(b: &mut [u8]) -> &mut [Self];
}

impl Bits for u8 {
    const SIZE: usize = 1;
    fn view(b: &[u8]) -> &[u8] {
        b
    }
    fn view_mut(b: &mut [u8]) -> &mut [u8] {
        b
    }
}

macro_rules! bits_array {
    ($($n:literal),*) => {$(
        impl Bits for [u8; $n] {
            const SIZE: usize = $n;
            fn view(b: &[u8]) -> &[[u8; $n]] {
                b.as_chunks::<$n>().0
            }
            fn view_mut(b: &mut [u8]) -> &mut [[u8; $n]] {
                b.as_chunks_mut::<$n>().0
            }
        }
    )*};
}
bits_array!(2, 4, 8);

/// An input element a table is indexed by: a byte (256 codes) or a 2-byte little-endian word
/// (65536 codes).
pub trait Code: Bits {
    /// How many codes there are.
    const COUNT: usize;
    /// Writes code `k` at `dst[k]` for every `k` below `dst.len()` (at most [`Code::COUNT`]).
    fn every(dst: &mut [Self]);
    /// `dst[k] = table[src[k]]` over the shorter of the two; nothing when `table` does not hold
    /// exactly [`Code::COUNT`] entries (a [`Lut`] always does).
    fn map<O: Copy>(table: &[O], src: &[Self], dst: &mut [O]);
    /// `vals[k] = table[vals[k]]`, the same rule as [`Code::map`].
    fn map_in_place(table: &[Self], vals: &mut [Self]);
}

impl Code for u8 {
    const COUNT: usize = 256;
    fn every(dst: &mut [u8]) {
        dst.iter_mut().enumerate().for_each(|(k, d)| *d = k as u8);
    }
    #[inline]
    fn map<O: Copy>(table: &[O], src: &[u8], dst: &mut [O]) {
        let Ok(t) = <&[O; 256]>::try_from(table) else { return };
        dst.iter_mut().zip(src).for_each(|(d, s)| *d = t[usize::from(*s)]);
    }
    #[inline]
    fn map_in_place(table: &[u8], vals: &mut [u8]) {
        let Ok(t) = <&[u8; 256]>::try_from(table) else { return };
        vals.iter_mut().for_each(|v| *v = t[usize::from(*v)]);
    }
}

impl Code for [u8; 2] {
    const COUNT: usize = 1 << 16;
    fn every(dst: &mut [[u8; 2]]) {
        dst.iter_mut().enumerate().for_each(|(k, d)| *d = (k as u16).to_le_bytes());
    }
    #[inline]
    fn map<O: Copy>(table: &[O], src: &[[u8; 2]], dst: &mut [O]) {
        let Ok(t) = <&[O; 1 << 16]>::try_from(table) else { return };
        dst.iter_mut().zip(src).for_each(|(d, s)| *d = t[usize::from(u16::from_le_bytes(*s))]);
    }
    #[inline]
    fn map_in_place(table: &[[u8; 2]], vals: &mut [[u8; 2]]) {
        let Ok(t) = <&[[u8; 2]; 1 << 16]>::try_from(table) else { return };
        vals.iter_mut().for_each(|v| *v = t[usize::from(u16::from_le_bytes(*v))]);
    }
}

/// A function from input codes `I` to output elements `O`, as a table with one entry per code.
#[derive(Debug)]
pub struct Lut<I, O> {
    /// `I::COUNT` elements of `O`, as bytes.
    table: Vec<u8>,
    _types: PhantomData<fn(I) -> O>,
}

impl<I: Code, O: Bits> Lut<I, O> {
    /// Whether a table pays for itself over `n` elements: its build runs the kernel over
    /// [`Code::COUNT`] codes, so the map must cover several times that many.
    pub const fn pays(n: usize) -> bool {
        n >= 4 * I::COUNT
    }

    /// The table of `kernel`, which maps a slice of codes to as many outputs: it runs once, over
    /// every code in order (from `codes`, a scratch buffer), into `storage` (any contents; both
    /// resized). An error of the kernel is returned as it is.
    pub fn build<E>(
        mut storage: Vec<u8>,
        codes: &mut Vec<u8>,
        kernel: impl FnOnce(&[I], &mut [O]) -> Result<(), E>,
    ) -> Result<Self, E> {
        codes.clear();
        codes.resize(I::COUNT * I::SIZE, 0);
        let every = I::view_mut(codes);
        I::every(every);
        storage.clear();
        storage.resize(I::COUNT * O::SIZE, 0);
        kernel(I::view(codes), O::view_mut(&mut storage))?;
        Ok(Lut { table: storage, _types: PhantomData })
    }

    /// The entries, code `k` at index `k`.
    pub fn table(&self) -> &[O] {
        O::view(&self.table)
    }

    /// `dst[k] = f(src[k])` over the shorter of the two.
    pub fn map(&self, src: &[I], dst: &mut [O]) {
        I::map(self.table(), src, dst);
    }

    /// The table's buffer, for reuse.
    pub fn into_storage(self) -> Vec<u8> {
        self.table
    }
}

impl<I: Code> Lut<I, I> {
    /// `vals[k] = f(vals[k])`.
    pub fn map_in_place(&self, vals: &mut [I]) {
        I::map_in_place(I::view(&self.table), vals);
    }
}

#[cfg(test)]
mod tests {
    use super::{Code, Lut};

    #[test]
    fn every_code_appears_once_in_order() {
        let mut b = [[0u8; 2]; 1 << 16];
        <[u8; 2]>::every(&mut b);
        assert!(b.iter().enumerate().all(|(k, c)| usize::from(u16::from_le_bytes(*c)) == k));
        let mut b = [0u8; 256];
        u8::every(&mut b);
        assert!(b.iter().enumerate().all(|(k, c)| usize::from(*c) == k));
    }

    #[test]
    fn a_table_is_its_kernel_over_every_code() {
        // An independent function of the code: the byte's bits reversed, widened to 4 bytes.
        let kernel = |src: &[u8], dst: &mut [[u8; 4]]| {
            dst.iter_mut().zip(src).for_each(|(d, s)| *d = u32::from(s.reverse_bits()).to_le_bytes());
            Ok::<(), ()>(())
        };
        let mut codes = Vec::new();
        let lut = Lut::build(Vec::new(), &mut codes, kernel).unwrap();
        let src: Vec<u8> = (0..1000u32).map(|k| (k * 37 % 256) as u8).collect();
        let mut dst = vec![[0u8; 4]; src.len()];
        lut.map(&src, &mut dst);
        for (s, d) in src.iter().zip(&dst) {
            assert_eq!(u32::from_le_bytes(*d), u32::from(s.reverse_bits()), "{s:#04x}");
        }
        // 0x01 reversed is 0x80: a hand-worked entry.
        assert_eq!(lut.table()[1], [0x80, 0, 0, 0]);
    }

    #[test]
    fn a_two_byte_table_maps_in_place_and_keeps_its_buffer() {
        // x -> x xor 0x8000 (a sign flip of a bf16 / fp16 code), worked for two codes by hand.
        let kernel = |src: &[[u8; 2]], dst: &mut [[u8; 2]]| {
            dst.iter_mut().zip(src).for_each(|(d, s)| *d = (u16::from_le_bytes(*s) ^ 0x8000).to_le_bytes());
            Ok::<(), ()>(())
        };
        let lut = Lut::build(vec![7u8; 3], &mut Vec::new(), kernel).unwrap();
        let mut v = [0x3F80u16.to_le_bytes(), 0xFFC0u16.to_le_bytes()];
        lut.map_in_place(&mut v);
        assert_eq!(v, [0xBF80u16.to_le_bytes(), 0x7FC0u16.to_le_bytes()]);
        assert_eq!(lut.into_storage().len(), 2 << 16);
    }

    #[test]
    fn a_kernel_error_comes_back() {
        let r = Lut::<u8, u8>::build(Vec::new(), &mut Vec::new(), |_, _| Err("no"));
        assert_eq!(r.err(), Some("no"));
    }

    #[test]
    fn a_table_pays_only_over_several_times_its_codes() {
        assert!(!Lut::<u8, u8>::pays(1023));
        assert!(Lut::<u8, u8>::pays(1024));
        assert!(!Lut::<[u8; 2], [u8; 2]>::pays(65536));
    }
}
