//! Step-by-step replays: a record is re-run through its game's engine, and
//! each step is shown with its thinking time, any fault and the events it
//! caused; the state after the chosen step (every hand, spectators see all)
//! is drawn by each game's [`Show`] implementation in `replay_games.rs`.

use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{Fault, GameKind, Record, Seat, SeatInfo, StepKind};
use serde::Serialize;

use crate::html::{html, Markup, Names};

/// How a game draws its replay.
pub trait Show: crate::table::Tabled {
    /// One event, for people.
    fn event_html(e: &Self::Event, names: &Names) -> Markup;
    /// A step's action text.
    fn action_html(text: &str, names: &Names) -> Markup;
    /// The whole state now.
    fn panel(&self, names: &Names) -> Markup;
}

/// One step of a replay.
#[derive(Debug, Serialize)]
pub struct StepView {
    /// From 1.
    pub index: usize,
    /// Who acted.
    pub seat: Seat,
    /// The action's text, or `forfeit`.
    pub action: String,
    /// Thinking time in milliseconds, when measured.
    pub ms: Option<f64>,
    /// CPU time of the bot's processes for it in milliseconds, when
    /// measured (a bot program in a cgroup of its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_ms: Option<f64>,
    /// The seat is an in-process built-in strategy: its time says nothing
    /// about a bot (pages show "built-in" instead).
    pub builtin: bool,
    /// The seat polled for its turn (the 2014 REST API): its time is a
    /// response time, its polling delay included, not thinking time.
    pub polled: bool,
    /// The fault that led to it.
    pub fault: Option<Fault>,
    /// What happened, as text (hidden information included).
    pub events: Vec<String>,
    /// The action drawn.
    #[serde(skip)]
    pub action_html: Markup,
    /// The events drawn.
    #[serde(skip)]
    pub events_html: Vec<Markup>,
}

/// A replayed game.
#[derive(Debug, Serialize)]
pub struct Replay {
    /// Events of the deal, before the first step.
    pub deal: Vec<String>,
    /// Every step.
    pub steps: Vec<StepView>,
    /// Why the record stops replaying, if it does.
    pub error: Option<String>,
    /// The deal drawn.
    #[serde(skip)]
    pub deal_html: Vec<Markup>,
    /// The state after step `at` (0 = the deal), drawn.
    #[serde(skip)]
    pub panel: Markup,
}

/// Replays `record`, drawing the state after step `at` (0 = the deal).
pub fn replay(record: &Record, names: &Names, at: usize) -> Replay {
    match record.game.parse::<GameKind>() {
        Ok(GameKind::SkullWhist) => run::<SkullWhist>(record, names, at),
        Ok(GameKind::LoveLetter) => run::<LoveLetter>(record, names, at),
        Ok(GameKind::Goofspiel) => run::<Goofspiel>(record, names, at),
        Err(e) => Replay {
            deal: Vec::new(),
            steps: Vec::new(),
            error: Some(e.to_string()),
            deal_html: Vec::new(),
            panel: html! {},
        },
    }
}

fn run<G: Show>(record: &Record, names: &Names, at: usize) -> Replay {
    let fresh = serde_json::from_value::<G::Variant>(record.variant.clone())
        .map_err(|e| e.to_string())
        .and_then(|v| G::new(&v, record.seats.len(), record.seed).map_err(|e| e.to_string()));
    let mut out = Replay {
        deal: Vec::new(),
        steps: Vec::new(),
        error: None,
        deal_html: Vec::new(),
        panel: html! {},
    };
    let first = match fresh {
        Ok(g) => g,
        Err(e) => {
            out.error = Some(format!("cannot set up the game: {e}"));
            return out;
        }
    };
    let mut shown = first.events().len();
    out.deal = first.events().iter().map(|e| e.to_string()).collect();
    out.deal_html = first
        .events()
        .iter()
        .map(|e| G::event_html(e, names))
        .collect();
    if at == 0 {
        out.panel = first.panel(names);
    }
    let mut steps = Vec::with_capacity(record.steps.len());
    let mut panel = None;
    let result = record.replay_with::<G>(|i, step, g| {
        let new = &g.events()[shown.min(g.events().len())..];
        shown = g.events().len();
        let (action, action_html) = match &step.kind {
            StepKind::Action(a) => (a.clone(), G::action_html(a, names)),
            StepKind::Forfeit => ("forfeit".to_string(), html! { em { "forfeit" } }),
        };
        steps.push(StepView {
            index: i + 1,
            seat: step.seat,
            action,
            ms: step.ms,
            cpu_ms: step.cpu_ms,
            builtin: record
                .seats
                .get(step.seat.index())
                .is_some_and(SeatInfo::in_process),
            polled: record
                .seats
                .get(step.seat.index())
                .is_some_and(|s| s.name.starts_with("bot:")),
            fault: step.fault.clone(),
            events: new.iter().map(|e| e.to_string()).collect(),
            action_html,
            events_html: new.iter().map(|e| G::event_html(e, names)).collect(),
        });
        if i + 1 == at {
            panel = Some(g.panel(names));
        }
    });
    out.steps = steps;
    if let Some(p) = panel {
        out.panel = p;
    }
    if let Err(e) = result {
        out.error = Some(e.to_string());
    }
    out
}
