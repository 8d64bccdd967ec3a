#!/usr/bin/env node
// A SkullWhist bot that bids and plays at random, like the 2014 SkullSpace
// example bots, for Croupier's SkullWhist REST API.
//
// Usage:
//
//     random_bot.js [URL [NAME [PASSWORD]]] [--games N]
//
//     URL       the server, default http://127.0.0.1:8080
//     NAME      the bot's name, default a random one (random-js-xxxxxx)
//     PASSWORD  its password (required with NAME; random with a random name)
//     --games N play N games and stop (default: play forever)
//
// The algorithm is the one every example bot of the event follows:
//
//     - Attempt to register a new bot
//       - If the registration fails, don't worry about it
//     - Attempt to login with a bot's name and password
//       - If that doesn't work, exit
//     - In a never ending loop, do the following:
//       - Repeatedly try to join a new game
//       - Once a game is joined, notify the server of your bid
//       - For thirteen rounds:
//         - Wait for it to be our turn
//         - Pick a random card, as restricted by the game's rules
//       - Wait for the game to end on the server
//
// Node.js built-in modules only.

'use strict';

const crypto = require('crypto');
const http = require('http');
const https = require('https');

// How long to wait (ms) between two status requests while waiting for our turn.
const POLL_DELAY = 20;

// new-game waits about 30 s for an opponent before it answers "retry", so a
// request may take that long; give up on a silent server after 90 s.
const TIMEOUT = 90000;

function fail(message) {
  console.error(message);
  process.exit(1);
}

// Posts JSON to /api/<method>/ over one keep-alive connection.
class Api {
  constructor(url) {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      fail('the server URL must start with http:// or https://');
    }
    this.url = parsed;
    this.base = parsed.pathname.replace(/\/+$/, '');
    this.transport = parsed.protocol === 'https:' ? https : http;
    // One connection, kept alive between requests; Nagle's delay is off
    // (small requests and replies: send each at once).
    this.agent = new this.transport.Agent({ keepAlive: true, maxSockets: 1 });
  }

  // The reply to `method`, after waiting out any "retry" that is not
  // new-game's "no opponent yet".
  async call(method, fields) {
    const body = JSON.stringify(fields);
    for (;;) {
      const { status, wait, text } = await this.post(method, body);
      if ((status === 429 || status === 503) && wait !== null) {
        // The server is busy (too many connections): wait, ask again.
        await sleep(wait * 1000);
        continue;
      }
      if (status !== 200) throw new Error(`${method}: HTTP ${status} from the server`);
      let reply;
      try {
        reply = JSON.parse(text);
      } catch (e) {
        throw new Error(`${method}: the reply is not JSON: ${e.message}`);
      }
      // "retry" from new-game without Retry-After means "no opponent yet":
      // the caller asks again at once. Any other "retry" means the server
      // throttles us (too many requests or failed logins): wait the
      // Retry-After header's seconds and send the same request.
      if (reply.result === 'retry' && (wait !== null || method !== 'new-game')) {
        await sleep((wait === null ? 1 : wait) * 1000);
        continue;
      }
      return reply;
    }
  }

  // Sends one request: the HTTP status, Retry-After in seconds (null if
  // absent) and the body.
  post(method, body) {
    const options = {
      method: 'POST',
      hostname: this.url.hostname,
      port: this.url.port || (this.transport === https ? 443 : 80),
      path: `${this.base}/api/${method}/`,
      agent: this.agent,
      headers: {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(body),
      },
    };
    return new Promise((resolve, reject) => {
      const request = this.transport.request(options, (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => {
          resolve({
            status: response.statusCode,
            wait: retryAfter(response.headers['retry-after']),
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
      });
      request.on('socket', (socket) => socket.setNoDelay(true));
      request.setTimeout(TIMEOUT, () => request.destroy(new Error(`${method}: no reply in time`)));
      request.on('error', reject);
      request.end(body);
    });
  }
}

// A Retry-After header's seconds (at least 1), or null without one.
function retryAfter(value) {
  if (value === undefined) return null;
  const n = parseInt(value, 10);
  return Number.isNaN(n) ? 1 : Math.max(1, n);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function randomInt(low, high) {
  return low + Math.floor(Math.random() * (high - low + 1));
}

// One line about a finished game (an old-game reply) for bot `me`.
function describe(record, me) {
  const [us, them] = record.bot1 === me ? ['1', '2'] : ['2', '1'];
  if (record.forfeited_by !== null) {
    const who = record.forfeited_by === me ? 'we' : 'the opponent';
    return `${who} forfeited in round ${record.round + 1}`;
  }
  const score = record['score' + us];
  const other = record['score' + them];
  const verdict = score > other ? 'won' : score < other ? 'lost' : 'tie';
  return `we bid ${record['bid' + us]} and took ${record['tricks' + us]} tricks: ${score} to ${other}, ${verdict}`;
}

async function main() {
  const args = process.argv.slice(2);
  let games = null;
  const g = args.indexOf('--games');
  if (g >= 0) {
    if (!/^\d+$/.test(args[g + 1] || '')) fail('--games takes a number');
    games = parseInt(args[g + 1], 10);
    args.splice(g, 2);
  }
  if (args.length > 3 || args.some((a) => a.startsWith('-'))) {
    fail('usage: random_bot.js [URL [NAME [PASSWORD]]] [--games N]');
  }
  const url = args[0] || 'http://127.0.0.1:8080';
  let name;
  let password;
  if (args.length > 1) {
    if (args.length < 3) fail('give a password after the name');
    name = args[1];
    password = args[2];
  } else {
    name = 'random-js-' + crypto.randomBytes(3).toString('hex');
    password = crypto.randomBytes(16).toString('hex');
  }

  const api = new Api(url);

  // Attempt to register a new bot.
  let reply = await api.call('register', { name, password });
  if (reply.result !== 'success') {
    // If the registration fails, don't worry about it (the name may be ours
    // from an earlier run).
    console.log(`register: ${reply.reason}`);
  }

  // Attempt to login with the bot's name and password.
  reply = await api.call('login', { name, password });
  // If that doesn't work, exit.
  if (reply.result !== 'success') fail(`login failed: ${reply.reason}`);
  const session = reply.session;
  const me = reply.id;
  console.log(`logged in as ${name} (bot ${me})`);

  let played = 0;
  // In a never ending loop (or until we have played --games games):
  while (games === null || played < games) {
    // Repeatedly try to join a new game.
    for (;;) {
      reply = await api.call('new-game', { session });
      if (reply.result === 'success') break;
      if (reply.result !== 'retry') fail(`new-game failed: ${reply.reason}`);
      // "retry": nobody to play with yet; ask again.
    }
    const game = reply.game;
    const cards = reply.cards;
    console.log(`game ${game} against bot ${reply.opponent}: ${cards.join(' ')}`);

    // Once a game is joined, notify the server of our bid.
    const bid = randomInt(1, 13);
    reply = await api.call('bid', { session, bid });
    if (reply.result !== 'success') fail(`bid failed: ${reply.reason}`);

    // For thirteen rounds:
    for (let round = 1; round <= 13; round++) {
      // Wait for it to be our turn.
      let status;
      for (;;) {
        status = await api.call('status', { session });
        if (status.result !== 'success') fail(`status failed: ${status.reason}`);
        if (status.game !== game || status['your-turn']) break;
        await sleep(POLL_DELAY);
      }
      if (status.game !== game) {
        // The game ended early: a forfeit (a bot was too slow).
        console.log(`game ${game} ended in round ${round}`);
        break;
      }

      // Pick a random card, as restricted by the game's rules: when the
      // opponent led this round, follow its suit if we can.
      let choices = cards;
      const led = status['opponent-current-card'];
      if (led !== null) {
        const sameSuit = cards.filter((c) => c[0] === led[0]);
        if (sameSuit.length > 0) choices = sameSuit;
      }
      const card = choices[randomInt(0, choices.length - 1)];
      reply = await api.call('play', { session, card });
      if (reply.result !== 'success') fail(`play ${card} failed: ${reply.reason}`);
      cards.splice(cards.indexOf(card), 1);
    }

    // Wait for the game to end on the server (status shows no game).
    for (;;) {
      const status = await api.call('status', { session });
      if (status.result !== 'success') fail(`status failed: ${status.reason}`);
      if (status.game !== game) break;
      await sleep(POLL_DELAY);
    }
    played += 1;

    // Not part of the 2014 algorithm: look the result up.
    reply = await api.call('old-game', { session, game });
    if (reply.result === 'success') {
      console.log(`game ${game} over: ${describe(reply, me)}`);
    } else {
      console.log(`game ${game}: ${reply.reason}`);
    }
  }
  // Close the kept-alive connection so that the process can exit.
  api.agent.destroy();
}

main().catch((e) => fail(e.message));
