//! SW-DGE in BIR: which DMABlock a DMATrigger fires, and when its cursor is erased (seed 000
//! §5.2: `visitInstDMATrigger` "advances a per-trigger fire-count cursor over its block list";
//! re-facts §5: "a round-robin cursor over its DMABlocks (fire count per trigger)",
//! `SwitchQueueInstance` / `ResetQueueInstance` erase trigger cursors; docs/fidelity.md G1, G2,
//! G4, G5, G51–G53).
//!
//! This module only plans: [`Cursors::fire`] names the block a trigger fires now and advances
//! its count; the simulator runs that block's descriptors through its own DMACopy kernels. The
//! state is a plain map keyed by trigger name, so a run is the same at every thread count.

use std::collections::HashMap;

/// What a DMABlock met in the instruction stream (not fired by a trigger) does (G4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BlockInStream {
    /// A definition only: it runs nothing by itself (the default, ASSUMED G4).
    #[default]
    Skip,
    /// It runs its descriptors once where it stands (and still runs whenever fired).
    Run,
}

impl BlockInStream {
    /// The spelling of the CLI flag and the `.expect` option (`skip`, `run`).
    pub fn name(self) -> &'static str {
        match self {
            BlockInStream::Skip => "skip",
            BlockInStream::Run => "run",
        }
    }

    /// Parses [`BlockInStream::name`]'s spelling.
    pub fn from_name(s: &str) -> Option<BlockInStream> {
        match s {
            "skip" => Some(BlockInStream::Skip),
            "run" => Some(BlockInStream::Run),
            _ => None,
        }
    }
}

/// Which cursors an erase applies to (G5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EraseScope<'a> {
    /// Every trigger's cursor.
    All,
    /// Only the cursors of triggers whose DMA `queue` field equals this name.
    Queue(&'a str),
}

impl<'a> EraseScope<'a> {
    /// The scope of a Switch/ResetQueueInstance with an optional `queue` field.
    pub fn of(queue: Option<&'a str>) -> EraseScope<'a> {
        queue.map_or(EraseScope::All, EraseScope::Queue)
    }
}

/// One trigger's cursor: its fire count since the last erase, and its DMA queue.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Cursor {
    count: u64,
    queue: Option<String>,
}

/// The per-trigger fire-count cursors of a run (the reference's "DMATrigger fire-count map" in
/// its visitor state, re-facts §5).
#[derive(Clone, Debug, Default)]
pub struct Cursors {
    by_trigger: HashMap<String, Cursor>,
}

impl Cursors {
    /// A run's cursors: every count 0.
    pub fn new() -> Cursors {
        Cursors::default()
    }

    /// Fires trigger `trigger` (whose DMA queue is `queue`) over `blocks`: returns the position in
    /// `blocks` of the block it fires, `c mod blocks.len()` with `c` its fire count since its
    /// cursor was last erased (round robin: past the last block it wraps to the first, G1), and
    /// counts the fire. An empty list fires nothing and counts nothing (G2).
    pub fn fire(&mut self, trigger: &str, queue: Option<&str>, blocks: &[String]) -> Option<usize> {
        let len = u64::try_from(blocks.len()).ok().filter(|&n| n > 0)?;
        let cursor = match self.by_trigger.get_mut(trigger) {
            Some(c) => c,
            None => self.by_trigger.entry(trigger.to_owned()).or_default(),
        };
        if cursor.queue.as_deref() != queue {
            cursor.queue = queue.map(str::to_owned);
        }
        let at = usize::try_from(cursor.count % len).ok()?;
        cursor.count = cursor.count.wrapping_add(1);
        Some(at)
    }

    /// How many times `trigger` fired since its cursor was last erased.
    pub fn count(&self, trigger: &str) -> u64 {
        self.by_trigger.get(trigger).map_or(0, |c| c.count)
    }

    /// Erases the cursors in `scope` (their counts back to 0, so their next fire is their first
    /// block): ResetQueueInstance always, SwitchQueueInstance unless `no_rearm` (re-facts §5).
    pub fn erase(&mut self, scope: EraseScope<'_>) {
        match scope {
            EraseScope::All => self.by_trigger.clear(),
            EraseScope::Queue(q) => self.by_trigger.retain(|_, c| c.queue.as_deref() != Some(q)),
        }
    }

    /// Whether a Switch/ResetQueueInstance erases the cursors: Reset always, Switch unless it has
    /// `no_rearm` (re-facts §5).
    pub fn erases(is_switch: bool, no_rearm: bool) -> bool {
        !(is_switch && no_rearm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|k| format!("b{k}")).collect()
    }

    /// Three blocks fired 7 times: c = 0..6, c mod 3 = 0 1 2 0 1 2 0 (worked by hand).
    #[test]
    fn round_robin_wraps() {
        let mut c = Cursors::new();
        let b = names(3);
        let fired: Vec<usize> = (0..7).filter_map(|_| c.fire("t", None, &b)).collect();
        assert_eq!(fired, [0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(c.count("t"), 7);
    }

    #[test]
    fn cursors_are_per_trigger() {
        let mut c = Cursors::new();
        let b = names(2);
        assert_eq!(c.fire("t1", None, &b), Some(0));
        assert_eq!(c.fire("t2", None, &b), Some(0));
        assert_eq!(c.fire("t1", None, &b), Some(1));
        assert_eq!(c.fire("t2", None, &b), Some(1));
        assert_eq!(c.fire("t1", None, &b), Some(0));
    }

    #[test]
    fn empty_list_fires_nothing() {
        let mut c = Cursors::new();
        assert_eq!(c.fire("t", None, &[]), None);
        assert_eq!(c.count("t"), 0);
    }

    /// Erase all, or by queue: t1 on q0 and t2 on q1 each fired twice (next would be block 2);
    /// erasing q0 sends t1 back to block 0, t2 goes on to block 2.
    #[test]
    fn erase_by_scope() {
        let mut c = Cursors::new();
        let b = names(3);
        for _ in 0..2 {
            c.fire("t1", Some("q0"), &b);
            c.fire("t2", Some("q1"), &b);
        }
        c.erase(EraseScope::of(Some("q0")));
        assert_eq!(c.fire("t1", Some("q0"), &b), Some(0));
        assert_eq!(c.fire("t2", Some("q1"), &b), Some(2));
        c.erase(EraseScope::of(None));
        assert_eq!(c.fire("t1", Some("q0"), &b), Some(0));
        assert_eq!(c.fire("t2", Some("q1"), &b), Some(0));
        // A queue no trigger uses erases nothing.
        c.erase(EraseScope::Queue("q9"));
        assert_eq!(c.count("t1"), 1);
    }

    #[test]
    fn switch_no_rearm_keeps_cursors() {
        assert!(Cursors::erases(false, false));
        assert!(Cursors::erases(false, true));
        assert!(Cursors::erases(true, false));
        assert!(!Cursors::erases(true, true));
    }

    #[test]
    fn block_in_stream_spellings() {
        for b in [BlockInStream::Skip, BlockInStream::Run] {
            assert_eq!(BlockInStream::from_name(b.name()), Some(b));
        }
        assert_eq!(BlockInStream::from_name("twice"), None);
        assert_eq!(BlockInStream::default(), BlockInStream::Skip);
    }
}
