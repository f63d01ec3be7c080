//! Linearization of an access pattern into runs (seed 000 §1.3, `linearizedElementIntervals`).
//!
//! Unit dims (num = 1) are dropped; from the innermost dim outward, dims fuse while
//! `step == product of the inner nums` (the run length). The remaining outer dims are iterated as
//! nested loops emitting one base element offset per run. When no dim fuses (a strided innermost
//! dim), that innermost dim becomes one *strided* run instead of `num` runs of length 1, so the
//! copy loops never pay the nested-loop cost per element; for the copy loops,
//! [`Runs::fuse_strided`] also folds in the outer dims that continue that run. The order of elements is the
//! reference's row-major [W,Z,Y,X] order either way.

use crate::ApError;
use bir_ir::{ApPair, MAX_AP_DIMS};
use smallvec::SmallVec;

/// An access pattern as this crate sees it: levels (partition dim first), start offset and
/// element size, all in elements except `elem_size` (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pattern<'a> {
    /// `[step, num]` levels, outermost first.
    pub pairs: &'a [ApPair],
    /// Start element.
    pub offset: i64,
    /// Bytes per element.
    pub elem_size: usize,
}

impl<'a> Pattern<'a> {
    /// The pattern of a BIR access pattern (its dtype gives the element size).
    pub fn of(ap: &'a bir_ir::AccessPattern) -> Self {
        Pattern { pairs: &ap.pairs, offset: ap.offset, elem_size: ap.dtype.size() }
    }

    /// Number of elements (product of the nums), checked.
    pub fn elements(&self) -> Result<u64, ApError> {
        self.check_shape()?;
        let mut n: u64 = 1;
        for (dim, p) in self.pairs.iter().enumerate() {
            n = n.checked_mul(p.num as u64).ok_or(ApError::Overflow { dim })?;
        }
        Ok(n)
    }

    pub(crate) fn check_shape(&self) -> Result<(), ApError> {
        if self.pairs.is_empty() {
            return Err(ApError::NoDims);
        }
        if self.pairs.len() > MAX_AP_DIMS {
            return Err(ApError::TooManyDims { dims: self.pairs.len() });
        }
        if let Some((dim, p)) = self.pairs.iter().enumerate().find(|(_, p)| p.num < 1) {
            return Err(ApError::BadNum { dim, num: p.num });
        }
        Ok(())
    }

    /// The runs of this pattern, in element order.
    pub fn runs(&self) -> Result<Runs, ApError> {
        Runs::new(self)
    }
}

/// A run of `len` elements starting at element `start`, `stride` elements apart (1 = contiguous).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// First element index.
    pub start: i64,
    /// Number of elements (≥ 1).
    pub len: u64,
    /// Distance between consecutive elements.
    pub stride: i64,
}

/// The runs of a pattern: an odometer over the outer dims, no per-element allocation.
#[derive(Clone, Debug)]
pub struct Runs {
    /// Outer loop levels (after dropping unit dims and fusing/absorbing the inner ones).
    outer: SmallVec<[ApPair; MAX_AP_DIMS]>,
    idx: SmallVec<[i64; MAX_AP_DIMS]>,
    base: i64,
    len: u64,
    stride: i64,
    remaining: u64,
}

impl Runs {
    fn new(p: &Pattern<'_>) -> Result<Runs, ApError> {
        let total = p.elements()?;
        // Every address this walk computes lies between the extremes, which must not overflow.
        let mut lo = p.offset;
        let mut hi = p.offset;
        for (dim, q) in p.pairs.iter().enumerate() {
            let span = q.step.checked_mul(q.num - 1).ok_or(ApError::Overflow { dim })?;
            let end = if span < 0 { &mut lo } else { &mut hi };
            *end = end.checked_add(span).ok_or(ApError::Overflow { dim })?;
        }
        let mut dims: SmallVec<[ApPair; MAX_AP_DIMS]> =
            p.pairs.iter().copied().filter(|q| q.num != 1).collect();
        // Fuse contiguous inner dims.
        let mut len: u64 = 1;
        while let Some(last) = dims.last() {
            if i128::from(last.step) == i128::from(len) {
                len *= last.num as u64;
                dims.pop();
            } else {
                break;
            }
        }
        let mut stride = 1;
        if len == 1
            && let Some(last) = dims.pop()
        {
            len = last.num as u64;
            stride = last.step;
        }
        let runs = total / len;
        Ok(Runs {
            idx: dims.iter().map(|_| 0).collect(),
            outer: dims,
            base: p.offset,
            len,
            stride,
            remaining: runs,
        })
    }

    /// Elements per run.
    pub fn run_len(&self) -> u64 {
        self.len
    }

    /// Element distance inside a run (1 = contiguous).
    pub fn stride(&self) -> i64 {
        self.stride
    }

    /// Runs not yet yielded.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// The innermost loop outside the runs, if any.
    pub fn innermost_outer(&self) -> Option<ApPair> {
        self.outer.last().copied()
    }

    /// The same elements in fewer, longer strided runs: outer loops that continue a strided run
    /// (step = the run's stride × its length) fuse into it, so `[[64, 128], [2, 32]]` is one run
    /// of 4096 elements 2 apart. The order of elements is unchanged; only how they are grouped
    /// (the copy loops use it; the DMA descriptor generator keeps the reference's runs). Does
    /// nothing to contiguous runs or once iteration has started.
    pub fn fuse_strided(mut self) -> Runs {
        let total: u64 = self.outer.iter().map(|q| q.num as u64).product();
        if self.stride == 1 || self.remaining != total || self.idx.iter().any(|&i| i != 0) {
            return self;
        }
        while let Some(q) = self.outer.last() {
            if i128::from(q.step) != i128::from(self.stride) * i128::from(self.len) {
                break;
            }
            self.len *= q.num as u64;
            self.remaining /= q.num as u64;
            self.outer.pop();
            self.idx.pop();
        }
        self
    }

    /// Splits off the innermost outer loop: the runs of the remaining outer loops (each now
    /// standing for a whole block) and that loop's `[step, num]`. `None` when there is no outer
    /// loop or iteration has started. Used for cache-blocked 2-D (transpose-shaped) copies.
    pub fn into_blocks(mut self) -> Option<(Runs, ApPair)> {
        let total: u64 = self.outer.iter().map(|q| q.num as u64).product();
        if self.remaining != total || self.idx.iter().any(|&i| i != 0) {
            return None;
        }
        let block = self.outer.pop()?;
        self.idx.pop();
        self.remaining /= block.num as u64;
        Some((self, block))
    }
}

impl Iterator for Runs {
    type Item = Run;

    #[inline]
    fn next(&mut self) -> Option<Run> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let run = Run { start: self.base, len: self.len, stride: self.stride };
        if self.remaining > 0 {
            // Advance the odometer, innermost outer dim first. The extremes were checked, so
            // these additions stay in range.
            for k in (0..self.outer.len()).rev() {
                let q = self.outer[k];
                self.idx[k] += 1;
                self.base += q.step;
                if self.idx[k] < q.num {
                    break;
                }
                self.idx[k] = 0;
                self.base -= q.step * q.num;
            }
        }
        Some(run)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}
