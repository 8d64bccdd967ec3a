#!/usr/bin/env node
// A Love Letter AI that makes a random *legal* play.
//
// It speaks the HackSoc Love Letter manager's protocol (Croupier's
// `loveletter` dialect, seed 001): one line per message, players numbered
// 1..n, card names in lower case. The AI is started anew for every round and
// stopped (SIGTERM) when it is out or the round ends. It also speaks the
// protocol of the manager's later revision, Postman (`loveletter-postman`:
// `ident`, `players`, `start`, players numbered from 0, capitalised card
// names), which it recognises by its first line.
//
//   croupier play loveletter "node examples/bots/loveletter/random_bot.js" builtin:random builtin:random
//   croupier play loveletter "node examples/bots/loveletter/random_bot.js@loveletter-postman" builtin:random
//
// It aims a card at a player the card can affect when there is one (not out,
// not protected by a Priestess). When there is none, it names a protected
// player: the card is played without effect, which both managers accept. So
// it never needs to know how many players there are, which the classic
// protocol never says (`--players N` tells it anyway; it also learns it as
// the turn order goes round).
//
// It answers every draw on its turn, even one that its view says the
// Minister punishes: a manager that agrees stops it without reading the
// answer.
//
// Node.js only, no packages.
"use strict";

const readline = require("readline");

const VALUES = {
  soldier: 1,
  clown: 2,
  knight: 3,
  priestess: 4,
  wizard: 5,
  general: 6,
  minister: 7,
  princess: 8,
};
// Cards that name another player (the Wizard may also name its own player).
const TARGETED = new Set(["soldier", "clown", "knight", "general", "wizard"]);
// What a Soldier may name: any card but the Soldier.
const GUESSES = Object.keys(VALUES).filter((c) => c !== "soldier");
const MAX_PLAYERS = 4;

const pick = (list) => list[Math.floor(Math.random() * list.length)];

class Table {
  constructor(players) {
    this.postman = false; // which protocol: set by the first line
    this.me = null; // my player number, as the manager writes it
    this.players = players; // number of players, once known (or null)
    this.newRound();
  }

  newRound() {
    this.hand = []; // my cards (one, or two on my turn)
    this.out = new Set(); // players out of this round
    this.protected = new Set(); // players protected by a Priestess
    this.seen = new Set(); // player numbers met in any message this round
    this.lastTurn = null; // the player of the previous `player` line
    this.myTurn = false; // the previous line was my own `player` line
  }

  // Player numbers: 1..n in the classic protocol, 0..n-1 in postman.
  low() {
    return this.postman ? 0 : 1;
  }

  // Players certainly at the table.
  knownPlayers() {
    let count;
    if (this.players !== null) {
      count = this.players;
    } else {
      // Classic, count not known yet: players 1..me exist, at least two
      // players play, and so does everyone we have heard of.
      count = Math.max(this.me, 2, ...this.seen);
    }
    return Array.from({ length: count }, (_, i) => this.low() + i);
  }

  // Remembers player numbers met in a message.
  note(...numbers) {
    for (const n of numbers) this.seen.add(n);
    if (this.players === null && Math.max(...this.seen) === MAX_PLAYERS) {
      this.players = MAX_PLAYERS;
    }
  }

  // A card name as this protocol writes it.
  name(card) {
    return this.postman ? card[0].toUpperCase() + card.slice(1) : card;
  }

  // Reads one line; returns the line to answer with, or null.
  handle(line) {
    const words = line.trim().split(/\s+/).filter((w) => w.length > 0);
    if (words.length === 0) return null;
    const wasMyTurn = this.myTurn;
    this.myTurn = false;
    if (this.me === null) {
      if (words[0] === "ident") {
        // postman: `ident <i>`, answer a name
        this.postman = true;
        this.me = parseInt(words[1], 10);
        return "random_bot.js";
      }
      this.me = parseInt(words[0], 10); // classic: the bare player number
      return null;
    }
    const [kind, ...args] = words;
    const num = (i) => parseInt(args[i], 10);
    const card = (i) => args[i].toLowerCase();
    switch (kind) {
      case "players": // postman: `players <n>`
        this.players = num(0);
        break;
      case "start": // postman: a round begins, `start <first>`
        this.newRound();
        break;
      case "player": {
        // `player <n>`: n's turn begins
        const n = num(0);
        this.note(n);
        // The turn order wrapped around: everyone at the table has now
        // either had a turn or been named (put out) in a message.
        if (this.players === null && this.lastTurn !== null && n <= this.lastTurn) {
          this.players = Math.max(this.me, ...this.seen);
        }
        this.lastTurn = n;
        this.protected.delete(n); // protection lasts until one's next turn
        this.myTurn = n === this.me;
        break;
      }
      case "draw": // `draw <card>`: into my hand
        this.hand.push(card(0));
        if (wasMyTurn) return this.choose();
        break;
      case "played": {
        // `played <a> <card> [<b>] [<guess>]`
        const a = num(0);
        const c = card(1);
        this.note(a, ...(args.length > 2 ? [num(2)] : []));
        if (a === this.me) this.removeFromHand(c);
        if (c === "priestess") this.protected.add(a);
        break;
      }
      case "protected": // postman: the card just played did nothing to n
        break;
      case "swap": // `swap <card>`: a General gave me this card
        this.hand = [card(0)];
        break;
      case "reveal": // `reveal <n> <card>`: I see n's card
        this.note(num(0));
        break;
      case "discard": {
        // `discard <n> <card>`: a Wizard made n discard
        const n = num(0);
        this.note(n);
        if (n === this.me) this.removeFromHand(card(1));
        break;
      }
      case "out": {
        // `out <n> [<cards>]`
        const n = num(0);
        this.note(n);
        this.out.add(n);
        this.protected.delete(n);
        if (n === this.me) process.exit(0); // the manager stops us anyway
        break;
      }
      default:
        break;
    }
    return null;
  }

  removeFromHand(card) {
    const i = this.hand.indexOf(card);
    if (i >= 0) this.hand.splice(i, 1);
  }

  // Players `card` can affect, among those known to exist. (Under
  // Postman's rules a card aimed at oneself does nothing, the Wizard's
  // included.)
  targets(card) {
    return this.knownPlayers().filter(
      (p) =>
        !this.out.has(p) &&
        !this.protected.has(p) &&
        (p !== this.me || (card === "wizard" && !this.postman)),
    );
  }

  // Players a card may name without effect, when it can affect nobody: the
  // protected ones still in the round. If every other player it knows of
  // is out, there is one it has not heard of yet, or the round would be
  // over: the next number (classic), or any player (Postman).
  harmless() {
    // A protected player first: Postman's rules also take the AI's own
    // player, but a table that mixes dialects plays the standard rules,
    // where only the Wizard may name its own player. (A player put out
    // leaves `protected`.)
    const protectedOthers = [...this.protected].filter((p) => p !== this.me).sort();
    if (protectedOthers.length > 0) return protectedOthers;
    if (this.postman) return this.knownPlayers();
    return [Math.max(...this.knownPlayers()) + 1];
  }

  // Every play of `card` that is legal whatever the number of players.
  plays(card) {
    const c = this.name(card);
    if (!TARGETED.has(card)) return [`play ${c}`];
    let targets = this.targets(card);
    if (targets.length === 0) targets = this.harmless();
    if (card === "soldier") {
      return targets.flatMap((t) => GUESSES.map((g) => `play ${c} ${t} ${this.name(g)}`));
    }
    return targets.map((t) => `play ${c} ${t}`);
  }

  choose() {
    return pick([...new Set(this.hand)].sort().flatMap((c) => this.plays(c)));
  }
}

function main() {
  let players = null;
  const i = process.argv.indexOf("--players");
  if (i >= 0) players = parseInt(process.argv[i + 1], 10);
  const table = new Table(players);
  const input = readline.createInterface({ input: process.stdin, terminal: false });
  input.on("line", (line) => {
    const answer = table.handle(line);
    if (answer !== null) process.stdout.write(`${answer}\n`);
  });
  input.on("close", () => process.exit(0));
}

main();
