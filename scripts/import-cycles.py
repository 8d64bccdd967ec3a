#!/usr/bin/env python3
"""import-cycles.py: files of a Rust crate that import each other in a loop.

    scripts/import-cycles.py CRATE_SRC_DIR...      e.g. crates/live/src

A file A imports file B when A names an item that B defines: through a
`use` (of `crate::`, `super::`, `self::` or a child module's path), or a
path written inline (`crate::hub::state::Hub`, `super::lock::lock(..)`,
`game::run(..)`). A `pub use` is followed to the file that defines the
name, so a module that only re-exports (a facade `mod.rs` or `lib.rs`)
is no step of a loop; a `mod x;` declaration and a `pub(in path)`
visibility are no imports. Test modules (`#[cfg(test)] mod ... {}`) are
left out. Method calls are not seen: they name no file.

It prints, per crate, its files, arrows and loops (each with the arrows
that tie it), and exits 1 if any crate has a loop (ARCHITECTURE.md,
"Layers": inside each crate no file imports a file that imports it back).
Standard library only; it reads the code as text.
"""
import collections
import os
import re
import sys

DEFINITION = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:const\s+)?"
    r"(?:struct|enum|trait|fn|const|static|type|union)\s+(\w+)",
    re.M,
)


def text_of(path):
    """The code of `path` without comments, tests and `pub(in ...)`."""
    t = open(path, encoding="utf-8").read()
    t = re.sub(r"/\*.*?\*/", "", t, flags=re.S)
    t = re.sub(r"//[^\n]*", "", t)
    t = re.sub(r"pub\(in [^)]*\)", "pub", t)
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", t)
        if not m:
            return t
        i, depth = m.end(), 1
        while depth and i < len(t):
            depth += {"{": 1, "}": -1}.get(t[i], 0)
            i += 1
        t = t[: m.start()] + t[i:]


def modules(src):
    """{module path (tuple): file} from the crate root down its `mod x;`."""
    root = next(
        os.path.join(src, r) for r in ("lib.rs", "main.rs") if os.path.exists(os.path.join(src, r))
    )
    found = {}

    def walk(path, f):
        found[path] = f
        here = os.path.dirname(f)
        if not (f.endswith("mod.rs") or f == root):
            here = os.path.join(here, os.path.basename(f)[:-3])
        for m in re.finditer(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text_of(f), re.M):
            for cand in (os.path.join(here, m.group(1) + ".rs"), os.path.join(here, m.group(1), "mod.rs")):
                if os.path.exists(cand):
                    walk(path + (m.group(1),), cand)
                    break

    walk((), root)
    return found


def split_tree(prefix, body):
    """`a::{b, c::{d, e}}` as paths: `prefix` + each leaf."""
    parts, depth, cur = [], 0, ""
    for ch in body:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        p = re.sub(r"\s+as\s+\w+\s*$", "", p.strip())  # `Name as Other`
        p = re.sub(r"\s+", "", p)
        if not p:
            continue
        m = re.match(r"^(.*?)::\{(.*)\}$", p)
        if m:
            out += split_tree(prefix + m.group(1) + "::", m.group(2))
        elif p.startswith("{") and p.endswith("}"):
            out += split_tree(prefix, p[1:-1])
        else:
            out.append(prefix + p)
    return out


def analyse(src):
    mods = modules(src)
    files = {f: path for path, f in mods.items()}
    defs, reexports = {}, {}
    for f in files:
        t = text_of(f)
        defs[f] = set(DEFINITION.findall(t))
        rex = {}
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]*);", t, re.S):
            body = m.group(1).strip()
            mm = re.match(r"^(.*?)::\s*\{(.*)\}$", body, re.S)
            items = split_tree(re.sub(r"\s+", "", mm.group(1)) + "::", mm.group(2)) if mm else split_tree("", body)
            for item in items:
                name = item.split("::")[-1]
                if name != "*":
                    rex[name] = item
        reexports[f] = rex

    def resolve(segs, cur, depth=0):
        """The file that `segs` (relative to module `cur`) names."""
        target, i = cur, 0
        while i < len(segs) and target + (segs[i],) in mods:
            target, i = target + (segs[i],), i + 1
        f = mods.get(target)
        if f is None or i >= len(segs) or depth > 8:
            return f
        name = segs[i]
        if name in defs[f] or name not in reexports[f]:
            return f
        p = reexports[f][name].split("::")
        if p[0] == "crate":
            return resolve(p[1:], (), depth + 1) or f
        c = target
        while p and p[0] in ("super", "self"):
            c = c[:-1] if p[0] == "super" else c
            p = p[1:]
        if p and c + (p[0],) in mods:
            return resolve(p, c, depth + 1) or f
        return f  # a re-export of another crate's item

    edges = collections.defaultdict(set)
    for f, path in files.items():
        t = text_of(f)
        paths = []
        for m in re.finditer(r"\buse\s+((?:crate|super|self)(?:::\w+)*)::\{(.*?)\};", t, re.S):
            paths += split_tree(m.group(1) + "::", m.group(2))
        for m in re.finditer(r"\buse\s+((?:crate|super|self)::[\w:]+)(?:\s+as\s+\w+)?\s*;", t):
            paths.append(m.group(1))
        inline = re.sub(r"\buse\s+[^;]*;", "", t)
        for m in re.finditer(r"\b((?:crate|super)(?:::\w+)+)", inline):
            paths.append(m.group(1))
        children = [k[-1] for k in mods if len(k) == len(path) + 1 and k[:-1] == path]
        for k in children:
            for m in re.finditer(r"(?<![\w:])" + k + r"::\{(.*?)\}", t, re.S):
                paths += ["self::" + q for q in split_tree(k + "::", m.group(1))]
            for m in re.finditer(r"(?<![\w:])(" + k + r"(?:::\w+)+)", t):
                paths.append("self::" + m.group(1))
        for p in paths:
            segs = p.replace(" ", "").split("::")
            if segs[0] == "crate":
                cur, segs = (), segs[1:]
            else:
                cur = path
                while segs and segs[0] in ("super", "self"):
                    cur = cur[:-1] if segs[0] == "super" else cur
                    segs = segs[1:]
            target = resolve(segs, cur)
            if target and target != f:
                edges[f].add(target)
    return files, edges


def loops(nodes, edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    bad = 0
    for src in argv:
        if not os.path.isdir(src):
            print(f"{src}: no such folder", file=sys.stderr)
            return 2
        files, edges = analyse(src)
        found = loops(list(files), edges)
        arrows = sum(len(v) for v in edges.values())
        print(f"{src}: {len(files)} files, {arrows} imports, {len(found)} loops")
        for comp in found:
            bad += 1
            rel = lambda x: os.path.relpath(x, src)
            print("  loop: " + " ".join(sorted(rel(x) for x in comp)))
            for a in sorted(comp):
                for b in sorted(edges[a]):
                    if b in comp:
                        print(f"    {rel(a)} -> {rel(b)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
