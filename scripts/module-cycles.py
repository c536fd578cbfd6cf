#!/usr/bin/env python3
"""Check that the library's modules import each other without cycles.

The layers of docs/ARCHITECTURE.md (core, then the features, then the command
line) only hold if dependencies point one way. This script reads every `use`
declaration and every `crate::` / `super::` / `self::` path in src/**/*.rs
(src/bin excluded: each program there is a separate crate), resolves each path
to the module it names (following `pub use` re-exports, so `crate::Archive`
counts as a use of `core::archive`), and builds a graph whose nodes are

  * each direct submodule of `core` (`core::index`, `core::shards`,
    `core::writer`, `core::remote`, `core::sidecar`, ...), since the core's
    parts are layered among themselves;
  * each other top-level module (`ingest`, `export`, `maint`, `records`,
    `mount`, `sync`, `listing`, `edit`, `interactive`, `cli`);

and `core` itself for what `src/core/mod.rs` holds. A module's own
submodules belong to its node. With --depth 2 every top-level module is
split into its direct submodules as well (a finer view; cycles between a
module's `mod.rs` and its children are then reported too).

Exit status: 0 without cycles, 1 listing every cycle (with the lines that
make each edge), 2 on a usage error. Standard library only.

usage: scripts/module-cycles.py [--src DIR] [--depth 1|2] [--graph]
"""

import argparse
import os
import sys
from collections import defaultdict

# ---------------------------------------------------------------------------
# Tokens: comments, strings and character literals removed.

def tokenize(text):
    """Yield (kind, value, line): kind is 'id' or 'p' (punctuation)."""
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    line += text[i] == "\n"
                    i += 1
        elif c in "rb" and _raw_string_at(text, i):
            j = i + (2 if text[i] == "b" else 1)
            hashes = 0
            while text[j] == "#":
                hashes, j = hashes + 1, j + 1
            end = text.find('"' + "#" * hashes, j + 1)
            end = n if end < 0 else end + 1 + hashes
            line += text.count("\n", i, end)
            i = end
        elif c == '"' or (c == "b" and text.startswith('b"', i)):
            i += 2 if c == "b" else 1
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 1
                line += text[i] == "\n"
                i += 1
            i += 1
        elif c == "'" or (c == "b" and text.startswith("b'", i)):
            j = i + (2 if c == "b" else 1)
            # A character literal ('a', '\n', '\u{..}') or a lifetime ('a).
            if j < n and text[j] == "\\":
                k = text.find("'", j + 2)
                i = k + 1
            elif j + 1 < n and text[j + 1] == "'":
                i = j + 2
            elif j < n and ord(text[j]) > 127 and text.find("'", j) == j + 1:
                i = j + 2
            else:
                i = j  # a lifetime: its name follows as an identifier
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            yield ("id", text[i:j], line)
            i = j
        elif text.startswith("::", i):
            yield ("p", "::", line)
            i += 2
        else:
            yield ("p", c, line)
            i += 1


def _raw_string_at(text, i):
    j = i
    if text[j] == "b":
        j += 1
    if j >= len(text) or text[j] != "r":
        return False
    j += 1
    while j < len(text) and text[j] == "#":
        j += 1
    return j < len(text) and text[j] == '"' and (j > i + 1 or text[i] == "r")


# ---------------------------------------------------------------------------
# Modules: the file tree, plus inline `mod name { ... }` blocks.


def module_of(src, path):
    rel = os.path.relpath(path, src)[: -len(".rs")].split(os.sep)
    if rel == ["lib"]:
        return ()
    if rel[-1] == "mod":
        rel = rel[:-1]
    return tuple(rel)


def parse_use_tree(toks, i, prefix, out):
    """Parse a use tree at toks[i]; append (segments, name, line) to out.

    Returns the index after the tree."""
    segs = list(prefix)
    line = toks[i][2] if i < len(toks) else 0
    while i < len(toks):
        kind, val, line = toks[i]
        if val == "{":
            i += 1
            while i < len(toks) and toks[i][1] != "}":
                i = parse_use_tree(toks, i, segs, out)
                if i < len(toks) and toks[i][1] == ",":
                    i += 1
            return i + 1
        if val == "*":
            out.append((tuple(segs), "*", line))
            return i + 1
        if kind == "id":
            segs.append(val)
            i += 1
            if i < len(toks) and toks[i][1] == "::":
                i += 1
                continue
            name = val
            if i < len(toks) and toks[i][1] == "as":
                name = toks[i + 1][1]
                i += 2
            if segs[-1] == "self":
                segs.pop()
                name = segs[-1] if name == "self" else name
            out.append((tuple(segs), name, line))
            return i
        i += 1  # `::` at the start of a path, or anything unexpected
    return i


class Crate:
    def __init__(self, src):
        self.src = src
        self.modules = set()  # every module path, as a tuple
        self.files = {}  # file -> module path
        self.uses = []  # (module, segments, line, file, is_use)
        self.reexports = defaultdict(dict)  # module -> name -> absolute segments
        for root, dirs, files in os.walk(src):
            dirs[:] = sorted(d for d in dirs if os.path.join(root, d) != os.path.join(src, "bin"))
            for f in sorted(files):
                if f.endswith(".rs"):
                    p = os.path.join(root, f)
                    m = module_of(src, p)
                    self.files[p] = m
                    self.modules.add(m)
        for p, m in sorted(self.files.items()):
            with open(p, encoding="utf-8") as fh:
                self.scan(p, m, list(tokenize(fh.read())))

    def scan(self, path, module, toks):
        stack = [(module, 0)]  # (module, brace depth its block closes at)
        depth = 0
        i = 0
        while i < len(toks):
            kind, val, line = toks[i]
            cur = stack[-1][0]
            if val == "{":
                depth += 1
            elif val == "}":
                depth -= 1
                if len(stack) > 1 and depth < stack[-1][1]:
                    stack.pop()
            elif val == "mod" and i + 2 < len(toks) and toks[i + 1][0] == "id" and toks[i + 2][1] == "{":
                inner = cur + (toks[i + 1][1],)
                self.modules.add(inner)
                depth += 1
                stack.append((inner, depth))
                i += 3
                continue
            elif val == "use" and kind == "id":
                public = self.is_public(toks, i)
                out = []
                j = parse_use_tree(toks, i + 1, (), out)
                for segs, name, ln in out:
                    absolute = self.absolute(cur, segs)
                    if absolute is None:
                        continue
                    self.uses.append((cur, absolute, ln, path, True))
                    if public and name not in ("*", "_"):
                        self.reexports[cur][name] = absolute
                i = j
                continue
            elif val in ("crate", "super", "self") and i + 1 < len(toks) and toks[i + 1][1] == "::":
                if i > 0 and toks[i - 1][1] in ("::", "$"):
                    i += 1
                    continue
                segs = [val]
                j = i + 1
                while j + 1 < len(toks) and toks[j][1] == "::" and toks[j + 1][0] == "id":
                    segs.append(toks[j + 1][1])
                    j += 2
                absolute = self.absolute(cur, segs)
                if absolute is not None:
                    self.uses.append((cur, absolute, line, path, False))
                i = j
                continue
            i += 1

    @staticmethod
    def is_public(toks, i):
        j = i - 1
        if j >= 0 and toks[j][1] == ")":  # pub(crate), pub(super), pub(in path)
            while j >= 0 and toks[j][1] != "(":
                j -= 1
            j -= 1
        return j >= 0 and toks[j][1] == "pub"

    def absolute(self, cur, segs):
        """Segments from the crate root, or None for another crate's path."""
        if not segs:
            return None
        first = segs[0]
        if first == "crate":
            return tuple(segs[1:])
        if first in ("super", "self"):
            base = list(cur)
            k = 0
            while k < len(segs) and segs[k] in ("super", "self"):
                if segs[k] == "super":
                    if not base:
                        return None
                    base.pop()
                k += 1
            return tuple(base) + tuple(segs[k:])
        if cur + (first,) in self.modules:  # a child module, named relatively
            return cur + tuple(segs)
        return None  # std, an external crate, or a name in scope

    def target(self, segs, seen=0):
        """The module a path points into: the deepest module it names,
        following re-exports of items."""
        m = ()
        for k, s in enumerate(segs):
            if m + (s,) in self.modules:
                m = m + (s,)
                continue
            alias = self.reexports.get(m, {}).get(s)
            if alias is not None and seen < 16 and alias != segs[: k + 1]:
                return self.target(alias + tuple(segs[k + 1 :]), seen + 1)
            break
        return m


def node_of(module, depth):
    """The graph node a module belongs to."""
    if not module:
        return None  # the crate root: lib.rs only declares and re-exports
    if module[0] == "core" or depth >= 2:
        return "::".join(module[:2])
    return module[0]


def find_cycles(edges):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    nodes = sorted(set(edges) | {b for bs in edges.values() for b in bs})

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def one_cycle(comp, edges):
    """A shortest cycle through the component's first node (BFS)."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, ())):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp + [comp[0]]


def main():
    ap = argparse.ArgumentParser(description="Report import cycles between the crate's modules.")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--src", default=os.path.join(here, "..", "src"), help="the crate's src directory")
    ap.add_argument("--depth", type=int, choices=(1, 2), default=1,
                    help="1: core's submodules and the other top-level modules (default); "
                         "2: every top-level module's direct submodules")
    ap.add_argument("--graph", action="store_true", help="print every edge of the graph")
    args = ap.parse_args()
    src = os.path.normpath(args.src)
    if not os.path.isfile(os.path.join(src, "lib.rs")):
        print(f"module-cycles: no lib.rs in {src}", file=sys.stderr)
        return 2

    crate = Crate(src)
    edges = defaultdict(set)
    evidence = defaultdict(list)
    for module, segs, line, path, _ in crate.uses:
        a = node_of(module, args.depth)
        b = node_of(crate.target(segs), args.depth)
        if a is None or b is None or a == b:
            continue
        edges[a].add(b)
        evidence[(a, b)].append(f"{os.path.relpath(path, os.path.dirname(src))}:{line}: "
                                f"{'::'.join(('crate',) + segs)}")

    if args.graph:
        for a in sorted(edges):
            print(f"{a} -> {', '.join(sorted(edges[a]))}")

    cycles = find_cycles(edges)
    if not cycles:
        n = len(set(edges) | {b for bs in edges.values() for b in bs})
        print(f"module-cycles: no cycles among {n} modules")
        return 0
    print(f"module-cycles: {len(cycles)} cycle(s) between modules:")
    for comp in cycles:
        cyc = one_cycle(comp, edges)
        print(f"\n  {' -> '.join(cyc)}   (strongly connected: {', '.join(comp)})")
        for a, b in zip(cyc, cyc[1:]):
            lines = evidence[(a, b)]
            print(f"    {a} -> {b}:")
            for ev in lines[:5]:
                print(f"      {ev}")
            if len(lines) > 5:
                print(f"      ... and {len(lines) - 5} more")
    return 1


if __name__ == "__main__":
    sys.exit(main())
