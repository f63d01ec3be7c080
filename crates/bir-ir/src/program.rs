//! The program tree: functions, allocations (memory location sets), memory locations, blocks,
//! loops and instructions (bir-json.md "Top level").
//!
//! Locations and allocations live in per-function arenas addressed by [`LocId`] / [`AllocId`];
//! access patterns hold ids, never names, so the executor never looks a name up.

use crate::alu::AluOp;
use crate::ap::{AccessPattern, Operand};
use crate::dtype::Dtype;
use crate::enums::{Arch, EngineType, MemoryType, TensorKind};
use crate::opcode::{Op, Opcode};
use crate::verbatim::JsonValue;

/// Index of a memory location in its function's [`Function::locations`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocId(pub u32);

/// Index of an allocation in its function's [`Function::allocations`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AllocId(pub u32);

impl LocId {
    /// As a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl AllocId {
    /// As a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A whole BIR file.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Target generation.
    pub arch: Arch,
    /// Format version (2 in current dumps).
    pub version: u64,
    /// Top-level `attributes`, kept verbatim.
    pub attributes: JsonValue,
    /// The functions; the first is the entry.
    pub functions: Vec<Function>,
}

/// A function: its memory and its body.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// Name (e.g. `sg0000`).
    pub name: String,
    /// `attributes`, kept verbatim.
    pub attributes: JsonValue,
    /// Allocations (memory location sets), in file order.
    pub allocations: Vec<Allocation>,
    /// Every memory location of every allocation, in file order.
    pub locations: Vec<MemoryLocation>,
    /// Blocks, loops and instructions, in file order.
    pub body: Vec<Node>,
}

impl Function {
    /// The location with this id. Ids come from the loader or validation, so this is in range
    /// for any program that passed [`crate::validate`].
    pub fn location(&self, id: LocId) -> Option<&MemoryLocation> {
        self.locations.get(id.index())
    }

    /// The allocation with this id.
    pub fn allocation(&self, id: AllocId) -> Option<&Allocation> {
        self.allocations.get(id.index())
    }

    /// Finds a location by name.
    pub fn location_by_name(&self, name: &str) -> Option<LocId> {
        self.locations.iter().position(|l| l.name == name).map(|i| LocId(i as u32))
    }

    /// Finds an allocation by name.
    pub fn allocation_by_name(&self, name: &str) -> Option<AllocId> {
        self.allocations.iter().position(|a| a.name == name).map(|i| AllocId(i as u32))
    }

    /// Calls `f` on every instruction (descending into blocks, loops and DMA blocks), in order.
    pub fn for_each_instruction<'a>(&'a self, f: &mut dyn FnMut(&'a Instruction)) {
        fn walk<'a>(nodes: &'a [Node], f: &mut dyn FnMut(&'a Instruction)) {
            for node in nodes {
                match node {
                    Node::Block(b) => walk(&b.body, f),
                    Node::Loop(l) => walk(&l.body, f),
                    Node::Inst(i) => {
                        f(i);
                        if let Op::DMABlock(block) = &i.op {
                            for d in &block.descriptors {
                                f(d);
                            }
                        }
                    }
                }
            }
        }
        walk(&self.body, f);
    }
}

/// A memory location set: one logical tensor and the locations holding it.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    /// Name (`memsetref`).
    pub name: String,
    /// Role of the tensor.
    pub kind: TensorKind,
    /// Element type.
    pub dtype: Dtype,
    /// Logical shape.
    pub tensor_shape: Vec<u64>,
    /// Which logical dim is the partition dim.
    pub partition_dim: u64,
    /// Address space name, if given (e.g. `Shared`).
    pub addr_space: Option<String>,
    /// Its locations.
    pub locations: Vec<LocId>,
}

/// A placed block of memory (bir-json.md "MemoryLocation").
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryLocation {
    /// Name (`memref`).
    pub name: String,
    /// The allocation it belongs to.
    pub alloc: AllocId,
    /// Where it lives.
    pub mem_type: MemoryType,
    /// Byte offset inside each partition (SB/PSUM) or in the DRAM space.
    pub addr: u64,
    /// `dims[0]`: number of partitions.
    pub partitions: u64,
    /// `dims[1]`: bytes per partition.
    pub bytes_per_partition: u64,
    /// First partition (0/32/64/96 on SB/PSUM).
    pub base: u64,
    /// PSUM bank.
    pub bank: u64,
    /// Placed by the allocator (post-allocation dumps share SBUF space between such locations).
    pub allocated: bool,
}

impl MemoryLocation {
    /// Total bytes, or `None` on overflow.
    pub fn size_bytes(&self) -> Option<u64> {
        self.partitions.checked_mul(self.bytes_per_partition)
    }
}

/// An entry of a function body.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// A named basic block.
    Block(Block),
    /// A counted loop.
    Loop(Loop),
    /// A bare instruction.
    Inst(Instruction),
}

/// A basic block.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Name.
    pub name: String,
    /// Its contents, in order.
    pub body: Vec<Node>,
}

/// A loop node (re-facts §5 "Loops"): a counted `Loop` (`for (var = lb; var < ub; var +=
/// stride)` with constant bounds), a `DoWhile` or a `DynamicForLoop` ([`LoopKind`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    /// The instruction name of the loop, if any.
    pub name: String,
    /// The loop variable (`LoopAxis.name`; empty for a DoWhile).
    pub var: String,
    /// Lower bound (a counted loop's).
    pub lb: i64,
    /// Upper bound, exclusive (a counted loop's).
    pub ub: i64,
    /// Stride, non-zero (a counted loop's).
    pub stride: i64,
    /// The engine whose registers a DoWhile or DynamicForLoop reads (`engine`; Unassigned when
    /// absent).
    pub engine: EngineType,
    /// Which loop it is.
    pub kind: LoopKind,
    /// The repeated body.
    pub body: Vec<Node>,
}

/// How a [`Loop`] decides its passes.
#[derive(Clone, Debug, PartialEq)]
pub enum LoopKind {
    /// `Loop` (105): the constant `lb`, `ub`, `stride` of the node.
    Counted,
    /// `DoWhile` (108): runs the body, then repeats while the register is non-zero (re-facts §5:
    /// "DoWhile repeats while `RegState.read(reg) != 0`").
    DoWhile {
        /// The condition register (`ins[0]`).
        cond: RegRef,
    },
    /// `DynamicForLoop` (106): `for (var = lb; var < ub; var += stride)` with
    /// `ub = ub_const + ub_coef · register` (re-facts §5: one term only).
    Dynamic(Box<DynamicBounds>),
}

/// A register named by a `register_access` operand: its name in the engine's file and the
/// dtype its 32 bits read as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegRef {
    /// `regref`.
    pub name: String,
    /// `dtype` (int32 or uint32).
    pub dtype: Dtype,
}

/// The bounds of a `DynamicForLoop`.
#[derive(Clone, Debug, PartialEq)]
pub struct DynamicBounds {
    /// Lower bound, in the enclosing loops' variables.
    pub lb: Affine,
    /// Stride, in the enclosing loops' variables.
    pub stride: Affine,
    /// `ub_const`.
    pub ub_const: i64,
    /// `ub_coef`.
    pub ub_coef: i64,
    /// The register of the upper bound (`ins[0]`).
    pub ub_reg: RegRef,
    /// The register that receives the loop variable before each pass (`outs[0]`), if any.
    pub induction: Option<RegRef>,
}

/// `constant + Σ coef · var` over the variables of enclosing loops (a QuasiAffineExpr's affine
/// part; re-facts §5).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Affine {
    /// The constant term.
    pub constant: i64,
    /// `(loop variable, coefficient)` terms.
    pub terms: Vec<(String, i64)>,
}

impl Loop {
    /// Number of iterations of a counted loop, or `None` when the stride is 0, the count
    /// overflows or the loop is not counted.
    pub fn trip_count(&self) -> Option<u64> {
        if self.kind != LoopKind::Counted {
            return None;
        }
        let span = i128::from(self.ub) - i128::from(self.lb);
        let stride = i128::from(self.stride);
        if stride == 0 {
            return None;
        }
        if (span > 0) != (stride > 0) || span == 0 {
            return Some(0);
        }
        let n = (span + stride - stride.signum()) / stride;
        u64::try_from(n).ok()
    }
}

/// One instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    /// Name (unique within a function in compiler dumps).
    pub name: String,
    /// The engine it is queued on.
    pub engine: EngineType,
    /// Read operands, in the order docs/bir-json.md fixes for the opcode.
    pub ins: Vec<Operand>,
    /// Written operands.
    pub outs: Vec<Operand>,
    /// The opcode and its own fields.
    pub op: Op,
}

impl Instruction {
    /// The opcode.
    pub fn opcode(&self) -> Opcode {
        self.op.opcode()
    }

    /// The `idx`-th input if it is an access pattern.
    pub fn in_ap(&self, idx: usize) -> Option<&AccessPattern> {
        self.ins.get(idx).and_then(Operand::as_ap)
    }

    /// The `idx`-th output if it is an access pattern.
    pub fn out_ap(&self, idx: usize) -> Option<&AccessPattern> {
        self.outs.get(idx).and_then(Operand::as_ap)
    }
}

/// `AluOpType2MemoryReduction` (re-facts §8, CONFIRMED): bypass → copy, add → add, anything
/// else has no memory-side reduce.
pub fn alu_to_memory_reduction(op: AluOp) -> Option<crate::enums::MemoryReductionOp> {
    match op {
        AluOp::Bypass => Some(crate::enums::MemoryReductionOp::Copy),
        AluOp::Add => Some(crate::enums::MemoryReductionOp::Add),
        _ => None,
    }
}
