//! BIR JSON text → typed IR, collecting located diagnostics (see the module doc of `json`).
//!
//! The reader drives the lexer (`lex`) itself: the node lists of a program are scanned one
//! entry at a time, each entry tokenised onto a reused tape, decoded into the IR and dropped.
//! Two things in the text can come in an order that makes decoding on the spot impossible to
//! locate correctly — a block's `name` after its `instructions`, a function's `blocks` before
//! its `allocations` — so the first pass decodes such parts *speculatively* (see
//! [`Cx::speculative`]) and the whole text is read again, carefully (node lists checked and
//! kept as spans until their object is complete), whenever a speculative part has anything to
//! report. Text that is not JSON is handed to serde_json, whose error is reported. Each entry of
//! a node list is first offered to the typed fast path (`fast`), which decodes a plain
//! instruction without a tape or gives up and leaves the entry to the general path.

use super::HEADER_KEYS;
use super::fields::read_op;
use super::lex::{Keys, Kind, Lexer, Lists, Member, Stop, Tape, key_text};
use super::view::{Doc, Entries, Items, J, Val};
use crate::alu::AluOp;
use crate::ap::{AccessPattern, ApPair, ApPairs, DynamicOffset, Number, OffsetSource, Operand};
use crate::diag::{Diagnostics, ErrorKind, LoadError};
use crate::dtype::Dtype;
use crate::enum_macro::BirEnum;
use crate::enums::{Arch, EngineType, IndirectDim, MemoryType, TensorKind};
use crate::opcode::Opcode;
use crate::program::*;
use crate::verbatim::{JsonMap, JsonValue};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::{self, Write as _};

mod fast;
mod stream;

pub use stream::{load_streaming, load_streaming_in};

/// Parses BIR JSON text.
pub fn load_str(text: &str) -> Result<Program, LoadError> {
    load_slice(text.as_bytes())
}

/// Parses BIR JSON bytes.
///
/// One pass decodes as it scans; when a speculative part has something to report, a second,
/// careful pass reads the text again. When the text is not JSON (or nests too deep), the error
/// is serde_json's, worded and located exactly as that parser does it.
pub fn load_slice(bytes: &[u8]) -> Result<Program, LoadError> {
    // One UTF-8 check of the whole text; invalid UTF-8 is a syntax error, worded by serde_json.
    let Ok(text) = std::str::from_utf8(bytes) else { return syntax_error(bytes) };
    match read(text) {
        Some(result) => result,
        None => syntax_error(bytes),
    }
}

/// Decodes an already parsed JSON value, through its text (the reader's only input is text):
/// the result is what [`load_str`] gives for `value.to_string()`.
///
/// Two consequences: a value nested 128 containers deep or more (which serde_json never
/// parses, but can be built in code) is refused as a syntax error; and a float is read back
/// from its shortest spelling the way serde_json reads text, which for a rare f64 can differ
/// from the value held in last place (fp32 fields round to the same f32).
pub fn load_value(value: &Value) -> Result<Program, LoadError> {
    let text = value.to_string();
    read(&text).unwrap_or_else(|| {
        Err(LoadError::Syntax {
            line: 1,
            column: 1,
            message: "the value nests deeper than the reader's limit of 127 containers".to_owned(),
        })
    })
}

/// serde_json's error for text the lexer stopped on. Should serde_json accept the text after
/// all (the lexer is meant to be exactly as strict, so this is a bug), the value it parsed is
/// decoded instead.
#[cold]
fn syntax_error(bytes: &[u8]) -> Result<Program, LoadError> {
    match serde_json::from_slice::<Value>(bytes) {
        Err(e) => Err(LoadError::Syntax { line: e.line(), column: e.column(), message: e.to_string() }),
        Ok(value) => load_value(&value),
    }
}

/// Reads the text: the fast pass, then the careful one if the fast one gave up. `None` when
/// the text is not JSON.
fn read(text: &str) -> Option<Result<Program, LoadError>> {
    read_with(text, false)
}

/// [`read`], with the typed fast path for instructions off when `general` (the differential
/// tests' slow twin).
fn read_with(text: &str, general: bool) -> Option<Result<Program, LoadError>> {
    match read_pass(text, false, general) {
        Ok(result) => Some(result),
        Err(Abort::Syntax) => None,
        Err(Abort::GaveUp) => read_pass(text, true, general).ok(),
    }
}

/// [`load_slice`] through the general path only (no typed fast path): the slow twin the fast
/// path is tested against.
#[cfg(test)]
pub(crate) fn load_slice_general(bytes: &[u8]) -> Result<Program, LoadError> {
    let Ok(text) = std::str::from_utf8(bytes) else { return syntax_error(bytes) };
    match read_with(text, true) {
        Some(result) => result,
        None => syntax_error(bytes),
    }
}

/// Why a pass stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Abort {
    /// The text is not JSON.
    Syntax,
    /// A speculative part had something to report: read again, carefully.
    GaveUp,
}

impl From<Stop> for Abort {
    fn from(_: Stop) -> Self {
        Abort::Syntax
    }
}

/// One pass over the text.
fn read_pass(text: &str, careful: bool, general: bool) -> Result<Result<Program, LoadError>, Abort> {
    read_pass_in(&mut Cx { careful, general, ..Cx::default() }, text)
}

/// One pass over the text with the context `cx` (a streamed skeleton's comes with its lists).
fn read_pass_in(cx: &mut Cx, text: &str) -> Result<Result<Program, LoadError>, Abort> {
    let mut lx = Lexer::new(text);
    let mut tape = Tape::default();
    let root = cx.top(&mut lx, &mut tape)?;
    lx.finish()?;
    cx.stop_if_gave_up()?;
    let program = cx.program(J { doc: Doc { text, tape: &tape }, at: root });
    cx.stop_if_gave_up()?;
    Ok(match program {
        Some(p) if cx.diags.is_empty() => Ok(p),
        _ => Err(LoadError::Invalid(std::mem::take(&mut cx.diags))),
    })
}

/// The decoding context: where we are, what names resolve to, and what went wrong so far.
#[derive(Default)]
pub(crate) struct Cx {
    pub(crate) diags: Diagnostics,
    context: Vec<Seg>,
    locs: HashMap<String, LocId>,
    allocs: HashMap<String, AllocId>,
    loc_owner: Vec<AllocId>,
    /// The fast path's last resolved `memref`/`memsetref` names (spans of the text), so that
    /// runs of instructions on the same few tensors skip the hash lookups. Valid until
    /// `locs`/`allocs` are cleared: an entry there never changes once inserted.
    memo: fast::Memo,
    /// Names of locations that were declared but failed to decode: references to them add no
    /// follow-on error (the declaration's error says it all).
    broken_locs: std::collections::HashSet<String>,
    /// The function's allocation list itself is unusable: no reference can be checked.
    no_memory: bool,
    /// A speculative part had something to report (or a reader bug showed): the pass stops,
    /// and the careful pass starts over; nothing decoded since matters.
    gave_up: bool,
    /// How many parts are being decoded before what locates their diagnostics is known: a
    /// function decoded while its text is scanned (the program's own fields come later), a
    /// node list streamed before its block is known to be one (its name and the absence of an
    /// `opcode` come later in the text). Any diagnostic there gives up.
    speculative: u32,
    /// The careful pass: nothing is decoded before its object is complete.
    careful: bool,
    /// The typed fast path for instructions is off (tests compare both).
    general: bool,
    /// Functions decoded while the text was scanned (a [`Kind::Done`] token indexes this).
    done: Vec<Option<Function>>,
    /// Tapes for the entries being scanned, reused (one per nesting level of node lists).
    tapes: Vec<Tape>,
    /// A streamed skeleton's node lists, decoded before (see `stream`); empty otherwise.
    prebuilt: stream::Prebuilt,
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

/// A name as a context repeats it: cut to [`crate::ECHO_CHARS`] characters.
fn echo(name: &str) -> Cow<'_, str> {
    crate::clip(name, crate::ECHO_CHARS)
}

impl fmt::Display for Seg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Seg::Function(n) => write!(f, "function '{}'", echo(n)),
            Seg::Allocation(n) => write!(f, "allocation '{}'", echo(n)),
            Seg::Block(n) => write!(f, "block '{}'", echo(n)),
            Seg::Loop(i, n) => write!(f, "loop #{i} '{}'", echo(n)),
            Seg::Instruction(i, n, op) => write!(f, "instruction #{i} '{}' ({})", echo(n), echo(op)),
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
    pub(crate) map: Entries<'v>,
    pub(crate) path: Path<'p>,
}

impl<'v> Obj<'v, '_> {
    /// The field, treating `null` as absent.
    pub(crate) fn get(&self, key: &str) -> Option<J<'v>> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub(crate) fn field<'s>(&'s self, key: &'s str) -> Path<'s> {
        Path::Key(&self.path, key)
    }

    /// The same object with an empty path (a new context starts there).
    fn rooted(&self) -> Obj<'v, 'static> {
        Obj { map: self.map, path: Path::Root }
    }

    /// A required field's value; reports `missing-field` when absent.
    fn req_value(&self, cx: &mut Cx, key: &str) -> Option<J<'v>> {
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
        conv: impl FnOnce(&mut Cx, J<'v>, &Path<'_>) -> Option<T>,
    ) -> Option<T> {
        let v = self.req_value(cx, key)?;
        conv(cx, v, &self.field(key))
    }

    /// An optional field, converted by `conv` when present.
    pub(crate) fn opt<T>(
        &self,
        cx: &mut Cx,
        key: &str,
        conv: impl FnOnce(&mut Cx, J<'v>, &Path<'_>) -> Option<T>,
    ) -> Option<T> {
        let v = self.get(key)?;
        conv(cx, v, &self.field(key))
    }

    /// An optional field under any of several keys (the first present wins).
    pub(crate) fn opt_any<T>(
        &self,
        cx: &mut Cx,
        keys: &[&str],
        conv: impl FnOnce(&mut Cx, J<'v>, &Path<'_>) -> Option<T>,
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

    pub(crate) fn obj<'v, 'p>(&mut self, v: J<'v>, path: &Path<'p>) -> Option<Obj<'v, 'p>> {
        match v.val() {
            Val::Obj(map) => Some(Obj { map, path: *path }),
            _ => {
                self.err(ErrorKind::WrongType, path, format!("expected an object, found {}", v.describe()));
                None
            }
        }
    }

    pub(crate) fn arr<'v>(&mut self, v: J<'v>, path: &Path<'_>) -> Option<Items<'v>> {
        match v.val() {
            Val::Arr(items) => Some(items),
            // Only node lists are lazy, and they are read by `nodes`; anything else reading
            // one is a reader bug, which the slow path (no lazy parts) sidesteps.
            Val::Lazy { .. } => {
                self.gave_up = true;
                None
            }
            _ => {
                self.err(ErrorKind::WrongType, path, format!("expected an array, found {}", v.describe()));
                None
            }
        }
    }

    /// A string field, borrowed.
    pub(crate) fn str_ref<'v>(&mut self, v: J<'v>, path: &Path<'_>) -> Option<&'v str> {
        match v.val() {
            Val::Str(s) => Some(s),
            _ => {
                self.err(ErrorKind::WrongType, path, format!("expected a string, found {}", v.describe()));
                None
            }
        }
    }

    pub(crate) fn string(&mut self, v: J<'_>, path: &Path<'_>) -> Option<String> {
        match v.val() {
            Val::Str(s) => Some(s.to_string()),
            _ => {
                self.err(ErrorKind::WrongType, path, format!("expected a string, found {}", v.describe()));
                None
            }
        }
    }

    pub(crate) fn boolean(&mut self, v: J<'_>, path: &Path<'_>) -> Option<bool> {
        match v.val() {
            Val::Bool(b) => Some(b),
            // Some dumps write flags as 0/1.
            Val::Num(n) if n.as_u64() == Some(0) => Some(false),
            Val::Num(n) if n.as_u64() == Some(1) => Some(true),
            _ => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected true or false, found {}", v.describe()),
                );
                None
            }
        }
    }

    pub(crate) fn int(&mut self, v: J<'_>, path: &Path<'_>) -> Option<i64> {
        match v.val() {
            Val::Num(n) => match n.as_i64() {
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
            _ => {
                self.err(ErrorKind::WrongType, path, format!("expected an integer, found {}", v.describe()));
                None
            }
        }
    }

    /// A JSON integer in the int32 range.
    pub(crate) fn int32(&mut self, v: J<'_>, path: &Path<'_>) -> Option<i32> {
        let n = self.int(v, path)?;
        match i32::try_from(n) {
            Ok(n) => Some(n),
            Err(_) => {
                self.err(ErrorKind::OutOfRange, path, format!("{n} does not fit a signed 32-bit integer"));
                None
            }
        }
    }

    pub(crate) fn uint(&mut self, v: J<'_>, path: &Path<'_>) -> Option<u64> {
        match v.val() {
            Val::Num(n) if n.is_u64() => n.as_u64(),
            Val::Num(n) if n.is_i64() => {
                self.err(ErrorKind::OutOfRange, path, format!("expected a non-negative integer, found {n}"));
                None
            }
            Val::Num(n) => {
                self.err(ErrorKind::WrongType, path, format!("expected an integer, found {n}"));
                None
            }
            _ => {
                self.err(ErrorKind::WrongType, path, format!("expected an integer, found {}", v.describe()));
                None
            }
        }
    }

    pub(crate) fn uint_max(&mut self, v: J<'_>, path: &Path<'_>, max: u64) -> Option<u64> {
        let n = self.uint(v, path)?;
        if n > max {
            self.err(ErrorKind::OutOfRange, path, format!("{n} is above the maximum {max}"));
            return None;
        }
        Some(n)
    }

    pub(crate) fn number(&mut self, v: J<'_>, path: &Path<'_>) -> Option<Number> {
        match v.val() {
            Val::Num(n) => {
                if let Some(i) = n.as_i64() {
                    Some(Number::Int(i))
                } else if let Some(u) = n.as_u64() {
                    Some(Number::UInt(u))
                } else {
                    n.as_f64().map(Number::Float)
                }
            }
            Val::Str(s) => match special_float(s) {
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
            _ => {
                self.err(ErrorKind::WrongType, path, format!("expected a number, found {}", v.describe()));
                None
            }
        }
    }

    pub(crate) fn float(&mut self, v: J<'_>, path: &Path<'_>) -> Option<f64> {
        self.number(v, path).map(Number::as_f64)
    }

    /// An fp32 field: the JSON value rounded to nearest f32, as the reference's float fields hold.
    #[expect(clippy::cast_possible_truncation, reason = "fp32 fields round by design")]
    pub(crate) fn float32(&mut self, v: J<'_>, path: &Path<'_>) -> Option<f32> {
        self.float(v, path).map(|f| f as f32)
    }

    /// An enum by name (names are case-sensitive, as the reference's `string2*` functions are).
    pub(crate) fn enum_name<T: BirEnum>(&mut self, v: J<'_>, path: &Path<'_>) -> Option<T> {
        match v.val() {
            Val::Str(s) => match T::from_name(s) {
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
            _ => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected a {} name (string), found {}", T::WHAT, v.describe()),
                );
                None
            }
        }
    }

    /// `MemoryType`: a name or its bit value (re-facts §3).
    fn mem_type(&mut self, v: J<'_>, path: &Path<'_>) -> Option<MemoryType> {
        if let Val::Num(n) = v.val() {
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
        v: J<'v>,
        path: &Path<'_>,
        mut each: impl FnMut(&mut Self, J<'v>, &Path<'_>) -> Option<T>,
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
    pub(crate) fn pair(&mut self, v: J<'_>, path: &Path<'_>) -> Option<ApPair> {
        match v.val() {
            Val::Arr(items) if items.len() == 2 => {
                let (Some(a), Some(b)) = (items.get(0), items.get(1)) else { return None };
                let step = self.int(a, &path.index(0));
                let num = self.int(b, &path.index(1));
                Some(ApPair::new(step?, num?))
            }
            Val::Arr(items) => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected a [step, num] pair, found an array of {} elements", items.len()),
                );
                None
            }
            Val::Obj(map) => {
                let o = Obj { map, path: *path };
                let step = o.req(self, "step", Cx::int);
                let num = o.req(self, "num", Cx::int);
                Some(ApPair::new(step?, num?))
            }
            _ => {
                self.err(
                    ErrorKind::WrongType,
                    path,
                    format!("expected a [step, num] pair, found {}", v.describe()),
                );
                None
            }
        }
    }

    /// An AP's levels (as [`Cx::list`] does it, straight into the inline storage).
    pub(crate) fn pairs(&mut self, v: J<'_>, path: &Path<'_>) -> Option<ApPairs> {
        let items = self.arr(v, path)?;
        let mut out = ApPairs::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            match self.pair(item, &path.index(i)) {
                Some(p) => out.push(p),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    // ----- structure -----

    fn program(&mut self, v: J<'_>) -> Option<Program> {
        let top = self.obj(v, &Path::Root)?;
        let arch = top.opt(self, "arch", Cx::enum_name::<Arch>).unwrap_or(Arch::Gen3);
        let version = top.opt(self, "version", Cx::uint).unwrap_or(2);
        let attributes = top.get("attributes").map_or(JsonValue::Null, |a| a.to_value(&mut self.gave_up));
        let functions =
            top.req(self, "functions", |cx, v, path| cx.list(v, path, |cx, f, path| cx.function(f, path)));
        let functions = functions?;
        if functions.is_empty() {
            self.err(ErrorKind::Structure, &"functions", "a program needs at least one function");
        }
        Some(Program { arch, version, attributes, functions })
    }

    fn function(&mut self, v: J<'_>, path: &Path<'_>) -> Option<Function> {
        if let Val::Done(i) = v.val() {
            return self.done.get_mut(i).and_then(Option::take);
        }
        let o = self.obj(v, path)?;
        let name = o.req(self, "name", Cx::string).unwrap_or_default();
        let (parts, seg) = self.with_context(Seg::Function(name), |cx| {
            let o = o.rooted();
            cx.start_function(&o);
            let attributes = o.get("attributes").map_or(JsonValue::Null, |a| a.to_value(&mut cx.gave_up));
            let (allocations, locations) = cx.memory(&o);
            let body = o.req(cx, "blocks", |cx, v, path| cx.nodes(v, path)).unwrap_or_default();
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
        self.memo = fast::Memo::default();
        self.loc_owner.clear();
        self.broken_locs.clear();
        self.no_memory = !o.get("allocations").is_some_and(|a| matches!(a.val(), Val::Arr(_)));
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
        v: J<'_>,
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

    fn location(&mut self, v: J<'_>, path: &Path<'_>, alloc: AllocId) -> Option<MemoryLocation> {
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

    fn nodes(&mut self, v: J<'_>, path: &Path<'_>) -> Option<Vec<Node>> {
        if let Val::Lazy { start, depth } = v.val() {
            let mut lx = Lexer::at(v.doc.text, start, depth);
            return match self.stream(&mut lx, path) {
                Ok(nodes) => Some(nodes),
                // The span was checked when it was scanned: only giving up stops here.
                Err(_) => {
                    self.gave_up = true;
                    None
                }
            };
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

    fn node(&mut self, v: J<'_>, path: &Path<'_>, index: usize) -> Option<Node> {
        let o = self.obj(v, path)?;
        self.node_of(&o, path, index)
    }

    fn node_of(&mut self, o: &Obj<'_, '_>, path: &Path<'_>, index: usize) -> Option<Node> {
        let opcode = o.get("opcode").and_then(J::as_str);
        if matches!(opcode, Some("Loop" | "DoWhile" | "DynamicForLoop")) {
            return self.loop_node(o, index).map(Node::Loop);
        }
        if opcode.is_none() && o.get("instructions").is_some() {
            let name = o.opt(self, "name", Cx::string).unwrap_or_default();
            let (body, seg) = self.with_context(Seg::Block(name), |cx| {
                // The block keeps its own path: the context says which block, the path says where.
                o.req(cx, "instructions", |cx, v, p| cx.nodes(v, p)).unwrap_or_default()
            });
            let name = seg.map(Seg::into_name).unwrap_or_default();
            return Some(Node::Block(Block { name, body }));
        }
        if opcode.is_some() || o.get("opcode").is_some() {
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
        let opcode = o.get("opcode").and_then(J::as_str).unwrap_or("Loop");
        let (parts, seg) = self.with_context(Seg::Loop(index, name), |cx| {
            let o = o.rooted();
            let engine = o.opt(cx, "engine", Cx::enum_name::<EngineType>).unwrap_or(EngineType::Unassigned);
            let axis_path = o.field("LoopAxis");
            let axis = if opcode == "DoWhile" {
                None
            } else {
                o.req_value(cx, "LoopAxis").and_then(|v| cx.obj(v, &axis_path))
            };
            let var = axis.as_ref().and_then(|a| a.opt(cx, "name", Cx::string)).unwrap_or_default();
            let kind = match opcode {
                "DoWhile" => cx.register_operand(&o, "ins").map(|cond| LoopKind::DoWhile { cond }),
                "DynamicForLoop" => {
                    let lb = axis.as_ref().and_then(|a| a.req(cx, "lb", Cx::affine));
                    let stride = axis.as_ref().map(|a| {
                        a.opt(cx, "stride", Cx::affine).unwrap_or(Affine { constant: 1, terms: Vec::new() })
                    });
                    let ub_const = o.opt(cx, "ub_const", Cx::int).unwrap_or(0);
                    let ub_coef = o.opt(cx, "ub_coef", Cx::int).unwrap_or(1);
                    let ub_reg = cx.register_operand(&o, "ins");
                    let induction = match o.get("outs").map(J::val) {
                        Some(Val::Arr(items)) if items.len() > 0 => Some(cx.register_operand(&o, "outs")),
                        _ => None,
                    };
                    match (lb, stride, ub_reg, induction) {
                        (Some(lb), Some(stride), Some(ub_reg), None) => Some((lb, stride, ub_reg, None)),
                        (Some(lb), Some(stride), Some(ub_reg), Some(Some(r))) => {
                            Some((lb, stride, ub_reg, Some(r)))
                        }
                        _ => None,
                    }
                    .map(|(lb, stride, ub_reg, induction)| {
                        LoopKind::Dynamic(Box::new(DynamicBounds {
                            lb,
                            stride,
                            ub_const,
                            ub_coef,
                            ub_reg,
                            induction,
                        }))
                    })
                }
                _ => Some(LoopKind::Counted),
            };
            let (lb, ub, stride) = match (&kind, axis) {
                (Some(LoopKind::Counted), Some(a)) => (
                    a.req(cx, "lb", Cx::int),
                    a.req(cx, "ub", Cx::int),
                    a.opt(cx, "stride", Cx::int).or(Some(1)),
                ),
                (Some(LoopKind::DoWhile { .. } | LoopKind::Dynamic(_)), _) => (Some(0), Some(0), Some(1)),
                _ => (None, None, None),
            };
            let body = o.req(cx, "blocks", |cx, v, p| cx.nodes(v, p)).unwrap_or_default();
            (var, lb, ub, stride, engine, kind, body)
        });
        let (var, lb, ub, stride, engine, kind, body) = parts;
        let name = seg.map(Seg::into_name).unwrap_or_default();
        Some(Loop { name, var, lb: lb?, ub: ub?, stride: stride?, engine, kind: kind?, body })
    }

    /// The one `register_access` operand a DoWhile or DynamicForLoop node carries in `key`.
    fn register_operand(&mut self, o: &Obj<'_, '_>, key: &str) -> Option<RegRef> {
        let list = o.req(self, key, |cx, v, p| cx.list(v, p, Cx::operand))?;
        match list.as_slice() {
            [Operand::Register { dtype, regref }] => Some(RegRef { name: regref.clone(), dtype: *dtype }),
            _ => {
                let path = o.field(key);
                self.err(
                    ErrorKind::OperandKind,
                    &path,
                    format!(
                        "expected exactly one register_access operand, found {} operand(s) of other kinds",
                        list.len()
                    ),
                );
                None
            }
        }
    }

    /// An integer, or `{"const": c, "terms": [{"var": name, "coef": k}, ...]}`.
    fn affine(&mut self, v: J<'_>, path: &Path<'_>) -> Option<Affine> {
        if matches!(v.val(), Val::Obj(_) | Val::Done(_)) {
            let o = self.obj(v, path)?;
            let constant = o.opt(self, "const", Cx::int).unwrap_or(0);
            let terms = o
                .opt(self, "terms", |cx, v, p| {
                    cx.list(v, p, |cx, v, p| {
                        let t = cx.obj(v, p)?;
                        let var = t.req(cx, "var", Cx::string);
                        let coef = t.opt(cx, "coef", Cx::int).unwrap_or(1);
                        Some((var?, coef))
                    })
                })
                .unwrap_or_default();
            return Some(Affine { constant, terms });
        }
        self.int(v, path).map(|constant| Affine { constant, terms: Vec::new() })
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
            let opcode = o.req(cx, "opcode", |cx, v, p| match v.val() {
                Val::Str(s) => match Opcode::from_name(s) {
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
                _ => {
                    cx.err(
                        ErrorKind::WrongType,
                        p,
                        format!("expected an opcode name, found {}", v.describe()),
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
    pub(crate) fn raw_fields(&mut self, o: &Obj<'_, '_>) -> JsonMap {
        o.map.to_map(|k| !HEADER_KEYS.contains(&k), &mut self.gave_up)
    }

    // ----- operands -----

    fn operand(&mut self, v: J<'_>, path: &Path<'_>) -> Option<Operand> {
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
            "register_ap" => self.register_ap(&o).map(Operand::Ap),
            _ => Some(Operand::Other(o.map.to_map(|_| true, &mut self.gave_up))),
        }
    }

    /// A `register_ap` operand (KLR `RegisterAccessPattern`: `ap`, `dtype`, `memsetref`,
    /// `reg_ap_offset`, `regref`): an AP over the allocation's first memory location (or over
    /// `memref`, when given) whose start registers hold ([`OffsetSource::RegisterBase`]).
    fn register_ap(&mut self, o: &Obj<'_, '_>) -> Option<AccessPattern> {
        let loc = match o.get("memref") {
            Some(_) => o.req(self, "memref", |cx, v, p| {
                let name = cx.str_ref(v, p)?;
                let id = cx.locs.get(name).copied();
                if id.is_none() && !cx.no_memory {
                    cx.err(
                        ErrorKind::UnresolvedRef,
                        p,
                        format!("memref '{name}' names no memory location of this function"),
                    );
                }
                id
            }),
            None => o.req(self, "memsetref", |cx, v, p| {
                let name = cx.str_ref(v, p)?;
                let first = cx.allocs.get(name).and_then(|a| cx.loc_owner.iter().position(|o| o == a));
                if first.is_none() && !cx.no_memory {
                    cx.err(
                        ErrorKind::UnresolvedRef,
                        p,
                        format!("memsetref '{name}' names no allocation with a memory location"),
                    );
                }
                first.map(|k| LocId(k as u32))
            }),
        };
        let dtype = o.req(self, "dtype", Cx::enum_name::<Dtype>);
        let pairs = o.req(self, "ap", Cx::pairs);
        let regref = o.req(self, "regref", Cx::string);
        let offset_reg = o.opt(self, "reg_ap_offset", Cx::string);
        let source = OffsetSource::RegisterBase { regref: regref?, offset_reg };
        let dynamic =
            Some(Box::new(DynamicOffset { indirect_dim: IndirectDim::W, max_index: i64::MAX, source }));
        Some(AccessPattern { loc: loc?, dtype: dtype?, offset: 0, pairs: pairs?, dynamic })
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
            o.opt(self, "scalar_offset", |cx, v, p| match v.val() {
                Val::Str(r) => Some(OffsetSource::Register(r.to_string())),
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
    pub(crate) fn alu(&mut self, v: J<'_>, path: &Path<'_>) -> Option<AluOp> {
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

/// The text of key token `k` is `name`.
fn key_is(text: &str, tape: &Tape, k: usize, name: &str) -> bool {
    tape.toks.get(k).is_some_and(|t| key_text(text, tape, t) == name)
}

/// How the member under key token `k` of an object read with `lists` is read.
fn member(text: &str, tape: &Tape, k: usize, lists: Lists) -> Member {
    tape.toks.get(k).map_or(Member::Value(Lists::None), |t| lists.member(key_text(text, tape, t)))
}

/// Scans a member's value the way `member` says.
fn scan_member(lx: &mut Lexer<'_>, tape: &mut Tape, member: Member) -> Result<usize, Stop> {
    match member {
        Member::Lazy if lx.next_byte() == Some(b'[') => lx.lazy(tape),
        Member::Lazy => lx.value(tape, Lists::None),
        Member::Value(lists) => lx.value(tape, lists),
    }
}

/// The position of the last entry under `key`.
fn last_entry(entries: Entries<'_>, key: &str) -> Option<usize> {
    entries.iter().enumerate().filter(|(_, (k, _))| *k == key).map(|(i, _)| i).last()
}

/// The scanning side: the reader drives the lexer through the program's structure.
impl Cx {
    fn stop_if_gave_up(&self) -> Result<(), Abort> {
        if self.gave_up { Err(Abort::GaveUp) } else { Ok(()) }
    }

    fn take_tape(&mut self) -> Tape {
        self.tapes.pop().unwrap_or_default()
    }

    fn give_tape(&mut self, mut tape: Tape) {
        tape.clear();
        self.tapes.push(tape);
    }

    /// The document root, onto `tape`. In the fast pass, the functions of its `functions` are
    /// decoded as they are scanned (speculatively).
    fn top(&mut self, lx: &mut Lexer<'_>, tape: &mut Tape) -> Result<usize, Abort> {
        if self.careful || lx.next_byte() != Some(b'{') {
            return Ok(lx.value(tape, Lists::Top)?);
        }
        let t = tape.push(Kind::Obj, lx.pos, 0);
        lx.open()?;
        let mut keys = Keys::new();
        if !lx.empty(b'}') {
            loop {
                let k = lx.key(tape)?;
                keys.push(tape.key_ref(lx.text, k));
                if key_is(lx.text, tape, k, "functions") && lx.next_byte() == Some(b'[') {
                    self.functions(lx, tape)?;
                } else {
                    scan_member(lx, tape, member(lx.text, tape, k, Lists::Top))?;
                }
                if !lx.more(b'}')? {
                    break;
                }
            }
        }
        lx.close();
        Ok(lx.seal_object(tape, t, &keys))
    }

    /// The root's `functions` array: each function object is decoded on the spot and left on
    /// the tape as a [`Kind::Done`] token.
    fn functions(&mut self, lx: &mut Lexer<'_>, tape: &mut Tape) -> Result<usize, Abort> {
        let t = tape.push(Kind::Arr, lx.pos, 0);
        lx.open()?;
        let mut len = 0;
        if !lx.empty(b']') {
            loop {
                if lx.next_byte() == Some(b'{') {
                    let start = lx.pos;
                    let f = self.function_entry(lx, len)?;
                    self.done.push(f);
                    let d = tape.push(Kind::Done, start, lx.pos);
                    if let Some(tok) = tape.toks.get_mut(d) {
                        tok.aux = self.done.len() - 1;
                    }
                } else {
                    lx.value(tape, Lists::Function)?;
                }
                len += 1;
                if !lx.more(b']')? {
                    break;
                }
            }
        }
        lx.close();
        Ok(lx.seal(tape, t, len))
    }

    /// One function, decoded speculatively while it is scanned (the program's own fields may
    /// come later in the text, and their diagnostics come first).
    fn function_entry(&mut self, lx: &mut Lexer<'_>, index: usize) -> Result<Option<Function>, Abort> {
        let mut tape = self.take_tape();
        self.speculative += 1;
        let r = self.function_scan(lx, &mut tape, index);
        self.speculative -= 1;
        self.give_tape(tape);
        let f = r?;
        self.stop_if_gave_up()?;
        Ok(f)
    }

    /// When its `blocks` come after its `allocations` (the writer's order), the blocks are
    /// streamed as they are scanned; a later `allocations` or `blocks` gives up. Otherwise the
    /// blocks are a lazy span, streamed once the function's object is complete.
    fn function_scan(
        &mut self,
        lx: &mut Lexer<'_>,
        tape: &mut Tape,
        index: usize,
    ) -> Result<Option<Function>, Abort> {
        let t = tape.push(Kind::Obj, lx.pos, 0);
        lx.open()?;
        let mut keys = Keys::new();
        let mut done = None;
        let (mut allocations_seen, mut blocks_seen) = (false, false);
        if !lx.empty(b'}') {
            loop {
                let k = lx.key(tape)?;
                keys.push(tape.key_ref(lx.text, k));
                let allocations = key_is(lx.text, tape, k, "allocations");
                let blocks = key_is(lx.text, tape, k, "blocks");
                if blocks && allocations_seen && !blocks_seen && lx.next_byte() == Some(b'[') {
                    blocks_seen = true;
                    let memory = {
                        let map = Entries {
                            doc: Doc { text: lx.text, tape },
                            first: t + 1,
                            end: tape.toks.len(),
                            keys: None,
                        };
                        let o = Obj { map, path: Path::Root };
                        self.start_function(&o);
                        self.memory(&o)
                    };
                    self.stop_if_gave_up()?;
                    let body = self.stream(lx, &Path::Key(&Path::Root, "blocks"))?;
                    done = Some((keys.len() - 1, memory, body));
                    tape.push(Kind::Null, lx.pos, lx.pos);
                } else {
                    if allocations && done.is_some() {
                        self.gave_up = true;
                        return Err(Abort::GaveUp);
                    }
                    allocations_seen |= allocations;
                    blocks_seen |= blocks;
                    scan_member(lx, tape, member(lx.text, tape, k, Lists::Function))?;
                }
                if !lx.more(b'}')? {
                    break;
                }
            }
        }
        lx.close();
        let t = lx.seal_object(tape, t, &keys);
        let doc = Doc { text: lx.text, tape };
        let list = Path::Key(&Path::Root, "functions");
        let path = Path::Index(&list, index);
        let Some((at, (allocations, locations), body)) = done else {
            return Ok(self.function(J { doc, at: t }, &path));
        };
        let o = Obj { map: Entries { doc, first: t + 1, end: tape.toks.len(), keys: None }, path };
        if last_entry(o.map, "blocks") != Some(at) {
            self.gave_up = true;
            return Err(Abort::GaveUp);
        }
        let name = o.req(self, "name", Cx::string).unwrap_or_default();
        let attributes = o.get("attributes").map_or(JsonValue::Null, |a| a.to_value(&mut self.gave_up));
        Ok(Some(Function { name, attributes, allocations, locations, body }))
    }

    /// A node list at the lexer (its `[` next): each entry is scanned, decoded and dropped in
    /// turn.
    fn stream(&mut self, lx: &mut Lexer<'_>, path: &Path<'_>) -> Result<Vec<Node>, Abort> {
        if lx.next_byte() != Some(b'[') {
            return Err(Abort::Syntax);
        }
        if let Some(nodes) = self.prebuilt.take(lx.pos) {
            // The streamed list, emptied in the skeleton.
            lx.open()?;
            if !lx.empty(b']') {
                self.gave_up = true;
                return Err(Abort::GaveUp);
            }
            lx.close();
            return Ok(nodes);
        }
        lx.open()?;
        let mut out = Vec::new();
        if !lx.empty(b']') {
            let mut index = 0;
            loop {
                if let Some(n) = self.entry(lx, &path.index(index), index)? {
                    out.push(n);
                }
                self.stop_if_gave_up()?;
                index += 1;
                if !lx.more(b']')? {
                    break;
                }
            }
        }
        lx.close();
        // The list's length was not known up front: drop the growth slack the IR would keep.
        out.shrink_to_fit();
        Ok(out)
    }

    /// One entry of a node list, on a tape of its own.
    fn entry(&mut self, lx: &mut Lexer<'_>, path: &Path<'_>, index: usize) -> Result<Option<Node>, Abort> {
        // Most entries are plain instructions: the typed fast path reads them, or gives up and
        // the general path reads the same text from its start.
        if !self.general && lx.next_byte() == Some(b'{') {
            let mut probe = lx.clone();
            if let Some(inst) = self.fast_instruction(&mut probe) {
                *lx = probe;
                return Ok(Some(Node::Inst(inst)));
            }
        }
        let mut tape = self.take_tape();
        let r = self.entry_scan(lx, &mut tape, path, index);
        self.give_tape(tape);
        r
    }

    /// In the fast pass, a block's `instructions` met before any `opcode` are streamed at once
    /// (speculatively: the block's name may come later); a later string `opcode` or
    /// `instructions` gives up. Everything else is scanned whole (nested node lists as lazy
    /// spans) and decoded by [`Cx::node`].
    fn entry_scan(
        &mut self,
        lx: &mut Lexer<'_>,
        tape: &mut Tape,
        path: &Path<'_>,
        index: usize,
    ) -> Result<Option<Node>, Abort> {
        if self.careful || lx.next_byte() != Some(b'{') {
            let at = lx.value(tape, Lists::Node)?;
            return Ok(self.node(J { doc: Doc { text: lx.text, tape }, at }, path, index));
        }
        let t = tape.push(Kind::Obj, lx.pos, 0);
        lx.open()?;
        let mut keys = Keys::new();
        let mut streamed = None;
        let (mut opcode_seen, mut instructions_seen) = (false, false);
        if !lx.empty(b'}') {
            loop {
                let k = lx.key(tape)?;
                keys.push(tape.key_ref(lx.text, k));
                let instructions = key_is(lx.text, tape, k, "instructions");
                if instructions && !opcode_seen && !instructions_seen && lx.next_byte() == Some(b'[') {
                    instructions_seen = true;
                    self.speculative += 1;
                    let r = self.stream(lx, &Path::Key(path, "instructions"));
                    self.speculative -= 1;
                    streamed = Some((keys.len() - 1, r?));
                    tape.push(Kind::Null, lx.pos, lx.pos);
                } else {
                    opcode_seen |= key_is(lx.text, tape, k, "opcode");
                    instructions_seen |= instructions;
                    scan_member(lx, tape, member(lx.text, tape, k, Lists::Node))?;
                }
                if !lx.more(b'}')? {
                    break;
                }
            }
        }
        lx.close();
        let t = lx.seal_object(tape, t, &keys);
        let doc = Doc { text: lx.text, tape };
        let Some((at, body)) = streamed else { return Ok(self.node(J { doc, at: t }, path, index)) };
        // The guess holds when the streamed list is the node's last `instructions` and no
        // `opcode` name made the node a loop or an instruction (see `Cx::node_of`).
        let o = Obj { map: Entries { doc, first: t + 1, end: tape.toks.len(), keys: None }, path: *path };
        if last_entry(o.map, "instructions") != Some(at) || o.get("opcode").and_then(J::as_str).is_some() {
            self.gave_up = true;
            return Err(Abort::GaveUp);
        }
        let name = o.opt(self, "name", Cx::string).unwrap_or_default();
        Ok(Some(Node::Block(Block { name, body })))
    }
}
