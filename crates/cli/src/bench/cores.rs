//! `--split-cores` of `croupier bench server`: the server under test (and
//! the bare endpoint it is compared with) on one half of the CPUs this
//! process may use, the load generator on the other half, so that neither
//! steals the other's time and the two servers are measured alike.
//!
//! Affinity is inherited: a child started while this thread is pinned to
//! the server's half keeps that half (all its threads), and a runtime built
//! on a thread pinned to the load half has all its workers there.

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// The two halves of the CPUs this process may run on.
#[derive(Clone, Copy)]
pub struct Cores {
    pub server: CpuSet,
    pub load: CpuSet,
    /// How many CPUs each half has (for the report).
    pub counts: (usize, usize),
}

/// Why the CPUs cannot be split.
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    #[error("cannot read or set the CPU affinity: {0}")]
    Affinity(#[from] nix::Error),
    #[error("--split-cores needs at least 2 CPUs; this process may use {0}")]
    TooFew(usize),
}

/// The CPUs allowed now (in order), halved: the server gets the first half
/// (the larger one when odd), the load generator the rest.
pub fn split() -> Result<Cores, SplitError> {
    let cpus = list(&sched_getaffinity(Pid::from_raw(0))?);
    if cpus.len() < 2 {
        return Err(SplitError::TooFew(cpus.len()));
    }
    let (a, b) = cpus.split_at(cpus.len().div_ceil(2));
    Ok(Cores {
        server: set_of(a)?,
        load: set_of(b)?,
        counts: (a.len(), b.len()),
    })
}

fn set_of(cpus: &[usize]) -> Result<CpuSet, SplitError> {
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c)?;
    }
    Ok(set)
}

/// Pins the calling thread (and whatever it starts from now on) to `set`.
pub fn pin_this_thread(set: &CpuSet) -> Result<(), SplitError> {
    Ok(sched_setaffinity(Pid::from_raw(0), set)?)
}

/// The CPUs in `set`, in order.
pub fn list(set: &CpuSet) -> Vec<usize> {
    (0..CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .collect()
}

/// The CPUs process (or thread) `pid` may run on; `None` if it is gone.
pub fn cpus_of(pid: u32) -> Option<Vec<usize>> {
    let set = sched_getaffinity(Pid::from_raw(i32::try_from(pid).ok()?)).ok()?;
    Some(list(&set))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_halves_are_disjoint_and_cover_the_allowed_cpus() {
        let allowed = sched_getaffinity(Pid::from_raw(0)).expect("affinity");
        let n = (0..CpuSet::count())
            .filter(|&c| allowed.is_set(c).unwrap_or(false))
            .count();
        match split() {
            Err(SplitError::TooFew(k)) => assert_eq!(k, n),
            Err(e) => panic!("{e}"),
            Ok(cores) => {
                assert_eq!(cores.counts.0 + cores.counts.1, n);
                assert!(cores.counts.0 >= cores.counts.1);
                for c in 0..CpuSet::count() {
                    let s = cores.server.is_set(c).unwrap_or(false);
                    let l = cores.load.is_set(c).unwrap_or(false);
                    assert!(!(s && l), "cpu {c} in both halves");
                    assert_eq!(s || l, allowed.is_set(c).unwrap_or(false));
                }
            }
        }
    }
}
