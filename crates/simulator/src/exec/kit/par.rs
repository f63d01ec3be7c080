//! Partition-parallel execution (issue "Fast end to end": every core).
//!
//! A kernel whose outputs are independent element by element (or row by row) splits its output
//! slice into at most `threads` contiguous chunks, each at least `grain` elements, and runs them
//! on rayon's pool (its persistent workers; a thread spawned per kernel was often placed on the
//! busy core and ran after its sibling instead of beside it), broadcast so that every worker
//! wakes with its share. Every chunk computes exactly what
//! the single-threaded loop would for its elements, so results are bit-identical for every thread
//! count; ordered folds are split only between rows, never within one.

/// Threads and the smallest chunk worth a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parallelism {
    /// Threads a kernel may use (1 = run on the caller's thread).
    pub threads: usize,
    /// The fewest elements a thread is given.
    pub grain: usize,
}

impl Default for Parallelism {
    /// Every core the machine offers; chunks of at least 64 Ki elements.
    fn default() -> Self {
        Parallelism { threads: std::thread::available_parallelism().map_or(1, |n| n.get()), grain: 1 << 16 }
    }
}

impl Parallelism {
    /// How many chunks `n` elements split into.
    fn split(self, n: usize) -> usize {
        (n / self.grain.max(1)).clamp(1, self.threads.max(1))
    }

    /// Runs `f(offset, chunk)` over consecutive chunks of `dst` (a multiple of `align` elements
    /// each, but the last), one per thread, in parallel; the first error wins.
    pub(crate) fn chunks<D: Send, E: Send>(
        self,
        dst: &mut [D],
        align: usize,
        f: impl Fn(usize, &mut [D]) -> Result<(), E> + Sync,
    ) -> Result<(), E> {
        let t = self.split(dst.len());
        self.pieces(dst, align, t, f)
    }

    /// [`Parallelism::chunks`] in four pieces per thread, each thread taking the next piece
    /// left when it finishes one: for long, costly maps (an activation function over a tile),
    /// where a thread slowed by its neighbours (a shared vCPU) would otherwise hold the others
    /// up at the end.
    pub(crate) fn balanced<D: Send, E: Send>(
        self,
        dst: &mut [D],
        align: usize,
        f: impl Fn(usize, &mut [D]) -> Result<(), E> + Sync,
    ) -> Result<(), E> {
        let t = self.split(dst.len());
        let n = if t > 1 { (dst.len() / self.grain.max(1)).clamp(t, 4 * t) } else { 1 };
        self.pieces(dst, align, n, f)
    }

    /// `f` over `n` consecutive pieces of `dst` on the pool's threads.
    fn pieces<D: Send, E: Send>(
        self,
        dst: &mut [D],
        align: usize,
        n: usize,
        f: impl Fn(usize, &mut [D]) -> Result<(), E> + Sync,
    ) -> Result<(), E> {
        let len = dst.len();
        // A chunk's own buffers (bounded by the chunk) are not metered against the scratch
        // budget on any thread, so whether an instruction passes the memory cap does not depend
        // on how many threads ran it (rayon may run a piece on this thread or another).
        let _unmetered = crate::alloc::scratch_paused();
        if n <= 1 {
            return f(0, dst);
        }
        let align = align.max(1);
        let chunk = len.div_ceil(n).div_ceil(align) * align;
        // The pieces, each with the slot its result goes to, in order.
        let mut pieces = Vec::with_capacity(n);
        let (mut rest, mut offset) = (dst, 0);
        while !rest.is_empty() {
            let (head, tail) = rest.split_at_mut(chunk.min(rest.len()));
            pieces.push((offset, head, Ok(())));
            offset += chunk;
            rest = tail;
        }
        // A broadcast wakes every pool thread with a job of its own (a spawned piece waited in
        // the spawning thread's queue for a sleeping thread to steal it — too late for pieces
        // under a millisecond, a Matmult's, which then all ran on one thread); each thread then
        // takes the next piece nobody has taken, until none is left.
        let slots: Vec<_> = pieces.iter_mut().map(|p| std::sync::Mutex::new(Some(p))).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let f = &f;
        rayon::broadcast(|_| {
            while let Some(slot) = slots.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                let piece = slot.lock().ok().and_then(|mut s| s.take());
                if let Some((o, piece, r)) = piece {
                    *r = f(*o, piece);
                }
            }
        });
        drop(slots);
        pieces.into_iter().try_for_each(|(_, _, r)| r)
    }
}

impl Parallelism {
    /// Runs the serial producer `f` over consecutive `piece`-byte pieces of `dst`, in order, on
    /// the caller's thread, while a second thread (when there is one to spare) touches each
    /// piece's pages first, so the kernel's page clearing of a fresh buffer overlaps the
    /// producer instead of stalling it. The bytes `f` sees are whatever `dst` held (the touch
    /// rewrites a byte with its own value); results are identical with or without the helper.
    pub(crate) fn serial_prefaulted(self, dst: &mut [u8], piece: usize, mut f: impl FnMut(&mut [u8])) {
        const PAGE: usize = 4096;
        let piece = piece.max(PAGE);
        if self.threads < 2 || dst.len() < 4 * piece {
            return f(dst);
        }
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<&mut [u8]>(8);
            s.spawn(move || {
                for chunk in dst.chunks_mut(piece) {
                    for k in (0..chunk.len()).step_by(PAGE) {
                        chunk[k] = std::hint::black_box(chunk[k]);
                    }
                    if tx.send(chunk).is_err() {
                        return;
                    }
                }
            });
            for chunk in rx {
                f(chunk);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::Parallelism;

    #[test]
    fn chunks_cover_everything_once_in_order() {
        for threads in [1, 2, 3, 7] {
            let p = Parallelism { threads, grain: 5 };
            for balanced in [false, true] {
                let mut v = vec![0usize; 103];
                let f = |off: usize, c: &mut [usize]| {
                    assert!(off.is_multiple_of(4) || c.is_empty());
                    c.iter_mut().enumerate().for_each(|(k, x)| *x += off + k + 1);
                    Ok::<(), ()>(())
                };
                if balanced { p.balanced(&mut v, 4, f) } else { p.chunks(&mut v, 4, f) }.ok();
                assert!(v.iter().enumerate().all(|(k, x)| *x == k + 1), "{threads}: {v:?}");
            }
        }
    }

    #[test]
    fn serial_prefaulted_hands_every_piece_over_in_order() {
        for threads in [1, 2] {
            let p = Parallelism { threads, grain: 1 };
            let mut v: Vec<u8> = (0..100_003u32).map(|k| (k % 251) as u8).collect();
            let mut seen = Vec::new();
            p.serial_prefaulted(&mut v, 5000, |c| {
                seen.extend_from_slice(c);
                c.iter_mut().for_each(|x| *x = x.wrapping_add(1));
            });
            assert!(seen.iter().enumerate().all(|(k, &x)| x == (k % 251) as u8), "{threads}");
            assert!(v.iter().enumerate().all(|(k, &x)| x == (k % 251) as u8 + 1), "{threads}");
        }
    }

    #[test]
    fn an_error_in_any_chunk_is_returned() {
        let p = Parallelism { threads: 4, grain: 1 };
        let mut v = vec![0u8; 64];
        let r = p.chunks(&mut v, 1, |off, _| if off == 0 { Ok(()) } else { Err(off) });
        assert!(r.is_err());
    }
}
