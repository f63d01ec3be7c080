//! Typed IR → JSON, in one canonical spelling per field (enum names as the first spelling in
//! their table, pairs as `[step, num]` arrays, non-finite floats as `"nan"`/`"inf"`/`"-inf"`).

use super::fields::write_op;
use crate::ap::{AccessPattern, Number, OffsetSource, Operand};
use crate::program::*;
use serde_json::{Map, Value};

/// The program as a JSON tree.
pub fn to_json_value(p: &Program) -> Value {
    let mut top = Map::new();
    top.insert("arch".into(), p.arch.name().into());
    top.insert("version".into(), p.version.into());
    if !p.attributes.is_null() {
        top.insert("attributes".into(), (&p.attributes).into());
    }
    top.insert("functions".into(), p.functions.iter().map(function_value).collect::<Vec<_>>().into());
    Value::Object(top)
}

/// The program as pretty-printed BIR JSON text.
pub fn to_json_string(p: &Program) -> String {
    // Serialising a `Value` cannot fail: every map key is a string.
    serde_json::to_string_pretty(&to_json_value(p)).unwrap_or_default()
}

/// An f32 as JSON: its shortest decimal spelling when that reads back to the same f32 through
/// f64 (the reader's path), else the exact f64 value; non-finite values as strings.
pub(crate) fn float_value(f: f32) -> Value {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let short: f64 = f.to_string().parse().unwrap_or(f64::from(f));
    #[expect(clippy::cast_possible_truncation, reason = "checking the f32 round trip")]
    let exact = if short as f32 == f { short } else { f64::from(f) };
    serde_json::Number::from_f64(exact).map_or(Value::Null, Value::Number)
}

pub(crate) fn number_value(n: Number) -> Value {
    match n {
        Number::Int(i) => i.into(),
        Number::UInt(u) => u.into(),
        Number::Float(f) if f.is_nan() => "nan".into(),
        Number::Float(f) if f.is_infinite() => if f > 0.0 { "inf" } else { "-inf" }.into(),
        Number::Float(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
    }
}

fn function_value(f: &Function) -> Value {
    let mut o = Map::new();
    o.insert("name".into(), f.name.clone().into());
    if !f.attributes.is_null() {
        o.insert("attributes".into(), (&f.attributes).into());
    }
    let allocations = f.allocations.iter().map(|a| allocation_value(f, a)).collect::<Vec<_>>();
    o.insert("allocations".into(), allocations.into());
    o.insert("blocks".into(), nodes_value(&f.body, f));
    Value::Object(o)
}

fn allocation_value(f: &Function, a: &Allocation) -> Value {
    let mut o = Map::new();
    o.insert("Skind".into(), "memory_location_set".into());
    o.insert("name".into(), a.name.clone().into());
    o.insert("kind".into(), a.kind.name().into());
    o.insert("dtype".into(), a.dtype.name().into());
    o.insert("tensor_shape".into(), a.tensor_shape.clone().into());
    o.insert("partition_dim".into(), a.partition_dim.into());
    if let Some(s) = &a.addr_space {
        o.insert("addr_space".into(), s.clone().into());
    }
    let locs = a.locations.iter().filter_map(|id| f.location(*id)).map(location_value).collect::<Vec<_>>();
    o.insert("memorylocations".into(), locs.into());
    Value::Object(o)
}

fn location_value(l: &MemoryLocation) -> Value {
    let mut o = Map::new();
    o.insert("Skind".into(), "memory_location".into());
    o.insert("name".into(), l.name.clone().into());
    o.insert("type".into(), l.mem_type.name().into());
    o.insert("addr".into(), l.addr.into());
    o.insert("dims".into(), vec![l.partitions, l.bytes_per_partition].into());
    o.insert("base".into(), l.base.into());
    o.insert("bank".into(), l.bank.into());
    o.insert("allocated".into(), l.allocated.into());
    Value::Object(o)
}

fn nodes_value(nodes: &[Node], f: &Function) -> Value {
    Value::Array(
        nodes
            .iter()
            .map(|n| match n {
                Node::Block(b) => {
                    let mut o = Map::new();
                    o.insert("name".into(), b.name.clone().into());
                    o.insert("instructions".into(), nodes_value(&b.body, f));
                    Value::Object(o)
                }
                Node::Loop(l) => loop_value(l, f),
                Node::Inst(i) => instruction_value(i, f),
            })
            .collect(),
    )
}

/// A loop node: `Loop`, `DoWhile` or `DynamicForLoop` (docs/bir-json.md "Loops").
fn loop_value(l: &Loop, f: &Function) -> Value {
    let register =
        |r: &RegRef| operand_value(&Operand::Register { dtype: r.dtype, regref: r.name.clone() }, f);
    let affine = |a: &Affine| -> Value {
        if a.terms.is_empty() {
            return a.constant.into();
        }
        let terms = a.terms.iter().map(|(var, coef)| {
            let mut t = Map::new();
            t.insert("var".into(), var.clone().into());
            t.insert("coef".into(), (*coef).into());
            Value::Object(t)
        });
        let mut o = Map::new();
        o.insert("const".into(), a.constant.into());
        o.insert("terms".into(), Value::Array(terms.collect()));
        Value::Object(o)
    };
    let mut o = Map::new();
    let mut axis = Map::new();
    axis.insert("name".into(), l.var.clone().into());
    match &l.kind {
        LoopKind::Counted => {
            o.insert("opcode".into(), "Loop".into());
            axis.insert("lb".into(), l.lb.into());
            axis.insert("ub".into(), l.ub.into());
            axis.insert("stride".into(), l.stride.into());
        }
        LoopKind::DoWhile { cond } => {
            o.insert("opcode".into(), "DoWhile".into());
            o.insert("ins".into(), Value::Array(vec![register(cond)]));
        }
        LoopKind::Dynamic(d) => {
            o.insert("opcode".into(), "DynamicForLoop".into());
            axis.insert("lb".into(), affine(&d.lb));
            axis.insert("stride".into(), affine(&d.stride));
            o.insert("ub_const".into(), d.ub_const.into());
            o.insert("ub_coef".into(), d.ub_coef.into());
            o.insert("ins".into(), Value::Array(vec![register(&d.ub_reg)]));
            o.insert("outs".into(), Value::Array(d.induction.iter().map(register).collect()));
        }
    }
    o.insert("name".into(), l.name.clone().into());
    if l.kind != LoopKind::Counted {
        o.insert("engine".into(), l.engine.name().into());
    }
    if !matches!(l.kind, LoopKind::DoWhile { .. }) {
        o.insert("LoopAxis".into(), Value::Object(axis));
    }
    o.insert("blocks".into(), nodes_value(&l.body, f));
    Value::Object(o)
}

pub(crate) fn instruction_value(i: &Instruction, f: &Function) -> Value {
    let mut o = Map::new();
    o.insert("opcode".into(), i.opcode().name().into());
    o.insert("name".into(), i.name.clone().into());
    o.insert("engine".into(), i.engine.name().into());
    o.insert("ins".into(), i.ins.iter().map(|a| operand_value(a, f)).collect::<Vec<_>>().into());
    o.insert("outs".into(), i.outs.iter().map(|a| operand_value(a, f)).collect::<Vec<_>>().into());
    write_op(&i.op, &mut o, f);
    Value::Object(o)
}

fn operand_value(a: &Operand, f: &Function) -> Value {
    match a {
        Operand::Ap(ap) => ap_value(ap, f),
        Operand::Imm { dtype, value } => {
            let mut o = Map::new();
            o.insert("kind".into(), "imm_value".into());
            o.insert("dtype".into(), dtype.name().into());
            o.insert("value".into(), number_value(*value));
            Value::Object(o)
        }
        Operand::ImmArray { dtype, values } => {
            let mut o = Map::new();
            o.insert("kind".into(), "imm_array".into());
            o.insert("dtype".into(), dtype.name().into());
            o.insert(
                "value_array".into(),
                values.iter().map(|n| number_value(*n)).collect::<Vec<_>>().into(),
            );
            Value::Object(o)
        }
        Operand::Register { dtype, regref } => {
            let mut o = Map::new();
            o.insert("kind".into(), "register_access".into());
            o.insert("dtype".into(), dtype.name().into());
            o.insert("regref".into(), regref.clone().into());
            Value::Object(o)
        }
        Operand::Other(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), v.into())).collect()),
    }
}

fn ap_value(ap: &AccessPattern, f: &Function) -> Value {
    let mut o = Map::new();
    if let Some(OffsetSource::RegisterBase { regref, offset_reg }) = ap.dynamic.as_deref().map(|d| &d.source)
    {
        let loc = f.location(ap.loc);
        o.insert("kind".into(), "register_ap".into());
        o.insert("memref".into(), loc.map(|l| l.name.clone()).unwrap_or_default().into());
        if let Some(alloc) = loc.and_then(|l| f.allocation(l.alloc)) {
            o.insert("memsetref".into(), alloc.name.clone().into());
        }
        o.insert("dtype".into(), ap.dtype.name().into());
        let pairs = ap.pairs.iter().map(|p| Value::from(vec![p.step, p.num])).collect::<Vec<_>>();
        o.insert("ap".into(), pairs.into());
        o.insert("regref".into(), regref.clone().into());
        if let Some(r) = offset_reg {
            o.insert("reg_ap_offset".into(), r.clone().into());
        }
        return Value::Object(o);
    }
    o.insert("kind".into(), "physical_ap".into());
    let loc = f.location(ap.loc);
    o.insert("memref".into(), loc.map(|l| l.name.clone()).unwrap_or_default().into());
    if let Some(alloc) = loc.and_then(|l| f.allocation(l.alloc)) {
        o.insert("memsetref".into(), alloc.name.clone().into());
    }
    o.insert("dtype".into(), ap.dtype.name().into());
    o.insert("offset".into(), ap.offset.into());
    let pairs = ap.pairs.iter().map(|p| Value::from(vec![p.step, p.num])).collect::<Vec<_>>();
    o.insert("ap".into(), pairs.into());
    if let Some(d) = &ap.dynamic {
        o.insert("indirect_dim".into(), d.indirect_dim.name().into());
        o.insert("indirect_dim_max_index".into(), d.max_index.into());
        match &d.source {
            OffsetSource::Vector(v) => {
                o.insert("vector_offset".into(), ap_value(v, f));
            }
            OffsetSource::Register(r) => {
                o.insert("scalar_offset".into(), r.clone().into());
            }
            OffsetSource::Scalar(s) => {
                o.insert("scalar_offset".into(), ap_value(s, f));
            }
            OffsetSource::RegisterBase { .. } => {}
        }
    }
    Value::Object(o)
}
