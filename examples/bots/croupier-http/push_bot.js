#!/usr/bin/env node
// A croupier/1 bot served over HTTP (push) that plays a random legal action.
//
// Croupier POSTs every croupier/1 message of a match to this server, one
// message per request: `start`, then `event`s and `act`s, then `end`. The reply
// to an `act` is the answer, `{"action": <one entry of "legal">, "decision": n}`;
// every other message gets 204 No Content. Each request carries the header
// `X-Croupier-Match`, a tag unique to one match and seat, so one server can play
// many matches at once: its state is kept per tag.
//
//   node examples/bots/croupier-http/push_bot.js --port 8002
//   croupier play skullwhist "http://127.0.0.1:8002/@croupier" builtin:random
//   croupier play goofspiel "http://127.0.0.1:8002/@croupier" builtin:planner
//   croupier play loveletter "http://127.0.0.1:8002/@croupier" builtin:random builtin:random
//
// Options: --port N (default 8002; 0 picks a free port), --host ADDR (default
// 127.0.0.1; 0.0.0.0 to be reachable from other machines), --user U --password P
// (then every request must carry that HTTP basic authentication, or it gets
// 401), --log FILE (append every request and reply to FILE, for debugging).
// When it is ready it prints `listening on PORT` on stdout. It writes one line
// per match to stderr.
//
// Node.js only, no packages. See docs/protocol/croupier-http.md.
"use strict";

const crypto = require("crypto");
const fs = require("fs");
const http = require("http");

const MAX_BODY = 1 << 20; // a croupier/1 message is a few KiB at most
const FORGET_AFTER_MS = 3600 * 1000; // the state of a match that never ended is dropped

function parseArgs(argv) {
  const opts = { port: 8002, host: "127.0.0.1", user: null, password: "", log: null };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (!["--port", "--host", "--user", "--password", "--log"].includes(flag) || value === undefined) {
      process.stderr.write(`usage: push_bot.js [--port N] [--host ADDR] [--user U --password P] [--log FILE]\n`);
      process.exit(2);
    }
    opts[flag.slice(2)] = flag === "--port" ? Number(value) : value;
    i++;
  }
  return opts;
}

class BadRequest extends Error {}

// What the bot knows of each match it plays, keyed on X-Croupier-Match.
const matches = new Map();

// Handles one message; returns the answer to an `act`, else null.
function handle(tag, msg) {
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
    throw new BadRequest("the body is not a JSON object");
  }
  const now = Date.now();
  for (const [old, state] of matches) {
    if (now - state.seen > FORGET_AFTER_MS) matches.delete(old);
  }
  if (!matches.has(tag)) matches.set(tag, { game: "?", seat: "?", seats: "?", acts: 0 });
  const match = matches.get(tag);
  match.seen = now;
  switch (msg.type) {
    case "start":
      // {"protocol": "croupier/1", "game", "variant", "seat", "seats"}
      Object.assign(match, { game: msg.game, seat: msg.seat, seats: msg.seats });
      return null;
    case "act": {
      // {"decision", "observation", "legal", "deadline_ms"}
      const legal = msg.legal;
      if (!Array.isArray(legal) || legal.length === 0) {
        throw new BadRequest("an act needs a non-empty 'legal' list");
      }
      match.acts += 1;
      return { action: legal[Math.floor(Math.random() * legal.length)], decision: msg.decision };
    }
    case "end": {
      // {"outcome": {"scores", "ranks", ["forfeited_by"]}}
      matches.delete(tag);
      const outcome = msg.outcome || {};
      process.stderr.write(
        `push_bot.js: match ${tag}: ${match.game}, seat ${match.seat} of ${match.seats}, ` +
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

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const expected =
    opts.user === null ? null : "Basic " + Buffer.from(`${opts.user}:${opts.password}`).toString("base64");
  const log = opts.log ? fs.openSync(opts.log, "a") : null;

  function authorised(req) {
    if (expected === null) return true;
    const given = Buffer.from(req.headers.authorization || "");
    const want = Buffer.from(expected);
    return given.length === want.length && crypto.timingSafeEqual(given, want);
  }

  function reply(res, status, text = null, contentType = "text/plain; charset=utf-8", extra = {}) {
    if (text === null) {
      res.writeHead(status, extra);
      res.end();
    } else {
      const body = Buffer.from(text);
      res.writeHead(status, { "Content-Type": contentType, "Content-Length": body.length, ...extra });
      res.end(body);
    }
    if (log !== null) fs.writeSync(log, `<<< ${status}\n${text || ""}\n\n`);
  }

  function logRequest(req, body) {
    if (log === null) return;
    let headers = "";
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      headers += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\n`;
    }
    fs.writeSync(log, `>>> ${req.method} ${req.url} HTTP/${req.httpVersion}\n${headers}\n${body}\n`);
  }

  function answer(req, res, body) {
    logRequest(req, body);
    if (!authorised(req)) {
      reply(res, 401, "unauthorised", undefined, { "WWW-Authenticate": 'Basic realm="croupier"' });
      return;
    }
    let result;
    try {
      // JSON.parse throws a SyntaxError, handle a BadRequest.
      result = handle(req.headers["x-croupier-match"] || "", JSON.parse(body));
    } catch (e) {
      reply(res, 400, `bad message: ${e.message}`);
      return;
    }
    if (result === null) reply(res, 204);
    else reply(res, 200, JSON.stringify(result), "application/json");
  }

  const server = http.createServer((req, res) => {
    if (req.method !== "POST") {
      res.shouldKeepAlive = false; // any body it had is left unread
      reply(res, 405, "POST croupier/1 messages here\n", undefined, { Allow: "POST" });
      return;
    }
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > MAX_BODY) {
        reply(res, 413, "request body too large");
        return;
      }
      answer(req, res, Buffer.concat(chunks).toString("utf8"));
    });
    req.on("error", () => res.destroy());
  });
  // Small replies must leave at once, not wait for Nagle's algorithm.
  server.on("connection", (socket) => socket.setNoDelay(true));
  // Keep idle connections longer than Croupier does (60 s), so that it never
  // reuses a connection this server is just closing.
  server.keepAliveTimeout = 65000;
  server.headersTimeout = 66000;
  server.on("clientError", (err, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  server.on("error", (err) => {
    process.stderr.write(`push_bot.js: ${err.message}\n`);
    process.exit(1);
  });
  server.listen(opts.port, opts.host, () => {
    process.stdout.write(`listening on ${server.address().port}\n`);
  });
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(0));
}

main();
