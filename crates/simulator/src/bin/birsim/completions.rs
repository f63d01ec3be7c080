//! `birsim completions SHELL`: the shell completion script for every subcommand and flag,
//! generated from the same clap definition the parser uses (clap_complete).

use super::Exit;

/// Print a shell completion script
///
/// bash: `birsim completions bash > ~/.local/share/bash-completion/completions/birsim`;
/// zsh: into a folder on $fpath as `_birsim`; fish: `birsim completions fish >
/// ~/.config/fish/completions/birsim.fish`.
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Runs `birsim completions`.
pub fn completions(args: &CompletionsArgs) -> Result<(), Exit> {
    let mut cmd = <super::Cli as clap::CommandFactory>::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "birsim", &mut out);
    super::exit::emit_bytes(&out)
}
