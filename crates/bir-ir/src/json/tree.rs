//! The reader's lean JSON tree: strings and keys borrowed from the input text, objects as
//! key/value lists in text order, numbers as `serde_json::Number` (so values, and the way
//! diagnostics print them, are exactly what a `serde_json::Value` would hold). It implements the
//! conventions of docs/bir-json.md "Conventions" only as far as JSON itself goes; the BIR
//! meaning is read.rs's job.
//!
//! Duplicate keys are kept in the list; [`get`] returns the last one, as `serde_json::Value`
//! (whose maps overwrite) does, and [`J::to_value`] rebuilds exactly that map.
//!
//! The long lists of a program (a function's `blocks`, a block's `instructions`, a loop's
//! `blocks`) are not built as trees: the parser keeps their text ([`Lazy`], validated by
//! serde_json's scan) and the reader streams them one node at a time, so at any moment only one
//! node's tree exists. Nesting is counted from the document root across those re-parses; a
//! value nested [`DEPTH_LIMIT`] deep or more makes the fast path give up (the caller then
//! parses a `serde_json::Value`, whose own limit of 128 words the error as before).

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

/// Nesting (containers counted from the root, the value's own included) at which the fast
/// path gives up; below serde_json's 128 so nothing it rejects is ever accepted here.
pub(crate) const DEPTH_LIMIT: usize = 100;

/// Why the fast path gave up (never shown: the slow path reports the real problem).
const GIVE_UP: &str = "birsim fast path: nesting too deep or text not clean";

/// An array kept as text, to be streamed by the reader.
#[derive(Debug)]
pub(crate) struct Lazy<'a> {
    /// The array's JSON text, `[` to `]`.
    pub(crate) text: &'a str,
    /// How many containers enclose the array (its own level is `depth + 1`).
    pub(crate) depth: usize,
    /// Set once the reader has parsed the text (streamed, converted or validated).
    pub(crate) used: Cell<bool>,
}

impl<'a> Lazy<'a> {
    /// Parses the whole text as a plain tree (for the rare uses that need it as a value).
    pub(crate) fn parse(&self) -> Result<J<'a>, serde_json::Error> {
        self.used.set(true);
        let mut de = serde_json::Deserializer::from_str(self.text);
        let tree = JSeed { depth: self.depth, mode: Mode::Plain }.deserialize(&mut de)?;
        de.end()?;
        Ok(tree)
    }
}

/// One JSON value of the input.
#[derive(Debug)]
pub(crate) enum J<'a> {
    Null,
    Bool(bool),
    Num(Number),
    Str(Cow<'a, str>),
    Arr(Vec<J<'a>>),
    Obj(Vec<(Cow<'a, str>, J<'a>)>),
    /// An array of nodes, not parsed yet.
    Lazy(Lazy<'a>),
    /// A function the reader decoded while the text was parsed (its index in the reader's list).
    Done(usize),
}

/// The entries of an object.
pub(crate) type Entries<'a> = [(Cow<'a, str>, J<'a>)];

/// The value under `key` (the last one when the key repeats).
pub(crate) fn get<'v>(entries: &'v Entries<'v>, key: &str) -> Option<&'v J<'v>> {
    entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

impl<'a> J<'a> {
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, J::Null)
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            J::Str(s) => Some(s),
            _ => None,
        }
    }

    /// "a string", "an array", ...: for wrong-type messages.
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            J::Null => "null",
            J::Bool(_) => "a boolean",
            J::Num(_) => "a number",
            J::Str(_) => "a string",
            J::Arr(_) | J::Lazy(_) => "an array",
            J::Obj(_) | J::Done(_) => "an object",
        }
    }

    /// The same value as a `serde_json::Value` (for the fields the IR keeps verbatim). Sets
    /// `bad` when a lazy part does not parse.
    pub(crate) fn to_value(&self, bad: &mut bool) -> Value {
        match self {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(*b),
            J::Num(n) => Value::Number(n.clone()),
            J::Str(s) => Value::String(s.to_string()),
            J::Arr(items) => Value::Array(items.iter().map(|j| j.to_value(bad)).collect()),
            J::Obj(entries) => Value::Object(to_map(entries.iter(), bad)),
            // Only the elements of `functions` are ever decoded early, and nothing keeps those
            // as values; should that change, the slow path has no such parts.
            J::Done(_) => {
                *bad = true;
                Value::Null
            }
            J::Lazy(lazy) => match lazy.parse() {
                Ok(tree) => tree.to_value(bad),
                Err(_) => {
                    *bad = true;
                    Value::Null
                }
            },
        }
    }

    /// A tree borrowing from an already parsed `Value`.
    pub(crate) fn from_value(v: &'a Value) -> Self {
        match v {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Number(n) => J::Num(n.clone()),
            Value::String(s) => J::Str(Cow::Borrowed(s)),
            Value::Array(items) => J::Arr(items.iter().map(J::from_value).collect()),
            Value::Object(map) => {
                J::Obj(map.iter().map(|(k, v)| (Cow::Borrowed(k.as_str()), J::from_value(v))).collect())
            }
        }
    }
}

/// Object entries as a `serde_json::Map` (later duplicates overwrite earlier ones).
pub(crate) fn to_map<'v, 'a: 'v>(
    entries: impl Iterator<Item = &'v (Cow<'a, str>, J<'a>)>,
    bad: &mut bool,
) -> Map<String, Value> {
    let mut map = Map::new();
    for (k, v) in entries {
        map.insert(k.to_string(), v.to_value(bad));
    }
    map
}

/// Where in the document a value sits, as far as laziness cares.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    /// Anywhere else: built as a tree.
    Plain,
    /// The document root.
    Top,
    /// The root's `functions`.
    Functions,
    /// One function: its `blocks` stay text.
    Function,
    /// One entry of a node list: its `instructions` and `blocks` stay text.
    Node,
}

/// Parses one value into a [`J`] (strings borrowed where the text has no escapes).
#[derive(Clone, Copy)]
pub(crate) struct JSeed {
    /// How many containers enclose the value.
    pub(crate) depth: usize,
    pub(crate) mode: Mode,
}

impl JSeed {
    /// The seed for the value under `key` of an object read with this seed.
    pub(crate) fn member(self, key: &str) -> Member {
        let depth = self.depth + 1;
        match (self.mode, key) {
            (Mode::Top, "functions") => Member::Tree(JSeed { depth, mode: Mode::Functions }),
            (Mode::Function, "blocks") | (Mode::Node, "instructions" | "blocks") => Member::Lazy(depth),
            _ => Member::Tree(JSeed { depth, mode: Mode::Plain }),
        }
    }

    /// The seed for an element of an array read with this seed.
    fn element(self) -> JSeed {
        let mode = if self.mode == Mode::Functions { Mode::Function } else { Mode::Plain };
        JSeed { depth: self.depth + 1, mode }
    }

    pub(crate) fn check_depth<E: de::Error>(self) -> Result<(), E> {
        if self.depth + 1 >= DEPTH_LIMIT { Err(E::custom(GIVE_UP)) } else { Ok(()) }
    }
}

impl<'de> DeserializeSeed<'de> for JSeed {
    type Value = J<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<J<'de>, D::Error> {
        d.deserialize_any(JVisitor(self))
    }
}

/// How an object member is read.
pub(crate) enum Member {
    Tree(JSeed),
    /// Kept as text when it is an array; the number is its enclosing depth.
    Lazy(usize),
}

impl<'de> DeserializeSeed<'de> for Member {
    type Value = J<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<J<'de>, D::Error> {
        match self {
            Member::Tree(seed) => seed.deserialize(d),
            Member::Lazy(depth) => {
                let seed = JSeed { depth, mode: Mode::Plain };
                seed.check_depth()?;
                let raw = <&'de RawValue>::deserialize(d)?;
                let text = raw.get();
                if text.starts_with('[') {
                    return Ok(J::Lazy(Lazy { text, depth, used: Cell::new(false) }));
                }
                // Not an array: small, and read as any other value.
                let mut inner = serde_json::Deserializer::from_str(text);
                let tree = seed.deserialize(&mut inner).map_err(|_| de::Error::custom(GIVE_UP))?;
                inner.end().map_err(|_| de::Error::custom(GIVE_UP))?;
                Ok(tree)
            }
        }
    }
}

/// Builds a [`J`] of whatever value comes (also used by the reader's streaming visitors).
pub(crate) struct JVisitor(pub(crate) JSeed);

impl<'de> Visitor<'de> for JVisitor {
    type Value = J<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<J<'de>, E> {
        Ok(J::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> Result<J<'de>, E> {
        Ok(J::Num(i.into()))
    }

    fn visit_u64<E>(self, u: u64) -> Result<J<'de>, E> {
        Ok(J::Num(u.into()))
    }

    fn visit_f64<E>(self, f: f64) -> Result<J<'de>, E> {
        // What `serde_json::Value` does (JSON text never gives a non-finite f64).
        Ok(Number::from_f64(f).map_or(J::Null, J::Num))
    }

    fn visit_str<E>(self, s: &str) -> Result<J<'de>, E> {
        Ok(J::Str(Cow::Owned(s.to_owned())))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<J<'de>, E> {
        Ok(J::Str(Cow::Borrowed(s)))
    }

    fn visit_string<E>(self, s: String) -> Result<J<'de>, E> {
        Ok(J::Str(Cow::Owned(s)))
    }

    fn visit_unit<E>(self) -> Result<J<'de>, E> {
        Ok(J::Null)
    }

    fn visit_none<E>(self) -> Result<J<'de>, E> {
        Ok(J::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<J<'de>, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<J<'de>, A::Error> {
        self.0.check_depth()?;
        let seed = self.0.element();
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(seed)? {
            items.push(item);
        }
        Ok(J::Arr(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<J<'de>, A::Error> {
        self.0.check_depth()?;
        // Most BIR objects (instructions, operands) have a handful of keys: one allocation.
        let mut entries = Vec::with_capacity(8);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value = map.next_value_seed(self.0.member(&key))?;
            entries.push((key, value));
        }
        Ok(J::Obj(entries))
    }
}

/// An object key, borrowed where the text has no escapes.
pub(crate) struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(KeySeed)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s.to_owned()))
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s))
    }
}
