//! Stopping `play` and `tournament` cleanly: on SIGINT (Ctrl-C) or SIGTERM
//! every live bot program gets SIGTERM, a short grace, then SIGKILL, and
//! croupier exits with 130 (SIGINT) or 143 (SIGTERM) after one line saying
//! it was interrupted. Bot programs run in process groups of their own, so a
//! terminal's Ctrl-C never reaches them by itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use croupier_arena::transport::process;

/// Set once a signal has come: the watcher thread is stopping the bots and
/// will end the process.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Time bots get between SIGTERM and SIGKILL when croupier is interrupted.
pub const GRACE: Duration = Duration::from_millis(500);

/// Which signal stopped croupier.
#[derive(Clone, Copy, Debug)]
pub enum Stop {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl Stop {
    fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "SIGINT",
            Stop::Terminate => "SIGTERM",
        }
    }

    /// Exit code of a process ended by this signal, as shells report it.
    fn code(self) -> i32 {
        match self {
            Stop::Interrupt => 130,
            Stop::Terminate => 143,
        }
    }
}

/// The SIGINT and SIGTERM streams; made inside a Tokio runtime with I/O.
pub struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
}

impl Signals {
    /// Installs the handlers (from now on the signals no longer kill
    /// croupier by themselves).
    pub fn install() -> std::io::Result<Signals> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Signals {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
        })
    }

    /// Waits for the next SIGINT or SIGTERM.
    pub async fn recv(&mut self) -> Stop {
        tokio::select! {
            _ = self.int.recv() => Stop::Interrupt,
            _ = self.term.recv() => Stop::Terminate,
        }
    }
}

/// Ends every live bot program (and the orphans they left): returns how
/// many bots there were.
pub fn stop_bots() -> usize {
    process::stop_all(GRACE)
}

/// For a command that runs matches on its own thread: adopts bots' orphans
/// and installs handlers that, on SIGINT or SIGTERM, stop every bot and
/// exit with one line on stderr.
pub fn guard_matches() {
    process::adopt_orphans();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("warning: cannot watch for Ctrl-C: {e}");
            return;
        }
    };
    let signals = {
        let _in_rt = rt.enter();
        Signals::install()
    };
    let mut signals = match signals {
        Ok(s) => s,
        Err(e) => {
            eprintln!("warning: cannot watch for Ctrl-C: {e}");
            return;
        }
    };
    let watcher = std::thread::Builder::new()
        .name("croupier-signals".into())
        .spawn(move || {
            let stop = rt.block_on(signals.recv());
            INTERRUPTED.store(true, Ordering::SeqCst);
            let n = stop_bots();
            let plural = if n == 1 { "" } else { "es" };
            eprintln!(
                "croupier: interrupted by {}; stopped {n} bot process{plural}",
                stop.name()
            );
            std::process::exit(stop.code());
        });
    if let Err(e) = watcher {
        eprintln!("warning: cannot watch for Ctrl-C: {e}");
    }
}

/// Called when the matches are over: if a signal came, the games ended
/// because their bots were stopped, so nothing is reported; this thread
/// waits for the watcher to end the process.
pub fn hold_if_interrupted() {
    while INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::park_timeout(Duration::from_secs(1));
    }
}
