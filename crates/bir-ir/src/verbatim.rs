//! The JSON the IR keeps verbatim (`attributes`, the fields of unmodelled opcodes, operands of
//! other kinds) as a plain tree of its own, so the typed IR names no serde_json type and the
//! crate builds without the `json` feature (other compilers depend on it without serde).
//!
//! It holds what a `serde_json::Value` holds, with the same meaning: numbers are a non-negative
//! `u64`, a negative `i64` or a finite `f64`, and objects are sorted by key (later duplicates
//! overwrite earlier ones, as serde_json's default map does). With the `json` feature the two
//! convert both ways without loss.

use std::collections::BTreeMap;

/// A JSON object kept verbatim: keys in sorted order.
pub type JsonMap = BTreeMap<String, JsonValue>;

/// A JSON value kept verbatim.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum JsonValue {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(JsonNumber),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<JsonValue>),
    /// An object.
    Object(JsonMap),
}

/// A JSON number: a non-negative integer, a negative integer or a finite float (NaN and the
/// infinities are not JSON numbers).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JsonNumber(N);

#[derive(Clone, Copy, Debug, PartialEq)]
enum N {
    PosInt(u64),
    /// Always negative.
    NegInt(i64),
    /// Always finite.
    Float(f64),
}

impl JsonNumber {
    /// A float, or `None` when it is NaN or infinite.
    pub fn from_f64(f: f64) -> Option<Self> {
        f.is_finite().then_some(JsonNumber(N::Float(f)))
    }

    /// The number as a `u64`, when it is a non-negative integer.
    pub fn as_u64(self) -> Option<u64> {
        match self.0 {
            N::PosInt(u) => Some(u),
            _ => None,
        }
    }

    /// The number as an `i64`, when it is an integer in range.
    pub fn as_i64(self) -> Option<i64> {
        match self.0 {
            N::PosInt(u) => i64::try_from(u).ok(),
            N::NegInt(i) => Some(i),
            N::Float(_) => None,
        }
    }

    /// The number as an `f64` (integers may round).
    pub fn as_f64(self) -> f64 {
        match self.0 {
            N::PosInt(u) => u as f64,
            N::NegInt(i) => i as f64,
            N::Float(f) => f,
        }
    }

    /// True for a float (`1.0`, `1e3`), false for an integer.
    pub fn is_f64(self) -> bool {
        matches!(self.0, N::Float(_))
    }
}

impl From<u64> for JsonNumber {
    fn from(u: u64) -> Self {
        JsonNumber(N::PosInt(u))
    }
}

impl From<i64> for JsonNumber {
    fn from(i: i64) -> Self {
        match u64::try_from(i) {
            Ok(u) => JsonNumber(N::PosInt(u)),
            Err(_) => JsonNumber(N::NegInt(i)),
        }
    }
}

impl JsonValue {
    /// True for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, JsonValue::Null)
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsonValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            JsonValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_number(&self) -> Option<JsonNumber> {
        match self {
            JsonValue::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&[JsonValue]> {
        match self {
            JsonValue::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The entries, if this is an object.
    pub fn as_object(&self) -> Option<&JsonMap> {
        match self {
            JsonValue::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The value under `key`, if this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&JsonValue> {
        self.as_object().and_then(|o| o.get(key))
    }
}

impl From<JsonNumber> for JsonValue {
    fn from(n: JsonNumber) -> Self {
        JsonValue::Number(n)
    }
}

impl From<bool> for JsonValue {
    fn from(b: bool) -> Self {
        JsonValue::Bool(b)
    }
}

impl From<&str> for JsonValue {
    fn from(s: &str) -> Self {
        JsonValue::String(s.to_owned())
    }
}

impl From<String> for JsonValue {
    fn from(s: String) -> Self {
        JsonValue::String(s)
    }
}

impl From<u64> for JsonValue {
    fn from(u: u64) -> Self {
        JsonValue::Number(u.into())
    }
}

impl From<i64> for JsonValue {
    fn from(i: i64) -> Self {
        JsonValue::Number(i.into())
    }
}

/// A float; NaN and the infinities become `null`, as they do in serde_json.
impl From<f64> for JsonValue {
    fn from(f: f64) -> Self {
        JsonNumber::from_f64(f).map_or(JsonValue::Null, JsonValue::Number)
    }
}

impl From<Vec<JsonValue>> for JsonValue {
    fn from(a: Vec<JsonValue>) -> Self {
        JsonValue::Array(a)
    }
}

impl From<JsonMap> for JsonValue {
    fn from(o: JsonMap) -> Self {
        JsonValue::Object(o)
    }
}

#[cfg(feature = "json")]
mod serde_json_conversions {
    use super::{JsonNumber, JsonValue, N};

    impl From<serde_json::Number> for JsonNumber {
        fn from(n: serde_json::Number) -> Self {
            if let Some(u) = n.as_u64() {
                JsonNumber(N::PosInt(u))
            } else if let Some(i) = n.as_i64() {
                JsonNumber(N::NegInt(i))
            } else {
                // Without serde_json's `arbitrary_precision` every other number is a finite f64.
                JsonNumber(N::Float(n.as_f64().unwrap_or_default()))
            }
        }
    }

    impl From<JsonNumber> for serde_json::Number {
        fn from(n: JsonNumber) -> Self {
            match n.0 {
                N::PosInt(u) => u.into(),
                N::NegInt(i) => i.into(),
                // Finite by construction, so `from_f64` accepts it.
                N::Float(f) => serde_json::Number::from_f64(f).unwrap_or_else(|| 0.into()),
            }
        }
    }

    /// Moves the tree over (strings are not copied).
    impl From<serde_json::Value> for JsonValue {
        fn from(v: serde_json::Value) -> Self {
            use serde_json::Value as V;
            match v {
                V::Null => JsonValue::Null,
                V::Bool(b) => JsonValue::Bool(b),
                V::Number(n) => JsonValue::Number(n.into()),
                V::String(s) => JsonValue::String(s),
                V::Array(a) => JsonValue::Array(a.into_iter().map(JsonValue::from).collect()),
                V::Object(o) => JsonValue::Object(o.into_iter().map(|(k, v)| (k, v.into())).collect()),
            }
        }
    }

    impl From<&JsonValue> for serde_json::Value {
        fn from(v: &JsonValue) -> Self {
            use serde_json::Value as V;
            match v {
                JsonValue::Null => V::Null,
                JsonValue::Bool(b) => V::Bool(*b),
                JsonValue::Number(n) => V::Number((*n).into()),
                JsonValue::String(s) => V::String(s.clone()),
                JsonValue::Array(a) => V::Array(a.iter().map(V::from).collect()),
                JsonValue::Object(o) => V::Object(o.iter().map(|(k, v)| (k.clone(), v.into())).collect()),
            }
        }
    }

    impl From<JsonValue> for serde_json::Value {
        fn from(v: JsonValue) -> Self {
            use serde_json::Value as V;
            match v {
                JsonValue::Null => V::Null,
                JsonValue::Bool(b) => V::Bool(b),
                JsonValue::Number(n) => V::Number(n.into()),
                JsonValue::String(s) => V::String(s),
                JsonValue::Array(a) => V::Array(a.into_iter().map(V::from).collect()),
                JsonValue::Object(o) => V::Object(o.into_iter().map(|(k, v)| (k, v.into())).collect()),
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::JsonValue;

        /// Every kind of value, numbers of each kind and range, and nesting survive the trip
        /// both ways, and equality agrees with serde_json's.
        #[test]
        fn converts_both_ways_without_loss() {
            let text = r#"{"z": [null, true, false, 0, 1, -1, 18446744073709551615,
                -9223372036854775808, 0.5, -0.0, 1e300, "s\u00e9"], "a": {"b": {}}, "c": []}"#;
            let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
            let ours = JsonValue::from(theirs.clone());
            assert_eq!(serde_json::Value::from(&ours), theirs);
            assert_eq!(serde_json::Value::from(ours.clone()), theirs);
            assert_eq!(ours.get("z").and_then(|z| z.as_array()).map(<[_]>::len), Some(12));
            let z = ours.get("z").and_then(JsonValue::as_array).unwrap();
            assert_eq!(z[6].as_number().and_then(|n| n.as_u64()), Some(u64::MAX));
            assert_eq!(z[7].as_number().and_then(|n| n.as_i64()), Some(i64::MIN));
            assert!(z[9].as_number().is_some_and(|n| n.is_f64() && n.as_f64() == 0.0));
            // Integer 1 and float 1.0 differ, in both.
            let one = |t: &str| JsonValue::from(serde_json::from_str::<serde_json::Value>(t).unwrap());
            assert_ne!(one("1"), one("1.0"));
            assert_eq!(JsonValue::from(-0_i64), one("0"));
            assert_eq!(JsonValue::from(f64::NAN), JsonValue::Null);
        }
    }
}
