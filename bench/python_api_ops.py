#!/usr/bin/env python3
"""Everyday operations of Python barecat's API, barecat_rs side by side with Python
barecat 0.3.1, each on an archive of its own making of --files small files (20
directories of 10 subdirectories): the issue's "every operation at least as fast
as Python barecat's", for what bench/python_api.py does not time.

Read operations run on that archive; each write operation on a fresh copy of it,
timed from opening for writing to closing (which commits). Both modules in this
process, alternating which goes first; medians of --rounds; ratio = Python's
time / ours.

usage: python3 bench/python_api_ops.py [--files 20000] [--rounds 3] [--dir /tmp]
"""
import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)

import barecat  # noqa: E402
import barecat_rs  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default="/tmp")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench-pyops-", dir=a.dir)
    paths = [f"d{i % 20:02d}/s{(i // 20) % 10}/f{i:06d}.txt" for i in range(a.files)]
    sample = random.Random(3).sample(paths, min(2000, a.files))
    some = paths[::7][:2000]
    try:
        master = {}
        for m in (barecat, barecat_rs):
            master[m] = os.path.join(work, f"{m.__name__}.barecat")
            with m.Barecat(master[m], readonly=False) as bc:
                for i, p in enumerate(paths):
                    bc[p] = b"x" * (50 + i % 100)

        def copy(m):
            out = os.path.join(work, f"{m.__name__}-w.barecat")
            for f in os.listdir(work):
                if f.startswith(f"{m.__name__}-w.barecat"):
                    os.remove(os.path.join(work, f))
            base = os.path.basename(master[m])
            for f in os.listdir(work):
                if f.startswith(base):
                    shutil.copy(os.path.join(work, f),
                                os.path.join(work, f.replace(base, os.path.basename(out))))
            return out

        def commit(m, bc):
            if m is barecat:
                bc.index.conn.commit()
            else:
                bc.commit()

        reads = {
            "`list(bc)` (every path)": lambda bc: len(list(bc)),
            "`list(bc.items())`": lambda bc: len(list(bc.items())),
            "`bc.exists(p)` x 2000": lambda bc: sum(bc.exists(p) for p in sample),
            "`bc.isfile(p)` x 2000": lambda bc: sum(bc.isfile(p) for p in sample),
            "`bc.isdir(d)` x 2000": lambda bc: sum(bc.isdir(p.rsplit("/", 1)[0]) for p in sample),
            "`bc.listdir(d)` x 200": lambda bc: sum(
                len(bc.listdir(f"d{i % 20:02d}/s{i % 10}")) for i in range(200)),
            "`bc.open(p).read()` x 2000": lambda bc: sum(len(bc.open(p).read()) for p in sample),
            "`index.lookup_file(p)` x 2000": lambda bc: sum(
                bc.index.lookup_file(p).size for p in sample),
            "`index.listdir_infos(d)` x 200": lambda bc: sum(
                len(bc.index.listdir_infos(f"d{i % 20:02d}")) for i in range(200)),
            "`index.iter_all_fileinfos()`": lambda bc: sum(
                1 for _ in bc.index.iter_all_fileinfos()),
            "`index.iter_all_paths()`": lambda bc: sum(1 for _ in bc.index.iter_all_paths()),
            "`index.verify_integrity()`": lambda bc: bc.index.verify_integrity(),
            "`bc.verify_integrity()`": lambda bc: bc.verify_integrity(),
        }
        writes = {
            "add 2000 files (`bc[p] = d`)": lambda m, bc: [
                bc.__setitem__(f"new/{i}", b"y" * 100) for i in range(2000)],
            "2000 new files through `bc.open(p, 'wb')`": lambda m, bc: [
                _write(bc, f"w/{i}") for i in range(2000)],
            "`del bc[p]` x 2000": lambda m, bc: [bc.__delitem__(p) for p in some],
            # Within its directory: Python barecat's rename_file needs the new
            # parent to exist (it reports a missing one as FileExistsBarecatError).
            "`index.rename_file` x 500": lambda m, bc: [
                bc.index.rename_file(p, p[:-4] + ".bin") for p in some[:500]],
            "`index.rename_dir` (1000 files)": lambda m, bc: bc.index.rename_dir("d05", "e05"),
            "`index.remove_recursively` (1000 files)": lambda m, bc:
                bc.index.remove_recursively("d06"),
            "`index.chmod` x 2000": lambda m, bc: [bc.index.chmod(p, 0o600) for p in some],
            "`index.update_mtime` x 2000": lambda m, bc: [
                bc.index.update_mtime(p, 10**9) for p in some],
            "`defrag()` after deleting 1 file in 3": lambda m, bc: (
                [bc.__delitem__(p) for p in paths[::3]], commit(m, bc), bc.defrag()),
        }
        results = []
        # `len(bc)` right after opening, once per opened archive: 20 µs, too short
        # to time once, so each round is 200 opens, `len` alone timed in each.
        t = {barecat: [], barecat_rs: []}
        for r in range(a.rounds):
            for m in ((barecat, barecat_rs) if r % 2 else (barecat_rs, barecat)):
                spent = 0.0
                for _ in range(200):
                    with m.Barecat(master[m]) as bc:
                        s = time.perf_counter()
                        len(bc)
                        spent += time.perf_counter() - s
                t[m].append(spent / 200)
        results.append(("`len(bc)` right after opening (each of 200 opens)", t))
        for name, f in reads.items():
            t = {barecat: [], barecat_rs: []}
            for r in range(a.rounds):
                for m in ((barecat, barecat_rs) if r % 2 else (barecat_rs, barecat)):
                    with m.Barecat(master[m]) as bc:
                        s = time.perf_counter()
                        f(bc)
                        t[m].append(time.perf_counter() - s)
            results.append((name, t))
        for name, f in writes.items():
            t = {barecat: [], barecat_rs: []}
            for r in range(a.rounds):
                for m in ((barecat, barecat_rs) if r % 2 else (barecat_rs, barecat)):
                    path = copy(m)
                    s = time.perf_counter()
                    with m.Barecat(path, readonly=False) as bc:
                        f(m, bc)
                    t[m].append(time.perf_counter() - s)
            results.append((name, t))
        print(f"{a.files} files, {a.rounds} rounds, medians")
        print("| operation | Python barecat 0.3.1 | barecat_rs | ratio |")
        print("|---|---:|---:|---:|")
        def show(sec):
            return f"{sec * 1e6:.1f} µs" if sec < 1e-3 else f"{sec * 1000:.2f} ms"

        for name, t in results:
            py, rs = statistics.median(t[barecat]), statistics.median(t[barecat_rs])
            print(f"| {name} | {show(py)} | {show(rs)} | {py / rs:.2f}× |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _write(bc, path):
    with bc.open(path, "wb") as f:
        f.write(b"z" * 300)


if __name__ == "__main__":
    main()
