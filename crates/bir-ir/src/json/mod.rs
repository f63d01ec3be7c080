//! BIR JSON in and out: the wire format's tolerance rules live here and nowhere else.
//!
//! Reading is one hand-written, zero-copy pass (`lex` scans, `view` reads what was scanned,
//! `read` drives both through the program's structure and decodes into the typed IR while
//! collecting **every** problem with its location: bir-json.md "Conventions": enums by name,
//! optional fields absent or `null`, unknown keys ignored, `"nan"`/`"inf"`/`"-inf"` numbers,
//! `[step, num]` pairs as arrays or objects, `Loop` entries). Node lists are scanned one node at
//! a time onto a reused tape of tokens that borrow the text, so the transient memory is one
//! node's tokens, never a tree of the document; no key or scalar is allocated. Most entries are
//! plain instructions and skip even the tape: `read::fast` decodes them straight from the bytes
//! and hands anything unusual back to the general path, which reads it from its start (one
//! semantics, two speeds; see that module). Text that is not
//! JSON (or nests 128 containers deep) is handed to serde_json only to word and locate the error
//! exactly as it always was. `read::stream` reads a large program from a stream through a
//! bounded window with the same decoders (the text is never held whole beside the IR), and
//! leaves any text with something to report to the whole-text reader. Writing emits one
//! canonical spelling, and reading what was written gives back an equal program.

mod fields;
mod lex;
mod read;
mod view;
mod write;

pub use read::{load_slice, load_str, load_streaming, load_streaming_in, load_value};
pub use write::{to_json_string, to_json_value};

/// Keys every instruction has; everything else belongs to the opcode's own fields.
const HEADER_KEYS: [&str; 5] = ["opcode", "name", "engine", "ins", "outs"];
