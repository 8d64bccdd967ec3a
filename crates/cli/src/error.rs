//! The one error of every command, with the exit code it deserves.

/// An error with the exit code it deserves.
#[derive(Debug)]
pub enum CliError {
    /// Bad input from the user (unknown game, bot, variant): exit code 2.
    Usage(String),
    /// The command ran and failed (I/O, a record that does not verify): exit 1.
    Failed(anyhow::Error),
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Usage(why) => f.write_str(why),
            CliError::Failed(e) => write!(f, "{e}"),
        }
    }
}

impl From<anyhow::Error> for CliError {
    fn from(e: anyhow::Error) -> Self {
        CliError::Failed(e)
    }
}
