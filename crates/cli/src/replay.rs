//! `croupier replay`: re-play a record through the rules and verify it.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use croupier_rules::{Game, GameKind, GameVisitor, Record};

use crate::error::CliError;

/// Arguments of `croupier replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Record files (JSON) to replay.
    #[arg(required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    /// Only verify: print one line per record instead of the transcript.
    #[arg(long, short)]
    quiet: bool,
}

struct Transcript<'a>(&'a Record);

impl GameVisitor for Transcript<'_> {
    type Output = (String, Result<(), croupier_rules::ReplayError>);
    fn visit<G: Game>(self) -> Self::Output {
        self.0.transcript::<G>()
    }
}

/// Runs `croupier replay`: exit 0 if every record reproduces its outcome,
/// 1 if any does not, 2 if any file cannot be read as a record. Every file is
/// checked either way.
pub fn run(args: ReplayArgs) -> Result<ExitCode, CliError> {
    let (mut failed, mut unreadable) = (0usize, 0usize);
    for path in &args.files {
        let record = match read_record(path) {
            Ok(r) => r,
            Err(e) => {
                unreadable += 1;
                eprintln!("error: {e:#}");
                continue;
            }
        };
        let kind: GameKind = match record.game.parse() {
            Ok(k) => k,
            Err(e) => {
                unreadable += 1;
                eprintln!("error: {}: {e}", path.display());
                continue;
            }
        };
        let (text, result) = kind.visit(Transcript(&record));
        if !args.quiet && !text.is_empty() {
            crate::client::say(text.trim_end_matches('\n'));
        }
        match result {
            Ok(()) => crate::client::say(&format!("{}: ok", path.display())),
            Err(e) => {
                failed += 1;
                crate::client::say(&format!("{}: DOES NOT REPLAY: {e}", path.display()));
            }
        }
    }
    if unreadable > 0 {
        return Ok(ExitCode::from(2));
    }
    if failed > 0 {
        eprintln!(
            "error: {failed} of {} records do not reproduce",
            args.files.len()
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn read_record(path: &std::path::Path) -> anyhow::Result<Record> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a game record", path.display()))
}
