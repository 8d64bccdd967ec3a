//! Where a program would be run from, as a shell would find it: the one
//! lookup that starting a bot, sandboxing it and checking a bot
//! specification share.

use std::path::{Path, PathBuf};

/// Where `program` would be run from: a path with a slash as it is, a bare
/// name looked up in `PATH`; `None` if there is no executable file there.
pub fn find_program(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let p = Path::new(program);
        return runnable(p).then(|| p.to_path_buf());
    }
    std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(program))
                .find(|p| runnable(p))
        })
        .unwrap_or(None)
}
