#!/usr/bin/env python3
"""A Psychological Jujitsu bot server that bids a random card it still holds.

Psychological Jujitsu (seed 002) turns the usual roles around: the bot is an
HTTP server, and for every decision Croupier POSTs one JSON document holding
the whole match so far. The bot answers with the number of its bid card, as
`text/plain`. After the last turn it gets one more document with
`"gameEnded": true`, whose answer is ignored.

    python3 examples/bots/jujitsu/bot.py --port 8001 --user me --password secret
    croupier play goofspiel "http://me:secret@127.0.0.1:8001/@jujitsu" builtin:planner \
        --variant jujitsu --games 5

Options: --port N (default 8001; 0 picks a free port), --host ADDR (default
127.0.0.1; 0.0.0.0 to be reachable from other machines), --user U --password P
(then every request must carry that HTTP basic authentication, or it gets
401), --log FILE (append every request and reply to FILE, for debugging).
When it is ready it prints `listening on PORT` on stdout. It writes one line
per match to stderr.

Python 3 standard library only. See docs/protocol/jujitsu.md.
"""

import argparse
import base64
import hmac
import json
import random
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 1 << 20  # a match document is a few KiB at most


class BadRequest(Exception):
    """A request this bot cannot answer: replied to with 400."""


def legal_bids(doc):
    """The cards this bot still holds in the current round.

    Each round deals the cards 1..N, N from `match`; the current round is the
    last of `rounds`, and its `turns` hold the bids already played."""
    if not isinstance(doc, dict):
        raise BadRequest("the body is not a JSON object")
    rounds, plan = doc.get("rounds"), doc.get("match")
    if not isinstance(rounds, list) or not rounds or not isinstance(plan, list):
        raise BadRequest("'rounds' and 'match' must be lists, 'rounds' not empty")
    cards = plan[len(rounds) - 1] if len(rounds) <= len(plan) else None
    if not isinstance(cards, int) or not 1 <= cards <= 1000:
        raise BadRequest("'match' does not say how many cards this round has")
    current = rounds[-1]
    turns = current.get("turns") if isinstance(current, dict) else None
    if not isinstance(turns, list):
        raise BadRequest("the current round has no 'turns' list")
    played = {t.get("myBid") for t in turns if isinstance(t, dict)}
    hand = [c for c in range(1, cards + 1) if c not in played]
    if not hand:
        raise BadRequest("no card left to bid in the current round")
    return hand


def summary(doc):
    """One line about a finished match, from its last document."""
    rounds = doc.get("rounds") or []
    turns = [t for r in rounds if isinstance(r, dict) for t in r.get("turns") or []]
    refused = sum(1 for t in turns if isinstance(t, dict) and t.get("myResponseLegal") is False)
    mine, theirs = doc.get("myPointsTotal"), doc.get("opponentPointsTotal")
    if isinstance(mine, int) and isinstance(theirs, int):
        result = "won" if mine > theirs else "lost" if mine < theirs else "drew"
    else:
        result = "ended"
    return (
        f"match {json.dumps(doc.get('match'))} {result} {mine}-{theirs}: "
        f"{len(turns)} turns, {refused} of my bids played at random, "
        f"time left {doc.get('myTimeRemainingMs')} ms"
    )


class Handler(BaseHTTPRequestHandler):
    # Keep-alive: Croupier reuses its connection for every request of a match.
    # HTTP/1.1 needs a Content-Length on every reply, which reply() sends.
    protocol_version = "HTTP/1.1"
    server_version = "jujitsu-bot.py"
    timeout = 300  # close a connection idle for 5 minutes

    def setup(self):
        # Small replies must leave at once, not wait for Nagle's algorithm.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().setup()

    def log_message(self, format, *args):
        pass  # no access log: one line per match is written instead

    def reply(self, status, text, extra=()):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.server.log_exchange(self, f"<<< {status}\n{text}\n\n")

    def read_body(self):
        """The request body, or None after replying with an error."""
        try:
            length = int(self.headers["Content-Length"])
        except (TypeError, ValueError):  # missing (e.g. a chunked body) or garbled
            length = -1
        if not 0 <= length <= MAX_BODY:
            self.close_connection = True  # the rest of the stream is unreadable
            self.reply(413 if length > MAX_BODY else 411, "a Content-Length up to 1 MiB is required")
            return None
        return self.rfile.read(length)

    def authorised(self):
        expected = self.server.authorization
        given = self.headers.get("Authorization", "")
        return expected is None or hmac.compare_digest(given.encode(), expected.encode())

    def do_POST(self):
        self.logged_request = ""
        body = self.read_body()
        if body is None:
            return
        if self.server.log is not None:
            headers = "".join(f"{k}: {v}\n" for k, v in self.headers.items())
            self.logged_request = f">>> {self.requestline}\n{headers}\n{body.decode('utf-8', 'replace')}\n"
        if not self.authorised():
            self.reply(401, "unauthorised", [("WWW-Authenticate", 'Basic realm="jujitsu"')])
            return
        try:
            doc = json.loads(body)
            if isinstance(doc, dict) and doc.get("gameEnded") is True:
                # The final document: the match is over, the reply is ignored.
                print(f"bot.py: {summary(doc)}", file=sys.stderr, flush=True)
                self.reply(200, "ok")
                return
            bid = random.choice(legal_bids(doc))
        except Exception as e:  # bad JSON, a BadRequest, or any other surprise in the body
            self.reply(400, f"bad match document: {e}")
            return
        self.reply(200, str(bid))

    def do_GET(self):
        self.close_connection = True  # any body it had is left unread
        self.reply(405, "POST the match document here\n", [("Allow", "POST")])

    do_PUT = do_DELETE = do_PATCH = do_GET


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # Typically Croupier gave up on a late reply and closed the connection.
        print(f"bot.py: connection failed: {sys.exc_info()[1]!r}", file=sys.stderr, flush=True)

    def __init__(self, address, authorization, log):
        super().__init__(address, Handler)
        self.authorization = authorization
        self.log = log
        self.log_lock = threading.Lock()

    def log_exchange(self, handler, reply):
        """Logs a request and its reply together (with --log)."""
        if self.log is None:
            return
        request = getattr(handler, "logged_request", "")
        with self.log_lock:
            self.log.write(request + reply)
            self.log.flush()


def main():
    parser = argparse.ArgumentParser(description="Psychological Jujitsu random bot server")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--user", help="require HTTP basic authentication with this user")
    parser.add_argument("--password", default="", help="... and this password")
    parser.add_argument("--log", metavar="FILE", help="append every request and reply to FILE")
    args = parser.parse_args()
    authorization = None
    if args.user is not None:
        token = base64.b64encode(f"{args.user}:{args.password}".encode()).decode()
        authorization = f"Basic {token}"
    log = open(args.log, "a", encoding="utf-8") if args.log else None
    try:
        server = Server((args.host, args.port), authorization, log)
    except OSError as e:
        sys.exit(f"bot.py: cannot listen on {args.host}:{args.port}: {e}")
    print(f"listening on {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
