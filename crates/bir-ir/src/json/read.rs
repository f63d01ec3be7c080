//! JSON value → typed IR, collecting located diagnostics (see the module doc of `json`).

use super::HEADER_KEYS;
use super::fields::read_op;
use super::tree::{Entries, J, JSeed, JVisitor, KeySeed, Lazy, Mode, get, to_map};
use crate::alu::AluOp;
use crate::ap::{AccessPattern, ApPair, ApPairs, DynamicOffset, Number, OffsetSource, Operand};
use crate::diag::{Diagnostics, ErrorKind, LoadError};
use crate::dtype::Dtype;
use crate::enum_macro::BirEnum;
use crate::enums::{Arch, EngineType, IndirectDim, MemoryType, TensorKind};
use crate::opcode::Opcode;
use crate::program::*;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::{self, Write as _};

/// Parses BIR JSON text.
pub fn load_str(text: &str) -> Result<Program, LoadError> {
    load_slice(text.as_bytes())
}

/// Parses BIR JSON bytes.
///
/// The fast path parses the document into the lean tree of `json::tree`, with the node lists
/// kept as text and streamed one node at a time. When any part of the text fails to parse, or
/// nests too deep, it gives up and the text is parsed into a `serde_json::Value` instead, so
/// that syntax and depth errors are worded and located exactly as that parser does it.
pub fn load_slice(bytes: &[u8]) -> Result<Program, LoadError> {
    // One UTF-8 check of the whole text is cheaper than serde_json's check of every string.
    let Ok(text) = std::str::from_utf8(bytes) else { return slow_load(bytes) };
    let mut de = serde_json::Deserializer::from_str(text);
    let mut cx = Cx::default();
    let parsed = TopSeed { cx: &mut cx }.deserialize(&mut de).and_then(|tree| de.end().map(|()| tree));
    if let Ok(tree) = parsed
        && !cx.gave_up
    {
        let (result, gave_up) = decode(cx, &tree);
        if !gave_up {
            return result;
        }
    }
    slow_load(bytes)
}

/// Parses the whole text into a `serde_json::Value` first (the fast path's fallback).
fn slow_load(bytes: &[u8]) -> Result<Program, LoadError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| LoadError::Syntax {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    load_value(&value)
}

/// Decodes an already parsed JSON tree.
pub fn load_value(value: &Value) -> Result<Program, LoadError> {
    // A tree borrowed from a `Value` has no lazy parts, so the reader never gives up on it.
    load_tree(&J::from_value(value)).0
}

/// Decodes a tree; the flag says the reader gave up on a lazy part (the result is then void).
fn load_tree(tree: &J<'_>) -> (Result<Program, LoadError>, bool) {
    decode(Cx::default(), tree)
}

/// Decodes a tree with a context that may already hold functions decoded during the parse.
fn decode(mut cx: Cx, tree: &J<'_>) -> (Result<Program, LoadError>, bool) {
    let program = cx.program(tree);
    let result = match program {
        Some(p) if cx.diags.is_empty() => Ok(p),
        _ => Err(LoadError::Invalid(cx.diags)),
    };
    (result, cx.gave_up)
}

/// The decoding context: where we are, what names resolve to, and what went wrong so far.
#[derive(Default)]
pub(crate) struct Cx {
    pub(crate) diags: Diagnostics,
    context: Vec<Seg>,
    locs: HashMap<String, LocId>,
    allocs: HashMap<String, AllocId>,
    loc_owner: Vec<AllocId>,
    /// Names of locations that were declared but failed to decode: references to them add no
    /// follow-on error (the declaration's error says it all).
    broken_locs: std::collections::HashSet<String>,
    /// The function's allocation list itself is unusable: no reference can be checked.
    no_memory: bool,
    /// A lazy part of the text did not parse (or nests too deep): the caller starts over on
    /// the slow path, and nothing decoded since matters.
    gave_up: bool,
    /// How many node lists are being streamed before their block is known to be one (its name
    /// and the absence of an `opcode` come later in the text). Any diagnostic there gives up:
    /// its context would lack the block's name.
    speculative: u32,
    /// Functions decoded while the text was parsed (`J::Done` indexes this).
    done: Vec<Option<Function>>,
}

/// One segment of a diagnostic's context, formatted only when a diagnostic is recorded.
enum Seg {
    Function(String),
    Allocation(String),
    Block(String),
    Loop(usize, String),
    /// Index, name and the opcode as written (`?` when it is not a string).
    Instruction(usize, String, Cow<'static, str>),
}

impl Seg {
    /// The name it carries (handed back to the IR once the context is left).
    fn into_name(self) -> String {
        match self {
            Seg::Function(n)
            | Seg::Allocation(n)
            | Seg::Block(n)
            | Seg::Loop(_, n)
            | Seg::Instruction(_, n, _) => n,
        }
    }
}

impl fmt::Display for Seg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Seg::Function(n) => write!(f, "function '{n}'"),
            Seg::Allocation(n) => write!(f, "allocation '{n}'"),
            Seg::Block(n) => write!(f, "block '{n}'"),
            Seg::Loop(i, n) => write!(f, "loop #{i} '{n}'"),
            Seg::Instruction(i, n, op) => write!(f, "instruction #{i} '{n}' ({op})"),
        }
    }
}

/// A field path (`ins[0].ap[1]`), a list on the stack that is formatted only when a diagnostic
/// is recorded.
#[derive(Clone, Copy)]
pub(crate) enum Path<'p> {
    Root,
    Key(&'p Path<'p>, &'p str),
    Index(&'p Path<'p>, usize),
}

impl Path<'_> {
    pub(crate) fn index(&self, i: usize) -> Path<'_> {
        Path::Index(self, i)
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Key(Path::Root, key) => f.write_str(key),
            Path::Key(parent, key) => write!(f, "{parent}.{key}"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// An object being read, with its field-path prefix.
#[derive(Clone, Copy)]
pub(crate) struct Obj<'v, 'p> {
    pub(crate) map: &'v Entries<'v>,
    pub(crate) path: Path<'p>,
}

impl<'v> Obj<'v, '_> {
    /// The field, treating `null` as absent.
    pub(crate) fn get(&self, key: &str) -> Option<&'v J<'v>> {
        get(self.map, key).filter(|v| !v.is_null())
    }

    pub(crate) fn field<'s>(&'s self, key: &'s str) -> Path<'s> {
        Path::Key(&self.path, key)
    }

    /// The same object with an empty path (a new context starts there).
    fn rooted(&self) -> Obj<'v, 'static> {
        Obj { map: self.map, path: Path::Root }
    }

    /// A required field's value; reports `missing-field` when absent.
    fn req_value(&self, cx: &mut Cx, key: &str) -> Option<&'v J<'v>> {
        let v = self.get(key);
        if v.is_none() {
            cx.err(ErrorKind::MissingField, &self.field(key), format!("required field `{key}` is missing"));
        }
        v
    }

    /// A required field, converted by `conv`; reports `missing-field` when absent.
    pub(crate) fn req<T>(
        &self,
        cx: &mut Cx,
        key: &str,
        conv: impl FnOnce(&mut Cx, &'v J<'v>, &Path<'_>) -> Option<T>,
    ) -> Option<T> {
        let v = self.req_value(cx, key)?;
        conv(cx, v, &self.field(key))
    }

    /// An optional field, converted by `conv` when present.
    pub(crate) fn opt<T>(
        &self,
        cx: &mut Cx,
        key: &str,
        conv: impl FnOnce(&mut Cx, &'v J<'v>, &Path<'_>) -> Option<T>,
    ) -> Option<T> {
        let v = self.get(key)?;
        conv(cx, v, &self.field(key))
    }

    /// An optional field under any of several keys (the first present wins).
    pub(crate) fn opt_any<T>(
        &self,
        cx: &mut Cx,
        keys: &[&str],
        conv: impl FnOnce(&mut Cx, &'v J<'v>, &Path<'_>) -> Option<T>,
    ) -> Option<T> {
        let key = keys.iter().find(|k| self.get(k).is_some())?;
        self.opt(cx, key, conv)
    }
}

impl Cx {
    pub(crate) fn err(&mut self, kind: ErrorKind, field: &dyn fmt::Display, message: impl Into<String>) {
        if self.speculative > 0 {
            self.gave_up = true;
        }
        let mut context = String::new();
        for (i, seg) in self.context.iter().enumerate() {
            if i > 0 {
                context.push_str(" › ");
            }
            let _ = write!(context, "{seg}");
        }
        self.diags.push(kind, &context, &field.to_string(), message);
    }

    /// Runs `f` inside one more context segment; gives the segment back.
    fn with_context<T>(&mut self, segment: Seg, f: impl FnOnce(&mut Self) -> T) -> (T, Option<Seg>) {
        self.context.push(segment);
        let out = f(self);
        let segment = self.context.pop();
        (out, segment)
    }

    // ----- scalar converters (all share the signature `(cx, value, path) -> Option<T>`) -----

    pub(crate) fn obj<'v, 'p>(&mut self, v: &'v J<'v>, path: &Path<'p>) -> Option<Obj<'v, 'p>> {
        match v {
            J::Obj(map) => Some(Obj { map, path: *path }),
            other => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected an object, found {}", other.describe()),
                );
                None
            }
        }
    }

    pub(crate) fn arr<'v>(&mut self, v: &'v J<'v>, path: &Path<'_>) -> Option<&'v [J<'v>]> {
        match v {
            J::Arr(items) => Some(items),
            // Only node lists are lazy, and they are read by `nodes`; anything else reading
            // one is a reader bug, which the slow path (no lazy parts) sidesteps.
            J::Lazy(_) => {
                self.gave_up = true;
                None
            }
            other => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected an array, found {}", other.describe()),
                );
                None
            }
        }
    }

    /// A string field, borrowed.
    pub(crate) fn str_ref<'v>(&mut self, v: &'v J<'v>, path: &Path<'_>) -> Option<&'v str> {
        match v {
            J::Str(s) => Some(s),
            other => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected a string, found {}", other.describe()),
                );
                None
            }
        }
    }

    pub(crate) fn string(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<String> {
        match v {
            J::Str(s) => Some(s.to_string()),
            other => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected a string, found {}", other.describe()),
                );
                None
            }
        }
    }

    pub(crate) fn boolean(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<bool> {
        match v {
            J::Bool(b) => Some(*b),
            // Some dumps write flags as 0/1.
            J::Num(n) if n.as_u64() == Some(0) => Some(false),
            J::Num(n) if n.as_u64() == Some(1) => Some(true),
            other => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected true or false, found {}", other.describe()),
                );
                None
            }
        }
    }

    pub(crate) fn int(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<i64> {
        match v {
            J::Num(n) => match n.as_i64() {
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
                    format!("expected an integer, found {}", other.describe()),
                );
                None
            }
        }
    }

    pub(crate) fn uint(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<u64> {
        match v {
            J::Num(n) if n.is_u64() => n.as_u64(),
            J::Num(n) if n.is_i64() => {
                self.err(ErrorKind::OutOfRange, path, format!("expected a non-negative integer, found {n}"));
                None
            }
            J::Num(n) => {
                self.err(ErrorKind::WrongType, path, format!("expected an integer, found {n}"));
                None
            }
            other => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected an integer, found {}", other.describe()),
                );
                None
            }
        }
    }

    pub(crate) fn uint_max(&mut self, v: &J<'_>, path: &Path<'_>, max: u64) -> Option<u64> {
        let n = self.uint(v, path)?;
        if n > max {
            self.err(ErrorKind::OutOfRange, path, format!("{n} is above the maximum {max}"));
            return None;
        }
        Some(n)
    }

    pub(crate) fn number(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<Number> {
        match v {
            J::Num(n) => {
                if let Some(i) = n.as_i64() {
                    Some(Number::Int(i))
                } else if let Some(u) = n.as_u64() {
                    Some(Number::UInt(u))
                } else {
                    n.as_f64().map(Number::Float)
                }
            }
            J::Str(s) => match special_float(s) {
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
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected a number, found {}", other.describe()),
                );
                None
            }
        }
    }

    pub(crate) fn float(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<f64> {
        self.number(v, path).map(Number::as_f64)
    }

    /// An fp32 field: the JSON value rounded to nearest f32, as the reference's float fields hold.
    #[expect(clippy::cast_possible_truncation, reason = "fp32 fields round by design")]
    pub(crate) fn float32(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<f32> {
        self.float(v, path).map(|f| f as f32)
    }

    /// An enum by name (names are case-sensitive, as the reference's `string2*` functions are).
    pub(crate) fn enum_name<T: BirEnum>(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<T> {
        match v {
            J::Str(s) => match T::from_name(s) {
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
                    format!("expected a {} name (string), found {}", T::WHAT, other.describe()),
                );
                None
            }
        }
    }

    /// `MemoryType`: a name or its bit value (re-facts §3).
    fn mem_type(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<MemoryType> {
        if let J::Num(n) = v {
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
        v: &'v J<'v>,
        path: &Path<'_>,
        mut each: impl FnMut(&mut Self, &'v J<'v>, &Path<'_>) -> Option<T>,
    ) -> Option<Vec<T>> {
        let items = self.arr(v, path)?;
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            match each(self, item, &path.index(i)) {
                Some(t) => out.push(t),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    /// A `[step, num]` pair, as a 2-element array or a `{step, num}` object.
    pub(crate) fn pair(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<ApPair> {
        match v {
            J::Arr(items) if items.len() == 2 => {
                let step = self.int(&items[0], &path.index(0));
                let num = self.int(&items[1], &path.index(1));
                Some(ApPair::new(step?, num?))
            }
            J::Arr(items) => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected a [step, num] pair, found an array of {} elements", items.len()),
                );
                None
            }
            J::Obj(map) => {
                let o = Obj { map, path: *path };
                let step = o.req(self, "step", Cx::int);
                let num = o.req(self, "num", Cx::int);
                Some(ApPair::new(step?, num?))
            }
            other => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected a [step, num] pair, found {}", other.describe()),
                );
                None
            }
        }
    }

    pub(crate) fn pairs(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<ApPairs> {
        self.list(v, path, Cx::pair).map(ApPairs::from_vec)
    }

    // ----- structure -----

    fn program(&mut self, v: &J<'_>) -> Option<Program> {
        let top = self.obj(v, &Path::Root)?;
        let arch = top.opt(self, "arch", Cx::enum_name::<Arch>).unwrap_or(Arch::Gen3);
        let version = top.opt(self, "version", Cx::uint).unwrap_or(2);
        let attributes = top.get("attributes").map_or(Value::Null, |a| a.to_value(&mut self.gave_up));
        let functions =
            top.req(self, "functions", |cx, v, path| cx.list(v, path, |cx, f, path| cx.function(f, path)));
        let functions = functions?;
        if functions.is_empty() {
            self.err(ErrorKind::Structure, &"functions", "a program needs at least one function");
        }
        Some(Program { arch, version, attributes, functions })
    }

    fn function(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<Function> {
        if let J::Done(i) = v {
            return self.done.get_mut(*i).and_then(Option::take);
        }
        let o = self.obj(v, path)?;
        let name = o.req(self, "name", Cx::string).unwrap_or_default();
        let (parts, seg) = self.with_context(Seg::Function(name), |cx| {
            let o = o.rooted();
            cx.start_function(&o);
            let attributes = o.get("attributes").map_or(Value::Null, |a| a.to_value(&mut cx.gave_up));
            let (allocations, locations) = cx.memory(&o);
            let body = o.req(cx, "blocks", |cx, v, path| cx.nodes(v, path)).unwrap_or_default();
            cx.check_lazies(o.map);
            (attributes, allocations, locations, body)
        });
        let (attributes, allocations, locations, body) = parts;
        let name = seg.map(Seg::into_name).unwrap_or_default();
        Some(Function { name, attributes, allocations, locations, body })
    }

    /// Forgets the previous function's names.
    fn start_function(&mut self, o: &Obj<'_, '_>) {
        self.locs.clear();
        self.allocs.clear();
        self.loc_owner.clear();
        self.broken_locs.clear();
        self.no_memory = !matches!(o.get("allocations"), Some(J::Arr(_)));
    }

    /// A function's allocations and their locations (`o` rooted at the function).
    fn memory(&mut self, o: &Obj<'_, '_>) -> (Vec<Allocation>, Vec<MemoryLocation>) {
        let mut allocations = Vec::new();
        let mut locations = Vec::new();
        if let Some(items) = o.req(self, "allocations", Cx::arr) {
            let list = Path::Key(&Path::Root, "allocations");
            for (i, a) in items.iter().enumerate() {
                self.allocation(a, &list.index(i), &mut allocations, &mut locations);
            }
        }
        (allocations, locations)
    }

    fn allocation(
        &mut self,
        v: &J<'_>,
        path: &Path<'_>,
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
        self.with_context(Seg::Allocation(name.clone()), |cx| {
            let o = o.rooted();
            let kind = o.opt(cx, "kind", Cx::enum_name::<TensorKind>).unwrap_or(TensorKind::Internal);
            let dtype = o.req(cx, "dtype", Cx::enum_name::<Dtype>).unwrap_or(Dtype::Float32);
            let tensor_shape =
                o.opt(cx, "tensor_shape", |cx, v, p| cx.list(v, p, Cx::uint)).unwrap_or_default();
            let partition_dim = o.opt(cx, "partition_dim", Cx::uint).unwrap_or(0);
            let addr_space = o.opt(cx, "addr_space", Cx::string);
            let mut loc_ids = Vec::new();
            if let Some(items) = o.req(cx, "memorylocations", Cx::arr) {
                let list = Path::Key(&Path::Root, "memorylocations");
                for (i, l) in items.iter().enumerate() {
                    let path = list.index(i);
                    if let Some(loc) = cx.location(l, &path, alloc_id) {
                        let id = LocId(locations.len() as u32);
                        if cx.locs.contains_key(&loc.name) {
                            cx.err(
                                ErrorKind::DuplicateName,
                                &Path::Key(&path, "name"),
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

    fn location(&mut self, v: &J<'_>, path: &Path<'_>, alloc: AllocId) -> Option<MemoryLocation> {
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
        let (Some(name), Some(mem_type), Some((partitions, bytes_per_partition))) = (name, mem_type, dims)
        else {
            if let Some(n) = o.get("name").and_then(J::as_str) {
                self.broken_locs.insert(n.to_owned());
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

    fn nodes(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<Vec<Node>> {
        if let J::Lazy(lazy) = v {
            return self.lazy_nodes(lazy, path);
        }
        let items = self.arr(v, path)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            if let Some(n) = self.node(item, &path.index(i), i) {
                out.push(n);
            }
        }
        Some(out)
    }

    fn node(&mut self, v: &J<'_>, path: &Path<'_>, index: usize) -> Option<Node> {
        let o = self.obj(v, path)?;
        let node = self.node_of(&o, path, index);
        self.check_lazies(o.map);
        node
    }

    /// Streams a node list kept as text: each entry is parsed, decoded and dropped in turn.
    fn lazy_nodes(&mut self, lazy: &Lazy<'_>, path: &Path<'_>) -> Option<Vec<Node>> {
        lazy.used.set(true);
        if self.gave_up {
            return None;
        }
        let mut out = Vec::new();
        let mut de = serde_json::Deserializer::from_str(lazy.text);
        let seed = JSeed { depth: lazy.depth + 1, mode: Mode::Node };
        let visitor = NodesVisitor { cx: self, path, seed, out: &mut out };
        if Deserializer::deserialize_seq(&mut de, visitor).and_then(|()| de.end()).is_err() {
            self.gave_up = true;
            return None;
        }
        // The list's length was not known up front: drop the growth slack the IR would keep.
        out.shrink_to_fit();
        Some(out)
    }

    /// Parses the lazy parts of an object that the reader did not read (a loop's
    /// `instructions`, a repeated key), so that the fast path accepts no text that the slow
    /// path would reject.
    fn check_lazies(&mut self, map: &Entries<'_>) {
        for (_, v) in map {
            if let J::Lazy(lazy) = v
                && !lazy.used.get()
                && lazy.parse().is_err()
            {
                self.gave_up = true;
            }
        }
    }

    fn node_of(&mut self, o: &Obj<'_, '_>, path: &Path<'_>, index: usize) -> Option<Node> {
        let opcode = o.get("opcode").and_then(J::as_str);
        if opcode == Some("Loop") {
            return self.loop_node(o, index).map(Node::Loop);
        }
        if o.get("instructions").is_some() && opcode.is_none() {
            let name = o.opt(self, "name", Cx::string).unwrap_or_default();
            let (body, seg) = self.with_context(Seg::Block(name), |cx| {
                // The block keeps its own path: the context says which block, the path says where.
                o.req(cx, "instructions", |cx, v, p| cx.nodes(v, p)).unwrap_or_default()
            });
            let name = seg.map(Seg::into_name).unwrap_or_default();
            return Some(Node::Block(Block { name, body }));
        }
        if o.get("opcode").is_some() {
            return self.instruction(o, index).map(Node::Inst);
        }
        self.err(
            ErrorKind::Structure,
            path,
            "expected a block (with `instructions`), a loop (`opcode: \"Loop\"`) or an instruction (with `opcode`)",
        );
        None
    }

    fn loop_node(&mut self, o: &Obj<'_, '_>, index: usize) -> Option<Loop> {
        let name = o.opt(self, "name", Cx::string).unwrap_or_default();
        let (parts, seg) = self.with_context(Seg::Loop(index, name), |cx| {
            let o = o.rooted();
            let axis_path = o.field("LoopAxis");
            let axis = o.req_value(cx, "LoopAxis").and_then(|v| cx.obj(v, &axis_path));
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
            (var, lb, ub, stride, body)
        });
        let (var, lb, ub, stride, body) = parts;
        let name = seg.map(Seg::into_name).unwrap_or_default();
        Some(Loop { name, var, lb: lb?, ub: ub?, stride: stride?, body })
    }

    pub(crate) fn instruction(&mut self, o: &Obj<'_, '_>, index: usize) -> Option<Instruction> {
        let name = o.opt(self, "name", Cx::string).unwrap_or_default();
        let opcode_text: Cow<'static, str> = match o.get("opcode").and_then(J::as_str) {
            None => Cow::Borrowed("?"),
            Some(s) => match Opcode::from_name(s) {
                Some(op) if op.name() == s => Cow::Borrowed(op.name()),
                _ => Cow::Owned(s.to_owned()),
            },
        };
        let (parts, seg) = self.with_context(Seg::Instruction(index, name, opcode_text), |cx| {
            let o = o.rooted();
            let opcode = o.req(cx, "opcode", |cx, v, p| match v {
                J::Str(s) => match Opcode::from_name(s) {
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
                    cx.err(
                        ErrorKind::WrongType,
                        p,
                        format!("expected an opcode name, found {}", other.describe()),
                    );
                    None
                }
            });
            let engine = o.opt(cx, "engine", Cx::enum_name::<EngineType>).unwrap_or(EngineType::Unassigned);
            let ins = o.opt(cx, "ins", |cx, v, p| cx.list(v, p, Cx::operand)).unwrap_or_default();
            let outs = o.opt(cx, "outs", |cx, v, p| cx.list(v, p, Cx::operand)).unwrap_or_default();
            let op = opcode.map(|opcode| read_op(opcode, &o, cx));
            (engine, ins, outs, op)
        });
        let (engine, ins, outs, op) = parts;
        let name = seg.map(Seg::into_name).unwrap_or_default();
        Some(Instruction { name, engine, ins, outs, op: op? })
    }

    /// The opcode's own fields of an unmodelled opcode, verbatim.
    pub(crate) fn raw_fields(&mut self, o: &Obj<'_, '_>) -> Map<String, Value> {
        to_map(o.map.iter().filter(|(k, _)| !HEADER_KEYS.contains(&k.as_ref())), &mut self.gave_up)
    }

    // ----- operands -----

    fn operand(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<Operand> {
        let o = self.obj(v, path)?;
        let kind = o.req(self, "kind", Cx::str_ref)?;
        match kind {
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
            _ => Some(Operand::Other(to_map(o.map.iter(), &mut self.gave_up))),
        }
    }

    pub(crate) fn access_pattern(&mut self, o: &Obj<'_, '_>) -> Option<AccessPattern> {
        let loc = o.req(self, "memref", |cx, v, p| {
            let name = cx.str_ref(v, p)?;
            match cx.locs.get(name) {
                Some(id) => Some(*id),
                None if cx.no_memory || cx.broken_locs.contains(name) => None,
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
            let name = cx.str_ref(v, p)?;
            match cx.allocs.get(name) {
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
            self.err(
                ErrorKind::RefMismatch,
                &o.field("memsetref"),
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
    fn dynamic_offset(&mut self, o: &Obj<'_, '_>) -> Option<Option<Box<DynamicOffset>>> {
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
                J::Str(r) => Some(OffsetSource::Register(r.to_string())),
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
    pub(crate) fn alu(&mut self, v: &J<'_>, path: &Path<'_>) -> Option<AluOp> {
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

/// Decodes the entries of a node list as the parser meets them.
struct NodesVisitor<'c, 'p> {
    cx: &'c mut Cx,
    path: &'c Path<'p>,
    seed: JSeed,
    out: &'c mut Vec<Node>,
}

impl<'de> Visitor<'de> for NodesVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of blocks, loops and instructions")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        loop {
            let path = self.path.index(index);
            let entry = NodeSeed { cx: &mut *self.cx, path, index, seed: self.seed };
            let Some(node) = seq.next_element_seed(entry)? else { break };
            if let Some(node) = node {
                self.out.push(node);
            }
            if self.cx.gave_up {
                return Err(de::Error::custom("gave up"));
            }
            index += 1;
        }
        Ok(())
    }
}

/// One entry of a streamed node list, decoded as the parser meets it. A block's
/// `instructions` met before any `opcode` is streamed at once (speculatively: see
/// `Cx::speculative`); everything else is built as a tree and decoded by `Cx::node`.
struct NodeSeed<'c, 'p> {
    cx: &'c mut Cx,
    path: Path<'p>,
    index: usize,
    seed: JSeed,
}

impl NodeSeed<'_, '_> {
    fn decode(self, tree: &J<'_>) -> Option<Node> {
        self.cx.node(tree, &self.path, self.index)
    }
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'_, '_> {
    type Value = Option<Node>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Node>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_, '_> {
    type Value = Option<Node>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a block, loop or instruction")
    }

    // Anything but an object: `node` reports it.
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Option<Node>, E> {
        let tree = JVisitor(self.seed).visit_bool(b)?;
        Ok(self.decode(&tree))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Option<Node>, E> {
        let tree = JVisitor(self.seed).visit_i64(i)?;
        Ok(self.decode(&tree))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Option<Node>, E> {
        let tree = JVisitor(self.seed).visit_u64(u)?;
        Ok(self.decode(&tree))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Option<Node>, E> {
        let tree = JVisitor(self.seed).visit_f64(f)?;
        Ok(self.decode(&tree))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Option<Node>, E> {
        let tree = JVisitor(self.seed).visit_str(s)?;
        Ok(self.decode(&tree))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<Node>, E> {
        let tree = JVisitor(self.seed).visit_unit()?;
        Ok(self.decode(&tree))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<Node>, A::Error> {
        let tree = JVisitor(self.seed).visit_seq(seq)?;
        Ok(self.decode(&tree))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Node>, A::Error> {
        self.seed.check_depth()?;
        let mut entries = Vec::with_capacity(8);
        // (entry index, nodes) of an `instructions` list streamed on the spot.
        let mut streamed = None;
        let mut opcode_seen = false;
        let mut instructions_seen = false;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if key == "instructions" && !opcode_seen && !instructions_seen {
                instructions_seen = true;
                let path = Path::Key(&self.path, "instructions");
                let list = ListSeed { cx: &mut *self.cx, path: &path, depth: self.seed.depth + 1 };
                match map.next_value_seed(list)? {
                    Listed::Nodes(nodes) => {
                        streamed = Some((entries.len(), nodes));
                        entries.push((key, J::Null));
                    }
                    Listed::Tree(tree) => entries.push((key, tree)),
                }
                continue;
            }
            opcode_seen |= key == "opcode";
            instructions_seen |= key == "instructions";
            let value = map.next_value_seed(self.seed.member(&key))?;
            entries.push((key, value));
        }
        let Some((at, body)) = streamed else {
            return Ok(self.decode(&J::Obj(entries)));
        };
        // The guess holds when the streamed list is the node's last `instructions` and no
        // `opcode` name made the node a loop or an instruction (see `Cx::node_of`).
        let o = Obj { map: &entries, path: self.path };
        let last = entries.iter().rposition(|(k, _)| k == "instructions");
        if last != Some(at) || o.get("opcode").and_then(J::as_str).is_some() {
            self.cx.gave_up = true;
            return Err(de::Error::custom("gave up"));
        }
        let name = o.opt(self.cx, "name", Cx::string).unwrap_or_default();
        self.cx.check_lazies(&entries);
        Ok(Some(Node::Block(Block { name, body })))
    }
}

/// A block's `instructions` value, streamed when it is a list.
struct ListSeed<'c, 'p> {
    cx: &'c mut Cx,
    path: &'c Path<'p>,
    /// How many containers enclose the list.
    depth: usize,
}

enum Listed<'a> {
    Nodes(Vec<Node>),
    Tree(J<'a>),
}

impl<'de> DeserializeSeed<'de> for ListSeed<'_, '_> {
    type Value = Listed<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Listed<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_, '_> {
    type Value = Listed<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of nodes")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Listed<'de>, E> {
        JVisitor(self.plain()).visit_bool(b).map(Listed::Tree)
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Listed<'de>, E> {
        JVisitor(self.plain()).visit_i64(i).map(Listed::Tree)
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Listed<'de>, E> {
        JVisitor(self.plain()).visit_u64(u).map(Listed::Tree)
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Listed<'de>, E> {
        JVisitor(self.plain()).visit_f64(f).map(Listed::Tree)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Listed<'de>, E> {
        JVisitor(self.plain()).visit_str(s).map(Listed::Tree)
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Listed<'de>, E> {
        JVisitor(self.plain()).visit_borrowed_str(s).map(Listed::Tree)
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Listed<'de>, E> {
        JVisitor(self.plain()).visit_string(s).map(Listed::Tree)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Listed<'de>, E> {
        JVisitor(self.plain()).visit_unit().map(Listed::Tree)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Listed<'de>, A::Error> {
        JVisitor(self.plain()).visit_map(map).map(Listed::Tree)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Listed<'de>, A::Error> {
        self.plain().check_depth()?;
        let mut out = Vec::new();
        let seed = JSeed { depth: self.depth + 1, mode: Mode::Node };
        self.cx.speculative += 1;
        let r = NodesVisitor { cx: &mut *self.cx, path: self.path, seed, out: &mut out }.visit_seq(seq);
        self.cx.speculative -= 1;
        r?;
        out.shrink_to_fit();
        Ok(Listed::Nodes(out))
    }
}

impl ListSeed<'_, '_> {
    fn plain(&self) -> JSeed {
        JSeed { depth: self.depth, mode: Mode::Plain }
    }
}

/// The non-container visits of a streaming seed: build the [`J`] (with the seed's `plain()`
/// `JSeed`) and wrap it with `$wrap`.
macro_rules! forward_non_objects {
    ($wrap:expr) => {
        fn visit_bool<E: de::Error>(self, b: bool) -> Result<Self::Value, E> {
            JVisitor(self.plain()).visit_bool(b).map($wrap)
        }
        fn visit_i64<E: de::Error>(self, i: i64) -> Result<Self::Value, E> {
            JVisitor(self.plain()).visit_i64(i).map($wrap)
        }
        fn visit_u64<E: de::Error>(self, u: u64) -> Result<Self::Value, E> {
            JVisitor(self.plain()).visit_u64(u).map($wrap)
        }
        fn visit_f64<E: de::Error>(self, f: f64) -> Result<Self::Value, E> {
            JVisitor(self.plain()).visit_f64(f).map($wrap)
        }
        fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
            JVisitor(self.plain()).visit_str(s).map($wrap)
        }
        fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
            JVisitor(self.plain()).visit_borrowed_str(s).map($wrap)
        }
        fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
            JVisitor(self.plain()).visit_string(s).map($wrap)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            JVisitor(self.plain()).visit_unit().map($wrap)
        }
    };
}

/// The document root: its `functions` are decoded as they are parsed where possible.
struct TopSeed<'c> {
    cx: &'c mut Cx,
}

impl TopSeed<'_> {
    fn plain(&self) -> JSeed {
        JSeed { depth: 0, mode: Mode::Top }
    }
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = J<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<J<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_> {
    type Value = J<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a BIR program")
    }

    forward_non_objects!(|j| j);

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<J<'de>, A::Error> {
        JVisitor(self.plain()).visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<J<'de>, A::Error> {
        let seed = self.plain();
        seed.check_depth()?;
        let mut entries = Vec::with_capacity(8);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value = if key == "functions" {
                map.next_value_seed(FunctionsSeed { cx: &mut *self.cx })?
            } else {
                map.next_value_seed(seed.member(&key))?
            };
            entries.push((key, value));
        }
        Ok(J::Obj(entries))
    }
}

/// The root's `functions`.
struct FunctionsSeed<'c> {
    cx: &'c mut Cx,
}

impl FunctionsSeed<'_> {
    fn plain(&self) -> JSeed {
        JSeed { depth: 1, mode: Mode::Functions }
    }
}

impl<'de> DeserializeSeed<'de> for FunctionsSeed<'_> {
    type Value = J<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<J<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FunctionsSeed<'_> {
    type Value = J<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of functions")
    }

    forward_non_objects!(|j| j);

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<J<'de>, A::Error> {
        JVisitor(self.plain()).visit_map(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<J<'de>, A::Error> {
        self.plain().check_depth()?;
        let mut items = Vec::new();
        let mut index = 0;
        while let Some(f) = seq.next_element_seed(FunctionSeed { cx: &mut *self.cx, index })? {
            items.push(f);
            index += 1;
        }
        Ok(J::Arr(items))
    }
}

/// One function. When its `blocks` come after its `allocations` (the writer's order), the
/// function is decoded on the spot, speculatively: any diagnostic, a later `allocations` or a
/// repeated `blocks` gives up (see `Cx::speculative`). Otherwise its `blocks` stay text.
struct FunctionSeed<'c> {
    cx: &'c mut Cx,
    index: usize,
}

impl FunctionSeed<'_> {
    fn plain(&self) -> JSeed {
        JSeed { depth: 2, mode: Mode::Plain }
    }
}

impl<'de> DeserializeSeed<'de> for FunctionSeed<'_> {
    type Value = J<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<J<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FunctionSeed<'_> {
    type Value = J<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a function")
    }

    forward_non_objects!(|j| j);

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<J<'de>, A::Error> {
        JVisitor(self.plain()).visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<J<'de>, A::Error> {
        let seed = JSeed { depth: 2, mode: Mode::Function };
        seed.check_depth()?;
        let mut entries = Vec::with_capacity(8);
        let mut done = None;
        let (mut allocations_seen, mut blocks_seen) = (false, false);
        let cx = self.cx;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if key == "blocks" && allocations_seen && !blocks_seen {
                blocks_seen = true;
                cx.speculative += 1;
                let o = Obj { map: &entries, path: Path::Root };
                cx.start_function(&o);
                let memory = cx.memory(&o);
                let path = Path::Key(&Path::Root, "blocks");
                let listed = map.next_value_seed(ListSeed { cx: &mut *cx, path: &path, depth: 3 });
                cx.speculative -= 1;
                match listed? {
                    Listed::Nodes(body) => {
                        done = Some((entries.len(), memory, body));
                        entries.push((key, J::Null));
                    }
                    Listed::Tree(tree) => entries.push((key, tree)),
                }
                if cx.gave_up {
                    return Err(de::Error::custom("gave up"));
                }
                continue;
            }
            if key == "allocations" && done.is_some() {
                cx.gave_up = true;
                return Err(de::Error::custom("gave up"));
            }
            allocations_seen |= key == "allocations";
            blocks_seen |= key == "blocks";
            let value = map.next_value_seed(seed.member(&key))?;
            entries.push((key, value));
        }
        let Some((at, (allocations, locations), body)) = done else { return Ok(J::Obj(entries)) };
        let list = Path::Key(&Path::Root, "functions");
        let o = Obj { map: &entries, path: Path::Index(&list, self.index) };
        if entries.iter().rposition(|(k, _)| k == "blocks") != Some(at) {
            cx.gave_up = true;
            return Err(de::Error::custom("gave up"));
        }
        cx.speculative += 1;
        let name = o.req(cx, "name", Cx::string).unwrap_or_default();
        let attributes = o.get("attributes").map_or(Value::Null, |a| a.to_value(&mut cx.gave_up));
        cx.check_lazies(&entries);
        cx.speculative -= 1;
        if cx.gave_up {
            return Err(de::Error::custom("gave up"));
        }
        cx.done.push(Some(Function { name, attributes, allocations, locations, body }));
        Ok(J::Done(cx.done.len() - 1))
    }
}
