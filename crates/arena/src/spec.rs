//! Bot specifications as given on the command line:
//!
//! * `builtin:NAME`: a built-in strategy, played in this process; `strong`
//!   takes a thinking budget after `?`: `builtin:strong?think-ms=50`,
//!   `builtin:strong?iterations=400` (deterministic with a seed),
//!   `builtin:strong?think-ms=200&threads=2`;
//! * `builtin:NAME@DIALECT`: the same strategy run as a separate process
//!   (`croupier bot NAME --dialect DIALECT`), speaking that dialect;
//! * a program with its arguments (`./ai`, `"python3 bots/x.py"`), with an
//!   optional `@DIALECT` suffix; without one, the game's default dialect;
//! * an HTTP bot server, `http://host:port/path` or `https://...`, with an
//!   optional `@DIALECT` suffix (`jujitsu` or `croupier`; without one,
//!   `jujitsu` for Goofspiel and `croupier` otherwise). Basic-auth
//!   credentials can be written in the URL: `http://user:pass@host/`.

use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use croupier_bots::Builtins;
use croupier_dialects::{DialectKind, UnknownDialect};
use croupier_rules::goofspiel::GoofspielVariant;
use croupier_rules::loveletter::LoveLetterVariant;
use croupier_rules::{Game, GameKind, SeatInfo, Variant as _};

use crate::live::LiveSeat;
use crate::transport::http::{BadUrl, HttpClient, HttpEndpoint};
use crate::transport::process::find_program;
use crate::transport::Link;

// Lives with the processes it starts; re-exported for the old path.

/// What plays a seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BotSpec {
    /// A built-in strategy; with a dialect, run as a child process.
    Builtin {
        /// Strategy name.
        name: String,
        /// Dialect, when run as a process.
        dialect: Option<DialectKind>,
    },
    /// A program and its arguments.
    Program {
        /// Program and arguments.
        argv: Vec<String>,
        /// Dialect, unless the game's default.
        dialect: Option<DialectKind>,
    },
    /// An HTTP bot server.
    Http {
        /// Its URL and credentials.
        endpoint: HttpEndpoint,
        /// Dialect, unless the game's default for HTTP bots.
        dialect: Option<DialectKind>,
    },
}

/// A bot specification that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Empty text.
    #[error("empty bot specification")]
    Empty,
    /// Unbalanced quotes and the like.
    #[error("cannot split '{0}' into a command: {1}")]
    Split(String, String),
    /// A bad HTTP bot URL.
    #[error(transparent)]
    Url(#[from] BadUrl),
    /// A dialect that needs HTTP given to a program.
    #[error("the {0} dialect is spoken by HTTP bots only: give an http:// URL")]
    HttpOnly(DialectKind),
    /// Unknown dialect after `@`.
    #[error(transparent)]
    Dialect(#[from] UnknownDialect),
    /// The dialect does not carry this game.
    #[error("the {dialect} dialect cannot play {game}")]
    Unsupported {
        /// The dialect.
        dialect: DialectKind,
        /// The game.
        game: &'static str,
    },
    /// A bot that needs a process where none can run.
    #[error("'{0}' must run as a process")]
    NotInProcess(String),
    /// The program cannot be found or run.
    #[error("program '{0}' not found{1}")]
    NoProgram(String, String),
    /// Unknown built-in strategy.
    #[error(transparent)]
    UnknownBot(#[from] croupier_bots::UnknownBot),
}

impl FromStr for BotSpec {
    type Err = SpecError;
    fn from_str(text: &str) -> Result<Self, SpecError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(SpecError::Empty);
        }
        if text.starts_with("http://") || text.starts_with("https://") {
            // `@` also separates credentials from the host: only a known
            // dialect name after the last one is a dialect.
            let (url, dialect) = match text.rsplit_once('@') {
                Some((url, d)) if d.parse::<DialectKind>().is_ok() => (url, d.parse().ok()),
                _ => (text, None),
            };
            return Ok(BotSpec::Http {
                endpoint: HttpEndpoint::parse(url, None)?,
                dialect,
            });
        }
        let (body, dialect) = match text.rsplit_once('@') {
            Some((body, d))
                if !d.is_empty() && !d.contains(char::is_whitespace) && !d.contains('/') =>
            {
                (body, Some(d.parse::<DialectKind>()?))
            }
            _ => (text, None),
        };
        if let Some(name) = body.strip_prefix("builtin:") {
            if name.is_empty() {
                return Err(SpecError::Empty);
            }
            return Ok(BotSpec::Builtin {
                name: name.to_string(),
                dialect,
            });
        }
        let argv = shell_words::split(body)
            .map_err(|e| SpecError::Split(body.to_string(), e.to_string()))?;
        if argv.is_empty() {
            return Err(SpecError::Empty);
        }
        Ok(BotSpec::Program { argv, dialect })
    }
}

impl fmt::Display for BotSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BotSpec::Builtin {
                name,
                dialect: None,
            } => write!(f, "builtin:{name}"),
            BotSpec::Builtin {
                name,
                dialect: Some(d),
            } => write!(f, "builtin:{name}@{d}"),
            BotSpec::Program { argv, dialect } => {
                write!(f, "{}", shell_words::join(argv))?;
                if let Some(d) = dialect {
                    write!(f, "@{d}")?;
                }
                Ok(())
            }
            BotSpec::Http { endpoint, dialect } => {
                // Credentials are not shown.
                write!(f, "{}", endpoint.url)?;
                if let Some(d) = dialect {
                    write!(f, "@{d}")?;
                }
                Ok(())
            }
        }
    }
}

/// The dialect a program plays `G` in by default under `variant`.
pub fn default_dialect<G: Game>(variant: &G::Variant) -> DialectKind {
    let game: GameKind = G::NAME.parse().unwrap_or(GameKind::SkullWhist);
    let gops = game == GameKind::Goofspiel
        && serde_json::to_value(variant).ok()
            == serde_json::to_value(GoofspielVariant::gops()).ok();
    DialectKind::default_for(game, gops)
}

/// The variant a match of `G` between `bots` is played under when none is
/// given: Love Letter follows Postman's rules when every bot that speaks a
/// dialect speaks `loveletter-postman` (built-in strategies run in this
/// process speak none, and follow any rules); otherwise the game's default.
pub fn default_variant<G: Game>(bots: &[BotSpec]) -> G::Variant {
    let postman = |b: &BotSpec| match b {
        BotSpec::Builtin { dialect, .. }
        | BotSpec::Program { dialect, .. }
        | BotSpec::Http { dialect, .. } => *dialect == Some(DialectKind::LoveLetterPostman),
    };
    let speaks = |b: &&BotSpec| !b.is_in_process();
    let all_postman = bots.iter().filter(speaks).all(postman) && bots.iter().any(postman);
    if G::NAME == GameKind::LoveLetter.name() && all_postman {
        if let Ok(v) = G::Variant::parse(LoveLetterVariant::postman().rules.name()) {
            return v;
        }
    }
    G::Variant::default()
}

impl BotSpec {
    /// Whether this seat runs in this process.
    pub fn is_in_process(&self) -> bool {
        matches!(self, BotSpec::Builtin { dialect: None, .. })
    }

    /// Checks the spec against game `G` (strategy names, dialects) without
    /// starting anything.
    pub fn check<G: Builtins>(&self, variant: &G::Variant) -> Result<(), SpecError> {
        match self {
            BotSpec::Builtin { name, .. } => {
                G::builtin(name)?;
            }
            BotSpec::Program { argv, .. } => {
                let program = argv.first().map(String::as_str).unwrap_or_default();
                if find_program(program).is_none() {
                    let hint = if G::make(program).is_some() {
                        format!(" (did you mean builtin:{program}?)")
                    } else {
                        String::new()
                    };
                    return Err(SpecError::NoProgram(program.to_string(), hint));
                }
            }
            BotSpec::Http { .. } => {}
        }
        let dialect = match self {
            BotSpec::Builtin { dialect: None, .. } => return Ok(()),
            BotSpec::Builtin {
                dialect: Some(d), ..
            } => *d,
            BotSpec::Program { dialect, .. } => {
                dialect.unwrap_or_else(|| default_dialect::<G>(variant))
            }
            BotSpec::Http { dialect, .. } => dialect.unwrap_or_else(|| http_dialect::<G>()),
        };
        if dialect.http_only() && !matches!(self, BotSpec::Http { .. }) {
            return Err(SpecError::HttpOnly(dialect));
        }
        let game: GameKind = G::NAME.parse().unwrap_or(GameKind::SkullWhist);
        if !dialect.supports(game) {
            return Err(SpecError::Unsupported {
                dialect,
                game: G::NAME,
            });
        }
        Ok(())
    }

    /// A fresh seat for one game of `G` with `seats` players. `exe` is the
    /// croupier binary, used to run built-in strategies as processes, seeded
    /// with `bot_seed`; HTTP bots are called through `http`.
    pub fn seat<G: Builtins>(
        &self,
        variant: &G::Variant,
        seats: usize,
        exe: &Path,
        bot_seed: u64,
        http: &Arc<HttpClient>,
    ) -> Result<LiveSeat<G>, SpecError> {
        self.check::<G>(variant)?;
        let info = SeatInfo::named(self.to_string());
        match self {
            BotSpec::Builtin {
                name,
                dialect: None,
            } => Ok(LiveSeat::builtin(info, G::builtin(name)?)),
            BotSpec::Builtin {
                name,
                dialect: Some(d),
            } => {
                let argv = vec![
                    exe.to_string_lossy().into_owned(),
                    "bot".into(),
                    name.clone(),
                    "--game".into(),
                    G::NAME.into(),
                    "--dialect".into(),
                    d.name().into(),
                    "--variant".into(),
                    // A variant is plain data: serialising it cannot fail.
                    serde_json::to_string(variant).unwrap_or_default(),
                    "--players".into(),
                    seats.to_string(),
                    "--seed".into(),
                    bot_seed.to_string(),
                ];
                Ok(program_seat::<G>(info, argv, *d))
            }
            BotSpec::Program { argv, dialect } => {
                let d = dialect.unwrap_or_else(|| default_dialect::<G>(variant));
                Ok(program_seat::<G>(info, argv.clone(), d))
            }
            BotSpec::Http { endpoint, dialect } => {
                let d = dialect.unwrap_or_else(|| http_dialect::<G>());
                Ok(remote_seat::<G>(
                    info,
                    Link::Http(Arc::clone(http), endpoint.clone()),
                    d,
                ))
            }
        }
    }
}

/// The dialect an HTTP bot of `G` speaks unless told otherwise.
pub fn http_dialect<G: Game>() -> DialectKind {
    DialectKind::default_for_http(G::NAME.parse().unwrap_or(GameKind::SkullWhist))
}

fn program_seat<G: Game>(info: SeatInfo, argv: Vec<String>, d: DialectKind) -> LiveSeat<G> {
    remote_seat(info, Link::Process(argv), d)
}

/// A seat for a bot reached through `link` and speaking `d`.
pub fn remote_seat<G: Game>(mut info: SeatInfo, link: Link, d: DialectKind) -> LiveSeat<G> {
    info.dialect = Some(d.name().into());
    match croupier_dialects::make::<G>(d) {
        Some(dialect) => LiveSeat::remote(info, link, dialect),
        // Callers have made sure the dialect carries the game.
        None => LiveSeat::remote(
            info,
            link,
            Box::new(croupier_dialects::croupier::CroupierDialect::default()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::loveletter::LoveLetter;

    fn specs(texts: &[&str]) -> Vec<BotSpec> {
        texts.iter().map(|t| t.parse().unwrap()).collect()
    }

    #[test]
    fn love_letter_follows_postman_when_every_speaking_bot_speaks_postman() {
        let default = |t: &[&str]| default_variant::<LoveLetter>(&specs(t));
        assert_eq!(
            default(&[
                "./a@loveletter-postman",
                "builtin:random@loveletter-postman"
            ]),
            LoveLetterVariant::postman()
        );
        assert_eq!(
            default(&["./a@loveletter-postman", "builtin:heuristic"]),
            LoveLetterVariant::postman()
        );
        for standard in [
            &["./a@loveletter-postman", "./b"][..],
            &["./a@loveletter-postman", "builtin:random@loveletter"],
            &["builtin:random", "builtin:heuristic"],
            &["./a", "./b"],
        ] {
            assert_eq!(
                default(standard),
                LoveLetterVariant::standard(),
                "{standard:?}"
            );
        }
    }

    #[test]
    fn specs_parse_programs_builtins_and_dialects() {
        assert_eq!(
            "builtin:planner".parse(),
            Ok(BotSpec::Builtin {
                name: "planner".into(),
                dialect: None
            })
        );
        assert_eq!(
            "builtin:random@gops".parse(),
            Ok(BotSpec::Builtin {
                name: "random".into(),
                dialect: Some(DialectKind::Gops)
            })
        );
        assert_eq!(
            "python3 bots/x.py".parse(),
            Ok(BotSpec::Program {
                argv: vec!["python3".into(), "bots/x.py".into()],
                dialect: None
            })
        );
        assert_eq!(
            "'ruby' \"my planner.rb\"@gops".parse(),
            Ok(BotSpec::Program {
                argv: vec!["ruby".into(), "my planner.rb".into()],
                dialect: Some(DialectKind::Gops)
            })
        );
        assert_eq!(
            "./ai@loveletter-postman".parse(),
            Ok(BotSpec::Program {
                argv: vec!["./ai".into()],
                dialect: Some(DialectKind::LoveLetterPostman)
            })
        );
    }

    #[test]
    fn http_specs_keep_credentials_out_of_the_dialect() {
        let spec: BotSpec = "http://me:pw@127.0.0.1:9000/bot@jujitsu".parse().unwrap();
        let BotSpec::Http { endpoint, dialect } = &spec else {
            panic!("{spec:?}");
        };
        assert_eq!(endpoint.url, "http://127.0.0.1:9000/bot");
        assert_eq!(endpoint.auth, Some(("me".into(), "pw".into())));
        assert_eq!(*dialect, Some(DialectKind::Jujitsu));
        assert_eq!(spec.to_string(), "http://127.0.0.1:9000/bot@jujitsu");
        // `@host` is credentials, not a dialect.
        let spec: BotSpec = "http://u:p@localhost:8080".parse().unwrap();
        let BotSpec::Http { endpoint, dialect } = &spec else {
            panic!("{spec:?}");
        };
        assert_eq!(endpoint.url, "http://localhost:8080/");
        assert_eq!(*dialect, None);
        assert_eq!(
            http_dialect::<croupier_rules::goofspiel::Goofspiel>(),
            DialectKind::Jujitsu
        );
    }

    #[test]
    fn bad_specs_are_refused_with_a_reason() {
        assert!(matches!("".parse::<BotSpec>(), Err(SpecError::Empty)));
        assert!(matches!(
            "./ai@klingon".parse::<BotSpec>(),
            Err(SpecError::Dialect(_))
        ));
        assert!(matches!(
            "python3 'x.py".parse::<BotSpec>(),
            Err(SpecError::Split(..))
        ));
        assert!(matches!(
            "http://".parse::<BotSpec>(),
            Err(SpecError::Url(_))
        ));
        use croupier_rules::goofspiel::Goofspiel;
        let v = GoofspielVariant::gops();
        assert!(matches!(
            "/bin/sh@jujitsu"
                .parse::<BotSpec>()
                .unwrap()
                .check::<Goofspiel>(&v),
            Err(SpecError::HttpOnly(DialectKind::Jujitsu))
        ));
        assert!(matches!(
            "http://h/@jujitsu"
                .parse::<BotSpec>()
                .unwrap()
                .check::<croupier_rules::skullwhist::SkullWhist>(&Default::default()),
            Err(SpecError::Unsupported { .. })
        ));
        assert!(matches!(
            "builtin:".parse::<BotSpec>(),
            Err(SpecError::Empty)
        ));
    }

    #[test]
    fn builtin_options_ride_with_the_name() {
        use croupier_rules::goofspiel::Goofspiel;
        let v = GoofspielVariant::gops();
        let spec: BotSpec = "builtin:strong?think-ms=50&threads=2@gops".parse().unwrap();
        assert_eq!(
            spec,
            BotSpec::Builtin {
                name: "strong?think-ms=50&threads=2".into(),
                dialect: Some(DialectKind::Gops)
            }
        );
        assert_eq!(
            spec.to_string(),
            "builtin:strong?think-ms=50&threads=2@gops"
        );
        assert!(spec.check::<Goofspiel>(&v).is_ok());
        for (bad, needle) in [
            ("builtin:strong?depth=3", "unknown option 'depth'"),
            ("builtin:planner?think-ms=5", "takes no options"),
            ("builtin:strong?iterations=0", "iterations must be"),
        ] {
            let e = bad
                .parse::<BotSpec>()
                .unwrap()
                .check::<Goofspiel>(&v)
                .unwrap_err();
            assert!(e.to_string().contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn programs_must_exist() {
        use croupier_rules::goofspiel::Goofspiel;
        let v = GoofspielVariant::gops();
        assert!("sh -c true"
            .parse::<BotSpec>()
            .unwrap()
            .check::<Goofspiel>(&v)
            .is_ok());
        let e = "random"
            .parse::<BotSpec>()
            .unwrap()
            .check::<Goofspiel>(&v)
            .unwrap_err();
        assert!(e.to_string().contains("did you mean builtin:random"), "{e}");
        assert!("./no/such/bot"
            .parse::<BotSpec>()
            .unwrap()
            .check::<Goofspiel>(&v)
            .is_err());
    }

    #[test]
    fn dialects_must_carry_the_game() {
        use croupier_rules::goofspiel::Goofspiel;
        use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
        let gops: BotSpec = "/bin/sh@gops".parse().unwrap();
        assert!(gops.check::<Goofspiel>(&GoofspielVariant::gops()).is_ok());
        assert!(gops
            .check::<LoveLetter>(&LoveLetterVariant::default())
            .is_err());
        assert_eq!(
            default_dialect::<Goofspiel>(&GoofspielVariant::gops()),
            DialectKind::Gops
        );
        assert_eq!(
            default_dialect::<Goofspiel>(&GoofspielVariant::jujitsu(vec![5])),
            DialectKind::Croupier
        );
        assert_eq!(
            default_dialect::<LoveLetter>(&LoveLetterVariant::default()),
            DialectKind::LoveLetter
        );
    }
}
