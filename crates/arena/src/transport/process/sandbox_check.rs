//! Whether the sandbox works here, asked before the first match: a start
//! of `true` in a sandbox ([`check`]), and whether a program and its
//! scripts can be found and read inside the sandbox it will get
//! ([`check_program`]). Each error is one line that names the fix.

use std::os::fd::AsRawFd;
use std::path::Path;

use super::sandbox::{is_root, wrap_as, Handed, SandboxLimits, NOBODY};
use crate::transport::error::TransportError;

/// Why the sandbox cannot start a program here, in one line.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A tool is missing or the command cannot be built.
    #[error(transparent)]
    Setup(#[from] TransportError),
    /// The wrapped command came out empty.
    #[error("empty command")]
    Empty,
    /// The sandbox program did not start.
    #[error("cannot run {program}: {error}")]
    Run {
        /// The program.
        program: String,
        /// Why.
        error: std::io::Error,
    },
    /// bubblewrap started and refused (its first line of complaint).
    #[error("bubblewrap cannot make a sandbox here ({0})")]
    Refused(String),
    /// The sandbox's user cannot read a file the program needs.
    #[error(
        "the sandbox's user ({user}) cannot read {path}: let it read the folders on the way \
         (chmod o+rX {folder}, and any closed folder below it on the way), or run with \
         --sandbox off"
    )]
    Unreadable {
        /// The file.
        path: String,
        /// Its folder, for the fix.
        folder: String,
        /// Who runs bot programs in the sandbox.
        user: String,
    },
    /// The program is not found inside the sandbox.
    #[error(
        "{program} is not found inside the sandbox (its PATH is /usr/local/bin:/usr/bin:/bin, \
         and only system folders and the bot's own are there): install it there, give its full \
         path, or run with --sandbox off"
    )]
    NotFound {
        /// The program.
        program: String,
    },
}

/// Who runs bot programs in the sandbox, for messages.
fn sandbox_user() -> String {
    if is_root() {
        format!("nobody, uid {NOBODY}")
    } else {
        "your own user, mapped to nobody".to_string()
    }
}

/// What `check_program` probes with: exit 3 and the path for a file the
/// sandbox's user cannot read, exit 4 and the name for a program not found.
const PROBE: &str = r#"prog="$1"; shift
case "$prog" in
  */*) if [ ! -r "$prog" ] || [ ! -x "$prog" ]; then printf '%s
' "$prog"; exit 3; fi ;;
  *) if ! command -v "$prog" >/dev/null 2>&1; then printf '%s
' "$prog"; exit 4; fi ;;
esac
for f in "$@"; do
  if [ ! -r "$f" ]; then printf '%s
' "$f"; exit 3; fi
done"#;

/// Checks, before the first match, that the sandbox can run `argv` (issue
/// 49): inside the sandbox `argv` will get, as its user, the program is
/// found (a bare name on the sandbox's `PATH`, a path readable and
/// executable), and every file among its arguments (a script) is readable.
/// The error is one line naming the path, the user and the fix.
pub fn check_program(argv: &[String], limits: &SandboxLimits) -> Result<(), SandboxError> {
    let Some(program) = argv.first() else {
        return Err(SandboxError::Empty);
    };
    let cwd = std::env::current_dir().map_err(|e| TransportError::Io(e.to_string()))?;
    let absolute = |p: &str| {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.join(p)
        }
    };
    let mut probe = vec![
        "/bin/sh".to_string(),
        "-c".to_string(),
        PROBE.to_string(),
        "probe".to_string(),
    ];
    probe.push(if program.contains('/') {
        absolute(program).to_string_lossy().into_owned()
    } else {
        program.clone()
    });
    probe.extend(
        argv.iter()
            .skip(1)
            .filter(|a| !a.starts_with('-'))
            .map(|a| absolute(a))
            .filter(|p| p.is_file())
            .map(|p| p.to_string_lossy().into_owned()),
    );
    let cmd = wrap_as(argv, &probe, limits, None, &Handed::default())?;
    let (first, rest) = cmd.split_first().ok_or(SandboxError::Empty)?;
    let out = std::process::Command::new(first)
        .args(rest)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|error| SandboxError::Run {
            program: first.clone(),
            error,
        })?;
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let unreadable = |path: String| {
        let folder = closed_folder(Path::new(&path))
            .or_else(|| Path::new(&path).parent().map(Path::to_path_buf))
            .map_or_else(|| path.clone(), |f| f.to_string_lossy().into_owned());
        SandboxError::Unreadable {
            path,
            folder,
            user: sandbox_user(),
        }
    };
    match out.status.code() {
        Some(0) => Ok(()),
        Some(3) => Err(unreadable(said)),
        Some(4) => Err(SandboxError::NotFound { program: said }),
        _ => {
            let why = complaint(&out.stderr);
            // bubblewrap, as the sandbox's user, cannot reach a bot folder.
            match why.split_once("Can't find source path ") {
                Some((_, rest)) => Err(unreadable(
                    rest.split(':').next().unwrap_or(rest).trim().to_string(),
                )),
                None => Err(SandboxError::Refused(why)),
            }
        }
    }
}

/// The first folder on the way to `path`, from the root down, that other
/// users cannot pass through (no `o+x`): the one to open for the sandbox's
/// user. `None` when every folder on the way is open.
fn closed_folder(path: &Path) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let mut folders: Vec<&Path> = path.ancestors().skip(1).collect();
    folders.reverse();
    folders
        .into_iter()
        .find(|f| {
            std::fs::metadata(f).is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o001 == 0)
        })
        .map(Path::to_path_buf)
}

/// Checks that the sandbox can start a program here; the error says why
/// not, in one line. Where sandboxes start from fewer mounts
/// ([`super::mount_view`]), it starts one from there too, and gives those
/// up if it cannot.
pub fn check(limits: &SandboxLimits) -> Result<(), SandboxError> {
    probe(limits)?;
    super::mount_view::vet(|| probe(limits).map_err(|e| e.to_string()));
    Ok(())
}

/// A start of `true` in a sandbox of `limits`.
fn probe(limits: &SandboxLimits) -> Result<(), SandboxError> {
    // With the filter every start installs (a kernel without seccomp
    // refuses it here, not at the first match).
    let filter = super::seccomp::pipe()?;
    let run = ["true".to_string()];
    let handed = Handed {
        filter: filter.as_ref().map(AsRawFd::as_raw_fd),
        ..Handed::default()
    };
    let cmd = wrap_as(&run, &run, limits, None, &handed)?;
    let (first, rest) = cmd.split_first().ok_or(SandboxError::Empty)?;
    let run_error = |error| SandboxError::Run {
        program: first.clone(),
        error,
    };
    if let Some(f) = &filter {
        super::lifetime::inheritable(f).map_err(run_error)?;
    }
    let out = std::process::Command::new(first)
        .args(rest)
        .stdin(std::process::Stdio::null())
        .output();
    drop(filter);
    let out = out.map_err(run_error)?;
    if out.status.success() {
        return Ok(());
    }
    Err(SandboxError::Refused(complaint(&out.stderr)))
}

/// The first line of complaint in a refused start's `stderr`.
fn complaint(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no reason given")
        .trim()
        .to_string()
}
