#!/usr/bin/env python3
"""compare-builds.py: do two `croupier` builds answer the same requests with
the same bytes? (issue 46: "No behaviour change: ... wire formats and pages
are byte-identical").

  compare-builds.py OLD NEW [--games N] [--workdir DIR] [--quiet]
  OLD=... NEW=... compare-builds.py

What it does (Python 3, standard library only; loopback only):
  1. Seeds one SQLite database with N finished demo games of all three
     games, once, with OLD: `croupier bench web --games N --db FILE` (the
     page timing it does afterwards is not needed; its exit status is
     ignored, the database is checked instead).
  2. Runs three servers one after the other, each on a fresh copy of that
     database, in the same folder and on the same loopback port:
     OLD (run "old1"), NEW, OLD again (run "old2"). Each is started with
     `croupier serve --no-ladder --house-bots "" --sandbox off` so that
     nothing changes while the pages are read but what the requests do.
  3. Builds the request list once from the JSON twins of run old1 (bot
     names, game ids of each game, leaderboards, the documentation's
     links, /openapi.json's tags, /api/'s methods) and sends the same list,
     in the same order, to each server.
  4. Compares status, headers (all but `date`) and body bytes, after
     masking values in the token formats (`crp_` + 32 hex digits: /v1 bot
     tokens; 32 hex digits: 2014 sessions and cookies), which differ per
     run by design.

A request whose answer differs between old1 and old2 (same build) is
"unstable" (clock-derived text and the like) and reported apart. NEW runs
between the two OLD runs, so text derived from the clock cannot make NEW
differ from two OLD runs that agree with each other.

Exit status: 0 all same (unstable ones allowed), 1 some DIFFERENT, 2 the
comparison could not run.
"""
import argparse
import base64
import http.client
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse

# ----------------------------------------------------------------- options

ap = argparse.ArgumentParser(prog="compare-builds.py")
ap.add_argument("old", nargs="?", default=os.environ.get("OLD"))
ap.add_argument("new", nargs="?", default=os.environ.get("NEW"))
ap.add_argument("--games", type=int, default=1200, help="demo games to seed (default 1200)")
ap.add_argument("--workdir", default=None,
                help="where to keep the database, server logs and every answer (default: a new temporary folder)")
ap.add_argument("--quiet", action="store_true", help="print only differences, unstable ones and the summary")
args = ap.parse_args()
if not args.old or not args.new:
    ap.error("give OLD and NEW binaries (arguments or the OLD and NEW environment variables)")
OLD = os.path.abspath(args.old)
NEW = os.path.abspath(args.new)
for b in (OLD, NEW):
    if not os.access(b, os.X_OK):
        sys.exit(f"compare-builds: {b} is not an executable")

WORK = os.path.abspath(args.workdir or tempfile.mkdtemp(prefix="compare-builds-"))
os.makedirs(WORK, exist_ok=True)
HOST = "127.0.0.1"  # never anything but loopback


def say(*a):
    print(*a, flush=True)


def fail(msg):
    say(f"compare-builds: {msg}")
    sys.exit(2)


# ------------------------------------------------------------------- seed

SEED_DB = os.path.join(WORK, "seed.db")


def finished_games(db):
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return con.execute("select count(*) from games where status = 'finished'").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def seed():
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(SEED_DB + suffix):
            os.remove(SEED_DB + suffix)
    say(f"seeding {args.games} demo games with OLD into {SEED_DB} ...")
    t = time.time()
    p = subprocess.run(
        [OLD, "bench", "web", "--games", str(args.games), "--db", SEED_DB],
        cwd=WORK, env=server_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=1200,
    )
    with open(os.path.join(WORK, "seed.log"), "wb") as f:
        f.write(p.stdout)
    n = finished_games(SEED_DB)
    if n == 0:
        say(p.stdout.decode(errors="replace")[-3000:])
        fail("seeding made no finished games")
    note = "" if p.returncode == 0 else f" (bench web itself exited {p.returncode} after seeding; see seed.log)"
    say(f"seeded {n} finished games in {time.time() - t:.1f} s{note}")


def server_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("CROUPIER_")}
    env.setdefault("RUST_LOG", "info")
    return env


# ---------------------------------------------------------------- servers

RUN_DIR = os.path.join(WORK, "run")  # the same path for every run


def free_port():
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, binary, label, port):
        self.binary, self.label, self.port = binary, label, port
        self.proc = None

    def start(self):
        if os.path.exists(RUN_DIR):
            shutil.rmtree(RUN_DIR)
        os.makedirs(RUN_DIR)
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(SEED_DB + suffix):
                shutil.copy2(SEED_DB + suffix, os.path.join(RUN_DIR, "croupier.db" + suffix))
        for attempt in range(3):
            self.log = open(os.path.join(WORK, f"server-{self.label}.log"), "ab")
            self.proc = subprocess.Popen(
                [self.binary, "serve",
                 "--listen", f"{HOST}:{self.port}",
                 "--database", f"sqlite://{RUN_DIR}/croupier.db",
                 "--house-bots", "",
                 "--no-ladder",
                 "--sandbox", "off",
                 "--poll-timeout", "2",
                 "--bot-files", os.path.join(RUN_DIR, "bot-files")],
                cwd=RUN_DIR, env=server_env(), stdout=self.log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )
            deadline = time.time() + 90
            while time.time() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    c = http.client.HTTPConnection(HOST, self.port, timeout=2)
                    c.request("GET", "/static/croupier.css")
                    r = c.getresponse()
                    r.read()
                    c.close()
                    if r.status == 200:
                        return
                except OSError:
                    pass
                time.sleep(0.2)
            self.stop()
            self.port = free_port()  # the port may have been taken: try another
            say(f"  ({self.label}: the server did not answer; retrying on port {self.port})")
        fail(f"the {self.label} server does not start; see {WORK}/server-{self.label}.log")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        self.log.close()


# --------------------------------------------------------------- requests

class Req:
    """One request. `path`, `body` and `headers` may be callables of the
    run's captured values (tokens, sessions); `capture` reads values from
    the answer for later requests of the same run."""

    def __init__(self, method, path, body=None, headers=None, source="127.0.0.1",
                 capture=None, note=""):
        self.method, self.path, self.body = method, path, body
        self.headers = headers or {}
        self.source, self.capture, self.note = source, capture, note

    def resolve(self, v):
        f = lambda x: x(v) if callable(x) else x
        body = f(self.body)
        if isinstance(body, str):
            body = body.encode()
        return f(self.path), body, {k: f(h) for k, h in f(self.headers).items()}

    def label(self):
        p = self.path if isinstance(self.path, str) else self.path(PLACEHOLDERS)
        extra = f"  [{self.note}]" if self.note else ""
        return f"{self.method} {p}{extra}"


class Placeholders(dict):
    def __missing__(self, k):
        return "{" + k + "}"


PLACEHOLDERS = Placeholders()


def fetch(port, method, path, body=None, headers=None, source="127.0.0.1", timeout=60):
    """(status, [(header, value)], body bytes); status is an error text
    when the exchange failed."""
    c = http.client.HTTPConnection(HOST, port, timeout=timeout, source_address=(source, 0))
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        return r.status, [(k.lower(), v) for k, v in r.getheaders()], data
    except (OSError, http.client.HTTPException) as e:
        return f"error: {type(e).__name__}", [], b""
    finally:
        c.close()


def get_json(port, path):
    status, _, body = fetch(port, "GET", path)
    if status != 200:
        fail(f"discovery: GET {path} answered {status}")
    return json.loads(body)


def get_text(port, path):
    status, _, body = fetch(port, "GET", path)
    if status != 200:
        fail(f"discovery: GET {path} answered {status}")
    return body.decode()


def basic(name, password):
    return "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()


def jbody(v):
    return json.dumps(v)


JSON = {"Content-Type": "application/json"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
MAX_BODY = 64 * 1024       # the APIs' own body limit (server shape.rs / lib.rs)
READ_LIMIT = 1024 * 1024   # the router's limit, answered in front


def build_requests(port):
    """The request list, from the seeded database's JSON twins as the first
    OLD server shows them."""
    q = urllib.parse.quote
    R = []
    add = lambda *a, **k: R.append(Req(*a, **k))

    # What is there: games, documents, tags, methods, bots, game ids.
    games = sorted(set(re.findall(r'href="/rules/([a-z0-9-]+)"', get_text(port, "/rules"))))
    dialects = sorted(set(re.findall(r'href="/docs/([a-z0-9-]+)"', get_text(port, "/docs"))) - {"http-api"})
    tags = [t["name"] for t in get_json(port, "/openapi.json").get("tags", [])]
    methods = sorted(set(re.findall(r'href="/api/([a-z0-9-]+)/"', get_text(port, "/api/"))))
    bots = get_json(port, "/json/bots")
    rated = [b["name"] for b in bots["rated"]]
    boards = {g: get_json(port, f"/json/leaderboard/{g}") for g in games}
    if not (games and dialects and tags and methods and rated):
        fail(f"discovery found too little: games={games} dialects={dialects} tags={tags} methods={methods}")

    def board_names(g):
        # The leaderboard twin's rows, whatever the key; in rank order.
        rows = next((v for v in boards[g].values()
                     if isinstance(v, list) and v and isinstance(v[0], dict) and "name" in v[0]), [])
        return [r["name"] for r in rows]

    picked = {}  # game id -> why
    steps = {}
    for g in games:
        first = get_json(port, f"/json/games?game={g}")
        ids = [x["id"] for x in first["games"]]
        picked.setdefault(ids[0], f"newest {g}")
        picked.setdefault(ids[-1], f"{g}, end of page 1")
        # Oldest of the game, and the more telling kinds where present.
        last = get_json(port, f"/json/games?game={g}&page={first['pages']}")
        picked.setdefault(last["games"][-1]["id"], f"oldest {g}")
        # Every page of the game's list: the first game with a forfeit, and
        # the first of each table size.
        seen_variants, forfeit, sizes = set(), None, {}
        for page in range(1, first["pages"] + 1):
            lst = first if page == 1 else get_json(port, f"/json/games?game={g}&page={page}")
            for x in lst["games"]:
                if forfeit is None and any(s.get("forfeited") for s in x["seats"]):
                    forfeit = x["id"]
                sizes.setdefault(len(x["seats"]), x["id"])
        if forfeit:
            picked.setdefault(forfeit, f"{g} with a forfeit")
        for n, gid in sorted(sizes.items()):
            if len(sizes) > 1:
                picked.setdefault(gid, f"{g} with {n} seats")
        for gid in [i for i, why in picked.items() if g in why]:
            d = get_json(port, f"/json/games/{gid}")
            steps[gid] = len(((d.get("replay") or {}).get("steps")) or [])
            variant = json.dumps((d.get("record") or {}).get("variant"), sort_keys=True)
            seen_variants.add(variant)
        if g == "goofspiel":
            # Both variants (the seeder alternates GOPS and jujitsu).
            for x in first["games"]:
                d = get_json(port, f"/json/games/{x['id']}")
                variant = json.dumps((d.get("record") or {}).get("variant"), sort_keys=True)
                if variant not in seen_variants:
                    seen_variants.add(variant)
                    picked[x["id"]] = f"goofspiel variant {variant[:40]}"
                    steps[x["id"]] = len(((d.get("replay") or {}).get("steps")) or [])
    sw_game = next((i for i, why in picked.items() if "skullwhist" in why), None)
    ll_game = next((i for i, why in picked.items() if "loveletter" in why), None)
    top = {g: board_names(g) for g in games}

    # --- static and documentation pages
    for p in ["/", "/json/home", "/about", "/rules", "/start", "/docs", "/docs/http-api",
              "/static/croupier.css", "/openapi.json", "/api", "/api/"]:
        add("GET", p)
    for g in games:
        add("GET", f"/rules/{g}")
    add("GET", "/rules/chess", note="404")
    for d in dialects:
        add("GET", f"/docs/{d}")
    add("GET", "/docs/nope", note="404")
    for t in tags:
        add("GET", f"/docs/http-api/{t}")
    add("GET", "/docs/http-api/nope", note="404")
    for m in sorted(set(methods) | {"play-card", "jsonp"}):
        add("GET", f"/api/{m}/")
    add("GET", f"/api/{methods[0]}", note="no trailing slash")
    add("GET", "/api/nope/", note="404 documentation")
    add("GET", "/api/jsonp", note="documentation")

    # --- data pages and their JSON twins
    for prefix in ["", "/json"]:
        for p in ["/bots", "/activity", "/games", "/tournaments"]:
            add("GET", prefix + p)
        for g in games:
            add("GET", f"{prefix}/leaderboard/{g}")
        add("GET", f"{prefix}/leaderboard/chess", note="404")
        for name in rated:
            add("GET", f"{prefix}/bots/{q(name)}")
        add("GET", f"{prefix}/bots/nobody-here", note="404")
        for g in games:
            if len(top[g]) >= 2:
                add("GET", f"{prefix}/versus/{q(top[g][0])}/{q(top[g][1])}")
                add("GET", f"{prefix}/versus/{q(top[g][-1])}/{q(top[g][0])}")
        if len(games) >= 2 and top[games[0]] and top[games[1]]:
            add("GET", f"{prefix}/versus/{q(top[games[0]][0])}/{q(top[games[1]][0])}", note="bots of two games")
        add("GET", f"{prefix}/versus/{q(rated[0])}/{q(rated[0])}", note="400 same bot")
        add("GET", f"{prefix}/versus/{q(rated[0])}/nobody-here", note="404")
        # games lists
        add("GET", f"{prefix}/games?page=2")
        add("GET", f"{prefix}/games?page=9999", note="404 past the end")
        add("GET", f"{prefix}/games?page=0", note="400")
        add("GET", f"{prefix}/games?page=abc", note="400")
        add("GET", f"{prefix}/games?game=chess", note="400")
        add("GET", f"{prefix}/games?bot=nobody-here", note="404")
        add("GET", f"{prefix}/games?tournaments=only")
        add("GET", f"{prefix}/games?tournaments=hide")
        add("GET", f"{prefix}/games?tournaments=bogus", note="400")
        add("GET", f"{prefix}/games?tournament=nope", note="404")
        add("GET", f"{prefix}/games?game=&bot=&page=", note="empty parameters")
        for g in games:
            add("GET", f"{prefix}/games?game={g}")
            if top[g]:
                add("GET", f"{prefix}/games?game={g}&bot={q(top[g][0])}&page=2")
                add("GET", f"{prefix}/games?bot={q(top[g][-1])}")
        # replays
        for gid, why in picked.items():
            n = steps.get(gid, 0)
            add("GET", f"{prefix}/games/{gid}", note=why)
            for s in sorted({0, 1, n // 2, n}):
                add("GET", f"{prefix}/games/{gid}?step={s}")
            add("GET", f"{prefix}/games/{gid}?step={n + 1}", note="404 past the end")
        add("GET", f"{prefix}/games/{next(iter(picked))}?step=abc", note="400")
        add("GET", f"{prefix}/games/{next(iter(picked))}?step=-1", note="400")
        add("GET", f"{prefix}/games/999999", note="404")
        add("GET", f"{prefix}/games/abc", note="404")
        add("GET", f"{prefix}/tournaments/nope", note="404")
    add("GET", "/json/home?x=1", note="query ignored")
    for g in games:
        gid = next(i for i, why in picked.items() if why == f"newest {g}")
        for s_ in range(2, steps.get(gid, 0)):
            if s_ != steps[gid] // 2:
                add("GET", f"/games/{gid}?step={s_}", note="every step")

    # --- live games, play pages, event streams
    for p in ["/live", "/json/live", "/play", "/play?game=loveletter", "/play?bot=nobody-here"]:
        add("GET", p)
    add("GET", "/play?game=chess", note="400")
    add("GET", f"/live/{sw_game}", note="finished: redirect")
    add("GET", "/live/999999", note="redirect")
    add("GET", "/live/abc", note="400")
    add("GET", "/play/999999", note="unknown game")
    add("GET", "/play/abc")
    add("GET", "/play/999999/events")
    add("POST", "/play", "", FORM, note="no game")
    add("POST", "/play", "game=chess", FORM, note="bad game")
    add("POST", "/play", "game=skullwhist&opponent1=bogus", FORM, note="bad opponent")
    add("POST", "/play", "game=skullwhist&opponent1=bot:nobody-here", FORM, note="unknown bot")
    add("POST", "/play", "game=skullwhist&opponent1=house:random&seat=x", FORM, note="bad seat")
    add("POST", "/play", "game=skullwhist&opponent1=house:random&owner=nobody&password=x", FORM, note="wrong owner")
    add("POST", "/play", "{\"game\":\"skullwhist\"}", JSON, note="JSON instead of a form")
    add("POST", "/play/999999", "action=x", FORM, note="unknown game")
    for gid in ["999999", str(sw_game), "abc"]:
        add("GET", f"/v1/games/{gid}/events")
    add("GET", "/v1/games/999999/events", headers={"Accept": "text/event-stream"}, note="SSE")
    add("GET", "/v1/games/999999/events?format=sse")
    add("GET", "/v1/games/999999/events?format=bogus", note="400")

    # --- 404s, paths, methods
    for p in ["/nope", "/json/nope", "/json", "/json/", "/static/nope.css", "/v1", "/v1/", "/v1/nope",
              "/api/v1", "/about/", "//about", "/games//", "/json//home", "/%7Eabout", "/bots/%20"]:
        add("GET", p)
    add("HEAD", "/")
    add("HEAD", "/static/croupier.css")
    add("GET", "/static/croupier.css", headers={"Accept-Encoding": "gzip, br"}, note="compression asked")
    add("POST", "/about", "x=1", FORM, note="405")
    add("DELETE", "/games", note="405")
    add("PUT", "/json/home", "{}", JSON, note="405")
    add("OPTIONS", "/v1/bots", note="405")

    # --- the 2014 SkullWhist API: wire failures (failed logins come from
    # 127.0.0.3 so that the address's failure count stays its own)
    BAD = "127.0.0.3"
    add("POST", "/api/login/", "{not json", JSON, source=BAD, note="bad JSON")
    add("POST", "/api/login/", "", JSON, source=BAD, note="empty body")
    add("POST", "/api/login/", "   \n", JSON, source=BAD, note="blank body")
    add("POST", "/api/login/", "[1,2]", JSON, source=BAD, note="not an object")
    add("POST", "/api/login/", jbody({"name": 7, "password": ["x"]}), JSON, source=BAD, note="wrong types")
    add("POST", "/api/login/", "{}", JSON, source=BAD, note="missing fields")
    add("POST", "/api/login/", jbody({"name": "x" * (MAX_BODY + 10), "password": "p"}), JSON, source=BAD,
        note=f"body over {MAX_BODY} bytes")
    add("POST", "/api/login/", jbody({"name": "x" * (READ_LIMIT + 10), "password": "p"}), JSON, source=BAD,
        note=f"body over {READ_LIMIT} bytes")
    add("POST", "/api/login/", jbody({"name": rated[0], "password": "x"}), JSON, source=BAD, note="house bot")
    add("POST", "/api/login/", jbody({"name": "nobody-here", "password": "x"}), JSON, source=BAD,
        note="unknown name")
    add("POST", "/api/nope/", "{}", JSON, note="unknown method")
    add("POST", "/api/nope", "{}", JSON, note="unknown method, no slash")
    add("POST", "/api/", "{}", JSON, note="405")
    add("POST", "/api/jsonp/", "{}", JSON)
    add("POST", "/api//status//", jbody({"session": "0" * 31}), JSON, note="repeated slashes")
    for m in ["status", "bid", "play", "play-card", "new-game", "old-game"]:
        add("POST", f"/api/{m}/", jbody({"session": "not-a-session"}), JSON, note="unknown session")
    add("POST", "/api/status/", jbody({"session": 12}), JSON, note="session of the wrong type")
    add("POST", "/api/register/", jbody({"name": "bad name!", "password": "pw"}), JSON, note="bad name")
    add("POST", "/api/register/", jbody({"name": "cmp-ok"}), JSON, note="no password")
    add("POST", "/api/register/", jbody({"name": "cmp-ok", "password": ""}), JSON, note="empty password")
    add("POST", "/api/register/", jbody({"name": rated[0], "password": "pw"}), JSON, note="name taken")
    add("PUT", "/api/login/", "{}", JSON, note="405")
    add("GET", "/api/jsonp?callback=cb&method=status&session=nope")
    add("GET", "/api/jsonp?callback=bad-callback!&method=status")
    add("GET", "/api/jsonp?callback=cb&method=nope")
    add("GET", "/api/jsonp?callback=cb")
    add("GET", "/api/jsonp/?method=status&session=x", note="no callback")

    # --- the 2014 API: a happy path (register, login, status of a bot in
    # no game, the methods of a game without one, an old game)
    def grab(key, field):
        def f(v, status, headers, body):
            try:
                v[key] = json.loads(body)[field]
            except (ValueError, KeyError, TypeError):
                pass
        return f

    sess = lambda v: v.get("session", "{session}")
    add("POST", "/api/register/", jbody({"name": "cmp-2014", "password": "pw-2014"}), JSON)
    add("POST", "/api/register/", jbody({"name": "cmp-2014", "password": "pw-2014"}), JSON, note="again: taken")
    add("POST", "/api/login/", jbody({"name": "cmp-2014", "password": "wrong"}), JSON, source=BAD,
        note="wrong password")
    add("POST", "/api/login/", jbody({"name": "cmp-2014", "password": "pw-2014"}), JSON,
        capture=grab("session", "session"))
    add("POST", "/api/status/", lambda v: jbody({"session": sess(v)}), JSON, note="bot in no game")
    add("POST", "/api/bid/", lambda v: jbody({"session": sess(v), "bid": 3}), JSON, note="no game")
    add("POST", "/api/bid/", lambda v: jbody({"session": sess(v), "bid": "three"}), JSON, note="wrong type")
    add("POST", "/api/play/", lambda v: jbody({"session": sess(v), "card": "AS"}), JSON, note="no game")
    add("POST", "/api/play-card/", lambda v: jbody({"session": sess(v)}), JSON, note="no card")
    add("POST", "/api/old-game/", lambda v: jbody({"session": sess(v), "game": sw_game}), JSON,
        note="a finished SkullWhist game")
    add("POST", "/api/old-game/", lambda v: jbody({"session": sess(v), "game": ll_game}), JSON,
        note="not SkullWhist")
    add("POST", "/api/old-game/", lambda v: jbody({"session": sess(v), "game": 999999}), JSON, note="no game")
    add("POST", "/api/old-game/", lambda v: jbody({"session": sess(v), "game": "one"}), JSON, note="wrong type")
    add("GET", lambda v: f"/api/jsonp?callback=cb&method=status&session={sess(v)}")
    add("GET", "/api/jsonp?callback=jp.cb_1&method=register&name=cmp-jsonp&password=pw")
    add("GET", "/api/jsonp?callback=cb&method=login&name=cmp-jsonp&password=pw")
    add("GET", "/api/jsonp?callback=cb&method=old-game&game=1", note="not for jsonp")
    add("POST", "/api/new-game/", lambda v: jbody({"session": sess(v)}), JSON,
        note="nobody to play: retry after --poll-timeout")
    add("POST", "/api/status/", lambda v: jbody({"session": sess(v)}), JSON, note="after new-game")

    # --- /v1: wire failures
    add("GET", "/v1/bots", note="401 no credentials")
    add("GET", "/v1/bots", headers={"Authorization": "Bearer crp_" + "0" * 32}, note="401 bearer for owners")
    add("GET", "/v1/bots", headers={"Authorization": "Basic !!!"}, note="401 malformed Basic")
    add("GET", "/v1/bots", headers={"Authorization": basic("nobody-here", "x")}, source=BAD,
        note="401 unknown owner")
    add("GET", "/v1/me", note="401 no token")
    add("GET", "/v1/me", headers={"Authorization": "Bearer crp_" + "f" * 32}, note="401 unknown token")
    add("GET", "/v1/me", headers={"Authorization": "Bearer"}, note="401 empty bearer")
    add("GET", "/v1/messages", headers={"Authorization": "Bearer nope"}, note="401")
    add("POST", "/v1/answer", "{}", JSON, note="401")
    add("POST", "/v1/owners", "{not json", JSON, note="bad JSON")
    add("POST", "/v1/owners", "", JSON, note="empty body")
    add("POST", "/v1/owners", jbody({"name": 5, "password": True}), JSON, note="wrong types")
    add("POST", "/v1/owners", jbody({"name": "x", "password": "y", "extra": 1}), JSON, note="unknown field")
    add("POST", "/v1/owners", jbody({"name": "bad name!", "password": "y"}), JSON, note="bad name")
    add("POST", "/v1/owners", jbody({"name": "cmp-x", "password": "p" * 256}), JSON, note="password too long")
    add("POST", "/v1/owners", jbody({"name": "x" * (MAX_BODY + 10), "password": "p"}), JSON,
        note=f"body over {MAX_BODY} bytes")
    add("POST", "/v1/owners", jbody({"name": "x" * (READ_LIMIT + 10), "password": "p"}), JSON,
        note=f"body over {READ_LIMIT} bytes")
    add("GET", "/v1/owners", note="405")
    add("DELETE", "/v1/bots", note="405")
    add("PUT", "/v1/me", "{}", JSON, note="405")
    add("GET", "/v1/tournaments")
    add("GET", "/v1/tournaments/nope", note="404")
    add("POST", "/v1/tournaments", "{}", JSON, note="401")
    add("POST", "/v1/tournaments/nope/cancel", note="401")

    # --- /v1: a happy path (an owner, a pull bot, its token, /v1/me)
    OWN = {"Authorization": basic("cmp-owner", "pw-owner")}
    tok = lambda v: {"Authorization": "Bearer " + v.get("token", "none")}
    add("POST", "/v1/owners", jbody({"name": "cmp-owner", "password": "pw-owner"}), JSON)
    add("POST", "/v1/owners", jbody({"name": "cmp-owner", "password": "pw-owner"}), JSON, note="409 taken")
    add("GET", "/v1/bots", headers={"Authorization": basic("cmp-owner", "wrong")}, source=BAD,
        note="401 wrong password")
    add("GET", "/v1/bots", headers=OWN, note="no bots yet")
    pull = {"name": "cmp-pull", "game": games[0] if "skullwhist" not in games else "skullwhist", "kind": "pull"}
    add("POST", "/v1/bots", jbody(pull), {**JSON, **OWN}, capture=grab("token", "token"), note="pull bot")
    add("POST", "/v1/bots", jbody(pull), {**JSON, **OWN}, note="409 taken")
    add("POST", "/v1/bots", "{not json", {**JSON, **OWN}, note="bad JSON")
    add("POST", "/v1/bots", jbody({**pull, "name": "cmp-b", "game": "chess"}), {**JSON, **OWN}, note="bad game")
    add("POST", "/v1/bots", jbody({**pull, "name": "cmp-b", "kind": "carrier-pigeon"}), {**JSON, **OWN},
        note="bad kind")
    add("POST", "/v1/bots", jbody({**pull, "name": "cmp-b", "kind": "push"}), {**JSON, **OWN}, note="push, no url")
    add("POST", "/v1/bots", jbody({**pull, "name": "cmp-b", "kind": "push", "url": "http://127.0.0.1:9/bot"}),
        {**JSON, **OWN}, note="push to loopback: refused")
    add("POST", "/v1/bots", jbody({**pull, "name": "cmp-b", "kind": "push", "url": "not a url"}),
        {**JSON, **OWN}, note="bad url")
    add("POST", "/v1/bots", jbody({**pull, "name": "cmp-b", "url": "http://127.0.0.1:9/"}), {**JSON, **OWN},
        note="pull with a url")
    add("POST", "/v1/bots", jbody({**pull, "name": "cmp-b", "dialect": "klingon"}), {**JSON, **OWN},
        note="bad dialect")
    add("POST", "/v1/bots", jbody({**pull, "name": "cmp-b", "dialect": "jujitsu"}), {**JSON, **OWN},
        note="dialect/game mismatch")
    add("POST", "/v1/bots", jbody({**pull, "name": "cmp-b", "colour": "red"}), {**JSON, **OWN},
        note="unknown field")
    add("GET", "/v1/bots", headers=OWN, note="one bot")
    add("GET", "/v1/bots/cmp-pull", headers=OWN)
    add("GET", "/v1/bots/nobody-here", headers=OWN, note="404")
    add("PATCH", "/v1/bots/cmp-pull", "{}", {**JSON, **OWN}, note="400 nothing to change")
    add("PATCH", "/v1/bots/cmp-pull", jbody({"enabled": "yes"}), {**JSON, **OWN}, note="wrong type")
    add("PATCH", "/v1/bots/cmp-pull", jbody({"challenges": True}), {**JSON, **OWN})
    add("GET", "/v1/me", headers=tok, note="pull bot")
    add("GET", "/v1/messages?wait=0", headers=tok)
    add("GET", "/v1/messages?wait=31", headers=tok, note="400")
    add("GET", "/v1/messages?after=x&wait=0", headers=tok, note="400")
    add("POST", "/v1/answer", "{not json", lambda v: {**JSON, **tok(v)}, note="bad JSON")
    add("POST", "/v1/answer", jbody({"match": "m-1", "decision": 0, "action": "x"}),
        lambda v: {**JSON, **tok(v)}, note="404 no such match")
    add("POST", "/v1/answer", jbody({"match": "m-1", "decision": -1, "action": "x"}),
        lambda v: {**JSON, **tok(v)}, note="wrong type")
    add("POST", "/v1/bots/cmp-pull/token", headers=OWN, capture=grab("token", "token"), note="new token")
    add("GET", "/v1/me", headers=tok, note="new token")
    add("GET", "/v1/me", headers={"Authorization": "Bearer crp_" + "0" * 32}, note="unknown token again")
    add("GET", "/v1/bots/cmp-pull/versions", headers=OWN, note="hosted: not a hosted bot")
    add("GET", "/v1/bots/cmp-pull/stderr", headers=OWN)
    add("GET", "/v1/bots/cmp-pull/versions", note="401")
    add("POST", "/v1/bots/cmp-pull/versions", "x", {"Content-Type": "application/octet-stream"},
        note="upload, no credentials")
    add("GET", "/v1/tournaments", headers=OWN)
    add("POST", "/v1/tournaments", jbody({"name": "t1"}), {**JSON, **OWN}, note="not an organiser")
    # Pages that show the new bots.
    for prefix in ["", "/json"]:
        add("GET", f"{prefix}/bots/cmp-pull")
        add("GET", f"{prefix}/bots/cmp-2014")
        add("GET", f"{prefix}/bots")
    add("GET", "/bots/cmp-pull/versions")
    add("GET", f"/bots/{q(rated[0])}/versions")
    add("GET", f"/play?game={pull['game']}", note="the bot open to challenges")
    add("GET", f"/play?bot=cmp-pull")

    # --- failed-login back-off (its own address, 127.0.0.2 / 127.0.0.4):
    # five free failures, then Retry-After
    for i in range(6):
        add("POST", "/api/login/", jbody({"name": "cmp-guess", "password": f"guess{i}"}), JSON,
            source="127.0.0.2", note=f"failed login {i + 1}")
    for i in range(6):
        add("GET", "/v1/bots", headers={"Authorization": basic("cmp-owner", f"guess{i}")},
            source="127.0.0.4", note=f"failed Basic auth {i + 1}")
    return R, picked


# ------------------------------------------------------------- comparison

TOKEN = re.compile(rb"crp_[0-9a-f]{32}")
HEX32 = re.compile(rb"(?<![0-9a-fA-F])[0-9a-f]{32}(?![0-9a-fA-F])")
IGNORED_HEADERS = {"date"}


def mask(b):
    b, n1 = TOKEN.subn(b"crp_<TOKEN>", b)
    b, n2 = HEX32.subn(b"<HEX32>", b)
    return b, n1 + n2


def normalise(answer):
    status, headers, body = answer
    body, n = mask(body)
    hs = []
    for k, v in headers:
        if k in IGNORED_HEADERS:
            continue
        v, m = mask(v.encode("latin-1", "replace"))
        n += m
        hs.append((k, v.decode("latin-1")))
    return (status, sorted(hs), body), n


def unmasked(answer):
    status, headers, body = answer
    return status, sorted((k, v) for k, v in headers if k not in IGNORED_HEADERS), body


def excerpt(b, at, before=60, after=120):
    s = b[max(0, at - before): at + after]
    pre = "…" if at - before > 0 else ""
    post = "…" if at + after < len(b) else ""
    return pre + repr(s)[2:-1] + post


def first_diff(a, b):
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def describe(a, b, names=("old", "new")):
    """What differs between two normalised answers, in a few lines."""
    out = []
    if a[0] != b[0]:
        out.append(f"status {names[0]} {a[0]} / {names[1]} {b[0]}")
    ha, hb = dict(a[1]), dict(b[1])
    for k in sorted(set(ha) | set(hb)):
        if ha.get(k) != hb.get(k):
            out.append(f"header {k}: {names[0]} {ha.get(k)!r} / {names[1]} {hb.get(k)!r}")
    if a[2] != b[2]:
        i = first_diff(a[2], b[2])
        out.append(f"body differs at byte {i} (lengths {len(a[2])} / {len(b[2])}):")
        out.append(f"    {names[0]}: {excerpt(a[2], i)}")
        out.append(f"    {names[1]}: {excerpt(b[2], i)}")
    return out


def run_list(server, reqs):
    v = {}
    answers = []
    outdir = os.path.join(WORK, "answers", server.label)
    os.makedirs(outdir, exist_ok=True)
    for i, r in enumerate(reqs):
        path, body, headers = r.resolve(v)
        ans = fetch(server.port, r.method, path, body, headers, r.source)
        if r.capture:
            r.capture(v, *ans)
        answers.append(ans)
        with open(os.path.join(outdir, f"{i:03d}.txt"), "wb") as f:
            f.write(f"{r.method} {path} (from {r.source})\n{ans[0]}\n".encode())
            for k, hv in ans[1]:
                f.write(f"{k}: {hv}\n".encode("utf-8", "replace"))
            f.write(b"\n" + ans[2])
    return answers


def main():
    say(f"OLD {OLD}\nNEW {NEW}\nwork folder {WORK}")
    seed()
    port = free_port()
    runs = [("old1", OLD), ("new", NEW), ("old2", OLD)]
    reqs, answers = None, {}
    for label, binary in runs:
        s = Server(binary, label, port)
        t = time.time()
        s.start()
        port = s.port
        try:
            if reqs is None:
                reqs, picked = build_requests(s.port)
                say(f"{len(reqs)} requests; games replayed: "
                    + ", ".join(f"{i} ({why})" for i, why in picked.items()))
            answers[label] = run_list(s, reqs)
        finally:
            s.stop()
        say(f"run {label}: {len(reqs)} requests in {time.time() - t:.1f} s on port {port}")

    say("")
    counts = {"same": 0, "DIFFERENT": 0, "unstable": 0}
    masked_total = 0
    different, unstable = [], []
    for i, r in enumerate(reqs):
        (o1, n1), (nw, n2), (o2, n3) = (normalise(answers[k][i]) for k in ("old1", "new", "old2"))
        raw = [unmasked(answers[k][i]) for k in ("old1", "new", "old2")]
        # Masking mattered where the raw answers differ: say so there.
        masked = max(n1, n2, n3) if not (raw[0] == raw[1] == raw[2]) else 0
        masked_total += masked
        tag = f"  (same after masking {masked} token{'s' if masked != 1 else ''})" if masked else ""
        label = f"#{i:03d} {r.label()}"
        if o1 != o2:
            counts["unstable"] += 1
            matches = "matches old1" if nw == o1 else "matches old2" if nw == o2 else "matches neither old run"
            lines = describe(o1, o2, ("old1", "old2"))
            if nw != o1 and nw != o2:
                lines += ["  new against old1:"] + ["  " + l for l in describe(o1, nw, ("old1", "new"))]
            unstable.append((label, matches, lines))
            say(f"unstable   {label}{tag}  [new {matches}]")
            for l in lines:
                say(f"             {l}")
        elif nw != o1:
            counts["DIFFERENT"] += 1
            lines = describe(o1, nw)
            different.append((label, lines))
            say(f"DIFFERENT  {label}{tag}")
            for l in lines:
                say(f"             {l}")
        else:
            counts["same"] += 1
            if not args.quiet:
                say(f"same       {label}  -> {o1[0]}{tag}")

    say("")
    say(f"compared: status, every header but {', '.join(sorted(IGNORED_HEADERS))}, body bytes")
    say("masked before comparing, in bodies and headers: values in the token formats "
        "(crp_ + 32 hex digits: /v1 bot tokens; 32 hex digits: 2014 sessions, cookies), which differ per run "
        f"by design; {masked_total} masked values made raw answers equal (marked 'same after masking')")
    say(f"runs in order old1, new, old2 on copies of one seeded database; answers kept in {WORK}/answers/")
    say(f"summary: {len(reqs)} requests: {counts['same']} same, {counts['DIFFERENT']} DIFFERENT, "
        f"{counts['unstable']} unstable (old1 and old2 differ)")
    for label, matches, _ in unstable:
        say(f"  unstable: {label}  [new {matches}]")
    for label, _ in different:
        say(f"  DIFFERENT: {label}")
    return 1 if counts["DIFFERENT"] else 0


sys.exit(main())
