#!/usr/bin/env python3
"""barecat_rs's Python barecat API side by side with Python barecat 0.3.1: globs,
walks and random reads over one large archive, and `merge_from_other_barecat`.

Each operation runs in this process for both modules, alternating which goes
first from round to round; the report gives the median of each and the ratio of
the medians (Python's time / ours). The archive is built once (by barecat_rs) in
a temporary directory under --dir and removed at the end.

The floor column: what any implementation over the SQLite index pays at least,
timed the same way: for a glob, SQLite's scan of the path index with the
pattern's SQLite `GLOB` form (or of the range of a literal prefix), rows fetched
into a Python list (Python's sqlite3). For `bc[path]`, SQLite's lookups of the
same paths alone, from Rust with one prepared statement in one read transaction
(examples/lookup_floor.rs; no shard read, no checksum, no Python object). For a
merge into an archive that already holds files (row by row), the index part alone
at SQLite's fastest: the source's rows inserted by one `INSERT ... SELECT` in path
order from the attached source (through APSW; triggers and foreign keys off for
the connection, as in a bulk writer; directories included), plus the shard's bytes
appended and synced; what a merge
also does (checking every byte, the directory statistics) is left out. "Python /
floor" is then the largest ratio to Python barecat that any implementation over
this format can reach.

usage: python3 bench/python_api.py [--files 200000] [--rounds 5] [--merge-files 50000]
       [--reads 20000] [--dir /tmp]
"""
import argparse
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", category=DeprecationWarning)

import barecat  # noqa: E402
import barecat_rs  # noqa: E402


def paths(n):
    return [f"part_{i % 10:02d}/class_{(i // 10) % 100:03d}/item_{i:07d}.txt" for i in range(n)]


def build(path, n):
    pool = bytes(range(256)) * 4
    with barecat_rs.Barecat(path, readonly=False) as bc:
        with bc.bulk():
            for i, p in enumerate(paths(n)):
                bc[p] = pool[i % 500:i % 500 + 100 + i % 300]


def timed(f):
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


ROOT = Path(__file__).resolve().parents[1]


def lookup_floor(arch, paths_file):
    """Seconds of SQLite's lookups of the paths in `paths_file` (lookup_floor)."""
    out = subprocess.run([str(ROOT / "target/release/examples/lookup_floor"), arch, paths_file],
                         check=True, capture_output=True, text=True).stdout
    return float(out.split()[0])


def merge_floor(src, work, first=None, prefix="", pattern=None):
    """Seconds of a merge's index part at SQLite's fastest, plus the shard's bytes
    appended and synced, into a fresh output holding the file `first` (if any).
    Through APSW, whose SQLite is as recent as ours (Python's sqlite3 links the
    system's, slower here); triggers and foreign keys off for the connection, as
    in a bulk writer."""
    import apsw

    out = os.path.join(work, "floor.barecat")
    with barecat_rs.Barecat(out, readonly=False, overwrite=True) as bc:
        if first:
            bc[first] = b"x"
    to = prefix + "/" if prefix else ""
    where, binds = ("WHERE path GLOB ?2", (to, pattern.replace("**", "*"))) if pattern else (
        "", (to,))
    t = time.perf_counter()
    db = apsw.Connection(out)
    db.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, 0)
    db.execute("PRAGMA foreign_keys = OFF")
    db.execute("ATTACH ? AS src", (src,))
    db.execute("BEGIN IMMEDIATE")
    db.execute("UPDATE config SET value_int = 0 WHERE key = 'use_triggers'")
    end = os.path.getsize(out + "-shard-00000")
    db.execute(f"INSERT OR IGNORE INTO dirs (path) SELECT rtrim(?1 || path, '/') "
               f"FROM src.dirs {where}", binds)
    db.execute(
        "INSERT INTO files (path, shard, offset, size, crc32c, mode, uid, gid, mtime_ns) "
        f"SELECT ?1 || path, 0, offset + {end}, size, crc32c, mode, uid, gid, mtime_ns "
        f"FROM src.files {where} ORDER BY path", binds)
    db.execute("UPDATE config SET value_int = 1 WHERE key = 'use_triggers'")
    with open(src + "-shard-00000", "rb") as fi, open(out + "-shard-00000", "ab") as fo:
        shutil.copyfileobj(fi, fo, 1 << 20)
        fo.flush()
        os.fdatasync(fo.fileno())
    db.execute("COMMIT")
    db.close()
    t = time.perf_counter() - t
    for f in os.listdir(work):
        if f.startswith("floor.barecat"):
            os.remove(os.path.join(work, f))
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=200_000)
    ap.add_argument("--merge-files", type=int, default=50_000)
    ap.add_argument("--reads", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default="/tmp")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench-pyapi-", dir=a.dir)
    try:
        arch = os.path.join(work, "big.barecat")
        src = os.path.join(work, "src.barecat")
        build(arch, a.files)
        build(src, a.merge_files)
        rng = random.Random(1)
        sample = rng.sample(paths(a.files), min(a.reads, a.files))
        sample_file = os.path.join(work, "sample.txt")
        with open(sample_file, "w") as f:
            f.write("".join(p + "\n" for p in sample))
        subprocess.run(["cargo", "build", "-q", "--release", "--example", "lookup_floor"],
                       cwd=ROOT, check=True)

        def with_reader(mod, f):
            def run():
                with mod.Barecat(arch) as bc:
                    return f(bc)
            return run

        def merge(mod, first=None, **kw):
            """merge_from_other_barecat of `src` into a new archive (holding the
            file `first` when given), with `kw`; returns the files of the result."""
            def run():
                out = os.path.join(work, f"merged-{mod.__name__}.barecat")
                with mod.Barecat(out, readonly=False, overwrite=True) as bc:
                    if first:
                        bc[first] = b"x"
                        if mod is barecat:
                            bc.index.conn.commit()
                        else:
                            bc.commit()
                    bc.merge_from_other_barecat(src, **kw)
                n = len(mod.Barecat(out))
                for f in os.listdir(work):
                    if f.startswith(f"merged-{mod.__name__}"):
                        os.remove(os.path.join(work, f))
                return n
            return run

        ops = {
            "glob `**/*.txt` (recursive, every file)": lambda bc: len(
                bc.index.glob_paths("**/*.txt", recursive=True)),
            "glob `**/item_00001*.txt` (recursive)": lambda bc: len(
                bc.index.glob_paths("**/item_00001*.txt", recursive=True)),
            "glob `part_0[1-3]/class_0?5/*.txt`": lambda bc: len(
                bc.glob("part_0[1-3]/class_0?5/*.txt")),
            # Python also yields 'part_05/' (python/README.md): not counted.
            "iterglob_paths `part_05/**` (recursive)": lambda bc: sum(
                1 for p in bc.index.iterglob_paths("part_05/**", recursive=True)
                if not p.endswith("/")),
            "index.walk_names('')": lambda bc: sum(
                len(f) for _, _, f in bc.index.walk_names("")),
            "walk('') (Barecat.walk)": lambda bc: sum(len(f) for _, _, f in bc.walk("")),
            f"bc[path], {len(sample)} random paths": lambda bc: sum(len(bc[p]) for p in sample),
        }
        def scan(sql, *params):
            def run():
                db = sqlite3.connect(f"file:{arch}?mode=ro", uri=True)
                try:
                    return len(db.execute(sql, params).fetchall())
                finally:
                    db.close()
            return run

        files_glob = "SELECT path FROM files WHERE path GLOB ?"
        both_glob = ("SELECT path FROM files WHERE path GLOB ?1 "
                     "UNION ALL SELECT path FROM dirs WHERE path GLOB ?1")
        floors = {
            "glob `**/*.txt` (recursive, every file)": scan(both_glob, "*.txt"),
            "glob `**/item_00001*.txt` (recursive)": scan(both_glob, "*item_00001*.txt"),
            "glob `part_0[1-3]/class_0?5/*.txt`": scan(both_glob, "part_0[1-3]/class_0?5/*.txt"),
            "iterglob_paths `part_05/**` (recursive)": scan(
                files_glob.replace("GLOB ?", ">= 'part_05/' AND path < 'part_050'")),
        }
        floor_times = {}
        for name, f in floors.items():
            floor_times[name] = [timed(f)[0] for _ in range(a.rounds)]
        floor_times[f"bc[path], {len(sample)} random paths"] = [
            lookup_floor(arch, sample_file) for _ in range(a.rounds)]
        results = []

        def side_by_side(name, run):
            """Time `run(module, key, round)` for both modules, alternating which
            goes first; both must return the same value."""
            times = {"py": [], "rs": []}
            for r in range(a.rounds):
                order = [("py", barecat), ("rs", barecat_rs)]
                if r % 2:
                    order.reverse()
                got = {}
                for key, mod in order:
                    t, got[key] = timed(lambda: run(mod, key, r))
                    times[key].append(t)
                assert got["py"] == got["rs"], (name, got)
            results.append((name, times))
            print(name, {k: round(statistics.median(v), 4) for k, v in times.items()},
                  flush=True)

        for name, f in ops.items():
            side_by_side(name, lambda mod, key, r, f=f: with_reader(mod, f)())
        merges = [
            (f"merge_from_other_barecat, {a.merge_files} files, into a new archive", {}, None),
            ("the same into an archive holding one file", {}, "zz/first.txt"),
            ("the same with prefix='pre'", {"prefix": "pre"}, None),
            ("the same with pattern='part_0[1-5]/**'", {"pattern": "part_0[1-5]/**"}, None),
        ]
        for name, kw, first in merges[1:]:
            # Row by row (the first is copied whole): the index part's floor.
            floor_times[name] = [merge_floor(src, work, first, **kw) for _ in range(a.rounds)]
        for name, kw, first in merges:
            side_by_side(name, lambda mod, key, r, kw=kw, first=first: merge(mod, first, **kw)())
        # A small change to the large archive: open for writing, add one file,
        # close (our writers then write the sidecar). A new name each time; the
        # read rows above are done.
        def change(mod, key, r):
            with mod.Barecat(arch, readonly=False) as bc:
                bc[f"new/{key}-{r}.txt"] = b"x"

        side_by_side("open for writing, add one file, close", change)
        print(f"{a.files} files, {a.rounds} rounds, medians")
        print("| operation | Python barecat 0.3.1 | barecat_rs | ratio | floor | Python / floor |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, t in results:
            py, rs = statistics.median(t["py"]), statistics.median(t["rs"])
            fl = floor_times.get(name)
            extra = "| | |"
            if fl:
                m = statistics.median(fl)
                extra = f"| {m * 1000:.1f} ms | {py / m:.1f}× |"
            print(f"| {name} | {py * 1000:.1f} ms | {rs * 1000:.1f} ms | {py / rs:.1f}× {extra}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
