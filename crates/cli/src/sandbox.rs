//! `--sandbox strict|off`: how `play`, `tournament` and `serve` confine the
//! bot programs they start, and `--bot-cpus`: the cgroup each gets
//! (docs/sandbox.md).

use clap::ValueEnum;
use croupier_arena::transport::process::cgroup::{self, BotCpus, CgroupLimits};
use croupier_arena::transport::process::{check_sandbox, Sandbox, SandboxLimits};

use crate::error::CliError;

/// The `--sandbox` option.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum SandboxMode {
    /// bubblewrap: no network, own PID namespace, read-only system and bot
    /// folder, private /tmp, resource limits, unprivileged user.
    #[default]
    Strict,
    /// No sandbox: bot programs run with your own rights.
    Off,
}

/// The sandbox for `mode`, checked: strict fails with one line saying why
/// and how to go on; off warns once.
pub fn resolve(mode: SandboxMode) -> Result<Sandbox, CliError> {
    match mode {
        SandboxMode::Strict => {
            let limits = SandboxLimits::default();
            check_sandbox(&limits).map_err(|why| {
                CliError::Usage(format!(
                    "--sandbox strict: {why}; run with --sandbox off to start bot programs \
                     without a sandbox (see docs/sandbox.md)"
                ))
            })?;
            Ok(Sandbox::Strict(limits))
        }
        SandboxMode::Off => {
            eprintln!(
                "warning: --sandbox off: bot programs run with your own rights \
                 (network, your files, no memory or process limits)"
            );
            Ok(Sandbox::Off)
        }
    }
}

/// The cgroup limits of bot programs under `sandbox` with `cpus` (the
/// memory limit of the whole process tree is the sandbox's memory; none
/// with `--sandbox off`), checked once: where no cgroup can be made here,
/// this says so once, with the reason, and bot programs run with rlimits
/// only (`None`).
pub fn resolve_cgroups(cpus: BotCpus, sandbox: &Sandbox) -> Option<CgroupLimits> {
    let memory = match sandbox {
        Sandbox::Strict(l) => Some(l.memory),
        Sandbox::Off => None,
    };
    let limits = CgroupLimits::new(cpus, memory);
    match cgroup::check(&limits) {
        Ok(()) => Some(limits),
        Err(why) => {
            eprintln!(
                "warning: bot programs get no cgroup here ({why}): no CPU quota (--bot-cpus), \
                 memory limited per process only; see docs/sandbox.md"
            );
            None
        }
    }
}
