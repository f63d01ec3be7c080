//! Blocks, branches and loops (re-facts §5 "Loops", "next-BB slot"; docs/bir-json.md "Registers
//! and control flow"; docs/fidelity.md B5–B9): the walk over a function's `blocks` lists that
//! hands each instruction to [`Simulator::instruction`], with the next-block slot a branch sets,
//! the counted, DoWhile and DynamicForLoop nodes, the loop variables their bounds read, and the
//! bounds that keep any program finite (the budget, idle passes, the no-progress rule).

use super::kit::liveness;
use super::kit::regfile::Flow;
use super::{Simulator, Stop};
use crate::fault::{FaultCause, SimError};
use bir_ir::{Function, Instruction, Loop, LoopKind, Node, Op, OpCategory, Opcode};
use std::collections::HashMap;

/// The deepest nesting of Calls followed; one more is a `budget` fault (docs/fidelity.md B14).
pub const MAX_CALL_DEPTH: usize = 64;

/// The most levels of loops and calls nested together that a Call may add to: each level is a
/// few native stack frames (about 5.5 KiB in a debug build), so this keeps a run within a 2 MiB
/// thread stack whatever the program (JSON nesting alone bounds loops to about 60 levels).
pub const MAX_NESTING: usize = 256;

/// The control-flow state of a run.
#[derive(Debug, Default)]
pub(super) struct State<'p> {
    /// The next-block slot a branch sets and the enclosing `blocks` list consumes when the
    /// block that ran the branch ends (re-facts §5).
    slot: Option<&'p str>,
    /// The loop variables in scope, innermost last (DynamicForLoop bounds read them).
    env: Vec<(&'p str, i64)>,
    /// DoWhile / DynamicForLoop passes that executed no instruction: they count against the
    /// budget too, so no loop spins without progress.
    idle_passes: u64,
    /// Counts state changes: every instruction that is not control flow or sync-only, and every
    /// loop pass (its variable moves). A branch that runs again with this unchanged would repeat
    /// forever (B9).
    pub(super) progress: u64,
    /// The `progress` at each branch instruction's last run, by its address.
    branch_seen: HashMap<usize, u64>,
    /// The program's functions (a Call's targets) and their indices by name.
    functions: &'p [Function],
    by_name: HashMap<&'p str, usize>,
    /// Calls running now (nested).
    calls: usize,
}

impl<'p> State<'p> {
    /// The state at the start of a run of a program with these functions.
    pub(super) fn new(functions: &'p [Function]) -> State<'p> {
        let by_name = functions.iter().enumerate().map(|(k, f)| (f.name.as_str(), k)).collect();
        State { functions, by_name, ..State::default() }
    }
}

/// A block or loop the running instruction sits in.
#[derive(Clone, Copy, Debug)]
pub(super) enum Place<'p> {
    Block(&'p str),
    Loop(usize, &'p str),
    /// A DoWhile: its index, name, condition register and the pass running (from 1).
    DoWhile {
        index: usize,
        name: &'p str,
        reg: &'p str,
        pass: u64,
    },
    /// A called function.
    Call(&'p str),
    /// A DynamicForLoop: its index, name, variable value, bound and the bound's register value.
    Dynamic {
        index: usize,
        name: &'p str,
        i: i64,
        ub: i64,
        reg: &'p str,
        value: i64,
    },
}

impl std::fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let echo = |n| bir_ir::clip(n, bir_ir::ECHO_CHARS);
        match *self {
            Place::Block(n) => write!(f, "block '{}'", echo(n)),
            Place::Call(n) => write!(f, "function '{}'", echo(n)),
            Place::Loop(index, n) => write!(f, "loop #{index} '{}'", echo(n)),
            Place::DoWhile { index, name, reg, pass } => {
                write!(
                    f,
                    "DoWhile #{index} '{}' pass {pass} (while register '{}' != 0)",
                    echo(name),
                    echo(reg)
                )
            }
            Place::Dynamic { index, name, i, ub, reg, value } => write!(
                f,
                "DynamicForLoop #{index} '{}' at {i} of ub {ub} (register '{}' = {value})",
                echo(name),
                echo(reg)
            ),
        }
    }
}

/// Why a run stopped early: the location, the instruction (or loop node) name and opcode, and
/// the stop.
pub(super) type Failure<'p> = (String, &'p str, Opcode, Stop);

/// How a node list ended: ran to its end, a Return ended its function, or an Exit the run.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Ended {
    /// Ran to its end.
    Normally,
    /// A Return ended the running function (the run, in the entry function).
    Returned,
    /// An Exit ended the run.
    Run,
}

impl<'p> Simulator<'p> {
    /// A `blocks` list a branch moves in (the function's body or a loop's): its entries in
    /// order, except that after each one a branch's target block, if set, runs next
    /// (docs/bir-json.md "Blocks and branches").
    pub(super) fn region(&mut self, nodes: &'p [Node]) -> Result<Ended, Failure<'p>> {
        let mut k = 0;
        while let Some(node) = nodes.get(k) {
            let ended = self.node(k, node)?;
            if ended != Ended::Normally {
                return Ok(ended);
            }
            k = match self.flow.slot.take() {
                None => k + 1,
                Some(label) => {
                    match nodes.iter().position(|n| matches!(n, Node::Block(b) if b.name == label)) {
                        Some(target) => target,
                        None => {
                            return Err(self.located(
                                k,
                                node,
                                Stop::Bug(Box::new(SimError::new(
                                    "validation let through a branch to a block outside its list",
                                ))),
                            ));
                        }
                    }
                }
            };
        }
        Ok(Ended::Normally)
    }

    /// A block's body: its entries in order (a branch's target waits for the block's end).
    fn straight(&mut self, nodes: &'p [Node]) -> Result<Ended, Failure<'p>> {
        for (k, node) in nodes.iter().enumerate() {
            let ended = self.node(k, node)?;
            if ended != Ended::Normally {
                return Ok(ended);
            }
        }
        Ok(Ended::Normally)
    }

    /// The failure of a stop at node `index`: an instruction's fault, or a loop node's own.
    #[cold]
    fn located(&self, index: usize, node: &'p Node, stop: Stop) -> Failure<'p> {
        let mut at: Vec<String> = self.context.iter().map(Place::to_string).collect();
        let (name, opcode) = match node {
            Node::Inst(i) => (i.name.as_str(), i.opcode()),
            Node::Loop(l) => (l.name.as_str(), loop_opcode(l)),
            Node::Block(b) => (b.name.as_str(), Opcode::NoOp),
        };
        // A loop's own fault once it has entered names it already (with its variable and bound).
        let entered = match self.context.last() {
            Some(
                Place::Loop(k, n)
                | Place::DoWhile { index: k, name: n, .. }
                | Place::Dynamic { index: k, name: n, .. },
            ) => *k == index && std::ptr::eq(*n, name),
            _ => false,
        };
        if !entered {
            let what = if matches!(node, Node::Inst(_)) { "instruction " } else { "" };
            at.push(format!("{what}#{index} '{}' ({opcode})", bir_ir::clip(name, bir_ir::ECHO_CHARS)));
        }
        (at.join(" › "), name, opcode, stop)
    }

    fn node(&mut self, index: usize, node: &'p Node) -> Result<Ended, Failure<'p>> {
        match node {
            Node::Block(b) => {
                self.context.push(Place::Block(&b.name));
                let ended = self.straight(&b.body)?;
                self.context.pop();
                Ok(ended)
            }
            Node::Loop(l) => {
                // A branch target set before the loop in the same block waits for the block's
                // end: the loop's own lists must not take it.
                let slot = self.flow.slot.take();
                self.depth += 1;
                let ended = self.run_loop(index, node, l)?;
                self.depth -= 1;
                if ended != Ended::Normally {
                    return Ok(ended);
                }
                self.flow.slot = slot;
                if self.depth == 0 {
                    self.retire(liveness::node_key(node));
                }
                Ok(Ended::Normally)
            }
            Node::Inst(i) => {
                let top = self.depth == 0;
                self.cx.unit = top.then(|| liveness::inst_key(i));
                if let Err(stop) = self.instruction(i) {
                    return Err(self.located(index, node, stop));
                }
                if self.executed >= self.obs.progress_at {
                    self.obs.progress_tick(self.executed);
                }
                if top {
                    self.retire(liveness::inst_key(i));
                }
                if let Some(flow) = self.cx.flow.take() {
                    match flow {
                        Flow::Branch { taken } => {
                            let now = self.flow.progress;
                            if self.flow.branch_seen.insert(std::ptr::from_ref(i) as usize, now) == Some(now)
                            {
                                let stop =
                                    Stop::Fault(Box::new(FaultCause::NoProgress { what: "this branch" }));
                                return Err(self.located(index, node, stop));
                            }
                            self.flow.slot = match &i.op {
                                Op::UnconditionalBranch(b) => Some(&b.target),
                                Op::CompareAndBranch(c) if taken => c.on_true.as_deref(),
                                Op::CompareAndBranch(c) => c.on_false.as_deref(),
                                _ => None,
                            }
                        }
                        Flow::Break => self.flow.slot = None,
                        Flow::Return => return Ok(Ended::Returned),
                        Flow::Exit => return Ok(Ended::Run),
                        Flow::Call => return self.call(index, node, i),
                    }
                }
                Ok(Ended::Normally)
            }
        }
    }

    /// One loop node: a counted Loop, a DoWhile or a DynamicForLoop (re-facts §5 "Loops").
    fn run_loop(&mut self, index: usize, node: &'p Node, l: &'p Loop) -> Result<Ended, Failure<'p>> {
        let ended = match &l.kind {
            LoopKind::Counted => {
                self.context.push(Place::Loop(index, &l.name));
                self.flow.env.push((&l.var, l.lb));
                let mut ended = Ended::Normally;
                // Validation bounded the trip count.
                for t in 0..l.trip_count().unwrap_or(0) {
                    if let Some(v) = self.flow.env.last_mut() {
                        v.1 = l.lb.saturating_add(l.stride.saturating_mul(t as i64));
                    }
                    self.flow.progress += 1;
                    ended = self.region(&l.body)?;
                    if ended != Ended::Normally {
                        break;
                    }
                }
                self.flow.env.pop();
                ended
            }
            LoopKind::DoWhile { cond } => {
                self.context.push(Place::DoWhile { index, name: &l.name, reg: &cond.name, pass: 0 });
                let mut pass = 0u64;
                loop {
                    pass += 1;
                    if let Some(Place::DoWhile { pass: p, .. }) = self.context.last_mut() {
                        *p = pass;
                    }
                    let (before, progress) = (self.executed, self.flow.progress);
                    let ended = self.region(&l.body)?;
                    if ended != Ended::Normally {
                        break ended;
                    }
                    self.idle_pass(index, node, before)?;
                    let v =
                        self.cx.register(l.engine, &cond.name).map_err(|e| self.located(index, node, e))?;
                    if v == 0 {
                        break Ended::Normally;
                    }
                    if self.flow.progress == progress {
                        let stop =
                            Stop::Fault(Box::new(FaultCause::NoProgress { what: "this DoWhile pass" }));
                        return Err(self.located(index, node, stop));
                    }
                }
            }
            LoopKind::Dynamic(d) => {
                let located = |s: &Self, e| s.located(index, node, e);
                let value = self.cx.register_value(l.engine, &d.ub_reg).map_err(|e| located(self, e))?;
                let ub = d.ub_coef.saturating_mul(value).saturating_add(d.ub_const);
                let lb = self.affine(&d.lb);
                let stride = self.affine(&d.stride);
                self.context.push(Place::Dynamic {
                    index,
                    name: &l.name,
                    i: lb,
                    ub,
                    reg: &d.ub_reg.name,
                    value,
                });
                if stride <= 0 && lb < ub {
                    return Err(located(
                        self,
                        Stop::Fault(Box::new(FaultCause::LoopStride { stride, lb, ub })),
                    ));
                }
                let limit = self.cx.options.max_instructions;
                let left = limit.saturating_sub(self.executed.saturating_add(self.flow.idle_passes));
                let passes = if lb < ub && stride > 0 {
                    (i128::from(ub) - i128::from(lb) + i128::from(stride) - 1) / i128::from(stride)
                } else {
                    0
                };
                if passes > i128::from(left) {
                    let cause = FaultCause::LoopBudget { passes: passes as u128, left, limit };
                    return Err(located(self, Stop::Fault(Box::new(cause))));
                }
                self.flow.env.push((&l.var, lb));
                let mut i = lb;
                let mut ended = Ended::Normally;
                while i < ub {
                    if let Some(Place::Dynamic { i: at, .. }) = self.context.last_mut() {
                        *at = i;
                    }
                    if let Some(v) = self.flow.env.last_mut() {
                        v.1 = i;
                    }
                    if let Some(r) = &d.induction {
                        self.cx.engines.scalars.set(l.engine, &r.name, i as u32);
                    }
                    self.flow.progress += 1;
                    let before = self.executed;
                    ended = self.region(&l.body)?;
                    if ended != Ended::Normally {
                        break;
                    }
                    self.idle_pass(index, node, before)?;
                    let Some(next) = i.checked_add(stride) else { break };
                    i = next;
                }
                self.flow.env.pop();
                ended
            }
        };
        self.context.pop();
        Ok(ended)
    }

    /// A Call (84) that just completed: its target function runs with its own location table
    /// (`Memory::enter`), then the caller continues after the call; a Return in the callee ends
    /// the callee, an Exit the run (docs/fidelity.md B14).
    fn call(&mut self, index: usize, node: &'p Node, i: &'p Instruction) -> Result<Ended, Failure<'p>> {
        let target = match &i.op {
            Op::Call(c) => self.flow.by_name.get(c.target.as_str()).copied(),
            _ => None,
        };
        let Some((k, callee)) = target.and_then(|k| Some((k, self.flow.functions.get(k)?))) else {
            let stop = Stop::Bug(Box::new(SimError::new("validation let through a Call of no function")));
            return Err(self.located(index, node, stop));
        };
        let deep = if self.flow.calls >= MAX_CALL_DEPTH {
            Some(("calls", MAX_CALL_DEPTH))
        } else if self.depth >= MAX_NESTING {
            Some(("loops and calls", MAX_NESTING))
        } else {
            None
        };
        if let Some((what, limit)) = deep {
            let stop = Stop::Fault(Box::new(FaultCause::CallDepth { what, limit }));
            return Err(self.located(index, node, stop));
        }
        // A branch target set before the call waits for the caller's block to end.
        let slot = self.flow.slot.take();
        let caller = std::mem::replace(&mut self.cx.f, callee);
        let before = self.cx.memory.enter(k);
        // The DMABlock index is per function.
        let blocks = self.cx.dma_blocks.take();
        self.context.push(Place::Call(&callee.name));
        self.flow.calls += 1;
        self.depth += 1;
        let ended = self.region(&callee.body);
        self.depth -= 1;
        self.flow.calls -= 1;
        self.context.pop();
        self.cx.memory.enter(before);
        self.cx.f = caller;
        self.cx.dma_blocks = blocks;
        self.flow.slot = slot;
        match ended? {
            Ended::Run => Ok(Ended::Run),
            Ended::Normally | Ended::Returned => Ok(Ended::Normally),
        }
    }

    /// Counts a DoWhile / DynamicForLoop pass that executed no instruction against the budget.
    fn idle_pass(&mut self, index: usize, node: &'p Node, before: u64) -> Result<(), Failure<'p>> {
        if self.executed == before {
            self.flow.idle_passes += 1;
            let limit = self.cx.options.max_instructions;
            if self.executed.saturating_add(self.flow.idle_passes) >= limit {
                return Err(self.located(
                    index,
                    node,
                    Stop::Fault(Box::new(FaultCause::InstructionBudget { limit })),
                ));
            }
        }
        Ok(())
    }

    /// An affine bound in the loop variables in scope (validation checked the names).
    fn affine(&self, a: &bir_ir::Affine) -> i64 {
        a.terms.iter().fold(a.constant, |acc, (var, coef)| {
            let v = self.flow.env.iter().rev().find(|(n, _)| n == var).map_or(0, |(_, v)| *v);
            acc.saturating_add(coef.saturating_mul(v))
        })
    }
}

/// The opcode of a loop node.
fn loop_opcode(l: &Loop) -> Opcode {
    match l.kind {
        LoopKind::Counted => Opcode::Loop,
        LoopKind::DoWhile { .. } => Opcode::DoWhile,
        LoopKind::Dynamic(_) => Opcode::DynamicForLoop,
    }
}

/// Control-flow and sync-only instructions: running them changes no state a branch could test.
pub(super) fn is_control(op: Opcode) -> bool {
    matches!(op.category(), OpCategory::Base | OpCategory::NoOp)
        || matches!(
            op,
            Opcode::CompareAndBranch
                | Opcode::UnconditionalBranch
                | Opcode::Call
                | Opcode::Break
                | Opcode::BranchHint
                | Opcode::Halt
                | Opcode::Drain
                | Opcode::CoreBarrier
                | Opcode::TensorCompletion
        )
}
