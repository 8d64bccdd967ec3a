//! The open-file limit: raised to its hard maximum at start.

use nix::sys::resource::{getrlimit, setrlimit, Resource};

/// Open files below which the server warns: it cannot hold many bots'
/// connections.
pub const LOW: u64 = 4096;

/// Raises the soft open-file limit to the hard one where allowed, warns when
/// the result is below [`LOW`], and returns the limit in force.
pub fn raise_fd_limit() -> u64 {
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        tracing::warn!("cannot read the open-file limit");
        return LOW;
    };
    let limit = if soft < hard {
        match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
            Ok(()) => hard,
            Err(e) => {
                tracing::warn!("cannot raise the open-file limit from {soft} to {hard}: {e}");
                soft
            }
        }
    } else {
        soft
    };
    if limit < LOW {
        tracing::warn!(
            "the open-file limit is {limit}: the server caps connections below it; raise it (ulimit -n) for many bots"
        );
    }
    limit
}
