//! BIR JSON in and out: the wire format's tolerance rules live here and nowhere else.
//!
//! Reading parses the text into a lean borrowed tree (`tree`; the only step that can stop
//! early, on a syntax error), then decodes that tree into the typed IR while collecting
//! **every** problem with its location (bir-json.md "Conventions": enums by name, optional
//! fields absent or `null`, unknown keys ignored, `"nan"`/`"inf"`/`"-inf"` numbers,
//! `[step, num]` pairs as arrays or objects, `Loop` entries). Node lists are kept as text and
//! decoded one node at a time, so the transient memory is one node's tree, not the document's.
//! Text that is not JSON (or nests too deep) is re-parsed as a `serde_json::Value`, whose
//! errors the loader reports. Writing emits one canonical spelling, and reading what was
//! written gives back an equal program.

mod fields;
mod lex;
mod read;
mod view;
mod write;

pub use read::{load_slice, load_str, load_value};
pub use write::{to_json_string, to_json_value};

/// Keys every instruction has; everything else belongs to the opcode's own fields.
const HEADER_KEYS: [&str; 5] = ["opcode", "name", "engine", "ins", "outs"];
