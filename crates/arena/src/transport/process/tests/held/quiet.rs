//! A held sandbox dropped while bubblewrap still sets it up (a match that
//! ends at once, or croupier stopped as a match starts) ends whole and
//! quietly: it is a sandbox stopped on purpose, not one whose first
//! process went unnamed.

use std::sync::{Arc, Mutex};

use super::*;

/// What the test's code logs.
#[derive(Clone, Default)]
struct Said(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Said {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What is logged on this thread from now until the guard is dropped, at
/// every level down to debug.
fn logged() -> (Said, tracing::subscriber::DefaultGuard) {
    let said = Said::default();
    let writer = said.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .finish();
    (said, tracing::subscriber::set_default(subscriber))
}

/// On one thread, so that the watch of each sandbox's first process (a
/// task of this runtime) logs to this test's subscriber.
#[tokio::test]
async fn a_held_sandbox_dropped_as_it_is_set_up_ends_quietly() {
    let (said, _logged) = logged();
    let mut sandboxes = Vec::new();
    for _ in 0..5 {
        let held = BotProcess::hold(&sh("cat"), &strict()).expect("a sandbox held");
        sandboxes.push(held.pid().expect("its first process"));
        drop(held);
    }
    for pid in sandboxes {
        assert!(gone(pid).await, "sandbox {pid} outlived its drop");
    }
    // Each watch has seen its sandbox end by now (its info pipe closed).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let text = String::from_utf8_lossy(&said.0.lock().unwrap()).into_owned();
    assert!(!text.contains(" WARN "), "{text}");
}

/// A program in a sandbox of its own stopped as it starts (a match that
/// ends at once) ends quietly too: bubblewrap, signalled before it named
/// the sandbox's first process, is a sandbox stopped on purpose.
#[tokio::test]
async fn a_sandbox_of_its_own_stopped_as_it_starts_ends_quietly() {
    let (said, _logged) = logged();
    for _ in 0..10 {
        let p = BotProcess::spawn(&sh("cat"), &strict()).expect("a start");
        p.terminate().await;
    }
    // Each watch has seen its sandbox end by now (its info pipe closed).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let text = String::from_utf8_lossy(&said.0.lock().unwrap()).into_owned();
    assert!(!text.contains(" WARN "), "{text}");
}
