#!/usr/bin/env python3
"""Writes through file objects (`bc.open(path, mode)`): barecat_rs against Python
barecat 0.3.1, in the same interpreter (which must have both installed), each case
on a fresh archive in a temporary directory, the archive's close (the final commit)
included in the time. Prints the median of each case over the rounds and the ratio
of the medians (Python / barecat_rs: above 1 is faster). barecat_rs syncs the shard
bytes before it commits (every few seconds and at close); Python barecat never
syncs, so its data may still be in the page cache when its clock stops: the last
column adds an `os.sync()` to Python's time, for a like-for-like comparison.

Cases:
  small     N new small files (~700 B): `with bc.open(p, 'wb') as f: f.write(data)`
  large     a few large new files written in 1 MiB chunks
  rewrite   `r+b` of existing 4 KiB files: seek, overwrite 64 bytes, close
  rewrite-large  `r+b` of existing 16 MiB files: overwrite 4 KiB in the middle

For `large`, a floor is timed in the same rounds: the same bytes written to one
plain file in the same pieces, without a sync (Python barecat / floor is the largest
ratio any implementation could reach), and the same followed by an fdatasync (the
least a writer pays that makes its bytes durable before it commits, as barecat_rs
does).

usage: python_fileobj.py [--rounds 5] [--small 20000] [--large 4] [--large-mb 32]
                         [--rewrite 2000] [--dir DIR]
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time


def small_files(n):
    pool = bytes(range(256)) * 16
    return [(f"part_{i % 10:02d}/class_{(i // 10) % 100:03d}/item_{i:07d}.txt",
             i.to_bytes(8, "little") + pool[i % 1000:i % 1000 + 400 + i % 600]) for i in range(n)]


def timed_close(bc, impl, t):
    """Close the archive and return the time since `t`, and since `t` after an
    os.sync() (for Python barecat, which does not sync)."""
    bc.close()
    done = time.perf_counter() - t
    os.sync()
    return done, time.perf_counter() - t


def make(impl, path, prefill=None):
    bc = impl.Barecat(str(path), readonly=False)
    if prefill:
        for p, d in prefill:
            bc[p] = d
        # The prefilled files are committed (and synced) before the clock starts.
        if impl.__name__ == "barecat_rs":
            bc.commit()
        else:
            bc.index.conn.commit()
            bc.sharder.shard_files[-1].flush()
    os.sync()
    return bc


def case_small(impl, path, args):
    files = small_files(args.small)
    bc = make(impl, path)
    t = time.perf_counter()
    for p, d in files:
        with bc.open(p, "wb") as f:
            f.write(d)
    return timed_close(bc, impl, t)


def case_large(impl, path, args):
    chunk = os.urandom(1 << 20)
    bc = make(impl, path)
    t = time.perf_counter()
    for i in range(args.large):
        with bc.open(f"large/{i}.bin", "wb") as f:
            for _ in range(args.large_mb):
                f.write(chunk)
    return timed_close(bc, impl, t)


def case_rewrite(impl, path, args):
    pre = [(f"r/{i:06d}", os.urandom(4096)) for i in range(args.rewrite)]
    bc = make(impl, path, pre)
    patch = b"P" * 64
    t = time.perf_counter()
    for i, (p, _) in enumerate(pre):
        with bc.open(p, "r+b") as f:
            f.seek(i % 4000)
            f.write(patch)
    return timed_close(bc, impl, t)


def case_rewrite_large(impl, path, args):
    pre = [(f"rl/{i}", os.urandom(16 << 20)) for i in range(4)]
    bc = make(impl, path, pre)
    del pre
    patch = b"Q" * 4096
    t = time.perf_counter()
    for i in range(4):
        with bc.open(f"rl/{i}", "r+b") as f:
            f.seek(8 << 20)
            f.write(patch)
    return timed_close(bc, impl, t)


def floor_large(path, args):
    """The bytes of `case_large` written to one plain file in the same pieces,
    without a sync: what any implementation pays to put them in the page cache
    (Python barecat's own measure of done)."""
    chunk = os.urandom(1 << 20)
    t = time.perf_counter()
    with open(path, "wb") as f:
        for i in range(args.large):
            for _ in range(args.large_mb):
                f.write(chunk)
    return time.perf_counter() - t


def floor_large_synced(path, args):
    """`floor_large` followed by an fdatasync: what a writer that makes its data
    durable before it commits (barecat_rs) pays at least."""
    t = time.perf_counter()
    floor_large(path, args)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
    finally:
        os.close(fd)
    return time.perf_counter() - t


FLOORS = {"large": (floor_large, floor_large_synced)}


CASES = {
    "small": case_small,
    "large": case_large,
    "rewrite": case_rewrite,
    "rewrite-large": case_rewrite_large,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--small", type=int, default=20000)
    ap.add_argument("--large", type=int, default=4)
    ap.add_argument("--large-mb", type=int, default=32)
    ap.add_argument("--rewrite", type=int, default=2000)
    ap.add_argument("--dir", default=None, help="where the temporary archives go")
    ap.add_argument("cases", nargs="*", default=list(CASES))
    args = ap.parse_args()

    import barecat
    import barecat_rs

    print(f"barecat {getattr(barecat, '__version__', '?')}, barecat_rs {barecat_rs.__version__}, "
          f"{args.rounds} rounds", file=sys.stderr)
    rows = []
    for name in args.cases:
        times = {"barecat_rs": [], "barecat": [], "barecat+sync": [], "floor": [],
                 "floor+sync": []}
        for r in range(args.rounds):
            # Alternate which goes first, so that neither always gets the warmer cache.
            order = [barecat_rs, barecat] if r % 2 == 0 else [barecat, barecat_rs]
            for impl in order:
                d = tempfile.mkdtemp(prefix="fileobj-bench-", dir=args.dir)
                try:
                    t, t_sync = CASES[name](impl, os.path.join(d, "a.barecat"), args)
                    times[impl.__name__].append(t)
                    if impl is barecat:
                        times["barecat+sync"].append(t_sync)
                finally:
                    shutil.rmtree(d)
            if name in FLOORS:
                d = tempfile.mkdtemp(prefix="fileobj-bench-", dir=args.dir)
                try:
                    plain, synced = FLOORS[name]
                    times["floor"].append(plain(os.path.join(d, "plain"), args))
                    times["floor+sync"].append(synced(os.path.join(d, "synced"), args))
                finally:
                    shutil.rmtree(d)
        ours = statistics.median(times["barecat_rs"])
        theirs = statistics.median(times["barecat"])
        synced = statistics.median(times["barecat+sync"])
        rows.append((name, ours, theirs, theirs / ours, synced / ours))
        print(f"{name:14} barecat_rs {ours:7.3f} s   Python barecat {theirs:7.3f} s "
              f"({theirs / ours:5.2f}x)   Python barecat + sync {synced:7.3f} s "
              f"({synced / ours:5.2f}x)", flush=True)
        if times["floor"]:
            floor = statistics.median(times["floor"])
            floor_sync = statistics.median(times["floor+sync"])
            print(f"{'':14} floor (plain file, same pieces, no sync) {floor:7.3f} s: "
                  f"Python barecat / floor {theirs / floor:5.2f}x; with fdatasync "
                  f"{floor_sync:7.3f} s: Python barecat / that {theirs / floor_sync:5.2f}x, "
                  f"barecat_rs / that {ours / floor_sync:5.2f}", flush=True)
    return rows


if __name__ == "__main__":
    main()
