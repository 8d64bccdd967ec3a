//! A small in-process manager for the client tests: it owns the game, speaks
//! each seat's dialect (the manager side), and talks to each client running
//! on its own thread through a pair of channels.

use std::io::{self, BufReader, Read, Write};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use croupier_dialects::{Dialect, Flow, Reply};
use croupier_rules::{Event as _, Game, Seat};

/// The manager's lines as a byte stream; end of input once the manager
/// drops its sender.
#[derive(Debug)]
pub struct ChannelReader {
    rx: Receiver<String>,
    buf: Vec<u8>,
    pos: usize,
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos >= self.buf.len() {
            match self.rx.recv() {
                Ok(line) => {
                    self.buf = line.into_bytes();
                    self.buf.push(b'\n');
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// The client's output, sent to the manager a whole line at a time.
#[derive(Debug)]
pub struct ChannelWriter {
    tx: Sender<String>,
    pending: Vec<u8>,
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(data);
        while let Some(i) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=i).collect();
            let text = String::from_utf8_lossy(&line[..i]).into_owned();
            self.tx
                .send(text)
                .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What a client reads.
pub type Input = BufReader<ChannelReader>;

/// Starts one client run for a seat.
pub type Spawn = Arc<
    dyn Fn(Seat, Input, ChannelWriter) -> Result<(), crate::bot_side::BotSideError> + Send + Sync,
>;

/// One running client.
struct Client {
    seat: Seat,
    tx: Sender<String>,
    rx: Receiver<String>,
    handle: JoinHandle<Result<(), crate::bot_side::BotSideError>>,
}

impl Client {
    fn start(spawn: &Spawn, seat: Seat) -> Client {
        let (to_client, client_in) = channel();
        let (client_out, from_client) = channel();
        let spawn = Arc::clone(spawn);
        let handle = std::thread::spawn(move || {
            let input = BufReader::new(ChannelReader {
                rx: client_in,
                buf: Vec::new(),
                pos: 0,
            });
            let output = ChannelWriter {
                tx: client_out,
                pending: Vec::new(),
            };
            spawn(seat, input, output)
        });
        Client {
            seat,
            tx: to_client,
            rx: from_client,
            handle,
        }
    }

    fn send(&self, lines: &[String]) {
        for l in lines {
            // A client that already returned reads nothing more.
            let _ = self.tx.send(l.clone());
        }
    }

    fn recv(&self) -> String {
        match self.rx.recv_timeout(Duration::from_secs(10)) {
            Ok(line) => line,
            Err(e) => panic!("seat {} gave no answer: {e}", self.seat),
        }
    }

    /// Ends the input and checks the run ended well, with nothing unread
    /// but, when `out` allows it, one play: the answer of a Love Letter AI
    /// to its draw when the Minister put it out at that draw (the manager
    /// stops it and never reads the answer).
    fn stop(self, out: bool) {
        drop(self.tx);
        let result = self.handle.join().expect("client thread panicked");
        if let Err(e) = result {
            panic!("seat {} client failed: {}", self.seat, e.report());
        }
        let mut extra: Vec<String> = self.rx.try_iter().collect();
        if out && extra.len() == 1 && extra[0].starts_with("play ") {
            extra.clear();
        }
        assert!(
            extra.is_empty(),
            "seat {} wrote lines nobody asked for: {extra:?}",
            self.seat
        );
    }
}

/// The match as the harness ran it.
#[derive(Debug)]
pub struct Played<G> {
    /// The finished game.
    pub game: G,
    /// Client runs started, per seat.
    pub runs: Vec<usize>,
}

struct Table<G: Game> {
    game: G,
    dialects: Vec<Box<dyn Dialect<G>>>,
    clients: Vec<Option<Client>>,
    spawn: Spawn,
    runs: Vec<usize>,
    seen: usize,
}

impl<G: Game> Table<G> {
    fn start(&mut self, s: usize) {
        let seat = Seat(s as u8);
        if let Some(old) = self.clients[s].take() {
            old.stop(false);
        }
        let client = Client::start(&self.spawn, seat);
        self.runs[s] += 1;
        let mut out = Vec::new();
        self.dialects[s].hello(&self.game, seat, &mut out);
        client.send(&out);
        if self.dialects[s].expects_hello_reply() {
            let name = client.recv();
            assert!(!name.trim().is_empty(), "seat {seat} gave an empty name");
        }
        self.clients[s] = Some(client);
    }

    /// Sends every new event to the seats that may see it.
    fn deliver(&mut self) {
        while self.seen < self.game.events().len() {
            let e = self.game.events()[self.seen].clone();
            self.seen += 1;
            for s in 0..self.dialects.len() {
                let seat = Seat(s as u8);
                if !e.visible_to(seat) {
                    continue;
                }
                let mut out = Vec::new();
                let flow = self.dialects[s].event(&self.game, seat, &e, &mut out);
                if flow == Flow::Restart {
                    self.start(s);
                }
                if let Some(c) = &self.clients[s] {
                    c.send(&out);
                }
                if flow == Flow::Stop {
                    // Stopped in the middle of the match (Love Letter: out,
                    // or the round is over).
                    if let Some(c) = self.clients[s].take() {
                        c.stop(true);
                    }
                }
            }
        }
    }

    fn turn(&mut self, seat: Seat) {
        let s = seat.index();
        let legal = self.game.legal_vec(seat);
        let mut out = Vec::new();
        self.dialects[s].prompt(&self.game, seat, &legal, 1000, &mut out);
        let Some(client) = &self.clients[s] else {
            panic!("seat {seat} must act but its client is not running");
        };
        client.send(&out);
        loop {
            let line = client.recv();
            match self.dialects[s].decode(&self.game, seat, &line) {
                Ok(Reply::Action(a)) => {
                    self.game.apply(seat, a).expect("decoded actions are legal");
                    return;
                }
                Ok(Reply::Ignore) => {}
                other => panic!("seat {seat} answered '{line}': {other:?} (a fault)"),
            }
        }
    }
}

/// Plays `game` to the end with one client per seat speaking the seat's
/// dialect; panics on any fault (a refused or forfeited answer, a silent or
/// failed client, an answer nobody asked for).
pub fn play<G: Game>(game: G, dialects: Vec<Box<dyn Dialect<G>>>, spawn: Spawn) -> Played<G> {
    let seats = game.num_seats();
    assert_eq!(dialects.len(), seats);
    let mut t = Table {
        game,
        dialects,
        clients: (0..seats).map(|_| None).collect(),
        spawn,
        runs: vec![0; seats],
        seen: 0,
    };
    for s in 0..seats {
        if !t.dialects[s].starts_per_round() {
            t.start(s);
        }
    }
    t.deliver();
    while let Some(seat) = t.game.to_act().first() {
        t.turn(seat);
        t.deliver();
    }
    for s in 0..seats {
        if let Some(c) = t.clients[s].take() {
            let mut out = Vec::new();
            t.dialects[s].goodbye(&t.game, Seat(s as u8), &mut out);
            c.send(&out);
            c.stop(false);
        }
    }
    let outcome = t.game.outcome().expect("the game is over");
    assert_eq!(outcome.forfeited_by, None);
    Played {
        game: t.game,
        runs: t.runs,
    }
}
