//! The engines' 32-bit scalar registers (re-facts §5 "RegState"; AWS `register_alloc`: 64 × 32-bit
//! registers per engine sequencer; docs/fidelity.md B1, B2) and the control-flow request a
//! branch instruction leaves for the instruction loop ([`Flow`]).
//!
//! Each engine has its own file, named registers in it: an instruction reads and writes the file
//! of the engine its `engine` key names (a DoWhile or DynamicForLoop node, its own `engine`).
//! Validation bounds a file to [`bir_ir::REGISTERS_PER_ENGINE`] names. A register no instruction
//! has written is *uninitialised*: reading it is a located `uninitialized` fault, or, under
//! `--uninit-registers ones`, reads 0xFFFFFFFF, the reference's start value (B2).

use super::{Cx, Res, fault};
use crate::fault::FaultCause;
use bir_ir::{EngineType, Instruction, Operand, RegRef};
use std::collections::HashMap;

/// What reading an uninitialised register does (docs/fidelity.md B2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UninitRegisters {
    /// A located `uninitialized` fault (default).
    #[default]
    Fault,
    /// Reads 0xFFFFFFFF, the reference's start value.
    Ones,
}

/// The register files, by engine.
#[derive(Debug, Default)]
pub(crate) struct RegFiles {
    files: Vec<(EngineType, HashMap<String, u32>)>,
    /// The writes of the running instruction, when the trace keeps them.
    pub(crate) log: Option<Vec<RegisterWrite>>,
}

/// One register write, for the trace (docs/trace.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterWrite {
    /// The engine whose file holds the register.
    pub engine: EngineType,
    /// The register's name.
    pub name: String,
    /// Its new 32 bits.
    pub value: u32,
}

/// What a control-flow instruction asks of the instruction loop once it completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Continue at the instruction's target block (UnconditionalBranch, or CompareAndBranch's
    /// `on_true` / `on_false` as `taken` says); `None` for an absent target: the next block.
    Branch { taken: bool },
    /// Break: cancel the branch target set earlier in the block.
    Break,
    /// Return: the running function ends (the run, in the entry function).
    Return,
    /// Exit: the run ends, finished.
    Exit,
    /// Call: run the instruction's target function, then continue.
    Call,
}

impl RegFiles {
    /// The value of register `name` of `engine`, if written.
    pub(crate) fn get(&self, engine: EngineType, name: &str) -> Option<u32> {
        self.files.iter().find(|(e, _)| *e == engine).and_then(|(_, f)| f.get(name)).copied()
    }

    /// Writes register `name` of `engine`.
    pub(crate) fn set(&mut self, engine: EngineType, name: &str, value: u32) {
        let k = match self.files.iter().position(|(e, _)| *e == engine) {
            Some(k) => k,
            None => {
                self.files.push((engine, HashMap::new()));
                self.files.len() - 1
            }
        };
        let file = &mut self.files[k].1;
        match file.get_mut(name) {
            Some(v) => *v = value,
            None => {
                file.insert(name.to_owned(), value);
            }
        }
        if let Some(log) = &mut self.log {
            log.push(RegisterWrite { engine, name: name.to_owned(), value });
        }
    }
}

impl Cx<'_> {
    /// Register `name` of `engine`'s file (module doc: unwritten is a fault or 0xFFFFFFFF).
    pub(crate) fn register(&self, engine: EngineType, name: &str) -> Res<u32> {
        match self.engines.scalars.get(engine, name) {
            Some(v) => Ok(v),
            None if self.options.uninit_registers == UninitRegisters::Ones => Ok(u32::MAX),
            None => fault(FaultCause::UninitializedRegister { name: name.to_owned(), engine }),
        }
    }

    /// A register operand's value as a 64-bit integer, read by its dtype (int32 signed, uint32
    /// unsigned).
    pub(crate) fn register_value(&self, engine: EngineType, r: &RegRef) -> Res<i64> {
        let v = self.register(engine, &r.name)?;
        Ok(if r.dtype == bir_ir::Dtype::Int32 { i64::from(v as i32) } else { i64::from(v) })
    }

    /// `ins[0]` and `ins[1]` of RegisterAlu or CompareAndBranch as 32 bits each, and whether they
    /// compare signed (`ins[0]` an int32 register).
    pub(crate) fn register_pair(&self, i: &Instruction) -> Res<(u32, u32, bool)> {
        let (Some(a), Some(b)) = (i.ins.first(), i.ins.get(1)) else {
            return super::bug("validation let through a register instruction without its two operands");
        };
        let signed = matches!(a, Operand::Register { dtype: bir_ir::Dtype::Int32, .. });
        Ok((self.register_operand(i.engine, a)?, self.register_operand(i.engine, b)?, signed))
    }

    /// A `register_access` or integer `imm_value` operand's 32 bits (validation checked the kind
    /// and the immediate's range).
    pub(crate) fn register_operand(&self, engine: EngineType, a: &Operand) -> Res<u32> {
        match a {
            Operand::Register { regref, .. } => self.register(engine, regref),
            Operand::Imm { value: bir_ir::Number::Int(v), .. } => Ok(*v as u32),
            _ => super::bug("validation let through a register operand of another kind"),
        }
    }
}
