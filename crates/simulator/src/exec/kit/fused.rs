//! The fused element dispatch (docs/fidelity.md F1): a direct pass over memory bytes, generic over
//! the storage format it decodes and encodes in one go — fp32, bf16 or an FP8 format
//! ([`Store`]) — dispatched once per instruction on the dtype ([`with_store`]), and, for the FP8
//! formats, run as a lookup table of the pass itself (`numerics::lut`) when the tile is large
//! enough to pay for one ([`Store::by_table`]). TensorScalar and TensorTensor use it; a new
//! elementwise kernel (e.g. an activation function) writes a [`Pass`] and gets every format.

use super::{Parallelism, Res};
use bir_ir::Dtype;
use numerics::codec::{Bf16, Codec, Fp8, Slot as Plain};
use numerics::lut::{Bits, Code, Lut};

/// A direct pass's buffers: the source when it is not `dst` itself, the destination bytes, the
/// thread split, and buffers for a lookup table and its codes (from the pool) when one may be
/// used (`None` always runs the direct kernel).
pub(crate) struct Direct<'a> {
    /// Threads and grain.
    pub(crate) par: Parallelism,
    /// The source bytes, or `None` to run in place on `dst`.
    pub(crate) src: Option<&'a [u8]>,
    /// The destination bytes.
    pub(crate) dst: &'a mut [u8],
    /// Table and code buffers.
    pub(crate) lut: Option<(&'a mut Vec<u8>, &'a mut Vec<u8>)>,
}

/// A storage format the direct passes run on straight from memory bytes: the fused codec plus
/// views of bytes as its elements.
pub(crate) trait Store: Codec<C: Send + Sync> + Sync {
    /// Bytes as elements.
    fn view(b: &[u8]) -> &[Self::C];
    /// Bytes as elements, mutably.
    fn view_mut(b: &mut [u8]) -> &mut [Self::C];
    /// `kernel` (an elementwise pass over one slice whose every output element is a function of
    /// its own input element's bits alone) over `pass` through a lookup table ([`by_table`]) when
    /// this store's element is a table code and a table pays (the FP8 formats); `None` means the
    /// caller runs the direct pass.
    fn by_table(
        self,
        _pass: &mut Direct<'_>,
        _kernel: impl Fn(Self, &[Self::C], &mut [Self::C]) -> Res<()> + Sync,
    ) -> Option<Res<()>> {
        None
    }
}

impl Store for Plain<[u8; 4]> {
    fn view(b: &[u8]) -> &[[u8; 4]] {
        b.as_chunks::<4>().0
    }
    fn view_mut(b: &mut [u8]) -> &mut [[u8; 4]] {
        b.as_chunks_mut::<4>().0
    }
}

impl Store for Bf16 {
    fn view(b: &[u8]) -> &[[u8; 2]] {
        b.as_chunks::<2>().0
    }
    fn view_mut(b: &mut [u8]) -> &mut [[u8; 2]] {
        b.as_chunks_mut::<2>().0
    }
    // No table: bf16's direct pass vectorises (a shift, the ops, a rounding add and a NaN
    // select), and a 128 KiB table's lookups measured no faster on the 128 × 65536 bench tile.
}

impl Store for Fp8 {
    fn view(b: &[u8]) -> &[u8] {
        b
    }
    fn view_mut(b: &mut [u8]) -> &mut [u8] {
        b
    }
    fn by_table(
        self,
        pass: &mut Direct<'_>,
        kernel: impl Fn(Self, &[u8], &mut [u8]) -> Res<()> + Sync,
    ) -> Option<Res<()>> {
        by_table(self, pass, kernel)
    }
}

/// A direct pass, generic over the storage format.
pub(crate) trait Pass {
    /// Runs the pass in store `k`.
    fn run<K: Store>(self, k: K) -> Res<()>;
}

/// Runs `pass` with the store of `dt` (fp32, bf16, an FP8 format); `None` for other dtypes.
/// The one dispatch on dtype of every direct pass.
pub(crate) fn with_store<P: Pass>(dt: Dtype, profile: &numerics::Profile, pass: P) -> Option<Res<()>> {
    match dt {
        Dtype::Float32 => Some(pass.run(Plain::<[u8; 4]>::new())),
        Dtype::Bfloat16 => Some(pass.run(Bf16(profile.nan_sign))),
        _ => Fp8::of(dt, profile).map(|k| pass.run(k)),
    }
}

/// Whether `dt` has a [`Store`].
pub(crate) fn has_store(dt: Dtype) -> bool {
    matches!(
        dt,
        Dtype::Float32
            | Dtype::Bfloat16
            | Dtype::Float8E3
            | Dtype::Float8E4
            | Dtype::Float8E4m3fn
            | Dtype::Float8E5
    )
}

/// `kernel` over `pass` as a lookup table (numerics::lut; docs/fidelity.md F1): the table is
/// `kernel` itself run once over every code, bit for bit, so a fault comes from that run exactly
/// as the direct pass gives it; then one lookup per element, chunked across threads as the direct
/// pass is. `None` (the direct pass) below [`Lut::pays`] or without table buffers.
fn by_table<K: Store<C: Code>>(
    codec: K,
    pass: &mut Direct<'_>,
    kernel: impl Fn(K, &[K::C], &mut [K::C]) -> Res<()>,
) -> Option<Res<()>> {
    let n = pass.dst.len() / K::C::SIZE;
    if !Lut::<K::C, K::C>::pays(n) {
        return None;
    }
    let (storage, codes) = pass.lut.as_mut()?;
    let lut = match Lut::build(std::mem::take(*storage), codes, |every, table| kernel(codec, every, table)) {
        Ok(lut) => lut,
        Err(e) => return Some(Err(e)),
    };
    let src = pass.src.map(K::view);
    let r = pass.par.chunks(K::view_mut(pass.dst), 1, |off, chunk| {
        match src {
            Some(s) => lut.map(&s[off..off + chunk.len()], chunk),
            None => lut.map_in_place(chunk),
        }
        Ok(())
    });
    **storage = lut.into_storage();
    Some(r)
}
