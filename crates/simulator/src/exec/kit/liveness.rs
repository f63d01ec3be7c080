//! Static last uses of memory locations, so a run holds only the bytes it still needs (issue
//! "Fast end to end": memory that costs what it holds).
//!
//! The entry function is cut into top-level units: an instruction outside every loop, or a whole
//! top-level loop (a location used anywhere in a loop lives until the loop ends). A location's
//! last use is the last unit that names it in any operand (dynamic-offset sources included).
//! After a unit, every location whose last use it was, and which the caller did not ask to keep,
//! is freed; a whole-location copy out of a location that dies at that copy moves the buffer
//! instead of copying it. Programs with an instruction that touches locations its own operands
//! do not name (the kernel table's `Writes::Elsewhere`: DMABlock/DMATrigger run descriptors
//! from elsewhere), or with a branch (which can run an earlier unit again), free nothing.

use bir_ir::{AccessPattern, Function, Instruction, LocId, Node, OffsetSource, Opcode, Operand};
use std::collections::HashMap;

/// A unit's identity: the address of its instruction or loop node (stable while the program is
/// borrowed).
pub(crate) type UnitKey = usize;

/// The key of a top-level instruction.
pub(crate) fn inst_key(i: &Instruction) -> UnitKey {
    std::ptr::from_ref(i) as usize
}

/// The key of a top-level loop node.
pub(crate) fn node_key(n: &Node) -> UnitKey {
    std::ptr::from_ref(n) as usize
}

/// Which locations die after which unit.
#[derive(Debug, Default)]
pub(crate) struct Liveness {
    dies_after: HashMap<UnitKey, Vec<LocId>>,
}

impl Liveness {
    /// Last uses in `f`, never freeing the locations in `keep`. `None` when the program cannot be
    /// analysed: an instruction whose opcode `elsewhere` names touches locations its operands do
    /// not name.
    pub(crate) fn new(f: &Function, keep: &[LocId], elsewhere: fn(Opcode) -> bool) -> Option<Liveness> {
        let mut uses =
            Uses { last: vec![None; f.locations.len()], units: Vec::new(), opaque: false, elsewhere };
        uses.walk(&f.body);
        if uses.opaque {
            return None;
        }
        let mut dies_after: HashMap<UnitKey, Vec<LocId>> = HashMap::new();
        for (k, last) in uses.last.iter().enumerate() {
            let loc = LocId(k as u32);
            if let Some(u) = last
                && !keep.contains(&loc)
            {
                dies_after.entry(uses.units[*u]).or_default().push(loc);
            }
        }
        Some(Liveness { dies_after })
    }

    /// The locations whose last use is the unit.
    pub(crate) fn dying(&self, unit: UnitKey) -> &[LocId] {
        self.dies_after.get(&unit).map_or(&[], Vec::as_slice)
    }
}

struct Uses {
    last: Vec<Option<usize>>,
    units: Vec<UnitKey>,
    opaque: bool,
    elsewhere: fn(Opcode) -> bool,
}

impl Uses {
    fn walk(&mut self, nodes: &[Node]) {
        for n in nodes {
            match n {
                Node::Block(b) => self.walk(&b.body),
                Node::Inst(i) => {
                    let u = self.unit(inst_key(i));
                    self.inst(i, u);
                }
                Node::Loop(l) => {
                    let u = self.unit(node_key(n));
                    self.in_loop(&l.body, u);
                }
            }
        }
    }

    fn unit(&mut self, key: UnitKey) -> usize {
        self.units.push(key);
        self.units.len() - 1
    }

    fn in_loop(&mut self, nodes: &[Node], u: usize) {
        for n in nodes {
            match n {
                Node::Block(b) => self.in_loop(&b.body, u),
                Node::Loop(l) => self.in_loop(&l.body, u),
                Node::Inst(i) => self.inst(i, u),
            }
        }
    }

    fn inst(&mut self, i: &Instruction, u: usize) {
        // A branch can run an earlier unit again, and a called function uses the caller's
        // locations unseen here: last uses in file order mean nothing then.
        if (self.elsewhere)(i.opcode())
            || matches!(i.opcode(), Opcode::CompareAndBranch | Opcode::UnconditionalBranch | Opcode::Call)
        {
            self.opaque = true;
        }
        for op in i.ins.iter().chain(&i.outs) {
            if let Operand::Ap(ap) = op {
                self.ap(ap, u);
            }
        }
    }

    fn ap(&mut self, ap: &AccessPattern, u: usize) {
        if let Some(slot) = self.last.get_mut(ap.loc.index()) {
            *slot = Some(u);
        }
        if let Some(d) = &ap.dynamic
            && let OffsetSource::Vector(src) | OffsetSource::Scalar(src) = &d.source
        {
            self.ap(src, u);
        }
    }
}
