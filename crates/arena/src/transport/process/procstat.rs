//! A process's line in `/proc/PID/stat`, which anyone may read (even of a
//! process that is not dumpable): its state, parent, process group and
//! CPU time. The command's name, second, is in parentheses and may hold
//! spaces and parentheses itself, so fields are counted after its last `)`.

use std::time::Duration;

use nix::unistd::Pid;

/// The line of `pid`, if it exists.
pub(super) fn read(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()
}

/// The fields after the command's name, from the third (the state).
fn fields(stat: &str) -> Option<std::str::SplitWhitespace<'_>> {
    Some(stat.rsplit_once(')')?.1.split_whitespace())
}

/// The state (`R`, `S`, `Z`, ...).
pub(super) fn state(stat: &str) -> Option<&str> {
    fields(stat)?.next()
}

/// The parent and the process group (the 4th and 5th fields).
pub(super) fn parent_and_group(stat: &str) -> Option<(i32, i32)> {
    let mut f = fields(stat)?.skip(1);
    Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
}

/// The parent and the process group of `pid`, if it exists.
pub(super) fn parent_and_group_of(pid: i32) -> Option<(i32, i32)> {
    parent_and_group(&read(pid)?)
}

/// A process as `/proc` shows it: its pid, parent and process group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Listed {
    pub(super) pid: i32,
    pub(super) parent: i32,
    pub(super) group: i32,
}

/// Every process this one can see (one that ends while `/proc` is read is
/// left out).
pub(super) fn table() -> Vec<Listed> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let (parent, group) = parent_and_group_of(pid)?;
            Some(Listed { pid, parent, group })
        })
        .collect()
}

/// The clock ticks of CPU time the process has used itself, in user and
/// system mode (the 14th and 15th fields; its children's are not).
pub(super) fn cpu_ticks(stat: &str) -> Option<u64> {
    let mut f = fields(stat)?.skip(11);
    f.next()?
        .parse::<u64>()
        .ok()?
        .checked_add(f.next()?.parse().ok()?)
}

/// The CPU time `pid` has used itself, if it exists.
pub(super) fn cpu_time(pid: i32) -> Option<Duration> {
    let ticks = cpu_ticks(&read(pid)?)?;
    let per_second = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok()??;
    let per_second = u64::try_from(per_second).ok().filter(|t| *t > 0)?;
    Some(Duration::from_secs_f64(ticks as f64 / per_second as f64))
}

/// The host pid of the process below `root` whose pid in its own PID
/// namespace is `inside` (from `/proc`: each process's children and its
/// `NSpid`).
pub(super) fn host_pid(root: i32, inside: i32) -> Option<Pid> {
    let mut todo = vec![root];
    let mut seen = 0;
    while let Some(p) = todo.pop() {
        seen += 1;
        if seen > 256 {
            return None;
        }
        let status = std::fs::read_to_string(format!("/proc/{p}/status")).ok();
        let ns: Vec<i32> = status
            .as_deref()
            .and_then(|s| s.lines().find_map(|l| l.strip_prefix("NSpid:")))
            .map(|ids| {
                ids.split_whitespace()
                    .filter_map(|i| i.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        if ns.len() > 1 && ns.last() == Some(&inside) {
            return Some(Pid::from_raw(p));
        }
        if let Ok(children) = std::fs::read_to_string(format!("/proc/{p}/task/{p}/children")) {
            todo.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<i32>().ok()),
            );
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fields of lines whose command name holds spaces and parentheses.
    #[test]
    fn a_line_gives_the_state_parent_group_and_cpu_ticks() {
        let line = "4242 (a) b (c) S 17 4243 4243 0 -1 4194560 1 0 0 0 \
                    731 269 5 6 20 0 1 0 99 1000 50 18446744073709551615";
        assert_eq!(state(line), Some("S"));
        assert_eq!(parent_and_group(line), Some((17, 4243)));
        assert_eq!(cpu_ticks(line), Some(1000));
        assert_eq!(cpu_ticks("4242 (a) S 1 2"), None);
        assert_eq!(parent_and_group("no name"), None);
    }

    /// This process's own ticks, against what `getrusage` says it spent
    /// between the two readings (at least 250 ms: 25 ticks of 10 ms).
    #[test]
    fn a_process_cpu_ticks_grow_with_its_cpu_time() {
        use nix::sys::resource::{getrusage, UsageWho};
        use nix::sys::time::TimeValLike;
        let cpu = || {
            let u = getrusage(UsageWho::RUSAGE_SELF).unwrap();
            let us = u.user_time().num_microseconds() + u.system_time().num_microseconds();
            Duration::from_micros(us as u64)
        };
        let me = std::process::id() as i32;
        let before = cpu_ticks(&read(me).unwrap()).unwrap();
        let from = cpu();
        while cpu() - from < Duration::from_millis(250) {}
        let spent = cpu_ticks(&read(me).unwrap()).unwrap() - before;
        assert!(spent >= 20, "{spent} ticks for 250 ms of CPU time");
        assert!(cpu_time(me).unwrap() >= Duration::from_millis(200));
    }

    /// The table holds this process with its parent and group, as its own
    /// line says.
    #[test]
    fn the_table_lists_this_process_with_its_parent_and_group() {
        let me = std::process::id() as i32;
        let (parent, group) = parent_and_group_of(me).unwrap();
        let table = table();
        assert!(table.len() > 1, "{table:?}");
        assert!(
            table.contains(&Listed {
                pid: me,
                parent,
                group
            }),
            "{table:?}"
        );
    }
}
