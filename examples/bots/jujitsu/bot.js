#!/usr/bin/env node
// A Psychological Jujitsu bot server that bids a random card it still holds.
//
// Psychological Jujitsu (seed 002) turns the usual roles around: the bot is an
// HTTP server, and for every decision Croupier POSTs one JSON document holding
// the whole match so far. The bot answers with the number of its bid card, as
// `text/plain`. After the last turn it gets one more document with
// `"gameEnded": true`, whose answer is ignored.
//
//   node examples/bots/jujitsu/bot.js --port 8001 --user me --password secret
//   croupier play goofspiel "http://me:secret@127.0.0.1:8001/@jujitsu" builtin:planner \
//       --variant jujitsu --games 5
//
// Options: --port N (default 8001; 0 picks a free port), --host ADDR (default
// 127.0.0.1; 0.0.0.0 to be reachable from other machines), --user U --password P
// (then every request must carry that HTTP basic authentication, or it gets
// 401), --log FILE (append every request and reply to FILE, for debugging).
// When it is ready it prints `listening on PORT` on stdout. It writes one line
// per match to stderr.
//
// Node.js only, no packages. See docs/protocol/jujitsu.md.
"use strict";

const crypto = require("crypto");
const fs = require("fs");
const http = require("http");

const MAX_BODY = 1 << 20; // a match document is a few KiB at most

function parseArgs(argv) {
  const opts = { port: 8001, host: "127.0.0.1", user: null, password: "", log: null };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (!["--port", "--host", "--user", "--password", "--log"].includes(flag) || value === undefined) {
      process.stderr.write(`usage: bot.js [--port N] [--host ADDR] [--user U --password P] [--log FILE]\n`);
      process.exit(2);
    }
    opts[flag.slice(2)] = flag === "--port" ? Number(value) : value;
    i++;
  }
  return opts;
}

class BadRequest extends Error {}

// The cards this bot still holds in the current round. Each round deals the
// cards 1..N, N from `match`; the current round is the last of `rounds`, and
// its `turns` hold the bids already played.
function legalBids(doc) {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    throw new BadRequest("the body is not a JSON object");
  }
  const { rounds, match } = doc;
  if (!Array.isArray(rounds) || rounds.length === 0 || !Array.isArray(match)) {
    throw new BadRequest("'rounds' and 'match' must be lists, 'rounds' not empty");
  }
  const cards = match[rounds.length - 1];
  if (!Number.isInteger(cards) || cards < 1 || cards > 1000) {
    throw new BadRequest("'match' does not say how many cards this round has");
  }
  const current = rounds[rounds.length - 1];
  const turns = current && current.turns;
  if (!Array.isArray(turns)) {
    throw new BadRequest("the current round has no 'turns' list");
  }
  const played = new Set(turns.map((t) => t && t.myBid));
  const hand = [];
  for (let c = 1; c <= cards; c++) {
    if (!played.has(c)) hand.push(c);
  }
  if (hand.length === 0) {
    throw new BadRequest("no card left to bid in the current round");
  }
  return hand;
}

// One line about a finished match, from its last document.
function summary(doc) {
  const turns = (doc.rounds || []).flatMap((r) => (r && Array.isArray(r.turns) ? r.turns : []));
  const refused = turns.filter((t) => t && t.myResponseLegal === false).length;
  const mine = doc.myPointsTotal;
  const theirs = doc.opponentPointsTotal;
  const result = mine > theirs ? "won" : mine < theirs ? "lost" : mine === theirs ? "drew" : "ended";
  return (
    `match ${JSON.stringify(doc.match)} ${result} ${mine}-${theirs}: ` +
    `${turns.length} turns, ${refused} of my bids played at random, ` +
    `time left ${doc.myTimeRemainingMs} ms`
  );
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

  function reply(res, status, text, extra = {}) {
    const body = Buffer.from(text);
    res.writeHead(status, {
      "Content-Type": "text/plain; charset=utf-8",
      "Content-Length": body.length,
      ...extra,
    });
    res.end(body);
    if (log !== null) fs.writeSync(log, `<<< ${status}\n${text}\n\n`);
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
      reply(res, 401, "unauthorised", { "WWW-Authenticate": 'Basic realm="jujitsu"' });
      return;
    }
    let doc;
    let bid;
    try {
      doc = JSON.parse(body);
      if (doc !== null && typeof doc === "object" && doc.gameEnded === true) {
        // The final document: the match is over, the reply is ignored.
        process.stderr.write(`bot.js: ${summary(doc)}\n`);
        reply(res, 200, "ok");
        return;
      }
      const hand = legalBids(doc);
      bid = hand[Math.floor(Math.random() * hand.length)];
    } catch (e) {
      // JSON.parse throws a SyntaxError, legalBids a BadRequest.
      reply(res, 400, `bad match document: ${e.message}`);
      return;
    }
    reply(res, 200, String(bid));
  }

  const server = http.createServer((req, res) => {
    if (req.method !== "POST") {
      res.shouldKeepAlive = false; // any body it had is left unread
      reply(res, 405, "POST the match document here\n", { Allow: "POST" });
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
    process.stderr.write(`bot.js: ${err.message}\n`);
    process.exit(1);
  });
  server.listen(opts.port, opts.host, () => {
    process.stdout.write(`listening on ${server.address().port}\n`);
  });
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(0));
}

main();
