//! Logs (issue 49): every command logs to stderr through `tracing`,
//! filtered by `RUST_LOG` (default: `info` for `serve` and `worker`, `warn`
//! for the others), as plain text or, with `--log-format json`, as one JSON
//! object per line. Colour codes are written only to a terminal, and never
//! when `NO_COLOR` is set, so a log redirected to a file reads in a pager.

use std::ffi::OsString;
use std::io::IsTerminal as _;

use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Plain text, one event per line.
    #[default]
    Text,
    /// One JSON object per line (for log collectors).
    Json,
}

/// Whether to write colour codes: only to a terminal, and not when
/// `NO_COLOR` is set to anything but the empty string (no-color.org).
pub fn colour(terminal: bool, no_color: Option<OsString>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

/// Installs the process's logger; `default` is the filter when `RUST_LOG`
/// is unset or does not read.
pub fn init(format: LogFormat, default: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(colour(
                std::io::stderr().is_terminal(),
                std::env::var_os("NO_COLOR"),
            ))
            .try_init(),
        LogFormat::Json => builder.json().with_ansi(false).try_init(),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour(true, None));
        assert!(
            colour(true, Some(OsString::new())),
            "an empty NO_COLOR is unset"
        );
        assert!(!colour(true, Some("1".into())));
        assert!(
            !colour(false, None),
            "a file or a pipe gets no colour codes"
        );
        assert!(!colour(false, Some("1".into())));
    }
}
