//! Partition-parallel execution (issue "Fast end to end": every core).
//!
//! A kernel whose outputs are independent element by element (or row by row) splits its output
//! slice into at most `threads` contiguous chunks, each at least `grain` elements, and runs them on
//! scoped threads. Every chunk computes exactly what the single-threaded loop would for its
//! elements, so results are bit-identical for every thread count; ordered folds are split only
//! between rows, never within one.

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
    /// each, but the last), in parallel; the first error wins.
    pub(crate) fn chunks<D: Send, E: Send>(
        self,
        dst: &mut [D],
        align: usize,
        f: impl Fn(usize, &mut [D]) -> Result<(), E> + Sync,
    ) -> Result<(), E> {
        let n = dst.len();
        let t = self.split(n);
        if t <= 1 {
            return f(0, dst);
        }
        let align = align.max(1);
        let chunk = n.div_ceil(t).div_ceil(align) * align;
        std::thread::scope(|s| {
            let mut handles = Vec::with_capacity(t);
            let (mut rest, mut offset) = (dst, 0);
            let f = &f;
            while rest.len() > chunk {
                let (head, tail) = rest.split_at_mut(chunk);
                rest = tail;
                let o = offset;
                offset += head.len();
                handles.push(s.spawn(move || f(o, head)));
            }
            let last = f(offset, rest);
            let mut first = Ok(());
            for h in handles {
                let r = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                if first.is_ok() {
                    first = r;
                }
            }
            first.and(last)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Parallelism;

    #[test]
    fn chunks_cover_everything_once_in_order() {
        for threads in [1, 2, 3, 7] {
            let p = Parallelism { threads, grain: 5 };
            let mut v = vec![0usize; 103];
            p.chunks(&mut v, 4, |off, c| {
                assert!(off.is_multiple_of(4) || c.is_empty());
                c.iter_mut().enumerate().for_each(|(k, x)| *x += off + k + 1);
                Ok::<(), ()>(())
            })
            .ok();
            assert!(v.iter().enumerate().all(|(k, x)| *x == k + 1), "{threads}: {v:?}");
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
