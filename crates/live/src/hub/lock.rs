//! The hub's locks: std mutexes, never held across an await.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, poisoned or not: a panic while holding one of the hub's
/// locks cannot leave its maps half-updated in a way that matters more
/// than stopping the server would.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
