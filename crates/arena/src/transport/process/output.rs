//! What a bot program writes: its stdout, split into bounded lines, and
//! the bounded tail of its stderr.

use std::collections::VecDeque;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt};
use tokio::net::unix::pipe;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::timeout;

/// How long the reader of a bot's stderr may still take once no process
/// is left to write to it: it only waits for a thread to run it.
const STDERR_DRAIN: Duration = Duration::from_secs(1);

/// A line of the bot's stdout, as its reader passes it on.
pub(super) enum Line {
    Text(String),
    TooLong,
    Eof,
}

/// The most recent bytes a bot wrote to stderr.
#[derive(Debug, Default)]
pub struct StderrLog {
    bytes: VecDeque<u8>,
    total: u64,
}

impl StderrLog {
    fn push(&mut self, chunk: &[u8], keep: usize) {
        self.total += chunk.len() as u64;
        self.bytes.extend(chunk);
        let excess = self.bytes.len().saturating_sub(keep);
        self.bytes.drain(..excess);
    }

    /// The kept tail as text.
    pub fn tail(&self) -> String {
        let (a, b) = self.bytes.as_slices();
        let mut v = a.to_vec();
        v.extend_from_slice(b);
        String::from_utf8_lossy(&v).into_owned()
    }

    /// Bytes written in all.
    pub fn total(&self) -> u64 {
        self.total
    }
}

/// The task that keeps what a bot writes on stderr ([`read_stderr`]),
/// with a copy of the pipe's reading end that is never read: it tells
/// whether any process is left that can write to it.
#[derive(Debug)]
pub(super) struct StderrReader {
    pub(super) task: JoinHandle<()>,
    probe: Option<OwnedFd>,
}

impl StderrReader {
    /// Starts keeping the last `keep` bytes written to `pipe` in `log`.
    pub(super) fn spawn(pipe: pipe::Receiver, log: Arc<Mutex<StderrLog>>, keep: usize) -> Self {
        Self::reading(pipe, |pipe| read_stderr(pipe, log, keep))
    }

    /// Reads `pipe` with the task `read` makes of it.
    fn reading<F>(pipe: pipe::Receiver, read: impl FnOnce(pipe::Receiver) -> F) -> Self
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let probe = pipe.as_fd().try_clone_to_owned().ok();
        let task = tokio::spawn(read(pipe));
        StderrReader { task, probe }
    }

    /// [`StderrReader::spawn`] whose reader waits `delay` before it
    /// starts, as on a machine too busy to run it (for tests).
    #[cfg(test)]
    pub(super) fn late(
        pipe: pipe::Receiver,
        log: Arc<Mutex<StderrLog>>,
        keep: usize,
        delay: Duration,
    ) -> Self {
        Self::reading(pipe, move |pipe| async move {
            tokio::time::sleep(delay).await;
            read_stderr(pipe, log, keep).await;
        })
    }

    /// Waits until everything the bot wrote on stderr is kept: up to
    /// `wait`, and on (up to [`STDERR_DRAIN`] more) if by then no process
    /// is left that could write more. Its last words are in the pipe then,
    /// and the reader only waits for a thread: on a busy machine that can
    /// take longer than `wait`, and the fault would be told without them.
    /// Whether the reader has finished. If not, a process still held the
    /// pipe when `wait` ran out (something the bot left, or its last
    /// process still ending), or the pipe could not be asked, or the
    /// reader outlasted the longer wait too.
    pub(super) async fn finish(&mut self, wait: Duration) -> bool {
        if timeout(wait, &mut self.task).await.is_ok() {
            return true;
        }
        self.writers_gone() && timeout(STDERR_DRAIN, &mut self.task).await.is_ok()
    }

    /// Whether every process that could write to the pipe has closed it.
    fn writers_gone(&self) -> bool {
        let Some(probe) = &self.probe else {
            return false;
        };
        // POLLHUP comes without being asked for.
        let mut fds = [PollFd::new(probe.as_fd(), PollFlags::empty())];
        matches!(poll(&mut fds, PollTimeout::ZERO), Ok(1))
            && fds[0]
                .revents()
                .is_some_and(|r| r.contains(PollFlags::POLLHUP))
    }
}

/// Keeps what a bot writes on stderr in `log` (its last `keep` bytes),
/// until the bot's last process closes it.
pub(super) async fn read_stderr(
    mut err: impl AsyncRead + Unpin,
    log: Arc<Mutex<StderrLog>>,
    keep: usize,
) {
    let mut buf = vec![0u8; 8192];
    while let Ok(n) = err.read(&mut buf).await {
        if n == 0 {
            break;
        }
        if let Ok(mut l) = log.lock() {
            l.push(&buf[..n], keep);
        }
    }
}

/// Splits the bot's stdout into lines of at most `max` bytes. A longer line
/// is reported once and skipped up to its newline.
pub(super) async fn read_lines<R: AsyncBufReadExt + Unpin>(
    mut r: R,
    tx: mpsc::Sender<Line>,
    max: usize,
) {
    let mut line: Vec<u8> = Vec::new();
    let mut too_long = false;
    while let Ok(buf) = r.fill_buf().await {
        if buf.is_empty() {
            break;
        }
        let (chunk, found) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line.clear();
                if tx.send(Line::TooLong).await.is_err() {
                    return;
                }
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = found.unwrap_or(buf.len());
        r.consume(used);
        if found.is_some() {
            if !too_long {
                let mut text = String::from_utf8_lossy(&line).into_owned();
                if text.ends_with('\r') {
                    text.pop();
                }
                if tx.send(Line::Text(text)).await.is_err() {
                    return;
                }
            }
            line.clear();
            too_long = false;
        }
    }
    if !line.is_empty() && !too_long {
        // A last line without its newline still counts.
        let _ = tx
            .send(Line::Text(String::from_utf8_lossy(&line).into_owned()))
            .await;
    }
    let _ = tx.send(Line::Eof).await;
}
