#!/usr/bin/env node
// A GOPS bot that bids a random card it still holds.
//
// It speaks the GOPS quiz runner's protocol (Croupier's `gops` dialect):
//
//   runner -> bot   Competition card:  <v>    (two spaces after the colon)
//   bot -> runner   <bid>                     (one line holding a number)
//   runner -> bot   Opponent's bid:  <v>
//
// 13 turns, one line each way per turn. Run it with
//
//   croupier play goofspiel "node examples/bots/gops/random_bot.js" builtin:random
//
// An optional argument gives the number of cards per hand (13 unless told,
// as in the quiz): `random_bot.js 5` for `--variant "gops rounds=5"`.
// Node.js only, no packages.
"use strict";

const readline = require("readline");

const cards = process.argv.length > 2 ? parseInt(process.argv[2], 10) : 13;
const fullHand = () => Array.from({ length: cards }, (_, i) => i + 1);
let hand = fullHand();

const input = readline.createInterface({ input: process.stdin, terminal: false });

input.on("line", (line) => {
  if (line.startsWith("Competition card:")) {
    if (hand.length === 0) hand = fullHand(); // a new round of a multi-round variant
    const i = Math.floor(Math.random() * hand.length);
    const bid = hand[i];
    hand.splice(i, 1);
    process.stdout.write(`${bid}\n`);
  } else if (line.startsWith("Opponent's bid:")) {
    // A random bot has no use for it; the number is line.match(/\d+/)[0].
  }
});

// End of input: the match is over.
input.on("close", () => process.exit(0));
