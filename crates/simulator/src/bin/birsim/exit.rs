//! How a `birsim` subcommand fails: an [`Exit`] carries the process exit code and the message
//! printed as `birsim: MESSAGE` on stderr. Codes (README "The birsim CLI"): 0 ok, 1 the program
//! faulted (isa validate: a word is invalid), 2 bad input or usage, 3 an internal birsim error.

/// A user-facing failure: exit code and message.
pub struct Exit(pub u8, pub String);

/// Bad input or usage: exit 2.
pub fn bad(msg: impl Into<String>) -> Exit {
    Exit(2, msg.into())
}
