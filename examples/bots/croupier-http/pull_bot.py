#!/usr/bin/env python3
"""A croupier/1 bot that pulls its messages from a Croupier server and plays
a random legal action.

The bot is an HTTP client of the server's pull API, so it needs no open port:
it long-polls `GET /v1/messages?after=SEQ&wait=25` for the croupier/1 messages
of its matches (`start`, `event`, `act`, `end`), and answers each `act` with
`POST /v1/answer` `{"match": <tag>, "decision": n, "action": <one of "legal">}`.
Both carry `Authorization: Bearer TOKEN`, the token shown once when the bot
was registered. A bot that is polling is waiting for a match, so the server's
ladder may seat it at any time.

    python3 examples/bots/croupier-http/pull_bot.py --server http://127.0.0.1:8080 --token TOKEN

Options: --server URL (the server, http or https), --token TOKEN (or the
environment variable CROUPIER_TOKEN, which keeps it out of the process list),
--wait SECONDS (long-poll time, 0..30, default 25). One connection is kept
alive and reused; after an error the bot reconnects with a growing pause
(1 s, 2 s, 4 s ... 30 s). It stops cleanly on SIGINT (Ctrl-C) or SIGTERM, and
exits at once with status 1 if the server refuses its token. It writes one
line per match to stderr.

Python 3 standard library only. See docs/protocol/croupier-http.md.
"""

import argparse
import collections
import http.client
import json
import os
import random
import signal
import sys
import time
import urllib.parse


class Stop(BaseException):
    """SIGINT or SIGTERM: leave the loop, wherever it is (a BaseException,
    like KeyboardInterrupt, so that no `except Exception` swallows it)."""


class Refused(Exception):
    """The server refused the token: retrying would not help."""


def on_signal(signum, frame):
    raise Stop()


class Api:
    """The pull API over one kept-alive connection (reopened after errors)."""

    def __init__(self, server, token, wait):
        url = urllib.parse.urlsplit(server)
        if url.scheme not in ("http", "https") or not url.hostname:
            sys.exit(f"pull_bot.py: --server must be an http:// or https:// URL, not {server!r}")
        self.kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        self.host, self.port = url.hostname, url.port
        self.prefix = url.path.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        # A long poll lasts up to `wait` seconds: allow that much more.
        self.timeout = wait + 15
        self.conn = None

    def request(self, method, path, body=None):
        """Returns (status, decoded JSON reply); raises on network errors.
        A throttled request (HTTP 429, or 503 while the server is crowded)
        is sent again after the Retry-After header's seconds."""
        while True:
            status, wait, reply = self.send(method, path, body)
            if status in (429, 503) and wait is not None:
                print(f"pull_bot.py: {status} {reply.get('error')}; waiting {wait} s", file=sys.stderr)
                time.sleep(wait)
                continue
            return status, reply

    def send(self, method, path, body):
        """One request: (status, Retry-After seconds or None, reply)."""
        if self.conn is None:
            self.conn = self.kind(self.host, self.port, timeout=self.timeout)
        headers = dict(self.headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            self.conn.request(method, self.prefix + path, body=data, headers=headers)
            resp = self.conn.getresponse()
            text = resp.read()  # read it all, so the connection can be reused
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        if resp.status in (401, 403):
            raise Refused(f"{resp.status} {text.decode('utf-8', 'replace')[:200]}")
        try:
            reply = json.loads(text) if text else {}
        except ValueError:
            reply = {"error": text.decode("utf-8", "replace")[:200]}
        if not isinstance(reply, dict):
            reply = {"error": str(reply)[:200]}
        wait = resp.getheader("Retry-After")
        if wait is not None:
            wait = max(1, int(wait)) if wait.strip().isdigit() else 1
        return resp.status, wait, reply

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Matches:
    """What the bot knows of each match it plays, keyed on the match tag."""

    def __init__(self):
        self.state = {}

    def handle(self, tag, msg):
        """Handles one message; returns the action for an `act`, else None."""
        match = self.state.setdefault(tag, {"game": "?", "seat": "?", "seats": "?", "acts": 0})
        kind = msg.get("type")
        if kind == "start":
            # {"protocol": "croupier/1", "game", "variant", "seat", "seats"}
            match.update(game=msg.get("game"), seat=msg.get("seat"), seats=msg.get("seats"))
        elif kind == "act":
            # {"decision", "observation", "legal", "deadline_ms"}
            action = random.choice(msg["legal"])
            match["acts"] += 1
            return action
        elif kind == "end":
            # {"outcome": {"scores", "ranks", ["forfeited_by"]}}
            del self.state[tag]
            outcome = msg.get("outcome") if isinstance(msg.get("outcome"), dict) else {}
            print(
                f"pull_bot.py: match {tag}: {match['game']}, seat {match['seat']} of "
                f"{match['seats']}, {match['acts']} decisions, "
                f"scores {outcome.get('scores')}, ranks {outcome.get('ranks')}",
                file=sys.stderr,
                flush=True,
            )
        # "event" messages ({"event": {...}}) and unknown types need no answer.
        return None


def play(api, wait):
    """Polls and answers until stopped."""
    matches = Matches()
    after = 0  # the last seq handled: the next poll acknowledges up to it
    # (match, seq) of the messages handled lately. After an error the bot
    # polls from 0 again: the server may have restarted, and a new server
    # run numbers its messages from 1. Messages seen before are skipped.
    seen, order = set(), collections.deque()
    pause = 1
    while True:
        try:
            status, reply = api.request("GET", f"/v1/messages?after={after}&wait={wait}")
            if status != 200:
                raise OSError(f"GET /v1/messages: {status} {reply.get('error')}")
            for item in reply["messages"]:
                seq, tag, msg = item["seq"], item["match"], item["message"]
                after = max(after, seq)
                if (tag, seq) in seen:
                    continue
                try:
                    action = matches.handle(tag, msg)
                except Exception as e:  # a message this bot cannot read: skip it
                    print(f"pull_bot.py: skipped message {seq}: {e!r}", file=sys.stderr)
                    action = None
                if action is not None:
                    answer = {"match": tag, "decision": msg["decision"], "action": action}
                    status, r = api.request("POST", "/v1/answer", answer)
                    if status >= 500:
                        raise OSError(f"POST /v1/answer: {status} {r.get('error')}")
                    if status != 200:
                        # 409 or 404: too late (the server has ruled already,
                        # or the match is over), or a duplicate. Go on.
                        print(f"pull_bot.py: answer refused: {status} {r.get('error')}", file=sys.stderr)
                seen.add((tag, seq))
                order.append((tag, seq))
                if len(order) > 10000:
                    seen.discard(order.popleft())
            pause = 1
        except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError) as e:
            print(f"pull_bot.py: {e or type(e).__name__}; retrying in {pause} s", file=sys.stderr)
            time.sleep(pause)
            pause = min(pause * 2, 30)
            after = 0


def main():
    parser = argparse.ArgumentParser(description="croupier/1 random bot for the pull API")
    parser.add_argument("--server", required=True, help="the Croupier server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--token", default=os.environ.get("CROUPIER_TOKEN"), help="the bot's token")
    parser.add_argument("--wait", type=int, default=25, choices=range(0, 31), metavar="0..30")
    args = parser.parse_args()
    if not args.token:
        sys.exit("pull_bot.py: give --token TOKEN or set CROUPIER_TOKEN")
    api = Api(args.server, args.token, args.wait)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    print(f"pull_bot.py: polling {args.server}", file=sys.stderr, flush=True)
    try:
        play(api, args.wait)
    except Stop:
        print("pull_bot.py: stopped", file=sys.stderr)
    except Refused as e:
        sys.exit(f"pull_bot.py: the server refused the token: {e}")
    finally:
        api.close()


if __name__ == "__main__":
    main()
