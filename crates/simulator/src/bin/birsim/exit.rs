//! How a `birsim` subcommand fails: an [`Exit`] carries the process exit code and the message
//! printed as `birsim: MESSAGE` on stderr. Codes (README "The birsim CLI"): 0 ok, 1 the program
//! faulted (isa validate: a word is invalid), 2 bad input or usage, 3 an internal birsim error.

/// A user-facing failure: exit code and message.
pub struct Exit(pub u8, pub String);

/// Bad input or usage: exit 2.
pub fn bad(msg: impl Into<String>) -> Exit {
    Exit(2, msg.into())
}

/// Writes a report to stdout. A closed pipe (`birsim ops | head -1`) ends the output quietly:
/// the reader asked for no more, so it is no error and the command's exit code stays what its
/// result makes it (README "Exit codes"); any other write failure (a full disk) is exit 2.
pub fn emit(text: &str) -> Result<(), Exit> {
    emit_bytes(text.as_bytes())
}

/// [`emit`] for bytes (`birsim isa encode` without `-o`, `birsim completions`).
pub fn emit_bytes(bytes: &[u8]) -> Result<(), Exit> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(bad(format!("cannot write stdout: {e}"))),
        _ => Ok(()),
    }
}
