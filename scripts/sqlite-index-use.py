#!/usr/bin/env python3
"""Which of a SQLite database's indexes the store's statements use.

Reads the statements sqlx logged (`RUST_LOG=sqlx::query=debug`, the
`db.statement="..."` field, colours or not) from one or more log files,
runs `EXPLAIN QUERY PLAN` of each distinct one against DATABASE (opened
read-only; unbound parameters are NULL, which does not change a plan), and
prints every index of DATABASE with the number of statements whose plan
names it, the unused ones last. Statements that are not SQLite's (a
PostgreSQL test's) fail to prepare and are counted, not shown.

    RUST_LOG=sqlx::query=debug croupier bench web --games 1000000 --db web.db 2> web.log
    scripts/sqlite-index-use.py web.db web.log [more.log ...] [--show INDEX] [--failed]

`--show INDEX` lists the statements whose plan names INDEX; `--failed`
lists the statements that could not be explained (a PostgreSQL test's,
or one that needs a table this file lacks), to check that no SQLite
statement was lost.

The writer's own statements (rusqlite, not sqlx) are not in the log:
check those by hand (see docs/benchmarks.md, "Indexes no statement uses").
"""
import re
import sqlite3
import sys

DDL = ("PRAGMA", "BEGIN", "COMMIT", "ROLLBACK", "CREATE", "ALTER", "DROP")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
STATEMENT = re.compile(r'db\.statement="((?:[^"\\]|\\.)*)"')


def statements(paths):
    found = set()
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                m = STATEMENT.search(ANSI.sub("", line))
                if m:
                    text = m.group(1).encode().decode("unicode_escape").strip()
                    found.update(p.strip() for p in text.split(";") if p.strip())
    return found


def plan(con, sql):
    sql = re.sub(r"\$(\d+)", r"?\1", sql)
    try:
        return con.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
    except sqlite3.ProgrammingError as e:
        m = re.search(r"uses (\d+)", str(e))
        if not m:
            raise
        return con.execute("EXPLAIN QUERY PLAN " + sql, [None] * int(m.group(1))).fetchall()


def main():
    args = sys.argv[1:]
    show = None
    failures = "--failed" in args
    if failures:
        args.remove("--failed")
    if "--show" in args:
        i = args.index("--show")
        show = args[i + 1]
        del args[i : i + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    con = sqlite3.connect(f"file:{args[0]}?mode=ro", uri=True)
    indexes = [r[0] for r in con.execute("SELECT name FROM sqlite_schema WHERE type = 'index'")]
    uses = {name: [] for name in indexes}
    explained = failed = 0
    for sql in sorted(statements(args[1:])):
        # Migrations' DDL (their comments stripped) and bookkeeping; their
        # one-off backfills (UPDATE, INSERT ... SELECT) are counted.
        bare = re.sub(r"^(\s*--[^\n]*\n)*", "", sql + "\n").strip().upper()
        if not bare or bare.startswith(DDL) or "_SQLX_MIGRATIONS" in bare:
            continue
        try:
            rows = plan(con, sql)
        except sqlite3.Error as e:
            failed += 1
            if failures:
                print(f"not explained ({e}): " + " ".join(sql.split())[:200])
            continue
        explained += 1
        text = " | ".join(r[3] for r in rows)
        for name in indexes:
            if re.search(r"\b" + re.escape(name) + r"\b", text):
                uses[name].append((sql, text))
    print(f"{explained} statements explained, {failed} not SQLite's (a PostgreSQL test's) or not preparable here")
    for name, used in sorted(uses.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"{len(used):5}  {name}")
        if name == show:
            for sql, text in used:
                print("         " + " ".join(sql.split())[:300])
                print("           plan: " + text)


if __name__ == "__main__":
    main()
