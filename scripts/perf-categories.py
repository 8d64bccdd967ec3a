#!/usr/bin/env python3
"""Share of a process's CPU samples by what they were doing (issue 53).

    perf record -F 999 -g -p PID -o server.data -- sleep 8
    perf script -i server.data > server.txt
    scripts/perf-categories.py server.txt

Each sample goes to the first category whose keyword appears in its stack,
read from the innermost frame out; samples of the SQLite writer's and of
sqlx's connection threads all count as SQLite. docs/benchmarks.md, "Where
the server's time per request goes", has the figures and the commands.
"""
import sys, collections
RULES = [  # (category, keywords) checked frame by frame from the leaf up
 ("SQLite (statements, WAL, pages)", ["sqlite3", "rusqlite", "pwrite", "pread", "fsync", "sqlx_sqlite"]),
 ("kernel: sending responses (TCP)", ["writev", "sendmsg", "tcp_sendmsg"]),
 ("kernel: reading requests (TCP)", ["recvfrom", "recvmsg", "__libc_recv", "tcp_recvmsg"]),
 ("kernel: waiting, waking, switching", ["epoll_wait", "futex", "schedule", "irqentry_exit_to_user_mode", "finish_task_switch", "reschedule_ipi", "__x64_sys_sched_yield"]),
 ("allocator (mimalloc)", ["mi_", "_mi_"]),
 ("HTTP parse/encode (hyper, httparse)", ["hyper::", "httparse", "hyper_util", "http::"]),
 ("JSON (serde_json)", ["serde_json", "serde_core"]),
 ("routing, middleware, throttle (axum, tower)", ["axum", "tower", "throttle", "croupier_server::net", "croupier_server::auth"]),
 ("game: hub, runner, dialect, rules", ["croupier_live", "croupier_arena", "croupier_dialects", "croupier_rules", "skullwhist_api", "croupier_server"]),
 ("tokio runtime (tasks, timers, I/O driver)", ["tokio::"]),
]
counts = collections.Counter(); threads = collections.Counter(); total = 0
def flush(comm, frames):
    global total
    if not frames: return
    total += 1; threads[comm] += 1
    if comm.startswith("croupier-commit") or comm.startswith("sqlx-sqlite"):
        counts["SQLite (statements, WAL, pages)"] += 1; return
    for f in frames:
        for cat, keys in RULES:
            if any(k in f for k in keys):
                counts[cat] += 1; return
    counts["other (libc memcpy, unresolved)"] += 1
comm, frames = None, []
for line in open(sys.argv[1], errors="replace"):
    if not line.strip():
        flush(comm, frames); comm, frames = None, []; continue
    if not line.startswith((" ", "\t")):
        comm = line.split()[0]; frames = []
    else:
        parts = line.strip().split(None, 1)
        frames.append(parts[1] if len(parts) > 1 else parts[0])
flush(comm, frames)
print(f"{total} samples")
for cat, n in counts.most_common():
    print(f"| {cat} | {100*n/total:.1f}% |")
print("threads:", ", ".join(f"{c} {100*n/total:.1f}%" for c, n in threads.most_common()))
