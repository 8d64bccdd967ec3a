#!/usr/bin/env python3
"""A SkullWhist bot that bids and plays at random, like the 2014 SkullSpace
example bots, for Croupier's SkullWhist REST API.

Usage:

    random_bot.py [URL [NAME [PASSWORD]]] [--games N]

    URL       the server, default http://127.0.0.1:8080
    NAME      the bot's name, default a random one (random-py-xxxxxx)
    PASSWORD  its password (required with NAME; random with a random name)
    --games N play N games and stop (default: play forever)

The algorithm is the one every example bot of the event follows:

    - Attempt to register a new bot
      - If the registration fails, don't worry about it
    - Attempt to login with a bot's name and password
      - If that doesn't work, exit
    - In a never ending loop, do the following:
      - Repeatedly try to join a new game
      - Once a game is joined, notify the server of your bid
      - For thirteen rounds:
        - Wait for it to be our turn
        - Pick a random card, as restricted by the game's rules
      - Wait for the game to end on the server

Python 3 standard library only.
"""

import http.client
import json
import random
import secrets
import socket
import sys
import time
import urllib.parse

# How long to wait between two status requests while waiting for our turn.
POLL_DELAY = 0.02

# new-game waits about 30 s for an opponent before it answers "retry", so a
# request may take that long; give up on a silent server after 90 s.
TIMEOUT = 90


class Api:
    """Posts JSON to /api/<method>/ over one keep-alive connection."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise SystemExit("the server URL must start with http:// or https://")
        self.https = parts.scheme == "https"
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if self.https else 80)
        self.base = parts.path.rstrip("/")
        self.conn = None

    def connect(self):
        if self.https:
            conn = http.client.HTTPSConnection(self.host, self.port, timeout=TIMEOUT)
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)
        conn.connect()
        # Small requests and replies: send each at once (no Nagle delay).
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def call(self, method, **fields):
        """The reply to `method`, after waiting out any "retry" that is not
        new-game's "no opponent yet" (see `retry_after`)."""
        body = json.dumps(fields)
        while True:
            status, wait, text = self.post(method, body)
            if status in (429, 503) and wait is not None:
                # The server is busy (too many connections): wait, ask again.
                time.sleep(wait)
                continue
            if status != 200:
                raise SystemExit("%s: HTTP %d from the server" % (method, status))
            reply = json.loads(text)
            # "retry" from new-game without Retry-After means "no opponent
            # yet": the caller asks again at once. Any other "retry" means the
            # server throttles us (too many requests or failed logins): wait
            # the Retry-After header's seconds and send the same request.
            if reply.get("result") == "retry" and (wait is not None or method != "new-game"):
                time.sleep(wait if wait is not None else 1)
                continue
            return reply

    def post(self, method, body):
        """Sends one request: the HTTP status, Retry-After in seconds (None
        if absent) and the body."""
        headers = {"Content-Type": "application/json"}
        path = "%s/api/%s/" % (self.base, method)
        # A kept-alive connection may have been closed by the server while
        # we were not using it: then reconnect once and send again.
        for attempt in (1, 2):
            fresh = self.conn is None
            if fresh:
                self.conn = self.connect()
            try:
                self.conn.request("POST", path, body, headers)
                response = self.conn.getresponse()
                text = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError,
                    BrokenPipeError):
                self.conn.close()
                self.conn = None
                if fresh or attempt == 2:
                    raise
        return response.status, retry_after(response.getheader("Retry-After")), text


def retry_after(value):
    """A Retry-After header's seconds (at least 1), or None without one."""
    if value is None:
        return None
    try:
        return max(1, int(value.strip()))
    except ValueError:
        return 1


def describe(record, me):
    """One line about a finished game (an old-game reply) for bot `me`."""
    us, them = ("1", "2") if record["bot1"] == me else ("2", "1")
    if record["forfeited_by"] is not None:
        who = "we" if record["forfeited_by"] == me else "the opponent"
        return "%s forfeited in round %d" % (who, record["round"] + 1)
    score, other = record["score" + us], record["score" + them]
    verdict = "won" if score > other else "lost" if score < other else "tie"
    return "we bid %d and took %d tricks: %d to %d, %s" % (
        record["bid" + us], record["tricks" + us], score, other, verdict)


def main():
    args = sys.argv[1:]
    games = None
    if "--games" in args:
        i = args.index("--games")
        if i + 1 >= len(args) or not args[i + 1].isdigit():
            raise SystemExit("--games takes a number")
        games = int(args[i + 1])
        del args[i:i + 2]
    if len(args) > 3 or any(a.startswith("-") for a in args):
        raise SystemExit(__doc__)
    url = args[0] if len(args) > 0 else "http://127.0.0.1:8080"
    if len(args) > 1:
        name = args[1]
        if len(args) < 3:
            raise SystemExit("give a password after the name")
        password = args[2]
    else:
        name = "random-py-" + secrets.token_hex(3)
        password = secrets.token_hex(16)

    api = Api(url)

    # Attempt to register a new bot.
    reply = api.call("register", name=name, password=password)
    if reply["result"] != "success":
        # If the registration fails, don't worry about it (the name may be
        # ours from an earlier run).
        print("register: %s" % reply.get("reason"))

    # Attempt to login with the bot's name and password.
    reply = api.call("login", name=name, password=password)
    if reply["result"] != "success":
        # If that doesn't work, exit.
        raise SystemExit("login failed: %s" % reply.get("reason"))
    session = reply["session"]
    me = reply["id"]
    print("logged in as %s (bot %d)" % (name, reply["id"]))

    played = 0
    # In a never ending loop (or until we have played --games games):
    while games is None or played < games:
        # Repeatedly try to join a new game.
        while True:
            reply = api.call("new-game", session=session)
            if reply["result"] == "success":
                break
            if reply["result"] != "retry":
                raise SystemExit("new-game failed: %s" % reply.get("reason"))
            # "retry": nobody to play with yet; ask again.
        game = reply["game"]
        cards = reply["cards"]
        print("game %d against bot %d: %s" % (game, reply["opponent"], " ".join(cards)))

        # Once a game is joined, notify the server of our bid.
        bid = random.randint(1, 13)
        reply = api.call("bid", session=session, bid=bid)
        if reply["result"] != "success":
            raise SystemExit("bid failed: %s" % reply.get("reason"))

        # For thirteen rounds:
        for rnd in range(1, 14):
            # Wait for it to be our turn.
            while True:
                status = api.call("status", session=session)
                if status["result"] != "success":
                    raise SystemExit("status failed: %s" % status.get("reason"))
                if status["game"] != game or status["your-turn"]:
                    break
                time.sleep(POLL_DELAY)
            if status["game"] != game:
                # The game ended early: a forfeit (a bot was too slow).
                print("game %d ended in round %d" % (game, rnd))
                break

            # Pick a random card, as restricted by the game's rules: when the
            # opponent led this round, follow its suit if we can.
            choices = cards
            led = status["opponent-current-card"]
            if led is not None:
                same_suit = [c for c in cards if c[0] == led[0]]
                if same_suit:
                    choices = same_suit
            card = random.choice(choices)
            reply = api.call("play", session=session, card=card)
            if reply["result"] != "success":
                raise SystemExit("play %s failed: %s" % (card, reply.get("reason")))
            cards.remove(card)

        # Wait for the game to end on the server (status shows no game).
        while True:
            status = api.call("status", session=session)
            if status["result"] != "success":
                raise SystemExit("status failed: %s" % status.get("reason"))
            if status["game"] != game:
                break
            time.sleep(POLL_DELAY)
        played += 1

        # Not part of the 2014 algorithm: look the result up.
        reply = api.call("old-game", session=session, game=game)
        if reply["result"] == "success":
            print("game %d over: %s" % (game, describe(reply, me)))
        else:
            print("game %d: %s" % (game, reply.get("reason")))

if __name__ == "__main__":
    main()
