#!/usr/bin/env python3
"""Which indexes the plans in PostgreSQL's `auto_explain` log name.

Run the cluster with every statement's plan logged, for example

    session_preload_libraries = 'auto_explain'
    auto_explain.log_min_duration = 0

in its postgresql.conf (or `-c` options to `postgres`), run the workload
(the store's tests, `croupier bench web --postgres --database URL`, a
server), then

    scripts/pg-index-use.py server.log [more.log ...] [--show INDEX]

prints every index named in a plan ("Index Scan using INDEX",
forwards or backwards, "Bitmap Index Scan on INDEX") with the number of
plans naming it, most used first. `--show INDEX` lists the statements
whose plan names INDEX, with counts. An index missing from the list was
in no plan; check `pg_stat_user_indexes.idx_scan` on the same database
too, which also counts scans inside functions and triggers, which
`auto_explain` leaves out unless `auto_explain.log_nested_statements`
is on.
"""
import collections
import re
import sys

# The query text runs to the first plan node (a line with its cost).
PLAN = re.compile(r"plan:\n\s*Query Text: (.*?)\n([^\n]*\(cost=.*?)(?=\n\S|\Z)", re.S)
USING = re.compile(r"Scan(?: Backward)? using (\w+)|Bitmap Index Scan on (\w+)")


def main(argv):
    show = None
    paths = []
    args = iter(argv)
    for a in args:
        if a == "--show":
            show = next(args, None)
            if show is None:
                sys.exit("--show needs an index name")
        else:
            paths.append(a)
    if not paths:
        sys.exit(__doc__)
    uses = collections.defaultdict(collections.Counter)
    plans = 0
    for path in paths:
        with open(path, errors="replace") as f:
            text = f.read()
        for m in PLAN.finditer(text):
            plans += 1
            query = " ".join(m.group(1).split())
            for index in {a or b for a, b in USING.findall(m.group(2))}:
                uses[index][query] += 1
    print(f"{plans} plans read")
    if show:
        for query, n in uses.get(show, collections.Counter()).most_common():
            print(f"{n:>7}  {query}")
        return
    for index, queries in sorted(uses.items(), key=lambda kv: -sum(kv[1].values())):
        print(f"{sum(queries.values()):>7}  {index}  ({len(queries)} statements)")


if __name__ == "__main__":
    main(sys.argv[1:])
