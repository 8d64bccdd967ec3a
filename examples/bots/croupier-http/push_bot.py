#!/usr/bin/env python3
"""A croupier/1 bot served over HTTP (push) that plays a random legal action.

Croupier POSTs every croupier/1 message of a match to this server, one
message per request: `start`, then `event`s and `act`s, then `end`. The reply
to an `act` is the answer, `{"action": <one entry of "legal">, "decision": n}`;
every other message gets 204 No Content. Each request carries the header
`X-Croupier-Match`, a tag unique to one match and seat, so one server can play
many matches at once: its state is kept per tag.

    python3 examples/bots/croupier-http/push_bot.py --port 8002
    croupier play skullwhist "http://127.0.0.1:8002/@croupier" builtin:random
    croupier play goofspiel "http://127.0.0.1:8002/@croupier" builtin:planner
    croupier play loveletter "http://127.0.0.1:8002/@croupier" builtin:random builtin:random

Options: --port N (default 8002; 0 picks a free port), --host ADDR (default
127.0.0.1; 0.0.0.0 to be reachable from other machines), --user U --password P
(then every request must carry that HTTP basic authentication, or it gets
401), --log FILE (append every request and reply to FILE, for debugging).
When it is ready it prints `listening on PORT` on stdout. It writes one line
per match to stderr.

Python 3 standard library only. See docs/protocol/croupier-http.md.
"""

import argparse
import base64
import hmac
import json
import random
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 1 << 20  # a croupier/1 message is a few KiB at most
FORGET_AFTER = 3600  # seconds: the state of a match that never ended is dropped


class BadRequest(Exception):
    """A message this bot cannot handle: replied to with 400."""


class Matches:
    """What the bot knows of each match it plays, keyed on X-Croupier-Match."""

    def __init__(self):
        self.lock = threading.Lock()
        self.state = {}

    def handle(self, tag, msg):
        """Handles one message; returns the answer to an `act`, else None."""
        if not isinstance(msg, dict):
            raise BadRequest("the body is not a JSON object")
        kind = msg.get("type")
        now = time.monotonic()
        with self.lock:
            for old in [t for t, s in self.state.items() if now - s["seen"] > FORGET_AFTER]:
                del self.state[old]
            match = self.state.setdefault(tag, {"game": "?", "seat": "?", "seats": "?", "acts": 0})
            match["seen"] = now
            if kind == "start":
                # {"protocol": "croupier/1", "game", "variant", "seat", "seats"}
                match.update(game=msg.get("game"), seat=msg.get("seat"), seats=msg.get("seats"))
            elif kind == "act":
                # {"decision", "observation", "legal", "deadline_ms"}
                legal = msg.get("legal")
                if not isinstance(legal, list) or not legal:
                    raise BadRequest("an act needs a non-empty 'legal' list")
                match["acts"] += 1
                return {"action": random.choice(legal), "decision": msg.get("decision")}
            elif kind == "end":
                # {"outcome": {"scores", "ranks", ["forfeited_by"]}}
                del self.state[tag]
                outcome = msg.get("outcome") if isinstance(msg.get("outcome"), dict) else {}
                print(
                    f"push_bot.py: match {tag}: {match['game']}, seat {match['seat']} of "
                    f"{match['seats']}, {match['acts']} decisions, "
                    f"scores {outcome.get('scores')}, ranks {outcome.get('ranks')}",
                    file=sys.stderr,
                    flush=True,
                )
            # "event" messages ({"event": {...}}) and unknown types need no answer.
        return None


class Handler(BaseHTTPRequestHandler):
    # Keep-alive: Croupier reuses its connection for every message of a match.
    # HTTP/1.1 needs a Content-Length on every reply with a body.
    protocol_version = "HTTP/1.1"
    server_version = "push_bot.py"
    timeout = 300  # close a connection idle for 5 minutes

    def setup(self):
        # Small replies must leave at once, not wait for Nagle's algorithm.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().setup()

    def log_message(self, format, *args):
        pass  # no access log: one line per match is written instead

    def reply(self, status, body=None, content_type="text/plain; charset=utf-8", extra=()):
        self.send_response(status)
        data = b""
        if body is not None:
            data = body.encode()
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
        elif status != 204:
            self.send_header("Content-Length", "0")
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        request = getattr(self, "logged_request", "")
        self.server.log_text(f"{request}<<< {status}\n{body or ''}\n\n")

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

    def do_POST(self):
        self.logged_request = ""
        body = self.read_body()
        if body is None:
            return
        if self.server.log is not None:
            headers = "".join(f"{k}: {v}\n" for k, v in self.headers.items())
            self.logged_request = f">>> {self.requestline}\n{headers}\n{body.decode('utf-8', 'replace')}\n"
        expected = self.server.authorization
        given = self.headers.get("Authorization", "")
        if expected is not None and not hmac.compare_digest(given.encode(), expected.encode()):
            self.reply(401, "unauthorised", extra=[("WWW-Authenticate", 'Basic realm="croupier"')])
            return
        tag = self.headers.get("X-Croupier-Match", "")
        try:
            answer = self.server.matches.handle(tag, json.loads(body))
        except Exception as e:  # bad JSON, a BadRequest, or any other surprise in the body
            self.reply(400, f"bad message: {e}")
            return
        if answer is None:
            self.reply(204)
        else:
            self.reply(200, json.dumps(answer), "application/json")

    def do_GET(self):
        self.close_connection = True  # any body it had is left unread
        self.reply(405, "POST croupier/1 messages here\n", extra=[("Allow", "POST")])

    do_PUT = do_DELETE = do_PATCH = do_GET


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # Typically Croupier gave up on a late reply and closed the connection.
        print(f"push_bot.py: connection failed: {sys.exc_info()[1]!r}", file=sys.stderr, flush=True)

    def __init__(self, address, authorization, log):
        super().__init__(address, Handler)
        self.authorization = authorization
        self.matches = Matches()
        self.log = log
        self.log_lock = threading.Lock()

    def log_text(self, text):
        if self.log is not None:
            with self.log_lock:
                self.log.write(text)
                self.log.flush()


def main():
    parser = argparse.ArgumentParser(description="croupier/1 random bot, served over HTTP")
    parser.add_argument("--port", type=int, default=8002)
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
        sys.exit(f"push_bot.py: cannot listen on {args.host}:{args.port}: {e}")
    print(f"listening on {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
