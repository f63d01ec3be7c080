//! JSON value → typed IR, collecting located diagnostics (see the module doc of `json`).

use super::HEADER_KEYS;
use super::fields::read_op;
use crate::alu::AluOp;
use crate::ap::{AccessPattern, ApPair, ApPairs, DynamicOffset, Number, OffsetSource, Operand};
use crate::diag::{Diagnostics, ErrorKind, LoadError};
use crate::dtype::Dtype;
use crate::enum_macro::BirEnum;
use crate::enums::{Arch, EngineType, IndirectDim, MemoryType, TensorKind};
use crate::opcode::Opcode;
use crate::program::*;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Parses BIR JSON text.
pub fn load_str(text: &str) -> Result<Program, LoadError> {
    load_slice(text.as_bytes())
}

/// Parses BIR JSON bytes.
pub fn load_slice(bytes: &[u8]) -> Result<Program, LoadError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| LoadError::Syntax {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    load_value(&value)
}

/// Decodes an already parsed JSON tree.
pub fn load_value(value: &Value) -> Result<Program, LoadError> {
    let mut cx = Cx::default();
    let program = cx.program(value);
    match program {
        Some(p) if cx.diags.is_empty() => Ok(p),
        _ => Err(LoadError::Invalid(cx.diags)),
    }
}

/// The decoding context: where we are, what names resolve to, and what went wrong so far.
#[derive(Default)]
pub(crate) struct Cx {
    pub(crate) diags: Diagnostics,
    context: Vec<String>,
    locs: HashMap<String, LocId>,
    allocs: HashMap<String, AllocId>,
    loc_owner: Vec<AllocId>,
    /// Names of locations that were declared but failed to decode: references to them add no
    /// follow-on error (the declaration's error says it all).
    broken_locs: std::collections::HashSet<String>,
    /// The function's allocation list itself is unusable: no reference can be checked.
    no_memory: bool,
}

/// An object being read, with its field-path prefix.
pub(crate) struct Obj<'v> {
    pub(crate) map: &'v Map<String, Value>,
    pub(crate) path: String,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'v> Obj<'v> {
    /// The field, treating `null` as absent.
    pub(crate) fn get(&self, key: &str) -> Option<&'v Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub(crate) fn field(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// A required field, converted by `conv`; reports `missing-field` when absent.
    pub(crate) fn req<T>(
        &self,
        cx: &mut Cx,
        key: &str,
        conv: impl FnOnce(&mut Cx, &'v Value, &str) -> Option<T>,
    ) -> Option<T> {
        let path = self.field(key);
        match self.get(key) {
            Some(v) => conv(cx, v, &path),
            None => {
                cx.err(ErrorKind::MissingField, &path, format!("required field `{key}` is missing"));
                None
            }
        }
    }

    /// An optional field, converted by `conv` when present.
    pub(crate) fn opt<T>(
        &self,
        cx: &mut Cx,
        key: &str,
        conv: impl FnOnce(&mut Cx, &'v Value, &str) -> Option<T>,
    ) -> Option<T> {
        let path = self.field(key);
        self.get(key).and_then(|v| conv(cx, v, &path))
    }

    /// An optional field under any of several keys (the first present wins).
    pub(crate) fn opt_any<T>(
        &self,
        cx: &mut Cx,
        keys: &[&str],
        conv: impl FnOnce(&mut Cx, &'v Value, &str) -> Option<T>,
    ) -> Option<T> {
        let key = keys.iter().find(|k| self.get(k).is_some())?;
        self.opt(cx, key, conv)
    }
}

impl Cx {
    pub(crate) fn err(&mut self, kind: ErrorKind, field: &str, message: impl Into<String>) {
        let context = self.context.join(" › ");
        self.diags.push(kind, &context, field, message);
    }

    fn with_context<T>(&mut self, segment: String, f: impl FnOnce(&mut Self) -> T) -> T {
        self.context.push(segment);
        let out = f(self);
        self.context.pop();
        out
    }

    // ----- scalar converters (all share the signature `(cx, value, path) -> Option<T>`) -----

    pub(crate) fn obj<'v>(&mut self, v: &'v Value, path: &str) -> Option<Obj<'v>> {
        match v {
            Value::Object(map) => Some(Obj { map, path: path.to_owned() }),
            other => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected an object, found {}", describe(other)),
                );
                None
            }
        }
    }

    pub(crate) fn arr<'v>(&mut self, v: &'v Value, path: &str) -> Option<&'v [Value]> {
        match v {
            Value::Array(items) => Some(items),
            other => {
                self.err(ErrorKind::WrongType, path, format!("expected an array, found {}", describe(other)));
                None
            }
        }
    }

    pub(crate) fn string(&mut self, v: &Value, path: &str) -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            other => {
                self.err(ErrorKind::WrongType, path, format!("expected a string, found {}", describe(other)));
                None
            }
        }
    }

    pub(crate) fn boolean(&mut self, v: &Value, path: &str) -> Option<bool> {
        match v {
            Value::Bool(b) => Some(*b),
            // Some dumps write flags as 0/1.
            Value::Number(n) if n.as_u64() == Some(0) => Some(false),
            Value::Number(n) if n.as_u64() == Some(1) => Some(true),
            other => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected true or false, found {}", describe(other)),
                );
                None
            }
        }
    }

    pub(crate) fn int(&mut self, v: &Value, path: &str) -> Option<i64> {
        match v {
            Value::Number(n) => match n.as_i64() {
                Some(i) => Some(i),
                None if n.is_u64() => {
                    self.err(
                        ErrorKind::OutOfRange,
                        path,
                        format!("{n} does not fit a signed 64-bit integer"),
                    );
                    None
                }
                None => {
                    self.err(ErrorKind::WrongType, path, format!("expected an integer, found {n}"));
                    None
                }
            },
            other => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected an integer, found {}", describe(other)),
                );
                None
            }
        }
    }

    pub(crate) fn uint(&mut self, v: &Value, path: &str) -> Option<u64> {
        match v {
            Value::Number(n) if n.is_u64() => n.as_u64(),
            Value::Number(n) if n.is_i64() => {
                self.err(ErrorKind::OutOfRange, path, format!("expected a non-negative integer, found {n}"));
                None
            }
            Value::Number(n) => {
                self.err(ErrorKind::WrongType, path, format!("expected an integer, found {n}"));
                None
            }
            other => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected an integer, found {}", describe(other)),
                );
                None
            }
        }
    }

    pub(crate) fn uint_max(&mut self, v: &Value, path: &str, max: u64) -> Option<u64> {
        let n = self.uint(v, path)?;
        if n > max {
            self.err(ErrorKind::OutOfRange, path, format!("{n} is above the maximum {max}"));
            return None;
        }
        Some(n)
    }

    pub(crate) fn number(&mut self, v: &Value, path: &str) -> Option<Number> {
        match v {
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Some(Number::Int(i))
                } else if let Some(u) = n.as_u64() {
                    Some(Number::UInt(u))
                } else {
                    n.as_f64().map(Number::Float)
                }
            }
            Value::String(s) => match special_float(s) {
                Some(f) => Some(Number::Float(f)),
                None => {
                    self.err(
                        ErrorKind::WrongType,
                        path,
                        format!("expected a number or \"nan\"/\"inf\"/\"-inf\", found the string {s:?}"),
                    );
                    None
                }
            },
            other => {
                self.err(ErrorKind::WrongType, path, format!("expected a number, found {}", describe(other)));
                None
            }
        }
    }

    pub(crate) fn float(&mut self, v: &Value, path: &str) -> Option<f64> {
        self.number(v, path).map(Number::as_f64)
    }

    /// An fp32 field: the JSON value rounded to nearest f32, as the reference's float fields hold.
    #[expect(clippy::cast_possible_truncation, reason = "fp32 fields round by design")]
    pub(crate) fn float32(&mut self, v: &Value, path: &str) -> Option<f32> {
        self.float(v, path).map(|f| f as f32)
    }

    /// An enum by name (names are case-sensitive, as the reference's `string2*` functions are).
    pub(crate) fn enum_name<T: BirEnum>(&mut self, v: &Value, path: &str) -> Option<T> {
        match v {
            Value::String(s) => match T::from_name(s) {
                Some(t) => Some(t),
                None => {
                    self.err(
                        ErrorKind::UnknownEnum,
                        path,
                        format!("unknown {} {s:?}; expected one of: {}", T::WHAT, T::expected()),
                    );
                    None
                }
            },
            other => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected a {} name (string), found {}", T::WHAT, describe(other)),
                );
                None
            }
        }
    }

    /// `MemoryType`: a name or its bit value (re-facts §3).
    fn mem_type(&mut self, v: &Value, path: &str) -> Option<MemoryType> {
        if let Value::Number(n) = v {
            return match n.as_u64().and_then(MemoryType::from_ordinal) {
                Some(t) => Some(t),
                None => {
                    self.err(
                        ErrorKind::UnknownEnum,
                        path,
                        format!("unknown memory type {n}; expected one of the bit values 1, 2, 4, ..., 128 or a name"),
                    );
                    None
                }
            };
        }
        self.enum_name(v, path)
    }

    pub(crate) fn list<'v, T>(
        &mut self,
        v: &'v Value,
        path: &str,
        mut each: impl FnMut(&mut Self, &'v Value, &str) -> Option<T>,
    ) -> Option<Vec<T>> {
        let items = self.arr(v, path)?;
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            match each(self, item, &format!("{path}[{i}]")) {
                Some(t) => out.push(t),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    /// A `[step, num]` pair, as a 2-element array or a `{step, num}` object.
    pub(crate) fn pair(&mut self, v: &Value, path: &str) -> Option<ApPair> {
        match v {
            Value::Array(items) if items.len() == 2 => {
                let step = self.int(&items[0], &format!("{path}[0]"));
                let num = self.int(&items[1], &format!("{path}[1]"));
                Some(ApPair::new(step?, num?))
            }
            Value::Array(items) => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected a [step, num] pair, found an array of {} elements", items.len()),
                );
                None
            }
            Value::Object(_) => {
                let o = self.obj(v, path)?;
                let step = o.req(self, "step", Cx::int);
                let num = o.req(self, "num", Cx::int);
                Some(ApPair::new(step?, num?))
            }
            other => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected a [step, num] pair, found {}", describe(other)),
                );
                None
            }
        }
    }

    pub(crate) fn pairs(&mut self, v: &Value, path: &str) -> Option<ApPairs> {
        self.list(v, path, Cx::pair).map(ApPairs::from_vec)
    }

    // ----- structure -----

    fn program(&mut self, v: &Value) -> Option<Program> {
        let top = self.obj(v, "")?;
        let arch = top.opt(self, "arch", Cx::enum_name::<Arch>).unwrap_or(Arch::Gen3);
        let version = top.opt(self, "version", Cx::uint).unwrap_or(2);
        let attributes = top.get("attributes").cloned().unwrap_or(Value::Null);
        let functions =
            top.req(self, "functions", |cx, v, path| cx.list(v, path, |cx, f, path| cx.function(f, path)));
        let functions = functions?;
        if functions.is_empty() {
            self.err(ErrorKind::Structure, "functions", "a program needs at least one function");
        }
        Some(Program { arch, version, attributes, functions })
    }

    fn function(&mut self, v: &Value, path: &str) -> Option<Function> {
        let o = self.obj(v, path)?;
        let name = o.req(self, "name", Cx::string).unwrap_or_default();
        self.with_context(format!("function '{name}'"), |cx| {
            let o = Obj { map: o.map, path: String::new() };
            cx.locs.clear();
            cx.allocs.clear();
            cx.loc_owner.clear();
            cx.broken_locs.clear();
            cx.no_memory = !matches!(o.get("allocations"), Some(Value::Array(_)));
            let attributes = o.get("attributes").cloned().unwrap_or(Value::Null);
            let mut allocations = Vec::new();
            let mut locations = Vec::new();
            if let Some(items) = o.req(cx, "allocations", Cx::arr) {
                for (i, a) in items.iter().enumerate() {
                    let path = format!("allocations[{i}]");
                    cx.allocation(a, &path, &mut allocations, &mut locations);
                }
            }
            let body = o.req(cx, "blocks", |cx, v, path| cx.nodes(v, path)).unwrap_or_default();
            Some(Function { name, attributes, allocations, locations, body })
        })
    }

    fn allocation(
        &mut self,
        v: &Value,
        path: &str,
        allocations: &mut Vec<Allocation>,
        locations: &mut Vec<MemoryLocation>,
    ) {
        let Some(o) = self.obj(v, path) else { return };
        let name = o.req(self, "name", Cx::string).unwrap_or_default();
        let alloc_id = AllocId(allocations.len() as u32);
        if self.allocs.contains_key(&name) {
            self.err(
                ErrorKind::DuplicateName,
                &o.field("name"),
                format!("allocation name '{name}' is used twice"),
            );
        } else {
            self.allocs.insert(name.clone(), alloc_id);
        }
        self.with_context(format!("allocation '{name}'"), |cx| {
            let o = Obj { map: o.map, path: String::new() };
            let kind = o.opt(cx, "kind", Cx::enum_name::<TensorKind>).unwrap_or(TensorKind::Internal);
            let dtype = o.req(cx, "dtype", Cx::enum_name::<Dtype>).unwrap_or(Dtype::Float32);
            let tensor_shape =
                o.opt(cx, "tensor_shape", |cx, v, p| cx.list(v, p, Cx::uint)).unwrap_or_default();
            let partition_dim = o.opt(cx, "partition_dim", Cx::uint).unwrap_or(0);
            let addr_space = o.opt(cx, "addr_space", Cx::string);
            let mut loc_ids = Vec::new();
            if let Some(items) = o.req(cx, "memorylocations", Cx::arr) {
                for (i, l) in items.iter().enumerate() {
                    let path = format!("memorylocations[{i}]");
                    if let Some(loc) = cx.location(l, &path, alloc_id) {
                        let id = LocId(locations.len() as u32);
                        if cx.locs.contains_key(&loc.name) {
                            cx.err(
                                ErrorKind::DuplicateName,
                                &join(&path, "name"),
                                format!("memory location name '{}' is used twice", loc.name),
                            );
                        } else {
                            cx.locs.insert(loc.name.clone(), id);
                        }
                        cx.loc_owner.push(alloc_id);
                        loc_ids.push(id);
                        locations.push(loc);
                    }
                }
            }
            allocations.push(Allocation {
                name,
                kind,
                dtype,
                tensor_shape,
                partition_dim,
                addr_space,
                locations: loc_ids,
            });
        });
    }

    fn location(&mut self, v: &Value, path: &str, alloc: AllocId) -> Option<MemoryLocation> {
        let o = self.obj(v, path)?;
        let name = o.req(self, "name", Cx::string);
        let mem_type = o.req(self, "type", Cx::mem_type);
        let dims = o.req(self, "dims", |cx, v, p| {
            let d = cx.list(v, p, Cx::uint)?;
            if d.len() != 2 {
                cx.err(
                    ErrorKind::WrongType,
                    p,
                    format!("expected [partitions, bytes per partition], found {} numbers", d.len()),
                );
                return None;
            }
            Some((d[0], d[1]))
        });
        let addr = o.opt(self, "addr", Cx::uint).unwrap_or(0);
        let base = o.opt(self, "base", Cx::uint).unwrap_or(0);
        let bank = o.opt(self, "bank", Cx::uint).unwrap_or(0);
        let allocated = o.opt(self, "allocated", Cx::boolean).unwrap_or(false);
        let (Some(name), Some(mem_type), Some((partitions, bytes_per_partition))) =
            (name.clone(), mem_type, dims)
        else {
            if let Some(n) = name {
                self.broken_locs.insert(n);
            }
            return None;
        };
        Some(MemoryLocation {
            name,
            alloc,
            mem_type,
            addr,
            partitions,
            bytes_per_partition,
            base,
            bank,
            allocated,
        })
    }

    fn nodes(&mut self, v: &Value, path: &str) -> Option<Vec<Node>> {
        let items = self.arr(v, path)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            if let Some(n) = self.node(item, &format!("{path}[{i}]"), i) {
                out.push(n);
            }
        }
        Some(out)
    }

    fn node(&mut self, v: &Value, path: &str, index: usize) -> Option<Node> {
        let o = self.obj(v, path)?;
        let opcode = o.get("opcode").and_then(Value::as_str);
        if opcode == Some("Loop") {
            return self.loop_node(&o, index).map(Node::Loop);
        }
        if o.get("instructions").is_some() && opcode.is_none() {
            let name = o.opt(self, "name", Cx::string).unwrap_or_default();
            return self.with_context(format!("block '{name}'"), |cx| {
                let body = o.req(cx, "instructions", |cx, v, p| cx.nodes(v, p)).unwrap_or_default();
                Some(Node::Block(Block { name, body }))
            });
        }
        if o.get("opcode").is_some() {
            return self.instruction(&o, index).map(Node::Inst);
        }
        self.err(
            ErrorKind::Structure,
            path,
            "expected a block (with `instructions`), a loop (`opcode: \"Loop\"`) or an instruction (with `opcode`)",
        );
        None
    }

    fn loop_node(&mut self, o: &Obj<'_>, index: usize) -> Option<Loop> {
        let name = o.opt(self, "name", Cx::string).unwrap_or_default();
        self.with_context(format!("loop #{index} '{name}'"), |cx| {
            let o = Obj { map: o.map, path: String::new() };
            let axis = o.req(cx, "LoopAxis", Cx::obj);
            let (var, lb, ub, stride) = match axis {
                Some(a) => (
                    a.opt(cx, "name", Cx::string).unwrap_or_default(),
                    a.req(cx, "lb", Cx::int),
                    a.req(cx, "ub", Cx::int),
                    a.opt(cx, "stride", Cx::int).or(Some(1)),
                ),
                None => (String::new(), None, None, None),
            };
            let body = o.req(cx, "blocks", |cx, v, p| cx.nodes(v, p)).unwrap_or_default();
            Some(Loop { name, var, lb: lb?, ub: ub?, stride: stride?, body })
        })
    }

    pub(crate) fn instruction(&mut self, o: &Obj<'_>, index: usize) -> Option<Instruction> {
        let name = o.opt(self, "name", Cx::string).unwrap_or_default();
        let opcode_value = o.get("opcode");
        let opcode_text = opcode_value.and_then(Value::as_str).unwrap_or("?");
        self.with_context(format!("instruction #{index} '{name}' ({opcode_text})"), |cx| {
            let o = Obj { map: o.map, path: String::new() };
            let opcode = o.req(cx, "opcode", |cx, v, p| match v {
                Value::String(s) => match Opcode::from_name(s) {
                    Some(op) => Some(op),
                    None => {
                        cx.err(
                            ErrorKind::UnknownOpcode,
                            p,
                            format!("unknown opcode {s:?}; expected one of the 110 BIR opcodes (docs/bir-json.md)"),
                        );
                        None
                    }
                },
                other => {
                    cx.err(ErrorKind::WrongType, p, format!("expected an opcode name, found {}", describe(other)));
                    None
                }
            });
            let engine = o.opt(cx, "engine", Cx::enum_name::<EngineType>).unwrap_or(EngineType::Unassigned);
            let ins = o.opt(cx, "ins", |cx, v, p| cx.list(v, p, Cx::operand)).unwrap_or_default();
            let outs = o.opt(cx, "outs", |cx, v, p| cx.list(v, p, Cx::operand)).unwrap_or_default();
            let op = read_op(opcode?, &o, cx);
            Some(Instruction { name, engine, ins, outs, op })
        })
    }

    /// The opcode's own fields of an unmodelled opcode, verbatim.
    pub(crate) fn raw_fields(o: &Obj<'_>) -> Map<String, Value> {
        o.map
            .iter()
            .filter(|(k, _)| !HEADER_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    // ----- operands -----

    fn operand(&mut self, v: &Value, path: &str) -> Option<Operand> {
        let o = self.obj(v, path)?;
        let kind = o.req(self, "kind", Cx::string)?;
        match kind.as_str() {
            "physical_ap" => self.access_pattern(&o).map(Operand::Ap),
            "imm_value" => {
                let dtype = o.req(self, "dtype", Cx::enum_name::<Dtype>);
                let value = o.req(self, "value", Cx::number);
                Some(Operand::Imm { dtype: dtype?, value: value? })
            }
            "imm_array" => {
                let dtype = o.req(self, "dtype", Cx::enum_name::<Dtype>);
                let values = o.req(self, "value_array", |cx, v, p| cx.list(v, p, Cx::number));
                Some(Operand::ImmArray { dtype: dtype?, values: values? })
            }
            "register_access" => {
                let dtype = o.req(self, "dtype", Cx::enum_name::<Dtype>);
                let regref = o.req(self, "regref", Cx::string);
                Some(Operand::Register { dtype: dtype?, regref: regref? })
            }
            _ => Some(Operand::Other(o.map.clone())),
        }
    }

    pub(crate) fn access_pattern(&mut self, o: &Obj<'_>) -> Option<AccessPattern> {
        let loc = o.req(self, "memref", |cx, v, p| {
            let name = cx.string(v, p)?;
            match cx.locs.get(&name) {
                Some(id) => Some(*id),
                None if cx.no_memory || cx.broken_locs.contains(&name) => None,
                None => {
                    cx.err(
                        ErrorKind::UnresolvedRef,
                        p,
                        format!("memref '{name}' names no memory location of this function"),
                    );
                    None
                }
            }
        });
        let set = o.opt(self, "memsetref", |cx, v, p| {
            let name = cx.string(v, p)?;
            match cx.allocs.get(&name) {
                Some(id) => Some((*id, name)),
                None if cx.no_memory => None,
                None => {
                    cx.err(
                        ErrorKind::UnresolvedRef,
                        p,
                        format!("memsetref '{name}' names no allocation of this function"),
                    );
                    None
                }
            }
        });
        if let (Some(loc), Some((set, set_name))) = (loc, &set)
            && self.loc_owner.get(loc.index()) != Some(set)
        {
            let field = o.field("memsetref");
            self.err(
                ErrorKind::RefMismatch,
                &field,
                format!("the memref's location does not belong to allocation '{set_name}'"),
            );
        }
        let dtype = o.req(self, "dtype", Cx::enum_name::<Dtype>);
        let offset = o.opt(self, "offset", Cx::int).unwrap_or(0);
        let pairs = o.req(self, "ap", Cx::pairs);
        let dynamic = self.dynamic_offset(o);
        Some(AccessPattern { loc: loc?, dtype: dtype?, offset, pairs: pairs?, dynamic: dynamic? })
    }

    /// The dynamic-offset keys of an AP (docs/bir-json.md "Dynamic offsets"). `Some(None)` when
    /// the AP has none.
    fn dynamic_offset(&mut self, o: &Obj<'_>) -> Option<Option<Box<DynamicOffset>>> {
        let vector = o.get("vector_offset");
        let scalar = o.get("scalar_offset");
        let dim = o.opt(self, "indirect_dim", Cx::enum_name::<IndirectDim>);
        if vector.is_none() && scalar.is_none() {
            if o.get("indirect_dim").is_some() || o.get("indirect_dim_max_index").is_some() {
                self.err(
                    ErrorKind::MissingField,
                    &o.field("vector_offset"),
                    "an AP with `indirect_dim` needs exactly one of `vector_offset` or `scalar_offset`",
                );
                return None;
            }
            return Some(None);
        }
        if vector.is_some() && scalar.is_some() {
            self.err(
                ErrorKind::BadField,
                &o.field("scalar_offset"),
                "an AP takes exactly one of `vector_offset` or `scalar_offset`, not both",
            );
            return None;
        }
        let max_index = o.req(self, "indirect_dim_max_index", Cx::int);
        let source = if vector.is_some() {
            o.opt(self, "vector_offset", |cx, v, p| {
                let inner = cx.obj(v, p)?;
                cx.access_pattern(&inner).map(OffsetSource::Vector)
            })
        } else {
            o.opt(self, "scalar_offset", |cx, v, p| match v {
                Value::String(r) => Some(OffsetSource::Register(r.clone())),
                _ => {
                    let inner = cx.obj(v, p)?;
                    cx.access_pattern(&inner).map(OffsetSource::Scalar)
                }
            })
        };
        let indirect_dim = match (dim, o.get("indirect_dim")) {
            (Some(d), _) => d,
            (None, None) => {
                self.err(
                    ErrorKind::MissingField,
                    &o.field("indirect_dim"),
                    "a dynamic offset needs `indirect_dim`",
                );
                return None;
            }
            (None, Some(_)) => return None,
        };
        Some(Some(Box::new(DynamicOffset { indirect_dim, max_index: max_index?, source: source? })))
    }

    /// An ALU op field (shared by many payloads).
    pub(crate) fn alu(&mut self, v: &Value, path: &str) -> Option<AluOp> {
        self.enum_name(v, path)
    }
}

/// The float spellings the format uses for non-finite values.
fn special_float(s: &str) -> Option<f64> {
    match s.to_ascii_lowercase().as_str() {
        "nan" | "+nan" | "-nan" => Some(f64::NAN),
        "inf" | "+inf" | "infinity" | "+infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}
