#!/usr/bin/env node
// A bot for any game of the Croupier protocol (croupier/1) that plays a
// random legal action.
//
// Croupier writes one JSON object per line: `start`, then `event`s and `act`s,
// then `end`. For every `act` the bot answers one line,
// `{"action": <one entry of "legal">, "decision": <the act's decision>}`.
// It never needs to know the game's rules: the `legal` list holds every action
// it may take.
//
//   croupier play skullwhist "node examples/bots/croupier/random_bot.js" builtin:random
//   croupier play goofspiel "node examples/bots/croupier/random_bot.js@croupier" builtin:random
//   croupier play loveletter "node examples/bots/croupier/random_bot.js@croupier" builtin:random
//
// Node.js only, no packages. See docs/protocol/croupier.md.
"use strict";

const readline = require("readline");

const input = readline.createInterface({ input: process.stdin, terminal: false });

input.on("line", (line) => {
  if (line.trim() === "") return;
  const msg = JSON.parse(line);
  switch (msg.type) {
    case "start":
      // {"protocol": "croupier/1", "game", "variant", "seat", "seats"}
      process.stderr.write(`random_bot.js: ${msg.game}, seat ${msg.seat} of ${msg.seats}\n`);
      break;
    case "act": {
      // {"decision", "observation", "legal", "deadline_ms"}
      const action = msg.legal[Math.floor(Math.random() * msg.legal.length)];
      process.stdout.write(JSON.stringify({ action, decision: msg.decision }) + "\n");
      break;
    }
    case "end":
      // {"outcome": {"scores", "ranks", ["forfeited_by"]}}
      process.exit(0);
      break;
    default:
      // "event" messages ({"event": {...}}) need no answer.
      break;
  }
});

input.on("close", () => process.exit(0));
