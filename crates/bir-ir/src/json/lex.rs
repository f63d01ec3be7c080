//! The reader's JSON lexer: a hand-written, zero-copy scanner over the (already UTF-8 checked)
//! text that records one value at a time on a [`Tape`] of small tokens. Strings without escapes
//! and numbers are spans of the input; nothing is allocated per key or per scalar.
//!
//! It accepts exactly the JSON `serde_json` accepts (RFC 8259: the four whitespace bytes, no
//! trailing commas, no control characters in strings, numbers without leading zeros or a bare
//! `.`, a float that overflows f64 is an error, at most 127 nested containers counted from the
//! document root). On any problem it stops with [`Stop`]; the caller then asks `serde_json` for
//! the error message and position, so syntax errors read exactly as they always have. Numbers
//! are read into a `serde_json::Number` with serde_json's own arithmetic (see [`number`]), so
//! every value, and every message that prints one, is the one a `serde_json::Value` would give.
//!
//! The tape is flat: a container token records its entry count and the index just past its
//! last token, so a reader skips a whole subtree in one step. Object entries are a key token
//! followed by the value's tokens. The node lists named by the [`Lists`] policy are not
//! tokenised when they are arrays: the array is checked by [`Lexer::skip`] (the same
//! rules, no tokens) and recorded as one [`Kind::Lazy`] span, to be streamed later.

use serde_json::Number;
use smallvec::SmallVec;

/// Containers may nest this deep (the root container is level 1); level 128 is an error, as
/// serde_json's recursion limit has it.
pub(crate) const DEPTH_LIMIT: usize = 128;

/// The text is not JSON (or nests too deep): the caller reports serde_json's error for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stop;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Null,
    False,
    True,
    /// A number; its text is the token's span.
    Num,
    /// A string without escapes; its text is the span without the quotes.
    Str,
    /// A string with escapes; `aux` is the index of its decoded text in [`Tape::owned`].
    EscStr,
    /// An array: `len` elements, `aux` the token index after its last element.
    Arr,
    /// An object: `len` entries (key token + value tokens each), `aux` as for arrays.
    Obj,
    /// An array kept as text (the span, `[` to `]`); `len` is its nesting depth (the number of
    /// containers around it).
    Lazy,
    /// A value the reader decoded while the text was scanned; `aux` indexes the reader's list.
    Done,
}

/// One token: a kind, the span of its text, and kind-specific data.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tok {
    pub(crate) kind: Kind,
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) len: usize,
    pub(crate) aux: usize,
    /// For an object: where its keys start in [`Tape::keys`] (`len` of them).
    pub(crate) keys: usize,
}

/// An object key for lookups: its [`key_tag`] and the index of its value's token (the key's own
/// token is just before).
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyRef {
    pub(crate) tag: u64,
    pub(crate) value: usize,
}

/// The keys of an object being scanned.
pub(crate) type Keys = SmallVec<[KeyRef; 16]>;

/// A key's length and first seven bytes in one word, so that most lookups compare one word:
/// equal tags mean equal keys when the key is at most seven bytes long.
#[inline]
pub(crate) fn key_tag(key: &str) -> u64 {
    let b = key.as_bytes();
    let mut tag = (b.len().min(255) as u64) << 56;
    for (i, &c) in b.iter().take(7).enumerate() {
        tag |= u64::from(c) << (8 * i);
    }
    tag
}

/// Tokens of one value (or of one object being assembled by the reader), reused between nodes.
#[derive(Debug, Default)]
pub(crate) struct Tape {
    pub(crate) toks: Vec<Tok>,
    /// Decoded strings that had escapes.
    pub(crate) owned: Vec<String>,
    /// Every object's keys, each object's contiguous (see [`Tok::keys`]).
    pub(crate) keys: Vec<KeyRef>,
}

impl Tape {
    pub(crate) fn clear(&mut self) {
        self.toks.clear();
        self.owned.clear();
        self.keys.clear();
    }

    pub(crate) fn push(&mut self, kind: Kind, start: usize, end: usize) -> usize {
        self.toks.push(Tok { kind, start, end, len: 0, aux: 0, keys: 0 });
        self.toks.len() - 1
    }

    /// The lookup entry of key token `k` (its value comes next).
    pub(crate) fn key_ref(&self, text: &str, k: usize) -> KeyRef {
        let tag = self.toks.get(k).map_or(0, |t| key_tag(key_text(text, self, t)));
        KeyRef { tag, value: k + 1 }
    }
}

/// Where a value sits in the document, as far as laziness cares: which object members are
/// node lists to keep as text (an array there becomes a [`Kind::Lazy`] token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lists {
    /// Anywhere else: nothing is lazy.
    None,
    /// The document root (its `functions` is read with [`Lists::Functions`]).
    Top,
    /// The root's `functions`: its elements are functions.
    Functions,
    /// A function: its `blocks`.
    Function,
    /// An entry of a node list: its `instructions` and `blocks`.
    Node,
}

/// How an object member is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Member {
    /// Tokenised, with this policy.
    Value(Lists),
    /// Kept as text when it is an array.
    Lazy,
}

impl Lists {
    /// How the member under `key` of an object read with this policy is read.
    pub(crate) fn member(self, key: &str) -> Member {
        match (self, key) {
            (Lists::Top, "functions") => Member::Value(Lists::Functions),
            (Lists::Function, "blocks") | (Lists::Node, "instructions" | "blocks") => Member::Lazy,
            _ => Member::Value(Lists::None),
        }
    }

    /// The policy of an element of an array read with this policy.
    pub(crate) fn element(self) -> Lists {
        if self == Lists::Functions { Lists::Function } else { Lists::None }
    }
}

/// A position in the text, and how many containers enclose it.
#[derive(Debug, Clone)]
pub(crate) struct Lexer<'t> {
    pub(crate) text: &'t str,
    bytes: &'t [u8],
    pub(crate) pos: usize,
    /// Containers open around the position (the root's own counts once entered).
    pub(crate) depth: usize,
}

/// The first 23 entries of serde_json's `POW10` table: 10^0..=10^22, all exact in f64 (so
/// computing them by multiplication gives serde_json's literals bit for bit).
static POW10: [f64; 23] = {
    let mut t = [1.0f64; 23];
    let mut i = 1;
    while i < 23 {
        t[i] = t[i - 1] * 10.0;
        i += 1;
    }
    t
};

impl<'t> Lexer<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        Lexer { text, bytes: text.as_bytes(), pos: 0, depth: 0 }
    }

    /// A lexer at `pos` with `depth` containers open around it.
    pub(crate) fn at(text: &'t str, pos: usize, depth: usize) -> Self {
        Lexer { text, bytes: text.as_bytes(), pos, depth }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Skips whitespace and returns the next byte (not consumed).
    pub(crate) fn next_byte(&mut self) -> Option<u8> {
        while let Some(&b) = self.bytes.get(self.pos) {
            if matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
                self.pos += 1;
            } else {
                return Some(b);
            }
        }
        None
    }

    /// Consumes `b` after optional whitespace.
    pub(crate) fn eat(&mut self, b: u8) -> Result<(), Stop> {
        if self.next_byte() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Stop)
        }
    }

    /// Enters a container (its opening byte is at the position).
    pub(crate) fn open(&mut self) -> Result<(), Stop> {
        self.depth += 1;
        if self.depth >= DEPTH_LIMIT {
            return Err(Stop);
        }
        self.pos += 1;
        Ok(())
    }

    pub(crate) fn close(&mut self) {
        self.depth -= 1;
        self.pos += 1;
    }

    /// After an element or entry: `true` when another follows (a `,` was eaten), `false` at the
    /// closing byte `close` (not consumed).
    pub(crate) fn more(&mut self, close: u8) -> Result<bool, Stop> {
        match self.next_byte() {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b) if b == close => Ok(false),
            _ => Err(Stop),
        }
    }

    /// At the start of a container's contents: `true` when it is empty (the closing byte is
    /// next, not consumed).
    pub(crate) fn empty(&mut self, close: u8) -> bool {
        self.next_byte() == Some(close)
    }

    /// The end of the document: only whitespace may follow.
    pub(crate) fn finish(&mut self) -> Result<(), Stop> {
        if self.next_byte().is_some() { Err(Stop) } else { Ok(()) }
    }

    /// Reads an object key and its `:`. Returns the key's text (decoded when it has escapes)
    /// and the token for the tape.
    pub(crate) fn key(&mut self, tape: &mut Tape) -> Result<usize, Stop> {
        if self.next_byte() != Some(b'"') {
            return Err(Stop);
        }
        let t = self.string(tape)?;
        self.eat(b':')?;
        Ok(t)
    }

    /// Scans a string at the position (the opening quote) onto the tape.
    fn string(&mut self, tape: &mut Tape) -> Result<usize, Stop> {
        let open = self.pos;
        self.pos += 1;
        let start = self.pos;
        let mut escaped = false;
        loop {
            let Some(&b) = self.bytes.get(self.pos) else { return Err(Stop) };
            match b {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    // The escape's validity is checked by the decode below.
                    self.pos += 2;
                }
                0..=0x1F => return Err(Stop),
                _ => self.pos += 1,
            }
        }
        let end = self.pos;
        self.pos += 1;
        if !escaped {
            return Ok(tape.push(Kind::Str, start, end));
        }
        let quoted = self.text.get(open..self.pos).ok_or(Stop)?;
        let decoded: String = serde_json::from_str(quoted).map_err(|_| Stop)?;
        let t = tape.push(Kind::EscStr, start, end);
        if let Some(tok) = tape.toks.get_mut(t) {
            tok.aux = tape.owned.len();
        }
        tape.owned.push(decoded);
        Ok(t)
    }

    /// Scans one value onto the tape; node lists (by the `lists` policy) become lazy spans.
    pub(crate) fn value(&mut self, tape: &mut Tape, lists: Lists) -> Result<usize, Stop> {
        let Some(b) = self.next_byte() else { return Err(Stop) };
        match b {
            b'{' => {
                let t = tape.push(Kind::Obj, self.pos, 0);
                self.open()?;
                let mut keys = Keys::new();
                if !self.empty(b'}') {
                    loop {
                        let k = self.key(tape)?;
                        keys.push(tape.key_ref(self.text, k));
                        let member = match (lists, tape.toks.get(k)) {
                            (Lists::None, _) | (_, None) => Member::Value(Lists::None),
                            (_, Some(k)) => lists.member(key_text(self.text, tape, k)),
                        };
                        match member {
                            Member::Lazy if self.next_byte() == Some(b'[') => {
                                self.lazy(tape)?;
                            }
                            Member::Lazy => {
                                self.value(tape, Lists::None)?;
                            }
                            Member::Value(l) => {
                                self.value(tape, l)?;
                            }
                        }
                        if !self.more(b'}')? {
                            break;
                        }
                    }
                }
                self.close();
                Ok(self.seal_object(tape, t, &keys))
            }
            b'[' => {
                let t = tape.push(Kind::Arr, self.pos, 0);
                self.open()?;
                let mut len = 0;
                if !self.empty(b']') {
                    loop {
                        self.value(tape, lists.element())?;
                        len += 1;
                        if !self.more(b']')? {
                            break;
                        }
                    }
                }
                self.close();
                Ok(self.seal(tape, t, len))
            }
            b'"' => self.string(tape),
            b't' => self.literal(tape, b"true", Kind::True),
            b'f' => self.literal(tape, b"false", Kind::False),
            b'n' => self.literal(tape, b"null", Kind::Null),
            b'-' | b'0'..=b'9' => {
                let start = self.pos;
                self.number()?;
                Ok(tape.push(Kind::Num, start, self.pos))
            }
            _ => Err(Stop),
        }
    }

    /// Closes container token `t` (the closing byte was just consumed).
    pub(crate) fn seal(&self, tape: &mut Tape, t: usize, len: usize) -> usize {
        let next = tape.toks.len();
        if let Some(tok) = tape.toks.get_mut(t) {
            tok.end = self.pos;
            tok.len = len;
            tok.aux = next;
        }
        t
    }

    /// Closes object token `t` with its keys (the closing byte was just consumed).
    pub(crate) fn seal_object(&self, tape: &mut Tape, t: usize, keys: &[KeyRef]) -> usize {
        let at = tape.keys.len();
        tape.keys.extend_from_slice(keys);
        let t = self.seal(tape, t, keys.len());
        if let Some(tok) = tape.toks.get_mut(t) {
            tok.keys = at;
        }
        t
    }

    /// Records the array at the position as a lazy span, after checking it.
    pub(crate) fn lazy(&mut self, tape: &mut Tape) -> Result<usize, Stop> {
        let (start, depth) = (self.pos, self.depth);
        self.skip()?;
        let t = tape.push(Kind::Lazy, start, self.pos);
        if let Some(tok) = tape.toks.get_mut(t) {
            tok.len = depth;
        }
        Ok(t)
    }

    fn literal(&mut self, tape: &mut Tape, word: &[u8], kind: Kind) -> Result<usize, Stop> {
        let start = self.pos;
        if self.bytes.get(start..start + word.len()) != Some(word) {
            return Err(Stop);
        }
        self.pos += word.len();
        Ok(tape.push(kind, start, self.pos))
    }

    /// Checks one value without recording it (for the lazy lists).
    pub(crate) fn skip(&mut self) -> Result<(), Stop> {
        let Some(b) = self.next_byte() else { return Err(Stop) };
        match b {
            b'{' | b'[' => {
                let close = if b == b'{' { b'}' } else { b']' };
                self.open()?;
                if !self.empty(close) {
                    loop {
                        if close == b'}' {
                            if self.next_byte() != Some(b'"') {
                                return Err(Stop);
                            }
                            self.skip_string()?;
                            self.eat(b':')?;
                        }
                        self.skip()?;
                        if !self.more(close)? {
                            break;
                        }
                    }
                }
                self.close();
                Ok(())
            }
            b'"' => self.skip_string(),
            b't' | b'f' | b'n' => {
                let word: &[u8] = match b {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                if self.bytes.get(self.pos..self.pos + word.len()) != Some(word) {
                    return Err(Stop);
                }
                self.pos += word.len();
                Ok(())
            }
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Stop),
        }
    }

    fn skip_string(&mut self) -> Result<(), Stop> {
        let open = self.pos;
        self.pos += 1;
        let mut escaped = false;
        loop {
            let Some(&b) = self.bytes.get(self.pos) else { return Err(Stop) };
            match b {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    self.pos += 2;
                }
                0..=0x1F => return Err(Stop),
                _ => self.pos += 1,
            }
        }
        self.pos += 1;
        if escaped {
            let quoted = self.text.get(open..self.pos).ok_or(Stop)?;
            serde_json::from_str::<serde::de::IgnoredAny>(quoted).map_err(|_| Stop)?;
        }
        Ok(())
    }

    /// Checks a number's grammar (and that a float does not overflow) and moves past it.
    fn number(&mut self) -> Result<(), Stop> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return Err(Stop);
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(Stop),
        }
        let mut exponent = false;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(Stop);
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(Stop);
            }
            self.digits();
            exponent = true;
        }
        // Only a number with an exponent or a very long one can overflow (without an exponent,
        // 300 characters stay below 1e300): ask serde_json.
        let text = self.text.get(start..self.pos).ok_or(Stop)?;
        if (exponent || text.len() > 300) && number(text).is_none() {
            return Err(Stop);
        }
        Ok(())
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }
}

/// The text of key token `k`.
#[inline]
pub(crate) fn key_text<'a>(text: &'a str, tape: &'a Tape, k: &Tok) -> &'a str {
    match k.kind {
        Kind::EscStr => tape.owned.get(k.aux).map_or("", String::as_str),
        _ => text.get(k.start..k.end).unwrap_or(""),
    }
}

/// A number's text (already checked by the lexer) as serde_json reads it: integers that fit
/// stay exact, `-0` and integers beyond 64 bits become floats, and floats are computed with
/// serde_json's own arithmetic (the significand as u64, then one multiplication or division by
/// its power-of-ten table) — anything less common is handed to serde_json itself. `None` when
/// serde_json rejects it (a float out of range).
pub(crate) fn number(text: &str) -> Option<Number> {
    let b = text.as_bytes();
    let (positive, digits) = match b.first() {
        Some(b'-') => (false, b.get(1..).unwrap_or(&[])),
        _ => (true, b),
    };
    let mut significand: u64 = 0;
    let mut i = 0;
    let mut exponent: i32 = 0;
    let mut float = false;
    while let Some(&c) = digits.get(i) {
        match c {
            b'0'..=b'9' => {
                let Some(s) = significand.checked_mul(10).and_then(|s| s.checked_add(u64::from(c - b'0')))
                else {
                    return slow(text);
                };
                significand = s;
                if float {
                    exponent -= 1;
                }
            }
            b'.' => float = true,
            // Exponents: the rare case.
            _ => return slow(text),
        }
        i += 1;
    }
    if !float {
        if positive {
            return Some(Number::from(significand));
        }
        let neg = (significand as i64).wrapping_neg();
        return if neg >= 0 { Number::from_f64(-(significand as f64)) } else { Some(Number::from(neg)) };
    }
    // serde_json's `f64_from_parts` for an exponent within the exact part of its table.
    let pow = POW10.get(exponent.unsigned_abs() as usize).copied();
    let Some(pow) = pow else { return slow(text) };
    let f = significand as f64 / pow;
    Number::from_f64(if positive { f } else { -f })
}

#[cold]
fn slow(text: &str) -> Option<Number> {
    serde_json::from_str::<Number>(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    // SplitMix64, so a failure reproduces from its case number.
    use test_rng::SplitMix64;

    /// Pieces of JSON, valid and not, from which random texts are put together.
    const PIECES: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "\n",
        "\t",
        "\"a\"",
        "\"\\n\"",
        "\"\\u00e9\"",
        "\"\\ud800\"",
        "\"\\ud83d\\ude00\"",
        "\"\\x\"",
        "\"\u{1}\"",
        "\"",
        "0",
        "-0",
        "01",
        "1.",
        ".5",
        "-",
        "+1",
        "1e5",
        "1E+2",
        "2.5e-3",
        "1e400",
        "-1e-400",
        "18446744073709551616",
        "-9223372036854775809",
        "123456789012345678901234567890",
        "true",
        "false",
        "null",
        "tru",
        "nul",
        "\"k\":",
        "[]",
        "{}",
    ];

    /// The lexer accepts exactly the texts serde_json accepts.
    #[test]
    fn lexer_accepts_what_serde_json_accepts() {
        let mut rng = SplitMix64::new(9);
        let (mut accepted, mut rejected) = (0, 0);
        for case in 0..20_000 {
            let n = 1 + rng.below_usize(12);
            let text: String = (0..n).map(|_| PIECES[rng.below_usize(PIECES.len())]).collect();
            let ours = {
                let mut lx = Lexer::new(&text);
                let mut tape = Tape::default();
                lx.value(&mut tape, Lists::Top).and_then(|_| lx.finish()).is_ok()
            };
            let theirs = serde_json::from_str::<serde_json::Value>(&text).is_ok();
            assert_eq!(ours, theirs, "case {case}: {text:?}");
            if theirs {
                accepted += 1;
            } else {
                rejected += 1;
            }
        }
        // Both outcomes were exercised.
        assert!(accepted > 500 && rejected > 500, "{accepted} accepted, {rejected} rejected");
    }

    /// The nesting limit is serde_json's, counted from the document root.
    #[test]
    fn nesting_limit_is_serde_jsons() {
        for n in [126, 127, 128, 129] {
            let text = format!("{}{}", "[".repeat(n), "]".repeat(n));
            let mut lx = Lexer::new(&text);
            let ours = lx.value(&mut Tape::default(), Lists::None).is_ok();
            assert_eq!(ours, serde_json::from_str::<serde_json::Value>(&text).is_ok(), "{n}");
            assert_eq!(ours, n <= 127, "{n}");
        }
    }

    /// Random decimal literals (the fast path's domain and past it) read bit for bit as
    /// serde_json reads them.
    #[test]
    fn random_numbers_read_as_serde_json_reads_them() {
        let mut rng = SplitMix64::new(3);
        for _ in 0..20_000 {
            let int: String =
                (0..1 + rng.below_usize(20)).map(|_| char::from(b'0' + rng.below_usize(10) as u8)).collect();
            let int = int.trim_start_matches('0');
            let int = if int.is_empty() { "0" } else { int };
            let frac: String =
                (0..rng.below_usize(20)).map(|_| char::from(b'0' + rng.below_usize(10) as u8)).collect();
            let sign = if rng.below_usize(2) == 0 { "" } else { "-" };
            let text = if frac.is_empty() { format!("{sign}{int}") } else { format!("{sign}{int}.{frac}") };
            let ours = number(&text);
            let theirs = serde_json::from_str::<Number>(&text).ok();
            assert_eq!(
                ours.as_ref().map(Number::to_string),
                theirs.as_ref().map(Number::to_string),
                "{text}"
            );
            let bits = |n: Option<Number>| n.and_then(|n| n.as_f64()).map(f64::to_bits);
            assert_eq!(bits(ours), bits(theirs), "{text}");
        }
    }

    #[test]
    fn numbers_read_as_serde_json_reads_them() {
        let cases = [
            "0",
            "-0",
            "1",
            "-1",
            "0.0",
            "-0.0",
            "1.0",
            "0.1",
            "0.25",
            "3.14159",
            "-2.5",
            "1e5",
            "1E-5",
            "2.5e+3",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "9223372036854775808",
            "123456789012345678901234567890",
            "0.30000000000000004",
            "1.7976931348623157e308",
            "4.9e-324",
            "1e-400",
            "0.1000000000000000055511151231257827",
            "12345678901234567.5",
        ];
        for c in cases {
            let ours = number(c);
            let theirs = serde_json::from_str::<Number>(c).ok();
            assert_eq!(ours.as_ref().map(Number::to_string), theirs.as_ref().map(Number::to_string), "{c}");
            if let (Some(a), Some(b)) = (ours.and_then(|n| n.as_f64()), theirs.and_then(|n| n.as_f64())) {
                assert_eq!(a.to_bits(), b.to_bits(), "{c}");
            }
        }
    }
}
