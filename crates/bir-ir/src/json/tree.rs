//! The reader's lean JSON tree: strings and keys borrowed from the input text, objects as
//! key/value lists in text order, numbers as `serde_json::Number` (so values, and the way
//! diagnostics print them, are exactly what a `serde_json::Value` would hold). It implements the
//! conventions of docs/bir-json.md "Conventions" only as far as JSON itself goes; the BIR
//! meaning is read.rs's job.
//!
//! Duplicate keys are kept in the list; [`get`] returns the last one, as `serde_json::Value`
//! (whose maps overwrite) does, and [`to_value`] rebuilds exactly that map.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;

/// One JSON value of the input.
#[derive(Debug)]
pub(crate) enum J<'a> {
    Null,
    Bool(bool),
    Num(Number),
    Str(Cow<'a, str>),
    Arr(Vec<J<'a>>),
    Obj(Vec<(Cow<'a, str>, J<'a>)>),
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
            J::Arr(_) => "an array",
            J::Obj(_) => "an object",
        }
    }

    /// The same value as a `serde_json::Value` (for the fields the IR keeps verbatim).
    pub(crate) fn to_value(&self) -> Value {
        match self {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(*b),
            J::Num(n) => Value::Number(n.clone()),
            J::Str(s) => Value::String(s.to_string()),
            J::Arr(items) => Value::Array(items.iter().map(J::to_value).collect()),
            J::Obj(entries) => Value::Object(to_map(entries.iter())),
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
) -> Map<String, Value> {
    let mut map = Map::new();
    for (k, v) in entries {
        map.insert(k.to_string(), v.to_value());
    }
    map
}

/// Parses one value into a [`J`] (strings borrowed where the text has no escapes).
pub(crate) struct JSeed;

impl<'de> DeserializeSeed<'de> for JSeed {
    type Value = J<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<J<'de>, D::Error> {
        d.deserialize_any(JVisitor)
    }
}

struct JVisitor;

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
        d.deserialize_any(JVisitor)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<J<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(JSeed)? {
            items.push(item);
        }
        Ok(J::Arr(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<J<'de>, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value = map.next_value_seed(JSeed)?;
            entries.push((key, value));
        }
        Ok(J::Obj(entries))
    }
}

/// An object key, borrowed where the text has no escapes.
struct KeySeed;

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
