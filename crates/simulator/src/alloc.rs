//! Fallible allocation: every buffer whose size a program or a file controls (memory buffers and
//! their granule maps, per-instruction operand buffers, index lists, the in-memory trace, `.npy`
//! data, the program file) is reserved here with `try_reserve`, so running out of host memory is
//! a typed [`OutOfMemory`] error — a `budget` fault during a run, exit 2 while loading — and
//! never Rust's allocation-failure abort (docs/robustness.md, issue 14 defect 11).
//!
//! The memory cap (seed-independent, birsim's own limit: `--memory-cap`, 4 GiB by default)
//! decides what a program may ask for; this module makes asking safe when the host has less.

/// The host could not provide an allocation, or the running instruction's scratch budget
/// (the memory cap) does not allow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", match cap {
    None => format!("the host could not allocate {bytes} bytes"),
    Some(cap) => format!("{bytes} more bytes of buffers would pass the memory cap of {cap} bytes"),
})]
pub struct OutOfMemory {
    /// The bytes asked for.
    pub bytes: u64,
    /// `Some(cap)` when the memory cap refused it (the instruction's buffers together would
    /// pass it), `None` when the host did.
    pub cap: Option<u64>,
}

impl OutOfMemory {
    /// The host refused `bytes`.
    pub fn host(bytes: u64) -> OutOfMemory {
        OutOfMemory { bytes, cap: None }
    }

    #[cold]
    fn of<T>(n: usize) -> OutOfMemory {
        OutOfMemory::host(bytes_of::<T>(n))
    }
}

fn bytes_of<T>(n: usize) -> u64 {
    (n as u64).saturating_mul(size_of::<T>() as u64)
}

std::thread_local! {
    /// The running instruction's scratch budget: bytes left and the cap (None: not metered).
    static SCRATCH: std::cell::Cell<Option<(u64, u64)>> = const { std::cell::Cell::new(None) };
}

/// Meters the buffers allocated through this module on this thread until dropped: together
/// they may take `budget` bytes, after which an allocation is an [`OutOfMemory`] naming `cap`
/// (a `budget` fault). The executor sets one per instruction, so every kernel's scratch — all
/// its buffers together, not one operand's at a time — is counted against the memory cap
/// (issue 26: Memset Random's two buffers of 4 bytes an element passed a per-buffer check).
pub(crate) struct ScratchBudget(Option<(u64, u64)>);

/// Starts metering (see [`ScratchBudget`]).
pub(crate) fn scratch_budget(budget: u64, cap: u64) -> ScratchBudget {
    ScratchBudget(SCRATCH.replace(Some((budget, cap))))
}

/// Stops metering until dropped (a parallel section: see `Parallelism::chunks`).
pub(crate) fn scratch_paused() -> ScratchBudget {
    ScratchBudget(SCRATCH.replace(None))
}

impl Drop for ScratchBudget {
    fn drop(&mut self) {
        SCRATCH.set(self.0);
    }
}

/// Counts `n` more elements of `T` against the scratch budget, if one is set.
#[inline]
fn charge<T>(n: usize) -> Result<(), OutOfMemory> {
    let Some((left, cap)) = SCRATCH.get() else { return Ok(()) };
    let bytes = bytes_of::<T>(n);
    if bytes > left {
        return Err(OutOfMemory { bytes, cap: Some(cap) });
    }
    SCRATCH.set(Some((left - bytes, cap)));
    Ok(())
}

/// Makes room for `more` further elements in `v` without aborting: amortised growth when the
/// host has it, exactly `more` otherwise.
pub fn reserve<T>(v: &mut Vec<T>, more: usize) -> Result<(), OutOfMemory> {
    if v.capacity() - v.len() >= more {
        return Ok(());
    }
    charge::<T>(more)?;
    v.try_reserve(more).or_else(|_| v.try_reserve_exact(more)).map_err(|_| OutOfMemory::of::<T>(more))
}

/// Resizes `v` to `n` elements (new ones are `value`) without aborting.
pub fn resize<T: Clone>(v: &mut Vec<T>, n: usize, value: T) -> Result<(), OutOfMemory> {
    if n > v.len() {
        reserve(v, n - v.len())?;
    }
    v.resize(n, value);
    Ok(())
}

/// A vector of `n` copies of `value` (the fallible `vec![value; n]`).
pub fn filled<T: Clone>(n: usize, value: T) -> Result<Vec<T>, OutOfMemory> {
    charge::<T>(n)?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| OutOfMemory::of::<T>(n))?;
    v.resize(n, value);
    Ok(v)
}

/// A copy of `s` (the fallible `s.to_vec()`).
pub fn copied<T: Clone>(s: &[T]) -> Result<Vec<T>, OutOfMemory> {
    charge::<T>(s.len())?;
    let mut v = Vec::new();
    v.try_reserve_exact(s.len()).map_err(|_| OutOfMemory::of::<T>(s.len()))?;
    v.extend_from_slice(s);
    Ok(v)
}

/// Appends an iterator of known length `n` to `v`, reserving first (the fallible `extend`).
pub fn extend<T>(v: &mut Vec<T>, n: usize, items: impl IntoIterator<Item = T>) -> Result<(), OutOfMemory> {
    reserve(v, n)?;
    v.extend(items);
    Ok(())
}

/// Collects an iterator of known length `n` (the fallible `collect`).
pub fn collected<T>(n: usize, items: impl IntoIterator<Item = T>) -> Result<Vec<T>, OutOfMemory> {
    let mut v = Vec::new();
    extend(&mut v, n, items)?;
    Ok(v)
}

/// Appends one element (the fallible `push`).
pub fn push<T>(v: &mut Vec<T>, item: T) -> Result<(), OutOfMemory> {
    reserve(v, 1)?;
    v.push(item);
    Ok(())
}

/// Reads a whole reader whose length is announced as `len` (a file's size) into one buffer,
/// reserved up front without aborting.
pub fn read_all(mut r: impl std::io::Read, len: u64) -> Result<Vec<u8>, ReadError> {
    let mut v = Vec::new();
    let n = usize::try_from(len).map_err(|_| ReadError::OutOfMemory(OutOfMemory::host(len)))?;
    // One byte more, so a file that grew since its size was read does not double the buffer.
    v.try_reserve_exact(n.saturating_add(1)).map_err(|_| ReadError::OutOfMemory(OutOfMemory::host(len)))?;
    r.read_to_end(&mut v).map_err(ReadError::Io)?;
    Ok(v)
}

/// Why [`read_all`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The buffer could not be allocated.
    #[error(transparent)]
    OutOfMemory(OutOfMemory),
    /// The reader failed.
    #[error(transparent)]
    Io(std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An allocation no host can satisfy is an error, not an abort (the whole point).
    #[test]
    fn impossible_allocations_are_errors() {
        assert_eq!(filled(usize::MAX / 8, 0u64), Err(OutOfMemory::host(u64::MAX / 8 * 8)));
        let mut v = vec![1u8];
        assert!(resize(&mut v, usize::MAX / 2, 0).is_err());
        assert_eq!(v, [1], "a failed resize changes nothing");
        assert!(reserve(&mut Vec::<u32>::new(), usize::MAX / 4).is_err());
        assert!(matches!(read_all(&b""[..], u64::MAX), Err(ReadError::OutOfMemory(_))));
    }

    #[test]
    fn small_allocations_behave_like_std() {
        assert_eq!(filled(3, 7u16).unwrap(), vec![7u16; 3]);
        let mut v = vec![1u8, 2];
        resize(&mut v, 4, 9).unwrap();
        assert_eq!(v, [1, 2, 9, 9]);
        resize(&mut v, 1, 0).unwrap();
        assert_eq!(v, [1]);
        extend(&mut v, 2, [5, 6]).unwrap();
        push(&mut v, 8).unwrap();
        assert_eq!(v, [1, 5, 6, 8]);
        assert_eq!(copied(&v[1..3]).unwrap(), [5, 6]);
        assert_eq!(read_all(&b"abc"[..], 3).unwrap(), b"abc");
    }

    /// Under a scratch budget, buffers together stay within it; a capacity already there is free.
    #[test]
    fn the_scratch_budget_counts_every_buffer() {
        let mut kept = filled(100, 0u8).unwrap();
        kept.clear();
        {
            let _b = scratch_budget(1000, 4096);
            let a = filled(200, 0u32).unwrap(); // 800 bytes
            assert_eq!(filled(51, 0u32), Err(OutOfMemory { bytes: 204, cap: Some(4096) }));
            resize(&mut kept, 100, 1).unwrap(); // its capacity, not charged
            let b = filled(50, 0u32).unwrap(); // 200 bytes: 1000 in all
            assert!(push(&mut Vec::<u8>::new(), 1).is_err());
            drop((a, b));
        }
        assert!(filled(1 << 20, 0u8).is_ok(), "no budget once the guard is dropped");
    }
}
