//! BIR JSON read from a stream in a bounded window (issue #9: a program's peak memory is its IR,
//! not its text plus its IR).
//!
//! [`load_streaming`] reads the text through a window of about a mebibyte. The instructions of
//! every top-level block — `functions[f].blocks[b].instructions`, the lists the reader streams
//! as it scans them — are decoded as they pass through the window, by the reader's own
//! [`Cx::entry`] over the window's text, with the function's names resolved exactly as the
//! reader resolves them (its `allocations` decoded first, as in the reader's scan). Everything
//! else is copied into a *skeleton*: the text with each of those lists emptied to `[]`. The
//! skeleton is then read by the ordinary reader, which takes each pre-decoded list where it
//! meets the emptied one ([`Prebuilt`]); the program is the reader's, built from the same
//! decoders, so it is the program [`load_slice`](super::load_slice) gives for the whole text.
//!
//! The stream only ever answers for text that loads without a word to say. Anything else — a
//! diagnostic, a syntax error, invalid UTF-8, an unusual layout the reader would read some other
//! way, an entry larger than the largest window, more bytes than the cap — returns `None`, and
//! the caller reads the whole text and hands it to `load_slice`, whose errors are located in the
//! whole text as they always were. So there is one semantics, and the stream is only a way to
//! hold less of the text at once.
//!
//! The fast path's memo remembers spans of the text it read; the window's bytes move on every
//! refill, so each refill starts a new memo (`Cx::memo` is only a cache).

use super::fast::Memo;
use super::{Abort, Cx, Path};
use crate::json::lex::{DEPTH_LIMIT, Lexer, Lists, Tape};
use crate::json::view::{Doc, J};
use crate::program::{Node, Program};
use std::io::Read;

/// The window's usual size.
const WINDOW: usize = 1 << 20;
/// Before each entry, at least this much of the text is in the window (or the rest of it).
const RESERVE: usize = 64 << 10;
/// The largest window: an entry longer than this goes to the whole-text reader.
const MAX_WINDOW: usize = 64 << 20;

/// Reads a BIR JSON program from `src`, holding a bounded window of its text at a time (see the
/// module doc). At most `max_bytes` are read.
///
/// `Ok(None)` means "read the whole text and call [`load_slice`](super::load_slice)": the text has
/// something to report (or is laid out in a way the stream leaves to the whole-text reader), and
/// only the whole-text reader locates its diagnostics. `Ok(Some(p))` is the program
/// `load_slice` gives for the same bytes. I/O errors are returned as they come.
pub fn load_streaming<R: Read>(src: R, max_bytes: u64) -> std::io::Result<Option<Program>> {
    load_streaming_in(src, max_bytes, WINDOW)
}

/// [`load_streaming`] with a window of `window` bytes to start with (it grows for an entry
/// longer than what it holds, up to 64 MiB). Tests and the fuzzer use tiny windows, so that
/// every boundary falls somewhere.
pub fn load_streaming_in<R: Read>(src: R, max_bytes: u64, window: usize) -> std::io::Result<Option<Program>> {
    let mut w =
        Window { src, text: String::new(), pending: Vec::new(), eof: false, total: 0, cap: max_bytes };
    let mut s =
        Stream { pre: Cx::default(), pre_function: None, skel: Vec::new(), lists: Vec::new(), window };
    match s.scan(&mut w) {
        Ok(()) => {}
        Err(Fail::Io(e)) => return Err(e),
        Err(Fail::Bail) => return Ok(None),
    }
    let Ok(skel) = String::from_utf8(s.skel) else { return Ok(None) };
    let mut cx = Cx { prebuilt: Prebuilt { lists: s.lists, taken: 0 }, ..Cx::default() };
    Ok(match super::read_pass_in(&mut cx, &skel) {
        Ok(Ok(p)) if cx.prebuilt.all_taken() => Some(p),
        _ => None,
    })
}

/// The pre-decoded node lists of a skeleton, by the skeleton offset of each emptied list's `[`.
#[derive(Default)]
pub(super) struct Prebuilt {
    lists: Vec<(usize, Option<Vec<Node>>)>,
    taken: usize,
}

impl Prebuilt {
    /// The list emptied at `pos`, once.
    #[inline]
    pub(super) fn take(&mut self, pos: usize) -> Option<Vec<Node>> {
        if self.lists.is_empty() {
            return None;
        }
        let i = self.lists.binary_search_by_key(&pos, |(p, _)| *p).ok()?;
        let nodes = self.lists.get_mut(i)?.1.take()?;
        self.taken += 1;
        Some(nodes)
    }

    /// Every list was taken where it was emptied: the reader read the skeleton's lists where
    /// the stream decoded them.
    fn all_taken(&self) -> bool {
        self.taken == self.lists.len()
    }
}

/// Why the stream stopped.
enum Fail {
    Io(std::io::Error),
    /// Leave it to the whole-text reader.
    Bail,
}

impl From<std::io::Error> for Fail {
    fn from(e: std::io::Error) -> Self {
        Fail::Io(e)
    }
}

/// The window: the UTF-8-checked text read so far and not yet let go of.
struct Window<R> {
    src: R,
    text: String,
    /// The first bytes of a character the window's end split (at most three), for the next fill.
    pending: Vec<u8>,
    eof: bool,
    /// Bytes read, in all.
    total: u64,
    cap: u64,
}

impl<R: Read> Window<R> {
    /// Lets go of the text before `from` (positions shift down by `from`) and reads until the
    /// window holds `size` bytes or the text ends.
    fn refill(&mut self, from: usize, size: usize) -> Result<(), Fail> {
        if size > MAX_WINDOW {
            return Err(Fail::Bail);
        }
        let mut bytes = std::mem::take(&mut self.text).into_bytes();
        bytes.drain(..from.min(bytes.len()));
        bytes.append(&mut self.pending);
        let mut len = bytes.len();
        let size = size.max(len + 1);
        bytes.try_reserve(size - len).map_err(|_| Fail::Bail)?;
        bytes.resize(size, 0);
        while len < size && !self.eof {
            match self.src.read(bytes.get_mut(len..).unwrap_or_default()) {
                Ok(0) => self.eof = true,
                Ok(k) => {
                    len += k;
                    self.total = self.total.saturating_add(k as u64);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Fail::Io(e)),
            }
        }
        if self.total > self.cap {
            return Err(Fail::Bail);
        }
        bytes.truncate(len);
        self.text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                let u = e.utf8_error();
                if u.error_len().is_some() || self.eof {
                    return Err(Fail::Bail);
                }
                let mut bytes = e.into_bytes();
                self.pending = bytes.split_off(u.valid_up_to());
                String::from_utf8(bytes).map_err(|_| Fail::Bail)?
            }
        };
        Ok(())
    }
}

/// The keys the stream follows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Other,
    Functions,
    Allocations,
    Blocks,
    Instructions,
    Opcode,
}

impl Key {
    fn of(text: &[u8]) -> Key {
        match text {
            b"functions" => Key::Functions,
            b"allocations" => Key::Allocations,
            b"blocks" => Key::Blocks,
            b"instructions" => Key::Instructions,
            b"opcode" => Key::Opcode,
            _ => Key::Other,
        }
    }
}

/// One open container of the skeleton, with what the reader's scan would know there.
struct Frame {
    obj: bool,
    /// An object's latest key (its value is being read or comes next).
    key: Key,
    /// An object expects a key next (after `{` or `,`).
    expect_key: bool,
    /// A function: `allocations` came (the reader then streams a first `blocks` at once).
    allocations_seen: bool,
    blocks_seen: bool,
    /// A function: this `blocks` is the one the reader streams.
    streams_blocks: bool,
    /// A function: where its latest `allocations` array starts in the skeleton, and its span
    /// once it is whole (`None` when the latest `allocations` is not an array).
    alloc_start: usize,
    allocations: Option<(usize, usize)>,
    /// A block: an `opcode` came, or an `instructions` already did.
    opcode_seen: bool,
    instructions_seen: bool,
    /// A block: this `instructions` is the one the reader streams.
    streams_instructions: bool,
}

impl Frame {
    fn new(obj: bool) -> Frame {
        Frame {
            obj,
            key: Key::Other,
            expect_key: obj,
            allocations_seen: false,
            blocks_seen: false,
            streams_blocks: false,
            alloc_start: 0,
            allocations: None,
            opcode_seen: false,
            instructions_seen: false,
            streams_instructions: false,
        }
    }
}

struct Stream {
    /// The decoding context of the instructions being streamed: the current function's names.
    pre: Cx,
    /// Which function (its index in `functions`) `pre` holds the names of.
    pre_function: Option<usize>,
    skel: Vec<u8>,
    lists: Vec<(usize, Option<Vec<Node>>)>,
    window: usize,
}

impl Stream {
    /// Copies the text into the skeleton, decoding the top-level blocks' instructions instead.
    fn scan<R: Read>(&mut self, w: &mut Window<R>) -> Result<(), Fail> {
        let mut stack: Vec<Frame> = Vec::new();
        // A string being read: its first bytes (enough to tell the keys we follow) and whether
        // it is a key; `None` outside strings.
        let mut string: Option<(Vec<u8>, bool)> = None;
        let mut escaped = false;
        let mut function = 0usize;
        let mut pos = 0;
        w.refill(0, self.window)?;
        loop {
            let Some(&b) = w.text.as_bytes().get(pos) else {
                if w.eof {
                    return if w.pending.is_empty() { Ok(()) } else { Err(Fail::Bail) };
                }
                w.refill(pos, self.window)?;
                pos = 0;
                continue;
            };
            pos += 1;
            // The skeleton may be most of the text: it grows fallibly (a text too large for the
            // host is the whole-text reader's error to report).
            if self.skel.len() == self.skel.capacity()
                && self.skel.try_reserve(self.skel.len().max(1 << 12)).is_err()
            {
                return Err(Fail::Bail);
            }
            self.skel.push(b);
            if let Some((text, is_key)) = &mut string {
                if escaped {
                    escaped = false;
                    // An escaped key is left to the reader (it follows no escaped key here).
                    text.push(0);
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    if *is_key && let Some(f) = stack.last_mut() {
                        f.key = Key::of(text);
                        f.expect_key = false;
                        key_read(&mut stack);
                    }
                    string = None;
                } else if b < 0x20 {
                    return Err(Fail::Bail);
                } else if text.len() < 16 {
                    text.push(b);
                }
                continue;
            }
            match b {
                // What is not JSON outside a string (a NUL, a control byte, a stray letter) is
                // the whole-text reader's to report, at once.
                b' ' | b'\n' | b'\t' | b'\r' | b':' | b'0'..=b'9' | b'-' | b'+' | b'.' => {}
                b'a'..=b'z' | b'E' => {}
                b'"' | b',' | b'{' | b'[' | b'}' | b']' => {}
                _ => return Err(Fail::Bail),
            }
            match b {
                b'"' => string = Some((Vec::new(), stack.last().is_some_and(|f| f.obj && f.expect_key))),
                b',' => {
                    if let Some(f) = stack.last_mut().filter(|f| f.obj) {
                        f.expect_key = true;
                    }
                }
                // Nesting the reader refuses is left to it (and the stack stays small).
                b'{' | b'[' if stack.len() + 1 >= DEPTH_LIMIT => return Err(Fail::Bail),
                b'{' => {
                    stack.push(Frame::new(true));
                    if stack.len() == 3 {
                        // A new function: its names are decoded when its first list streams.
                        function += 1;
                    }
                }
                b'[' => {
                    let depth = stack.len();
                    if depth == 3
                        && let Some(f) = stack.last_mut()
                        && f.obj
                        && f.key == Key::Allocations
                    {
                        f.alloc_start = self.skel.len() - 1;
                    }
                    let streams = depth == 5
                        && top_level_block(&stack)
                        && stack.last().is_some_and(|f| f.key == Key::Instructions && f.streams_instructions);
                    stack.push(Frame::new(false));
                    if streams {
                        let list_at = self.skel.len() - 1;
                        let allocations = stack.get(2).and_then(|f| f.allocations);
                        let nodes = self.entries(w, &mut pos, stack.len(), function, allocations)?;
                        self.lists.push((list_at, Some(nodes)));
                        #[cfg(test)]
                        STREAMED.with(|n| n.set(n.get() + 1));
                        // The `]` comes next, as the skeleton's own byte.
                    }
                }
                b'}' | b']' => {
                    let Some(closed) = stack.pop() else { return Err(Fail::Bail) };
                    if closed.obj != (b == b'}') {
                        return Err(Fail::Bail);
                    }
                    if !closed.obj
                        && stack.len() == 3
                        && let Some(f) = stack.last_mut()
                        && f.key == Key::Allocations
                    {
                        f.allocations = Some((f.alloc_start, self.skel.len()));
                    }
                }
                _ => {}
            }
        }
    }

    /// The entries of a list the reader streams: `pos` is just past its `[`; on return it is
    /// at the `]`. Entries are decoded as the reader decodes them, then dropped from the window.
    fn entries<R: Read>(
        &mut self,
        w: &mut Window<R>,
        pos: &mut usize,
        depth: usize,
        function: usize,
        allocations: Option<(usize, usize)>,
    ) -> Result<Vec<Node>, Fail> {
        if self.pre_function != Some(function) {
            let span = allocations.ok_or(Fail::Bail)?;
            self.pre = names(self.skel.get(span.0..span.1).ok_or(Fail::Bail)?)?;
            self.pre_function = Some(function);
        }
        let mut nodes = Vec::new();
        let mut first = true;
        let mut entry = false;
        let mut index = 0;
        loop {
            if w.text.len() - *pos < RESERVE && !w.eof {
                self.refill(w, pos, self.window.max(w.text.len()))?;
            }
            let mut lx = Lexer::at(&w.text, *pos, depth);
            let step = if first && lx.empty(b']') {
                Ok(None)
            } else if first || entry {
                match self.pre.entry(&mut lx, &Path::Root, index) {
                    Ok(Some(node)) => Ok(Some(Some(node))),
                    Ok(None) => return Err(Fail::Bail),
                    Err(e) => Err(e),
                }
            } else {
                match lx.more(b']') {
                    Ok(true) => Ok(Some(None)),
                    Ok(false) => Ok(None),
                    Err(_) => Err(Abort::Syntax),
                }
            };
            if self.pre.gave_up || !self.pre.diags.is_empty() {
                return Err(Fail::Bail);
            }
            match step {
                // The list ends: `]` is next.
                Ok(None) => {
                    *pos = lx.pos;
                    nodes.shrink_to_fit();
                    return Ok(nodes);
                }
                Ok(Some(Some(node))) => {
                    nodes.push(node);
                    *pos = lx.pos;
                    (first, entry) = (false, false);
                    index += 1;
                }
                Ok(Some(None)) => {
                    *pos = lx.pos;
                    entry = true;
                }
                // The text may only have stopped at the window's end: read on, in a window twice
                // as large as what is left, and try again.
                Err(Abort::Syntax) if !w.eof => {
                    let ahead = w.text.len() - *pos;
                    self.refill(w, pos, (2 * ahead).max(self.window))?;
                }
                Err(_) => return Err(Fail::Bail),
            }
        }
    }

    fn refill<R: Read>(&mut self, w: &mut Window<R>, pos: &mut usize, size: usize) -> Result<(), Fail> {
        w.refill(*pos, size)?;
        *pos = 0;
        self.pre.memo = Memo::default();
        Ok(())
    }
}

/// After an object key: what the reader's scan notes for it (`function_scan`, `entry_scan`).
fn key_read(stack: &mut [Frame]) {
    let depth = stack.len();
    let Some(f) = stack.last_mut() else { return };
    if depth == 3 {
        match f.key {
            Key::Allocations => {
                f.allocations_seen = true;
                f.allocations = None;
            }
            Key::Blocks => {
                f.streams_blocks = f.allocations_seen && !f.blocks_seen;
                f.blocks_seen = true;
            }
            _ => {}
        }
    } else if depth == 5 {
        match f.key {
            Key::Opcode => f.opcode_seen = true,
            Key::Instructions => {
                f.streams_instructions = !f.opcode_seen && !f.instructions_seen;
                f.instructions_seen = true;
            }
            _ => {}
        }
    }
}

/// The open containers are root `{` › `functions` `[` › function `{` › its streamed `blocks` `[`
/// › a block `{`.
fn top_level_block(stack: &[Frame]) -> bool {
    matches!(
        stack,
        [root, functions, function, blocks, block]
            if root.obj && root.key == Key::Functions
                && !functions.obj
                && function.obj && function.key == Key::Blocks && function.streams_blocks
                && !blocks.obj
                && block.obj
    )
}

/// A decoding context holding a function's names, from its `allocations` array's text, as the
/// reader's scan sets one up (`start_function`, then `memory`). Anything to report: bail.
fn names(allocations: &[u8]) -> Result<Cx, Fail> {
    let allocations = std::str::from_utf8(allocations).map_err(|_| Fail::Bail)?;
    let text = format!("{{\"allocations\":{allocations}}}");
    // Every diagnostic in the streamed lists gives up (`Cx::err`): the stream then bails.
    let mut cx = Cx { speculative: 1, ..Cx::default() };
    let mut lx = Lexer::new(&text);
    let mut tape = Tape::default();
    let root = lx.value(&mut tape, Lists::None).map_err(|_| Fail::Bail)?;
    lx.finish().map_err(|_| Fail::Bail)?;
    let v = J { doc: Doc { text: &text, tape: &tape }, at: root };
    let o = cx.obj(v, &Path::Root).ok_or(Fail::Bail)?;
    cx.start_function(&o);
    let _ = cx.memory(&o);
    if cx.gave_up || !cx.diags.is_empty() {
        return Err(Fail::Bail);
    }
    Ok(cx)
}

#[cfg(test)]
thread_local! {
    /// Lists the stream decoded on this thread (so a test can show it streamed).
    static STREAMED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
mod tests {
    use super::super::fast::tests::{corpus, function, mutate, ts};
    use super::{STREAMED, load_streaming_in};
    use crate::json::{load_slice, to_json_string};
    use std::io::Read;
    use test_rng::SplitMix64;

    fn streamed() -> usize {
        STREAMED.with(std::cell::Cell::get)
    }

    /// A reader that hands out at most `step` bytes a call (and fails after `fail_at` bytes).
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
        fail_at: Option<usize>,
        at: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.fail_at.is_some_and(|f| self.at >= f) {
                return Err(std::io::Error::other("the disk fell off"));
            }
            let n = self.step.min(buf.len()).min(self.bytes.len() - self.at);
            buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn stream(bytes: &[u8], window: usize) -> Option<crate::Program> {
        load_streaming_in(bytes, u64::MAX, window).unwrap()
    }

    /// What the stream gives is what `load_slice` gives: the same program, or "read it whole".
    fn agrees(bytes: &[u8], window: usize, what: &str) -> bool {
        let whole = load_slice(bytes);
        match stream(bytes, window) {
            Some(p) => {
                assert_eq!(
                    format!("{:?}", Ok::<_, ()>(&p)),
                    format!("{:?}", whole.as_ref().map_err(|_| ())),
                    "{what}"
                );
                true
            }
            None => false,
        }
    }

    /// Every corpus program streams to what `load_slice` reads, at window sizes from one byte
    /// up; the corpus' valid programs do stream (their lists decoded through the window).
    #[rstest::rstest]
    #[case(1)]
    #[case(61)]
    #[case(4096)]
    #[case(1 << 20)]
    fn streaming_agrees_with_the_whole_text_reader_on_the_corpus(#[case] window: usize) {
        let corpus = corpus();
        let before = streamed();
        let (mut valid, mut streamed_ok) = (0, 0);
        for (path, bytes) in &corpus {
            let ok = load_slice(bytes).is_ok();
            valid += usize::from(ok);
            if agrees(bytes, window, &path.display().to_string()) {
                streamed_ok += 1;
            }
        }
        assert!(valid > 500, "{valid} valid corpus programs");
        // Programs laid out as the writer lays them out stream; a few hand-written ones may not.
        assert!(streamed_ok * 10 >= valid * 9, "{streamed_ok} of {valid} valid programs streamed");
        assert!(streamed() - before > 500, "only {} lists streamed", streamed() - before);
    }

    /// The writer's spelling of every valid corpus program streams, and to the same program.
    #[test]
    fn the_writers_spelling_always_streams() {
        for (path, bytes) in corpus() {
            let Ok(p) = load_slice(&bytes) else { continue };
            let text = to_json_string(&p);
            for window in [3, 1 << 20] {
                assert!(
                    agrees(text.as_bytes(), window, &path.display().to_string()),
                    "{} did not stream",
                    path.display()
                );
            }
        }
    }

    /// Random damage to corpus programs: whenever the stream answers, `load_slice` reads the same
    /// program (so every diagnostic and syntax error is left to it).
    #[test]
    fn damaged_programs_stream_only_to_what_the_whole_text_reader_reads() {
        let corpus = corpus();
        let mut rng = SplitMix64::new(0x5EED_0F57);
        let (mut answered, mut declined) = (0, 0);
        for case in 0..3000 {
            let (path, bytes) = &corpus[rng.below_usize(corpus.len())];
            let damaged = mutate(&mut rng, bytes);
            let window = [1, 17, 256, 1 << 20][rng.below_usize(4)];
            if agrees(&damaged, window, &format!("case {case}: {} (window {window})", path.display())) {
                answered += 1;
            } else {
                declined += 1;
            }
        }
        assert!(answered > 100 && declined > 100, "{answered} answered, {declined} declined");
    }

    /// Names of several UTF-8 widths, split by every window boundary; an entry far larger than
    /// the window; a reader that returns a few bytes a call.
    #[test]
    fn window_boundaries_split_nothing() {
        let names = ["a", "é", "名前", "𝄞x"];
        let mut body = Vec::new();
        for (k, n) in names.iter().cycle().take(40).enumerate() {
            body.push(ts(&format!("{n}{k}"), "a", "b"));
        }
        // One long entry: a name of 200 KiB (past the reserve and the small windows).
        body.push(ts(&"ü".repeat(100 << 10), "b", "a"));
        let block = format!(r#"{{"name":"blöck","instructions":[{}]}}"#, body.join(",\n "));
        let text = format!(r#"{{"functions":[{}]}}"#, function("f", &["a", "b"], &block));
        assert!(load_slice(text.as_bytes()).is_ok());
        for window in (1..48).chain([4093, 65536]) {
            let before = streamed();
            assert!(agrees(text.as_bytes(), window, &format!("window {window}")), "window {window} declined");
            assert_eq!(streamed() - before, 1);
        }
        for step in [1, 2, 3, 5] {
            let r = Trickle { bytes: text.as_bytes(), step, fail_at: None, at: 0 };
            let p = load_streaming_in(r, u64::MAX, 64).unwrap();
            assert_eq!(p.as_ref(), load_slice(text.as_bytes()).as_ref().ok(), "step {step}");
        }
    }

    /// Two functions with the same instruction text: each list resolves names in its own
    /// function (the memo and the names are per function).
    #[test]
    fn each_function_streams_with_its_own_names() {
        let block =
            format!(r#"{{"name":"b","instructions":[{},{}]}}"#, ts("i0", "a", "b"), ts("i1", "a", "b"));
        let text = format!(
            r#"{{"functions":[{},{}]}}"#,
            function("f", &["a", "b"], &block),
            function("g", &["b", "a"], &block)
        );
        let p = stream(text.as_bytes(), 50).expect("streams");
        assert_eq!(Some(&p), load_slice(text.as_bytes()).as_ref().ok());
        let loc = |f: usize| match &p.functions[f].body[0] {
            crate::Node::Block(b) => match &b.body[0] {
                crate::Node::Inst(i) => i.in_ap(0).map(|ap| ap.loc),
                _ => None,
            },
            _ => None,
        };
        assert_ne!(loc(0), loc(1));
    }

    /// What the stream leaves to the whole-text reader: a name that resolves nowhere, a syntax
    /// error inside a list and after it, invalid UTF-8, text past the cap; and an I/O error is
    /// the caller's.
    #[test]
    fn what_has_something_to_report_is_left_to_the_whole_text_reader() {
        let good = |body: &str| {
            let block = format!(r#"{{"name":"b","instructions":[{body}]}}"#);
            format!(r#"{{"functions":[{}]}}"#, function("f", &["a", "b"], &block))
        };
        let ok = good(&ts("i", "a", "b"));
        assert!(stream(ok.as_bytes(), 8).is_some());
        for bad in [
            good(&ts("i", "a", "nowhere")),
            good(&format!("{},", ts("i", "a", "b"))),
            format!("{ok} x"),
            ok.replacen("\"b\"", "\"b\u{0}\"", 1),
        ] {
            assert!(load_slice(bad.as_bytes()).is_err(), "{bad}");
            assert!(stream(bad.as_bytes(), 8).is_none(), "{bad}");
        }
        let mut invalid = ok.clone().into_bytes();
        let at = invalid.iter().position(|&b| b == b'i').unwrap();
        invalid[at] = 0xFF;
        assert!(stream(&invalid, 8).is_none());
        // Nesting past the reader's limit, in the skeleton: declined without a deep stack.
        let mut nul = ok.clone().into_bytes();
        nul.extend([0u8; 64]);
        assert!(stream(&nul, 8).is_none());
        let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
        assert!(load_slice(deep.as_bytes()).is_err());
        assert!(stream(deep.as_bytes(), 8).is_none());
        assert!(load_streaming_in(ok.as_bytes(), ok.len() as u64 - 1, 8).unwrap().is_none());
        assert!(load_streaming_in(ok.as_bytes(), ok.len() as u64, 8).unwrap().is_some());
        let r = Trickle { bytes: ok.as_bytes(), step: 7, fail_at: Some(20), at: 0 };
        assert!(load_streaming_in(r, u64::MAX, 8).is_err());
    }
}
