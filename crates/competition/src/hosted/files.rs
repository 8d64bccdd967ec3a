//! Uploaded bot files: read from the request while hashing and counting
//! (refused at [`MAX_UPLOAD`] without keeping more), stored under their
//! SHA-256 in the bot-files folder, and unpacked into a folder of their own
//! from which no archive entry can escape.
//!
//! Layout of the bot-files folder (never served over HTTP):
//!
//! ```text
//! DIR/files/<sha256>      the upload as received
//! DIR/unpacked/<sha256>/  its contents (a single file keeps its name)
//! DIR/tmp/                uploads and unpackings in progress
//! ```

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use futures::StreamExt;
use sha2::Digest as _;

/// Largest upload, bytes.
pub const MAX_UPLOAD: u64 = 16 << 20;
/// Largest total size of an archive's unpacked files, bytes.
pub const MAX_UNPACKED: u64 = 64 << 20;
/// Most entries (files and folders) an archive may hold.
pub const MAX_ENTRIES: usize = 2000;
/// Bytes of an over-large upload read (and thrown away) before the refusal,
/// so that the client gets the answer instead of a reset connection.
const DRAIN: u64 = 64 << 20;

/// Why an upload was refused.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Over [`MAX_UPLOAD`].
    #[error("the upload is over {} MiB", MAX_UPLOAD >> 20)]
    TooLarge,
    /// An empty body.
    #[error("the upload is empty")]
    Empty,
    /// A broken or slow request body.
    #[error("the upload was interrupted: {0}")]
    Interrupted(String),
    /// An archive entry that is not allowed or cannot be read.
    #[error("{0}")]
    Archive(String),
    /// The server's folder failed.
    #[error("cannot store the upload: {0}")]
    Io(#[from] std::io::Error),
}

/// The kind of an upload, by its file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packing {
    /// One file (a script, a jar, an executable).
    Single,
    /// `.tar.gz` or `.tgz`.
    TarGz,
    /// `.zip`.
    Zip,
}

impl Packing {
    /// The packing a file name says.
    pub fn of(name: &str) -> Packing {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".tar.gz") || lower.ends_with(".tgz") {
            Packing::TarGz
        } else if lower.ends_with(".zip") {
            Packing::Zip
        } else {
            Packing::Single
        }
    }
}

/// An upload stored in the temp folder, not yet in place.
#[derive(Debug)]
pub struct Received {
    /// The temp file (deleted on drop unless kept).
    pub file: tempfile::NamedTempFile,
    /// SHA-256 (hex).
    pub hash: String,
    /// Bytes.
    pub size: u64,
}

/// The bot-files folder.
#[derive(Clone, Debug)]
pub struct Files {
    root: PathBuf,
}

impl Files {
    /// Opens (creating) the folder. It and its parts are readable by all:
    /// when the server runs as root, the sandbox starts bots as `nobody`.
    pub fn open(root: &Path) -> Result<Files, FileError> {
        for sub in ["files", "unpacked", "tmp"] {
            std::fs::create_dir_all(root.join(sub))?;
        }
        let root = std::fs::canonicalize(root)?;
        for p in [root.clone(), root.join("files"), root.join("unpacked")] {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
        }
        std::fs::set_permissions(root.join("tmp"), std::fs::Permissions::from_mode(0o700))?;
        Ok(Files { root })
    }

    /// Where the upload of `hash` is kept.
    pub fn file(&self, hash: &str) -> PathBuf {
        self.root.join("files").join(hash)
    }

    /// Where the upload of `hash` is unpacked.
    pub fn unpacked(&self, hash: &str) -> PathBuf {
        self.root.join("unpacked").join(hash)
    }

    /// Reads a request body (its stream of chunks) into a temp file,
    /// hashing it; refuses it as soon as it passes [`MAX_UPLOAD`] (or
    /// declares more), keeping nothing.
    pub async fn receive<S, B, E>(
        &self,
        declared: Option<u64>,
        mut stream: S,
    ) -> Result<Received, FileError>
    where
        S: futures::Stream<Item = Result<B, E>> + Unpin,
        B: AsRef<[u8]>,
        E: std::fmt::Display,
    {
        if declared.is_some_and(|l| l > MAX_UPLOAD) {
            drain(&mut stream, 0).await;
            return Err(FileError::TooLarge);
        }
        let mut file = tempfile::NamedTempFile::new_in(self.root.join("tmp"))?;
        let mut hash = sha2::Sha256::new();
        let mut size: u64 = 0;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| FileError::Interrupted(e.to_string()))?;
            let chunk = chunk.as_ref();
            size += chunk.len() as u64;
            if size > MAX_UPLOAD {
                drop(file);
                drain(&mut stream, size).await;
                return Err(FileError::TooLarge);
            }
            hash.update(chunk);
            file.write_all(chunk)?;
        }
        if size == 0 {
            return Err(FileError::Empty);
        }
        file.flush()?;
        Ok(Received {
            file,
            hash: hex::encode(hash.finalize()),
            size,
        })
    }

    /// Unpacks `r` (named `name`) into its folder, unless done before, and
    /// keeps the upload under its hash. On any refusal nothing is kept.
    pub fn store(&self, r: Received, name: &str) -> Result<PathBuf, FileError> {
        let dest = self.unpacked(&r.hash);
        if dest.is_dir() && self.file(&r.hash).is_file() {
            return Ok(dest);
        }
        let work = tempfile::Builder::new()
            .prefix("unpack")
            .tempdir_in(self.root.join("tmp"))?;
        let out = work.path().join("out");
        std::fs::create_dir(&out)?;
        match Packing::of(name) {
            Packing::Single => {
                let name = plain_name(name)?;
                let target = out.join(name);
                std::fs::copy(r.file.path(), &target)?;
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))?;
            }
            Packing::TarGz => untar(r.file.path(), &out)?,
            Packing::Zip => unzip(r.file.path(), &out)?,
        }
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o755))?;
        if dest.exists() {
            std::fs::remove_dir_all(&dest)?;
        }
        std::fs::rename(&out, &dest)?;
        r.file
            .persist(self.file(&r.hash))
            .map_err(|e| FileError::Io(e.error))?;
        std::fs::set_permissions(self.file(&r.hash), std::fs::Permissions::from_mode(0o600))?;
        Ok(dest)
    }

    /// Unpacks a stored upload again (its folder was removed).
    pub fn restore(&self, hash: &str, name: &str) -> Result<PathBuf, FileError> {
        let dest = self.unpacked(hash);
        if dest.is_dir() {
            return Ok(dest);
        }
        let copy = tempfile::NamedTempFile::new_in(self.root.join("tmp"))?;
        std::fs::copy(self.file(hash), copy.path())?;
        let size = std::fs::metadata(copy.path())?.len();
        self.store(
            Received {
                file: copy,
                hash: hash.to_string(),
                size,
            },
            name,
        )
    }
}

async fn drain<S, B, E>(stream: &mut S, mut read: u64)
where
    S: futures::Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
{
    while let Some(Ok(chunk)) = stream.next().await {
        read += chunk.as_ref().len() as u64;
        if read > DRAIN {
            break;
        }
    }
}

/// A file name without folders.
pub fn plain_name(name: &str) -> Result<&str, FileError> {
    let ok = !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0']);
    if ok {
        Ok(name)
    } else {
        Err(FileError::Archive(format!(
            "the file name {:?} must be a plain name (no folders)",
            name.chars().take(80).collect::<String>()
        )))
    }
}

/// The path of an archive entry inside `out`, or why it may not be there.
fn inside(out: &Path, entry: &Path) -> Result<PathBuf, FileError> {
    let shown = || {
        entry
            .to_string_lossy()
            .chars()
            .take(200)
            .collect::<String>()
    };
    let mut rel = PathBuf::new();
    for c in entry.components() {
        match c {
            Component::Normal(p) => rel.push(p),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(FileError::Archive(format!(
                    "archive entry {:?} uses '..' to leave its folder: refused",
                    shown()
                )))
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(FileError::Archive(format!(
                    "archive entry {:?} is an absolute path: refused",
                    shown()
                )))
            }
        }
    }
    if rel.as_os_str().is_empty() {
        return Err(FileError::Archive(format!(
            "archive entry {:?} has no name",
            shown()
        )));
    }
    Ok(out.join(rel))
}

/// Counts entries and bytes of an archive being unpacked.
struct Budget {
    entries: usize,
    bytes: u64,
}

impl Budget {
    fn entry(&mut self) -> Result<(), FileError> {
        self.entries += 1;
        if self.entries > MAX_ENTRIES {
            return Err(FileError::Archive(format!(
                "the archive holds more than {MAX_ENTRIES} entries"
            )));
        }
        Ok(())
    }

    /// Copies one file's contents, stopping past the total budget.
    fn copy(&mut self, from: &mut dyn Read, to: &Path, executable: bool) -> Result<(), FileError> {
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(to)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => FileError::Archive(format!(
                    "the archive holds {:?} twice",
                    to.file_name().unwrap_or_default()
                )),
                _ => FileError::Io(e),
            })?;
        let left = MAX_UNPACKED - self.bytes;
        let n = std::io::copy(&mut from.take(left + 1), &mut f)
            .map_err(|e| FileError::Archive(format!("cannot read the archive: {e}")))?;
        if n > left {
            return Err(FileError::Archive(format!(
                "the archive unpacks to more than {} MiB",
                MAX_UNPACKED >> 20
            )));
        }
        self.bytes += n;
        let mode = if executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode))?;
        Ok(())
    }
}

fn mkdir(p: &Path) -> Result<(), FileError> {
    std::fs::create_dir_all(p)?;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

fn untar(archive: &Path, out: &Path) -> Result<(), FileError> {
    let bad = |e: std::io::Error| FileError::Archive(format!("not a readable .tar.gz: {e}"));
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(archive)?);
    let mut tar = tar::Archive::new(gz);
    let mut budget = Budget {
        entries: 0,
        bytes: 0,
    };
    for entry in tar.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        budget.entry()?;
        let path = entry.path().map_err(bad)?.into_owned();
        let to = inside(out, &path)?;
        let kind = entry.header().entry_type();
        let mode = entry.header().mode().unwrap_or(0o644);
        if kind.is_dir() {
            mkdir(&to)?;
        } else if kind.is_file() {
            budget.copy(&mut entry, &to, mode & 0o111 != 0)?;
        } else if kind.is_pax_global_extensions() || kind.is_pax_local_extensions() {
            continue;
        } else {
            return Err(FileError::Archive(format!(
                "archive entry {:?} is a link or special file: only files and folders are allowed",
                path.to_string_lossy().chars().take(200).collect::<String>()
            )));
        }
    }
    Ok(())
}

fn unzip(archive: &Path, out: &Path) -> Result<(), FileError> {
    let bad = |e: zip::result::ZipError| FileError::Archive(format!("not a readable .zip: {e}"));
    let mut zip = zip::ZipArchive::new(std::fs::File::open(archive)?).map_err(bad)?;
    let mut budget = Budget {
        entries: 0,
        bytes: 0,
    };
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).map_err(bad)?;
        budget.entry()?;
        let name = f.name().to_string();
        let to = inside(out, Path::new(&name))?;
        let mode = f.unix_mode().unwrap_or(0o644);
        if f.is_symlink()
            || (mode & 0o170000 != 0 && mode & 0o170000 != 0o100000 && mode & 0o170000 != 0o040000)
        {
            return Err(FileError::Archive(format!(
                "archive entry {:?} is a link or special file: only files and folders are allowed",
                name.chars().take(200).collect::<String>()
            )));
        }
        if f.is_dir() {
            mkdir(&to)?;
        } else {
            budget.copy(&mut f, &to, mode & 0o111 != 0)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_stay_inside_their_folder() {
        let out = Path::new("/x/out");
        assert_eq!(
            inside(out, Path::new("a/./b.py")).ok(),
            Some(PathBuf::from("/x/out/a/b.py"))
        );
        for bad in ["../evil", "a/../../evil", "/etc/passwd", "", "."] {
            assert!(inside(out, Path::new(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn packing_by_name() {
        assert_eq!(Packing::of("bot.TAR.GZ"), Packing::TarGz);
        assert_eq!(Packing::of("bot.tgz"), Packing::TarGz);
        assert_eq!(Packing::of("bot.zip"), Packing::Zip);
        assert_eq!(Packing::of("bot.py"), Packing::Single);
        assert!(plain_name("a/b").is_err());
        assert!(plain_name("..").is_err());
        assert_eq!(plain_name("bot.py").ok(), Some("bot.py"));
    }
}
