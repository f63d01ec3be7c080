//! Borrowed views of a [`Tape`]: a value ([`J`]), an object's entries ([`Entries`]) and an
//! array's elements ([`Items`]). Strings are slices of the input text (or of the tape's decoded
//! copies), numbers are read from their text when asked for, and a value the IR keeps verbatim
//! (`attributes`, unmodelled fields) is parsed from its text span by serde_json, so it is exactly
//! the `serde_json::Value` it always was (held as the IR's [`JsonValue`]).
//!
//! Duplicate keys stay on the tape; [`Entries::get`] returns the last one, as a
//! `serde_json::Value` (whose maps overwrite) does.

use super::lex::{Kind, Tape, Tok, key_tag, key_text, number};
use crate::verbatim::{JsonMap, JsonValue};
use serde_json::{Number, Value};

/// The text and the tape a view reads.
#[derive(Clone, Copy)]
pub(crate) struct Doc<'v> {
    pub(crate) text: &'v str,
    pub(crate) tape: &'v Tape,
}

/// One value on a tape.
#[derive(Clone, Copy)]
pub(crate) struct J<'v> {
    pub(crate) doc: Doc<'v>,
    pub(crate) at: usize,
}

/// What a value is, with its contents.
pub(crate) enum Val<'v> {
    Null,
    Bool(bool),
    Num(Number),
    Str(&'v str),
    Arr(Items<'v>),
    Obj(Entries<'v>),
    /// A node list kept as text: its span and the containers around it.
    Lazy {
        start: usize,
        depth: usize,
    },
    /// A function decoded while the text was scanned (its index in the reader's list).
    Done(usize),
}

const NULL: Tok = Tok { kind: Kind::Null, start: 0, end: 0, len: 0, aux: 0, keys: 0 };

impl<'v> Doc<'v> {
    #[inline]
    pub(crate) fn tok(self, at: usize) -> &'v Tok {
        self.tape.toks.get(at).unwrap_or(&NULL)
    }

    /// The index after the value at `at` (and its contents).
    #[inline]
    fn after(self, at: usize) -> usize {
        let t = self.tok(at);
        match t.kind {
            Kind::Arr | Kind::Obj => t.aux,
            _ => at + 1,
        }
    }

    #[inline]
    fn key(self, at: usize) -> &'v str {
        key_text(self.text, self.tape, self.tok(at))
    }
}

impl<'v> J<'v> {
    #[inline]
    fn tok(self) -> &'v Tok {
        self.doc.tok(self.at)
    }

    #[inline]
    pub(crate) fn val(self) -> Val<'v> {
        let t = self.tok();
        let text = self.doc.text;
        match t.kind {
            Kind::Null => Val::Null,
            Kind::False => Val::Bool(false),
            Kind::True => Val::Bool(true),
            // The lexer checked the number, so `number` accepts it.
            Kind::Num => text.get(t.start..t.end).and_then(number).map_or(Val::Null, Val::Num),
            Kind::Str | Kind::EscStr => Val::Str(key_text(text, self.doc.tape, t)),
            Kind::Arr => Val::Arr(Items { doc: self.doc, first: self.at + 1, end: t.aux, len: t.len }),
            Kind::Obj => Val::Obj(Entries {
                doc: self.doc,
                first: self.at + 1,
                end: t.aux,
                keys: Some((t.keys, t.len)),
            }),
            Kind::Lazy => Val::Lazy { start: t.start, depth: t.len },
            Kind::Done => Val::Done(t.aux),
        }
    }

    #[inline]
    pub(crate) fn is_null(self) -> bool {
        self.tok().kind == Kind::Null
    }

    #[inline]
    pub(crate) fn as_str(self) -> Option<&'v str> {
        match self.tok().kind {
            Kind::Str | Kind::EscStr => Some(key_text(self.doc.text, self.doc.tape, self.tok())),
            _ => None,
        }
    }

    /// "a string", "an array", ...: for wrong-type messages.
    pub(crate) fn describe(self) -> &'static str {
        match self.tok().kind {
            Kind::Null => "null",
            Kind::False | Kind::True => "a boolean",
            Kind::Num => "a number",
            Kind::Str | Kind::EscStr => "a string",
            Kind::Arr | Kind::Lazy => "an array",
            Kind::Obj | Kind::Done => "an object",
        }
    }

    /// The same value as serde_json reads it (for the fields the IR keeps verbatim), parsed
    /// from its text. Sets `bad` if that fails (it cannot: the lexer checked the text).
    pub(crate) fn to_value(self, bad: &mut bool) -> JsonValue {
        if let Some(s) = self.as_str() {
            return JsonValue::String(s.to_owned());
        }
        let t = self.tok();
        match self.doc.text.get(t.start..t.end).map(serde_json::from_str::<Value>) {
            Some(Ok(v)) => v.into(),
            _ => {
                *bad = true;
                JsonValue::Null
            }
        }
    }
}

/// The entries of an object (or of one being assembled: `end` is then the tape's length).
#[derive(Clone, Copy)]
pub(crate) struct Entries<'v> {
    pub(crate) doc: Doc<'v>,
    /// The first key's token.
    pub(crate) first: usize,
    /// The token after the last value.
    pub(crate) end: usize,
    /// Where its keys are in [`Tape::keys`], and how many (`None` while it is assembled).
    pub(crate) keys: Option<(usize, usize)>,
}

impl<'v> Entries<'v> {
    /// The value under `key` (the last one when the key repeats).
    #[inline]
    pub(crate) fn get(self, key: &str) -> Option<J<'v>> {
        if let Some((at, n)) = self.keys {
            let tag = key_tag(key);
            let keys = self.doc.tape.keys.get(at..at + n).unwrap_or(&[]);
            return keys
                .iter()
                .rev()
                .find(|k| k.tag == tag && (key.len() <= 7 || self.doc.key(k.value - 1) == key))
                .map(|k| J { doc: self.doc, at: k.value });
        }
        let mut found = None;
        for (k, v) in self.iter() {
            if k == key {
                found = Some(v);
            }
        }
        found
    }

    /// Each key and value, in text order.
    pub(crate) fn iter(self) -> impl Iterator<Item = (&'v str, J<'v>)> {
        let mut at = self.first;
        std::iter::from_fn(move || {
            if at >= self.end {
                return None;
            }
            let key = self.doc.key(at);
            let value = J { doc: self.doc, at: at + 1 };
            at = self.doc.after(at + 1);
            Some((key, value))
        })
    }

    /// The entries as a map (later duplicates overwrite earlier ones, as in a
    /// `serde_json::Map`), keeping those whose key passes `keep`.
    pub(crate) fn to_map(self, keep: impl Fn(&str) -> bool, bad: &mut bool) -> JsonMap {
        let mut map = JsonMap::new();
        for (k, v) in self.iter().filter(|(k, _)| keep(k)) {
            map.insert(k.to_owned(), v.to_value(bad));
        }
        map
    }
}

/// The elements of an array.
#[derive(Clone, Copy)]
pub(crate) struct Items<'v> {
    doc: Doc<'v>,
    first: usize,
    end: usize,
    len: usize,
}

impl<'v> Items<'v> {
    pub(crate) fn len(self) -> usize {
        self.len
    }

    /// The `i`-th element.
    pub(crate) fn get(self, i: usize) -> Option<J<'v>> {
        self.iter().nth(i)
    }

    /// Each element, in order.
    pub(crate) fn iter(self) -> impl Iterator<Item = J<'v>> {
        let mut at = self.first;
        std::iter::from_fn(move || {
            if at >= self.end {
                return None;
            }
            let v = J { doc: self.doc, at };
            at = self.doc.after(at);
            Some(v)
        })
    }
}
