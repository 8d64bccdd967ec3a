//! Built-in bots take their fair share of CPU too (issue 51): a `strong`
//! bot's search threads in a match stay within what a program seat of the
//! same match may use, its CPU quota (`--bot-cpus`).
//!
//! A built-in given no `threads` option searches on the quota's cores,
//! rounded (one thread for one core, the strategies' own default); one
//! given more threads than that is refused, with the fix, rather than
//! silently capped: its name is in the records, and a name that says
//! `threads=4` must mean four.

use crate::spec::BotSpec;
use crate::transport::process::cgroup::BotCpus;

/// A built-in that asks for more threads than the quota allows.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "bot '{spec}' asks for {threads} search threads, more than the bot CPU quota allows \
     (--bot-cpus {cpus}: at most {most}); give it threads={most} or fewer, or raise --bot-cpus"
)]
pub struct TooManyThreads {
    spec: String,
    threads: u32,
    cpus: BotCpus,
    most: u32,
}

/// `spec` with its search threads within `cpus`: the quota's threads added
/// to a `strong` built-in that names none (when more than one), refused
/// when it names more; other bots unchanged.
pub fn fit_threads(spec: &BotSpec, cpus: BotCpus) -> Result<BotSpec, TooManyThreads> {
    let BotSpec::Builtin { name, dialect } = spec else {
        return Ok(spec.clone());
    };
    let (base, options) = match name.split_once('?') {
        Some((b, o)) => (b, Some(o)),
        None => (name.as_str(), None),
    };
    if base != "strong" {
        return Ok(spec.clone());
    }
    let most = cpus.threads();
    let asked = options
        .into_iter()
        .flat_map(|o| o.split('&'))
        .find_map(|kv| kv.strip_prefix("threads="))
        .and_then(|n| n.trim().parse::<u32>().ok());
    match asked {
        Some(threads) if threads > most => Err(TooManyThreads {
            spec: spec.to_string(),
            threads,
            cpus,
            most,
        }),
        Some(_) => Ok(spec.clone()),
        None if most <= 1 => Ok(spec.clone()),
        None => Ok(BotSpec::Builtin {
            name: match options {
                Some(o) if !o.is_empty() => format!("{name}&threads={most}"),
                _ => format!("{base}?threads={most}"),
            },
            dialect: *dialect,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(spec: &str, cpus: f64) -> Result<String, TooManyThreads> {
        let spec: BotSpec = spec.parse().expect("a spec");
        fit_threads(&spec, BotCpus::new(cpus).expect("a quota")).map(|s| s.to_string())
    }

    #[test]
    fn a_strong_bot_searches_on_the_quota() {
        assert_eq!(fit("builtin:strong", 1.0).unwrap(), "builtin:strong");
        assert_eq!(
            fit("builtin:strong", 2.0).unwrap(),
            "builtin:strong?threads=2"
        );
        assert_eq!(
            fit("builtin:strong?think-ms=50@gops", 3.0).unwrap(),
            "builtin:strong?think-ms=50&threads=3@gops"
        );
        assert_eq!(
            fit("builtin:strong?threads=2", 2.0).unwrap(),
            "builtin:strong?threads=2"
        );
        assert_eq!(fit("builtin:random", 4.0).unwrap(), "builtin:random");
    }

    #[test]
    fn more_threads_than_the_quota_are_refused_with_the_fix() {
        let e = fit("builtin:strong?threads=4", 1.0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("4 search threads") && e.contains("--bot-cpus 1"),
            "{e}"
        );
        assert!(e.contains("threads=1 or fewer"), "{e}");
    }
}
