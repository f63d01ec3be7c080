//! The typed fast path for instruction objects (issue #9): one pass from the bytes straight into
//! an [`Instruction`], without a tape for the header or the operands.
//!
//! It reads the header (`opcode`, `name`, `engine`, `ins`, `outs`) and `physical_ap` operands
//! directly — keys matched by their bytes, strings borrowed, integers parsed in place — and puts
//! only the opcode's own fields on a small tape, which the one field reader
//! ([`read_op`](super::super::fields::read_op)) decodes exactly as the general path does. It
//! accepts only what the general path decodes without a word to say: on anything else (a key
//! it does not know, a repeated header key, `null`, an escape, another operand kind, a number
//! that is not a plain integer, an unresolved name, a field the field reader complains about,
//! a syntax error) it gives up, and the general path reads the same object from its start and
//! says what it always said. So there is one semantics, and this is only its fast spelling;
//! the tests check it against the general path (`load_slice_general`) on the corpus, on the
//! writer's spelling of it and on random mutations.
//!
//! [`Memo`] makes repeated text cheap: the last few resolved names, decoded operands,
//! instructions' own fields and whole instructions (all of their text but the name) are
//! remembered by their text, and the same text decodes to the same value again without being
//! parsed. The opcode's own fields are first only delimited and looked up in that memo; only a
//! miss puts them on the tape for the field reader (issue #9: a flat program of 100,000 small
//! instructions is mostly the same few instructions under new names).

use super::{Cx, Obj, Path};
use crate::ap::{AccessPattern, ApPair, ApPairs, Operand};
use crate::dtype::Dtype;
use crate::enum_macro::BirEnum;
use crate::enums::EngineType;
use crate::json::fields::read_op;
use crate::json::lex::{KeyRef, Keys, Kind, Lexer, Lists, Tape, key_tag};
use crate::json::view::{Doc, Entries};
use crate::opcode::{Op, Opcode};
use crate::program::{AllocId, Instruction, LocId};
use smallvec::SmallVec;

/// Bytes that end the fast scan of a string: its closing quote, an escape, a control character.
static STRING_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// The index of the first byte of `rest` that ends a fast string scan ([`STRING_STOP`]), eight
/// bytes at a time: a mask's lowest set bit marks the first byte that is `"`, `\\` or below
/// 0x20 (the borrow of the classic has-zero-byte test only sets bits above a true match).
#[inline]
fn string_stop(rest: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let mut at = 0;
    while let Some(chunk) = rest.get(at..at + 8) {
        let w = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).ok()?);
        let m = zero(w ^ (ONES * u64::from(b'"')))
            | zero(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
        if m != 0 {
            return Some(at + (m.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let tail = rest.get(at..)?.iter().position(|&b| STRING_STOP[usize::from(b)])?;
    Some(at + tail)
}

/// How many entries each list of [`Memo`] keeps.
const MEMO: usize = 4;

/// Recently resolved names: `(start, end)` of the name in the text and what it resolved to;
/// and recently decoded operands: the span of the object's text, the nesting depth it was read
/// at, and the access pattern it gave. Decoding depends only on the text, the depth (the
/// nesting limit) and the function's names, so the same bytes at the same depth in the same
/// function decode to the same operand: programs repeat their operands verbatim.
#[derive(Default)]
pub(super) struct Memo {
    locs: [Option<(usize, usize, LocId)>; MEMO],
    allocs: [Option<(usize, usize, AllocId)>; MEMO],
    next_loc: usize,
    next_alloc: usize,
    operands: SmallVec<[(usize, usize, usize, AccessPattern); MEMO]>,
    next_operand: usize,
    /// Recent instructions' own fields and the op they gave.
    ops: SmallVec<[(Opcode, Fields, Op); MEMO]>,
    next_op: usize,
    /// Recent instructions, by their text.
    insts: SmallVec<[Recent; MEMO]>,
    next_inst: usize,
}

/// A recent instruction the fast path decoded: the span of its object's text (`{` to `}`), the
/// span of its name's text (inside the quotes), the nesting depth it was read at, and what it
/// gave. Decoding depends only on the text, the depth and the function's names, and the name's
/// text (a string without escapes) on nothing but itself: an object that is the same text at
/// the same depth in the same function but for a name without escapes is the same
/// instruction under that name.
struct Recent {
    start: usize,
    name: (usize, usize),
    end: usize,
    depth: usize,
    inst: Instruction,
}

/// One of an instruction's own fields as written: the spans of its key and its value in the
/// text (a string's without the quotes, so the token kind is kept too).
#[derive(Clone, Copy)]
struct Field {
    key: (usize, usize),
    kind: Kind,
    value: (usize, usize),
}

/// An instruction's own fields, in text order.
type Fields = SmallVec<[Field; 8]>;

/// Scanning helpers that give up (`None`) instead of stopping: the general path re-reads the text.
impl<'t> Lexer<'t> {
    /// Enters the container opened by `b` if it is next.
    #[inline]
    fn open_if(&mut self, b: u8) -> Option<()> {
        if self.next_byte() == Some(b) { self.open().ok() } else { None }
    }

    /// The bytes of a string without escapes at the position, and where they start.
    #[inline]
    fn plain_bytes(&mut self) -> Option<(&'t [u8], usize)> {
        if self.next_byte() != Some(b'"') {
            return None;
        }
        let start = self.pos + 1;
        let rest = self.text.as_bytes().get(start..)?;
        let len = string_stop(rest)?;
        if rest.get(len) != Some(&b'"') {
            return None;
        }
        self.pos = start + len + 1;
        Some((rest.get(..len)?, start))
    }

    /// A scalar at the position (after whitespace) delimited without a tape, as the op memo
    /// compares fields: a string without escapes (its span without the quotes), or the run of
    /// bytes that can belong to a number (its span; whether it is one is left to the memo: only
    /// text the lexer read as a number is remembered). `None` for anything else.
    #[inline]
    fn quick_scalar(&mut self) -> Option<(Kind, (usize, usize))> {
        match self.next_byte()? {
            b'"' => {
                let (b, start) = self.plain_bytes()?;
                Some((Kind::Str, (start, start + b.len())))
            }
            b'-' | b'0'..=b'9' => {
                let start = self.pos;
                let run = self
                    .text
                    .as_bytes()
                    .get(start..)?
                    .iter()
                    .take_while(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .count();
                self.pos = start + run;
                Some((Kind::Num, (start, start + run)))
            }
            _ => None,
        }
    }

    /// A string without escapes at the position, borrowed.
    #[inline]
    fn plain_str(&mut self) -> Option<&'t str> {
        let (b, start) = self.plain_bytes()?;
        self.text.get(start..start + b.len())
    }

    /// An object key without escapes and its `:`.
    #[inline]
    fn plain_key(&mut self) -> Option<(&'t [u8], usize)> {
        let k = self.plain_bytes()?;
        self.eat(b':').ok()?;
        Some(k)
    }

    /// A JSON integer that serde_json reads as an `i64` (no fraction, no exponent, not `-0`,
    /// in range), as [`Cx::int`] accepts it.
    #[inline]
    fn plain_int(&mut self) -> Option<i64> {
        self.next_byte()?;
        let bytes = self.text.as_bytes();
        let mut at = self.pos;
        let negative = bytes.get(at) == Some(&b'-');
        if negative {
            at += 1;
        }
        let first = at;
        let mut magnitude: u64 = 0;
        while let Some(&c) = bytes.get(at) {
            if !c.is_ascii_digit() {
                break;
            }
            magnitude = magnitude.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
            at += 1;
        }
        let digits = at - first;
        // No digits, a leading zero, or a float (fraction / exponent): the general path.
        if digits == 0 || (digits > 1 && bytes.get(first) == Some(&b'0')) {
            return None;
        }
        if matches!(bytes.get(at), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let value = if negative {
            // `-0` is a float to serde_json.
            if magnitude == 0 {
                return None;
            }
            0i64.checked_sub_unsigned(magnitude)?
        } else {
            i64::try_from(magnitude).ok()?
        };
        self.pos = at;
        Some(value)
    }
}

/// Header keys seen so far (a repeated one gives up: the general path keeps the last).
#[derive(Default)]
struct Seen(u16);

impl Seen {
    #[inline]
    fn first(&mut self, bit: u16) -> Option<()> {
        if self.0 & bit != 0 {
            return None;
        }
        self.0 |= bit;
        Some(())
    }
}

impl Cx {
    /// The instruction object at the lexer (its `{` next), or `None` when the general path must
    /// read it; the lexer has then moved by an unspecified amount (the caller keeps a copy).
    ///
    /// It is read in two tries. The first (`quick`) puts nothing on a tape: the opcode's own
    /// fields are only delimited (a plain string, or a run of number bytes) and looked up in
    /// the op memo; a field of another kind, or a miss, makes the second try read the object
    /// again from its start with the field reader's tape. A memo hit in the first try means
    /// every field's bytes are those of a field the lexer read before (and, for a number, the
    /// whole run of number bytes there: the lexer stops at the same byte), so the two tries
    /// give the same instruction.
    ///
    /// Before both, [`Cx::memo_instruction`]: an object spelled as a recent one but for its
    /// name is that instruction again, under the new name.
    pub(super) fn fast_instruction(&mut self, lx: &mut Lexer<'_>) -> Option<Instruction> {
        lx.next_byte()?;
        if let Some(inst) = self.memo_instruction(lx) {
            #[cfg(test)]
            {
                tests::HITS.with(|h| h.set(h.get() + 1));
                tests::RECENT_HITS.with(|h| h.set(h.get() + 1));
            }
            return Some(inst);
        }
        let (start, depth) = (lx.pos, lx.depth);
        let mut tape = self.take_tape();
        let from = lx.clone();
        let mut retry = false;
        let mut name = None;
        let mut r = self.fast_scan(lx, &mut tape, Some(&mut retry), &mut name);
        if r.is_none() && retry {
            *lx = from;
            tape.clear();
            r = self.fast_scan(lx, &mut tape, None, &mut name);
        }
        self.give_tape(tape);
        if let (Some(inst), Some(name)) = (&r, name) {
            self.remember_instruction(Recent { start, name, end: lx.pos, depth, inst: inst.clone() });
        }
        #[cfg(test)]
        tests::HITS.with(|h| h.set(h.get() + usize::from(r.is_some())));
        r
    }

    /// One try of [`Cx::fast_instruction`]: `quick` is where the first try says that the
    /// second one must run (it then returns `None`).
    fn fast_scan(
        &mut self,
        lx: &mut Lexer<'_>,
        tape: &mut Tape,
        mut quick: Option<&mut bool>,
        name_span: &mut Option<(usize, usize)>,
    ) -> Option<Instruction> {
        let text = lx.text;
        let t = tape.push(Kind::Obj, lx.pos, 0);
        lx.open_if(b'{')?;
        let mut seen = Seen::default();
        let (mut opcode, mut name, mut engine) = (None, None, None);
        let (mut ins, mut outs) = (None, None);
        let mut keys = Keys::new();
        let mut fields = Fields::new();
        if !lx.empty(b'}') {
            loop {
                let (key, start) = lx.plain_key()?;
                match key {
                    b"opcode" => {
                        seen.first(1)?;
                        let s = lx.plain_str()?;
                        // A `Loop` is a node of its own, not an instruction.
                        if s == "Loop" {
                            return None;
                        }
                        opcode = Some(Opcode::from_name(s)?);
                    }
                    b"name" => {
                        seen.first(2)?;
                        let (b, at) = lx.plain_bytes()?;
                        *name_span = Some((at, at + b.len()));
                        name = Some(text.get(at..at + b.len())?);
                    }
                    b"engine" => {
                        seen.first(4)?;
                        engine = Some(EngineType::from_name(lx.plain_str()?)?);
                    }
                    b"ins" => {
                        seen.first(8)?;
                        ins = Some(self.fast_operands(lx)?);
                    }
                    b"outs" => {
                        seen.first(16)?;
                        outs = Some(self.fast_operands(lx)?);
                    }
                    // What makes an object a block or a loop: the general path decides.
                    b"instructions" | b"blocks" | b"LoopAxis" => return None,
                    _ if quick.is_some() => {
                        // One of the opcode's own fields, only delimited (for the op memo).
                        lx.next_byte()?;
                        let at = lx.pos;
                        let Some((kind, value)) = lx.quick_scalar() else {
                            lx.pos = at;
                            if let Some(retry) = quick.as_deref_mut() {
                                *retry = true;
                            }
                            return None;
                        };
                        fields.push(Field { key: (start, start + key.len()), kind, value });
                    }
                    _ => {
                        // One of the opcode's own fields: onto the tape, for the field reader.
                        let k = tape.push(Kind::Str, start, start + key.len());
                        let key = text.get(start..start + key.len())?;
                        keys.push(KeyRef { tag: key_tag(key), value: k + 1 });
                        let v = lx.value(tape, Lists::None).ok()?;
                        let value = tape.toks.get(v)?;
                        fields.push(Field {
                            key: (start, start + key.len()),
                            kind: value.kind,
                            value: (value.start, value.end),
                        });
                    }
                }
                if !lx.more(b'}').ok()? {
                    break;
                }
            }
        }
        lx.close();
        let t = lx.seal_object(tape, t, &keys);
        let opcode = opcode?;
        let op = match self.memo_op(text, opcode, &fields) {
            Some(op) => op,
            None if quick.is_some() => {
                if let Some(retry) = quick {
                    *retry = true;
                }
                return None;
            }
            None => {
                let op = self.fast_op(text, tape, t, opcode, keys.len())?;
                self.remember_op(opcode, fields, &op);
                op
            }
        };
        Some(Instruction {
            name: name.map(str::to_owned).unwrap_or_default(),
            engine: engine.unwrap_or(EngineType::Unassigned),
            ins: ins.unwrap_or_default(),
            outs: outs.unwrap_or_default(),
            op,
        })
    }

    /// The opcode's fields (the object token `t` on `tape`, `n` keys) through the one field
    /// reader; `None` when it has something to say.
    fn fast_op(&mut self, text: &str, tape: &Tape, t: usize, opcode: Opcode, n: usize) -> Option<Op> {
        let at = tape.toks.get(t)?.keys;
        let o = Obj {
            map: Entries { doc: Doc { text, tape }, first: t + 1, end: tape.toks.len(), keys: Some((at, n)) },
            path: Path::Root,
        };
        let (diags, gave_up) = (self.diags.len(), self.gave_up);
        let op = read_op(opcode, &o, self);
        if self.diags.len() != diags || self.gave_up != gave_up {
            // The field reader has something to say: the general path says it, in context.
            self.diags.0.truncate(diags);
            self.gave_up = gave_up;
            return None;
        }
        Some(op)
    }

    /// The instruction at the lexer (its `{` next) when its text is a recent one's but for the
    /// name ([`Recent`]); the lexer then stands after its `}`.
    #[inline]
    fn memo_instruction(&self, lx: &mut Lexer<'_>) -> Option<Instruction> {
        let bytes = lx.text.as_bytes();
        let (at, depth) = (lx.pos, lx.depth);
        for r in &self.memo.insts {
            let head = r.name.0 - r.start;
            if r.depth != depth || bytes.get(at..at + head) != bytes.get(r.start..r.name.0) {
                continue;
            }
            let name_at = at + head;
            let Some(len) = bytes.get(name_at..).and_then(string_stop) else { continue };
            let after = name_at + len;
            let tail = r.end - r.name.1;
            // The name ends at a quote (not an escape) and the rest is the same text.
            if bytes.get(after) != Some(&b'"') || bytes.get(after..after + tail) != bytes.get(r.name.1..r.end)
            {
                continue;
            }
            let name = lx.text.get(name_at..after)?.to_owned();
            lx.pos = after + tail;
            let i = &r.inst;
            return Some(Instruction {
                name,
                engine: i.engine,
                ins: copy_operands(&i.ins),
                outs: copy_operands(&i.outs),
                op: i.op.clone(),
            });
        }
        None
    }

    fn remember_instruction(&mut self, recent: Recent) {
        if self.memo.insts.len() < MEMO {
            self.memo.insts.push(recent);
        } else if let Some(slot) = self.memo.insts.get_mut(self.memo.next_inst % MEMO) {
            *slot = recent;
        }
        self.memo.next_inst = (self.memo.next_inst + 1) % MEMO;
    }

    /// The op of a recent instruction whose fields were the same text (same keys, same values
    /// spelled the same, in the same order) with the same opcode: the field reader depends
    /// only on that text and the function's names.
    #[inline]
    fn memo_op(&self, text: &str, opcode: Opcode, fields: &[Field]) -> Option<Op> {
        let bytes = text.as_bytes();
        let span = |(s, e): (usize, usize)| bytes.get(s..e);
        self.memo
            .ops
            .iter()
            .find(|(o, f, _)| {
                *o == opcode
                    && f.len() == fields.len()
                    && f.iter().zip(fields).all(|(a, b)| {
                        a.kind == b.kind && span(a.key) == span(b.key) && span(a.value) == span(b.value)
                    })
            })
            .map(|(_, _, op)| op.clone())
    }

    fn remember_op(&mut self, opcode: Opcode, fields: Fields, op: &Op) {
        let entry = (opcode, fields, op.clone());
        if self.memo.ops.len() < MEMO {
            self.memo.ops.push(entry);
        } else if let Some(slot) = self.memo.ops.get_mut(self.memo.next_op % MEMO) {
            *slot = entry;
        }
        self.memo.next_op = (self.memo.next_op + 1) % MEMO;
    }

    /// An operand list of `physical_ap`s.
    fn fast_operands(&mut self, lx: &mut Lexer<'_>) -> Option<Vec<Operand>> {
        lx.open_if(b'[')?;
        if lx.empty(b']') {
            lx.close();
            return Some(Vec::new());
        }
        let first = Operand::Ap(self.memo_ap(lx)?);
        if !lx.more(b']').ok()? {
            // The common list of one, built in place.
            lx.close();
            return Some(vec![first]);
        }
        let mut out: SmallVec<[Operand; 4]> = SmallVec::new();
        out.push(first);
        loop {
            out.push(Operand::Ap(self.memo_ap(lx)?));
            if !lx.more(b']').ok()? {
                break;
            }
        }
        lx.close();
        // Exactly as long as the general path's (`Vec::with_capacity(len)`).
        let mut v = Vec::with_capacity(out.len());
        v.extend(out.drain(..));
        Some(v)
    }

    /// [`Cx::fast_ap`] through the memo of recent operand texts.
    #[inline]
    fn memo_ap(&mut self, lx: &mut Lexer<'_>) -> Option<AccessPattern> {
        lx.next_byte()?;
        let (start, depth) = (lx.pos, lx.depth);
        let bytes = lx.text.as_bytes();
        for (s, e, d, ap) in &self.memo.operands {
            let len = e - s;
            if *d == depth && bytes.get(start..start + len) == bytes.get(*s..*e) {
                lx.pos = start + len;
                // A memoised operand has no dynamic offset: copy the levels as one slice.
                return Some(AccessPattern { pairs: ApPairs::from_slice(&ap.pairs), dynamic: None, ..*ap });
            }
        }
        let ap = self.fast_ap(lx)?;
        let entry = (start, lx.pos, depth, ap.clone());
        if self.memo.operands.len() < MEMO {
            self.memo.operands.push(entry);
        } else if let Some(slot) = self.memo.operands.get_mut(self.memo.next_operand % MEMO) {
            *slot = entry;
        }
        self.memo.next_operand = (self.memo.next_operand + 1) % MEMO;
        Some(ap)
    }

    /// A `physical_ap` operand without a dynamic offset (as [`Cx::access_pattern`] reads it).
    fn fast_ap(&mut self, lx: &mut Lexer<'_>) -> Option<AccessPattern> {
        lx.open_if(b'{')?;
        let mut seen = Seen::default();
        let (mut kind, mut memref, mut memsetref, mut dtype) = (None, None, None, None);
        let (mut offset, mut pairs) = (0, None);
        if !lx.empty(b'}') {
            loop {
                let (key, _) = lx.plain_key()?;
                match key {
                    b"kind" => {
                        seen.first(1)?;
                        kind = Some(lx.plain_str()?);
                    }
                    b"memref" => {
                        seen.first(2)?;
                        memref = Some(lx.plain_bytes()?);
                    }
                    b"memsetref" => {
                        seen.first(4)?;
                        memsetref = Some(lx.plain_bytes()?);
                    }
                    b"dtype" => {
                        seen.first(8)?;
                        dtype = Some(Dtype::from_name(lx.plain_str()?)?);
                    }
                    b"offset" => {
                        seen.first(16)?;
                        offset = lx.plain_int()?;
                    }
                    b"ap" => {
                        seen.first(32)?;
                        pairs = Some(fast_pairs(lx)?);
                    }
                    _ => return None,
                }
                if !lx.more(b'}').ok()? {
                    break;
                }
            }
        }
        lx.close();
        if kind != Some("physical_ap") {
            return None;
        }
        let loc = self.resolve_loc(lx.text, memref?)?;
        if let Some(set) = memsetref {
            let set = self.resolve_alloc(lx.text, set)?;
            if self.loc_owner.get(loc.index()) != Some(&set) {
                return None;
            }
        }
        Some(AccessPattern { loc, dtype: dtype?, offset, pairs: pairs?, dynamic: None })
    }
}

impl Cx {
    /// The location a `memref` (its bytes at `start` in `text`) names, through the memo.
    #[inline]
    fn resolve_loc(&mut self, text: &str, (name, start): (&[u8], usize)) -> Option<LocId> {
        let bytes = text.as_bytes();
        for &(s, e, id) in self.memo.locs.iter().flatten() {
            if bytes.get(s..e) == Some(name) {
                return Some(id);
            }
        }
        let id = *self.locs.get(text.get(start..start + name.len())?)?;
        let slot = self.memo.next_loc % MEMO;
        if let Some(m) = self.memo.locs.get_mut(slot) {
            *m = Some((start, start + name.len(), id));
        }
        self.memo.next_loc = slot + 1;
        Some(id)
    }

    /// The allocation a `memsetref` names, through the memo.
    #[inline]
    fn resolve_alloc(&mut self, text: &str, (name, start): (&[u8], usize)) -> Option<AllocId> {
        let bytes = text.as_bytes();
        for &(s, e, id) in self.memo.allocs.iter().flatten() {
            if bytes.get(s..e) == Some(name) {
                return Some(id);
            }
        }
        let id = *self.allocs.get(text.get(start..start + name.len())?)?;
        let slot = self.memo.next_alloc % MEMO;
        if let Some(m) = self.memo.allocs.get_mut(slot) {
            *m = Some((start, start + name.len(), id));
        }
        self.memo.next_alloc = slot + 1;
        Some(id)
    }
}

/// A clone of an operand list, an AP without a dynamic offset copied as one slice of levels
/// (what `clone` gives, without its per-level loop).
fn copy_operands(list: &[Operand]) -> Vec<Operand> {
    let mut out = Vec::with_capacity(list.len());
    for o in list {
        out.push(match o {
            Operand::Ap(ap) if ap.dynamic.is_none() => {
                Operand::Ap(AccessPattern { pairs: ApPairs::from_slice(&ap.pairs), dynamic: None, ..*ap })
            }
            o => o.clone(),
        });
    }
    out
}

/// An AP's `[[step, num], ...]` levels.
fn fast_pairs(lx: &mut Lexer<'_>) -> Option<ApPairs> {
    lx.open_if(b'[')?;
    let mut out = ApPairs::new();
    if !lx.empty(b']') {
        loop {
            lx.open_if(b'[')?;
            let step = lx.plain_int()?;
            lx.eat(b',').ok()?;
            let num = lx.plain_int()?;
            if lx.next_byte() != Some(b']') {
                return None;
            }
            lx.close();
            out.push(ApPair::new(step, num));
            if !lx.more(b']').ok()? {
                break;
            }
        }
    }
    lx.close();
    Some(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::json::read::load_slice_general;
    use crate::json::{load_slice, to_json_string};
    use std::cell::Cell;
    use std::path::{Path, PathBuf};
    // SplitMix64, so a failure reproduces from its case number.
    use test_rng::SplitMix64;

    thread_local! {
        /// Instructions the fast path decoded on this thread (so a test can show it ran).
        pub(super) static HITS: Cell<usize> = const { Cell::new(0) };
        /// Of those, the instructions the instruction memo gave.
        pub(super) static RECENT_HITS: Cell<usize> = const { Cell::new(0) };
    }

    fn hits() -> usize {
        HITS.with(Cell::get)
    }

    fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                json_files(&p, out);
            } else if p.extension().is_some_and(|e| e == "json") {
                out.push(p);
            }
        }
    }

    /// Every BIR program of the conformance corpus (the bir-ir suite and the program cases).
    pub(crate) fn corpus() -> Vec<(PathBuf, Vec<u8>)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance");
        let mut files = Vec::new();
        json_files(&root.join("bir-ir"), &mut files);
        json_files(&root.join("programs"), &mut files);
        files.into_iter().filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b))).collect()
    }

    /// Both readers' results, as text (a `Program` or the error with every diagnostic).
    fn both(bytes: &[u8]) -> (String, String) {
        (format!("{:?}", load_slice(bytes)), format!("{:?}", load_slice_general(bytes)))
    }

    /// The fast path and the general path give the same program or the same errors on every
    /// corpus program, and the fast path did decode most of the corpus' instructions.
    #[test]
    fn fast_path_agrees_with_the_general_path_on_the_corpus() {
        let corpus = corpus();
        assert!(corpus.len() > 1000, "{} corpus files", corpus.len());
        let before = hits();
        for (path, bytes) in &corpus {
            let (fast, general) = both(bytes);
            assert_eq!(fast, general, "{}", path.display());
        }
        assert!(hits() - before > 2000, "the fast path decoded only {} instructions", hits() - before);
    }

    /// What the writer writes (keys in another order, every field spelled out) reads the same
    /// both ways, and the fast path reads it.
    #[test]
    fn fast_path_agrees_on_the_writers_spelling() {
        let before = hits();
        for (path, bytes) in corpus() {
            let Ok(p) = load_slice_general(&bytes) else { continue };
            let text = to_json_string(&p);
            let (fast, general) = both(text.as_bytes());
            assert_eq!(fast, general, "{}", path.display());
        }
        assert!(hits() - before > 2000);
    }

    /// Pieces spliced into programs: what the fast path must give up on (nulls, escapes,
    /// repeated keys, floats and `-0` where integers go, other operand kinds, unknown keys,
    /// broken syntax) and what it must read the same.
    const PIECES: &[&str] = &[
        "null",
        "-0",
        "0",
        "1",
        "-1",
        "1.5",
        "1e2",
        "01",
        "9223372036854775808",
        "-9223372036854775808",
        "18446744073709551616",
        "\"a\"",
        "\"\\u0061\"",
        "\"physical_ap\"",
        "\"imm_value\"",
        "\"float32\"",
        "\"bfloat16\"",
        "\"Loop\"",
        "\"TensorCopy\"",
        "\"nan\"",
        "[]",
        "{}",
        "[1,2]",
        "[[1,2]]",
        "{\"step\":1,\"num\":2}",
        "\"name\":\"dup\",",
        "\"opcode\":\"TensorTensor\",",
        "\"ins\":[],",
        "\"offset\":3,",
        "\"memsetref\":\"x\",",
        "\"instructions\":[],",
        "\"zz\":1,",
        "\"op0\":\"mult\",",
        "\"const0\":\"inf\",",
        "\"dtype\":\"int8\",",
        "1.0",
        "1.00",
        "1.0e0",
        "1-1",
        "2.5e+3",
        ",",
        ":",
        "{",
        "}",
        "[",
        "]",
        " ",
        "\"",
        "\\",
    ];

    pub(crate) fn mutate(rng: &mut SplitMix64, bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        for _ in 0..1 + rng.below_usize(3) {
            let at = rng.below_usize(out.len());
            match rng.below_usize(4) {
                // Replace a run of word characters (a value, a key's text) with a piece.
                0 | 1 => {
                    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.';
                    let start =
                        (0..=at).rev().find(|&i| !out.get(i).copied().is_some_and(word)).map_or(0, |i| i + 1);
                    let end = (at..out.len()).find(|&i| !word(out[i])).unwrap_or(out.len());
                    let piece = PIECES[rng.below_usize(PIECES.len())].as_bytes();
                    out.splice(start..end.max(start), piece.iter().copied());
                }
                // Insert a piece after an object's `{`.
                2 => {
                    if let Some(i) = (at..out.len()).find(|&i| out[i] == b'{') {
                        let piece = PIECES[rng.below_usize(PIECES.len())].as_bytes();
                        out.splice(i + 1..i + 1, piece.iter().copied());
                    }
                }
                // Delete a byte.
                _ => {
                    out.remove(at);
                }
            }
        }
        out
    }

    pub(crate) fn ts(name: &str, src: &str, dst: &str) -> String {
        let ap = |m: &str| {
            format!(
                r#"{{"kind":"physical_ap","memref":"{m}","dtype":"float32","offset":0,"ap":[[1,1],[1,1]]}}"#
            )
        };
        format!(
            r#"{{"opcode":"TensorScalar","name":"{name}","op0":"add","const0":1.0,"ins":[{}],"outs":[{}]}}"#,
            ap(src),
            ap(dst)
        )
    }

    pub(crate) fn function(name: &str, locs: &[&str], body: &str) -> String {
        let allocs: Vec<String> = locs
            .iter()
            .map(|l| {
                format!(
                    r#"{{"name":"{l}_set","dtype":"float32","memorylocations":[{{"name":"{l}","type":"SB","dims":[1,4]}}]}}"#
                )
            })
            .collect();
        format!(r#"{{"name":"{name}","allocations":[{}],"blocks":[{body}]}}"#, allocs.join(","))
    }

    /// The operand memo is per function: the same text names other locations in the next one.
    #[test]
    fn operand_memo_is_per_function() {
        let block =
            format!(r#"{{"name":"b","instructions":[{},{}]}}"#, ts("i0", "a", "b"), ts("i1", "a", "b"));
        let text = format!(
            r#"{{"functions":[{},{}]}}"#,
            function("f", &["a", "b"], &block),
            function("g", &["b", "a"], &block)
        );
        let before = hits();
        let (fast, general) = both(text.as_bytes());
        assert_eq!(fast, general);
        assert!(fast.starts_with("Ok"), "{fast}");
        assert_eq!(hits() - before, 4);
    }

    /// The operand memo is per nesting depth: the same text one level deeper may cross the
    /// nesting limit, and then it is the same syntax error both ways.
    #[test]
    fn operand_memo_respects_the_depth_limit() {
        let (mut ok, mut err) = (0, 0);
        for n in 50..70 {
            let mut nested = ts("deep", "a", "b");
            for _ in 0..n {
                nested = format!(r#"{{"name":"n","instructions":[{nested}]}}"#);
            }
            let block = format!(r#"{{"name":"b","instructions":[{},{nested}]}}"#, ts("i0", "a", "b"));
            let text = format!(r#"{{"functions":[{}]}}"#, function("f", &["a", "b"], &block));
            let (fast, general) = both(text.as_bytes());
            assert_eq!(fast, general, "{n}");
            if fast.starts_with("Ok") {
                ok += 1;
            } else {
                err += 1;
            }
        }
        assert!(ok > 0 && err > 0, "{ok} loaded, {err} too deep");
    }

    /// The op memo tells instructions apart by opcode and by the kind and text of each field:
    /// the same fields under another opcode, a string where a number was, another value, a
    /// field more, all read as the general path reads them.
    #[test]
    fn op_memo_tells_fields_apart() {
        let inst = |name: &str, opcode: &str, fields: &str| {
            format!(r#"{{"opcode":"{opcode}","name":"{name}",{fields}"ins":[],"outs":[]}}"#)
        };
        let list = [
            inst("i0", "TensorTensor", r#""op":"add","#),
            inst("i1", "TensorTensor", r#""op":"add","#),
            inst("i2", "TensorReduce", r#""op":"add","axis":"X","#),
            inst("i3", "NoOp", r#""x":1,"#),
            inst("i3b", "GenericRelu", r#""x":1,"#),
            inst("i4", "NoOp", r#""x":"1","#),
            inst("i5", "NoOp", r#""x":1,"y":2,"#),
            inst("i6", "NoOp", r#""x":1,"#),
            inst("i7", "TensorTensor", r#""op":"max","#),
            inst("i8", "TensorTensor", r#""op":"add","acc":"Accumulate","#),
            inst("i9", "TensorTensor", r#""op":"add","op":"mult","#),
        ];
        let block = format!(r#"{{"name":"b","instructions":[{}]}}"#, list.join(","));
        let text = format!(r#"{{"functions":[{}]}}"#, function("f", &["a"], &block));
        let before = hits();
        let (fast, general) = both(text.as_bytes());
        assert_eq!(fast, general);
        assert!(fast.starts_with("Ok"), "{fast}");
        assert_eq!(hits() - before, list.len());
    }

    /// The first try delimits the opcode's own fields without the lexer and trusts an op memo
    /// hit: numbers spelled longer, shorter, with spaces or broken after a remembered spelling,
    /// strings with escapes, other kinds of value, each next to each other, all read as the
    /// general path reads them.
    #[test]
    fn delimited_fields_read_as_the_lexer_reads_them() {
        let variants = [
            r#""op0":"add","const0":1.0,"#,
            r#""op0":"add","const0":1.0e0,"#,
            r#""op0":"add","const0":1.00,"#,
            r#""op0":"add","const0":1,"#,
            r#""op0":"add","const0":10,"#,
            r#""op0":"add","const0": 1.0 ,"#,
            r#""op0":"add","const0":-0,"#,
            r#""op0":"add","const0":1.0-1,"#,
            r#""op0":"add","const0":1.0.0,"#,
            r#""op0":"add","const0":01,"#,
            r#""op0":"add","const0":1e,"#,
            r#""op0":"add","const0":"inf","#,
            r#""op0":"add","const0":[1.0],"#,
            r#""op0":"add","const0":null,"#,
            r#""op0":"add","const0":true,"#,
            r#""op0":"add","const0":1.0,"#,
            r#""op0":"addx","const0":1.0,"#,
            r#""op0":"add","const0":1.0,"op1":"mult","const1":2,"#,
            r#""const0":1.0,"op0":"add","#,
        ];
        let inst = |name: &str, fields: &str| {
            format!(r#"{{"opcode":"TensorScalar","name":"{name}",{fields}"ins":[],"outs":[]}}"#)
        };
        let (mut ok, before) = (0, hits());
        for a in variants {
            for b in variants {
                let list = [inst("i0", a), inst("i1", b), inst("i2", a), inst("i3", b)];
                let block = format!(r#"{{"name":"b","instructions":[{}]}}"#, list.join(","));
                let text = format!(r#"{{"functions":[{}]}}"#, function("f", &["a"], &block));
                let (fast, general) = both(text.as_bytes());
                assert_eq!(fast, general, "{a} then {b}");
                ok += usize::from(fast.starts_with("Ok"));
            }
        }
        assert!(ok > 20 && hits() - before > 80, "{ok} loaded, {} fast", hits() - before);
    }

    /// The instruction memo takes an object for a recent one only when all of its text but a
    /// plain name is the same: names of other lengths, empty, with escapes or other bytes, the
    /// same text one block deeper, a byte changed before or after the name, a name that is not
    /// a string, all read as the general path reads them.
    #[test]
    fn instruction_memo_varies_only_the_name() {
        let inst = |name: &str, c: &str| {
            let ap = |m: &str| {
                format!(
                    r#"{{"kind":"physical_ap","memref":"{m}","dtype":"float32","offset":0,"ap":[[1,1],[1,1]]}}"#
                )
            };
            format!(
                r#"{{"opcode":"TensorScalar","name":{name},"op0":"add","const0":{c},"ins":[{}],"outs":[{}]}}"#,
                ap("a"),
                ap("b")
            )
        };
        let names =
            [r#""i0""#, r#""i1""#, r#""i10000""#, r#""""#, r#""i""#, r#""é ü""#, r#""i"""#, "7", "null"];
        let (mut ok, before) = (0, hits());
        let recent = RECENT_HITS.with(Cell::get);
        for a in names {
            for b in names {
                for c in ["1.0", "1.5"] {
                    let list = [inst(a, "1.0"), inst(b, c), inst(a, c)];
                    let nested = format!(r#"{{"name":"n","instructions":[{}]}}"#, inst(b, "1.0"));
                    let block = format!(r#"{{"name":"b","instructions":[{},{nested}]}}"#, list.join(","));
                    let text = format!(r#"{{"functions":[{}]}}"#, function("f", &["a", "b"], &block));
                    let (fast, general) = both(text.as_bytes());
                    assert_eq!(fast, general, "{a} then {b}, {c}");
                    ok += usize::from(fast.starts_with("Ok"));
                }
            }
        }
        assert!(ok > 40 && hits() - before > 200, "{ok} loaded, {} fast", hits() - before);
        assert!(RECENT_HITS.with(Cell::get) - recent > 50, "the instruction memo was not used");
    }

    /// The word-at-a-time scan finds the first quote, backslash or control byte, as a byte
    /// loop does, at every offset and length.
    #[test]
    fn string_stop_is_the_first_stop_byte() {
        let mut rng = SplitMix64::new(7);
        let alphabet = [b'a', b'"', b'\\', 0x1F, 0x20, 0x00, 0x7F, 0x80, 0xFF, b'!', b'#', b'[', b']'];
        for _ in 0..20_000 {
            let n = rng.below_usize(40);
            let bytes: Vec<u8> = (0..n)
                .map(|_| {
                    if rng.below_usize(6) == 0 {
                        alphabet[rng.below_usize(alphabet.len())]
                    } else {
                        b'a' + rng.below_usize(26) as u8
                    }
                })
                .collect();
            let want = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            assert_eq!(super::string_stop(&bytes), want, "{bytes:?}");
        }
    }

    /// Random mutations of corpus programs read the same both ways: the same program, or the
    /// same errors in the same order with the same locations, or the same syntax error.
    #[test]
    fn fast_path_agrees_with_the_general_path_on_mutations() {
        let corpus = corpus();
        let mut rng = SplitMix64::new(15);
        let (mut same_ok, mut same_err) = (0, 0);
        let before = hits();
        for case in 0..6000 {
            let (path, bytes) = &corpus[rng.below_usize(corpus.len())];
            let text = mutate(&mut rng, bytes);
            let (fast, general) = both(&text);
            assert_eq!(
                fast,
                general,
                "case {case} from {}: {}",
                path.display(),
                String::from_utf8_lossy(&text)
            );
            if fast.starts_with("Ok") {
                same_ok += 1;
            } else {
                same_err += 1;
            }
        }
        // Both outcomes were exercised, and the fast path ran.
        assert!(same_ok > 500 && same_err > 500, "{same_ok} loaded, {same_err} refused");
        assert!(hits() - before > 1000);
    }
}
