#!/usr/bin/env node
// A croupier/1 bot that pulls its messages from a Croupier server and plays
// a random legal action.
//
// The bot is an HTTP client of the server's pull API, so it needs no open port:
// it long-polls `GET /v1/messages?after=SEQ&wait=25` for the croupier/1 messages
// of its matches (`start`, `event`, `act`, `end`), and answers each `act` with
// `POST /v1/answer` `{"match": <tag>, "decision": n, "action": <one of "legal">}`.
// Both carry `Authorization: Bearer TOKEN`, the token shown once when the bot
// was registered. A bot that is polling is waiting for a match, so the server's
// ladder may seat it at any time.
//
//   node examples/bots/croupier-http/pull_bot.js --server http://127.0.0.1:8080 --token TOKEN
//
// Options: --server URL (the server, http or https), --token TOKEN (or the
// environment variable CROUPIER_TOKEN, which keeps it out of the process list),
// --wait SECONDS (long-poll time, 0..30, default 25). One connection is kept
// alive and reused; after an error the bot reconnects with a growing pause
// (1 s, 2 s, 4 s ... 30 s). It stops cleanly on SIGINT (Ctrl-C) or SIGTERM, and
// exits at once with status 1 if the server refuses its token. It writes one
// line per match to stderr.
//
// Node.js only, no packages. See docs/protocol/croupier-http.md.
"use strict";

const http = require("http");
const https = require("https");

function parseArgs(argv) {
  const opts = { server: null, token: process.env.CROUPIER_TOKEN || null, wait: 25 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (!["--server", "--token", "--wait"].includes(flag) || value === undefined) usage();
    opts[flag.slice(2)] = flag === "--wait" ? Number(value) : value;
    i++;
  }
  if (!opts.server || !opts.token || !Number.isInteger(opts.wait) || opts.wait < 0 || opts.wait > 30) usage();
  return opts;
}

function usage() {
  process.stderr.write("usage: pull_bot.js --server URL [--token TOKEN] [--wait 0..30]\n");
  process.exit(2);
}

class Refused extends Error {}

// The pull API over one kept-alive connection.
class Api {
  constructor(server, token, wait) {
    let url;
    try {
      url = new URL(server);
    } catch (e) {
      url = null;
    }
    if (url === null || !["http:", "https:"].includes(url.protocol)) {
      process.stderr.write(`pull_bot.js: --server must be an http:// or https:// URL, not '${server}'\n`);
      process.exit(2);
    }
    this.base = url.href.replace(/\/+$/, "");
    this.lib = url.protocol === "https:" ? https : http;
    // One socket, reused for every request (the requests are sequential).
    this.agent = new this.lib.Agent({ keepAlive: true, maxSockets: 1 });
    this.headers = { Authorization: `Bearer ${token}`, Accept: "application/json" };
    // A long poll lasts up to `wait` seconds: allow that much more.
    this.timeoutMs = (wait + 15) * 1000;
    this.current = null; // the request in flight, aborted on a signal
  }

  // Resolves to {status, reply}; rejects on network errors. A throttled
  // request (HTTP 429, or 503 while the server is crowded) is sent again
  // after the Retry-After header's seconds.
  async request(method, path, body) {
    for (;;) {
      const { status, wait, reply } = await this.send(method, path, body);
      if ((status === 429 || status === 503) && wait !== null) {
        process.stderr.write(`pull_bot.js: ${status} ${reply.error}; waiting ${wait} s\n`);
        await new Promise((resolve) => setTimeout(resolve, wait * 1000));
        continue;
      }
      return { status, reply };
    }
  }

  // One request: {status, wait (Retry-After seconds or null), reply}.
  send(method, path, body) {
    return new Promise((resolve, reject) => {
      const headers = { ...this.headers };
      let data = null;
      if (body !== undefined) {
        data = Buffer.from(JSON.stringify(body));
        headers["Content-Type"] = "application/json";
        headers["Content-Length"] = data.length;
      }
      const req = this.lib.request(this.base + path, { method, headers, agent: this.agent }, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if (res.statusCode === 401 || res.statusCode === 403) {
            reject(new Refused(`${res.statusCode} ${text.slice(0, 200)}`));
            return;
          }
          let reply;
          try {
            reply = text ? JSON.parse(text) : {};
          } catch (e) {
            reply = { error: text.slice(0, 200) };
          }
          if (reply === null || typeof reply !== "object") reply = { error: String(reply) };
          const after = res.headers["retry-after"];
          const n = parseInt(after, 10);
          const wait = after === undefined ? null : Number.isNaN(n) ? 1 : Math.max(1, n);
          resolve({ status: res.statusCode, wait, reply });
        });
      });
      this.current = req;
      req.setNoDelay(true);
      req.setTimeout(this.timeoutMs, () => req.destroy(new Error("no reply in time")));
      req.on("error", reject);
      req.end(data);
    });
  }

  close() {
    if (this.current !== null) this.current.destroy();
    this.agent.destroy();
  }
}

// What the bot knows of each match it plays, keyed on the match tag.
const matches = new Map();

// Handles one message; returns the action for an `act`, else null.
function handle(tag, msg) {
  if (msg === null || typeof msg !== "object") throw new Error("not a JSON object");
  if (!matches.has(tag)) matches.set(tag, { game: "?", seat: "?", seats: "?", acts: 0 });
  const match = matches.get(tag);
  switch (msg.type) {
    case "start":
      // {"protocol": "croupier/1", "game", "variant", "seat", "seats"}
      Object.assign(match, { game: msg.game, seat: msg.seat, seats: msg.seats });
      return null;
    case "act":
      // {"decision", "observation", "legal", "deadline_ms"}
      if (!Array.isArray(msg.legal) || msg.legal.length === 0) throw new Error("an act without legal actions");
      match.acts += 1;
      return msg.legal[Math.floor(Math.random() * msg.legal.length)];
    case "end": {
      // {"outcome": {"scores", "ranks", ["forfeited_by"]}}
      matches.delete(tag);
      const outcome = msg.outcome || {};
      process.stderr.write(
        `pull_bot.js: match ${tag}: ${match.game}, seat ${match.seat} of ${match.seats}, ` +
          `${match.acts} decisions, scores ${JSON.stringify(outcome.scores)}, ` +
          `ranks ${JSON.stringify(outcome.ranks)}\n`,
      );
      return null;
    }
    default:
      // "event" messages ({"event": {...}}) and unknown types need no answer.
      return null;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls and answers until stopped.
async function play(api, wait) {
  let after = 0; // the last seq handled: the next poll acknowledges up to it
  // "match seq" of the messages handled lately. After an error the bot polls
  // from 0 again: the server may have restarted, and a new server run numbers
  // its messages from 1. Messages seen before are skipped.
  const seen = new Set();
  let pause = 1;
  for (;;) {
    try {
      const { status, reply } = await api.request("GET", `/v1/messages?after=${after}&wait=${wait}`);
      if (status !== 200) throw new Error(`GET /v1/messages: ${status} ${reply.error}`);
      for (const { seq, match: tag, message } of reply.messages) {
        after = Math.max(after, seq);
        const key = `${tag} ${seq}`;
        if (seen.has(key)) continue;
        let action = null;
        try {
          action = handle(tag, message);
        } catch (e) {
          // A message this bot cannot read: skip it.
          process.stderr.write(`pull_bot.js: skipped message ${seq}: ${e.message}\n`);
        }
        if (action !== null) {
          const answer = { match: tag, decision: message.decision, action };
          const r = await api.request("POST", "/v1/answer", answer);
          if (r.status >= 500) throw new Error(`POST /v1/answer: ${r.status} ${r.reply.error}`);
          if (r.status !== 200) {
            // 409 or 404: too late (the server has ruled already, or the
            // match is over), or a duplicate. Go on.
            process.stderr.write(`pull_bot.js: answer refused: ${r.status} ${r.reply.error}\n`);
          }
        }
        seen.add(key);
        if (seen.size > 10000) seen.delete(seen.values().next().value); // the oldest
      }
      pause = 1;
    } catch (e) {
      if (e instanceof Refused) throw e;
      process.stderr.write(`pull_bot.js: ${e.message}; retrying in ${pause} s\n`);
      await sleep(pause * 1000);
      pause = Math.min(pause * 2, 30);
      after = 0;
    }
  }
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const api = new Api(opts.server, opts.token, opts.wait);
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.on(signal, () => {
      process.stderr.write("pull_bot.js: stopped\n");
      api.close();
      process.exit(0);
    });
  }
  process.stderr.write(`pull_bot.js: polling ${opts.server}\n`);
  play(api, opts.wait).catch((e) => {
    process.stderr.write(`pull_bot.js: the server refused the token: ${e.message}\n`);
    api.close();
    process.exit(1);
  });
}

main();
