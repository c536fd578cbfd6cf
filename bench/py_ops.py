#!/usr/bin/env python3
"""One measured operation of bench/python.py, run in a fresh interpreter. Prints
"elapsed SECONDS" (the operation only, not the interpreter's start-up) as the last
line of stderr, and a checksum of what it read on stdout.

usage: py_ops.py OP ARGS...
  get-ours ARCH PATHS          barecat_rs: bc[path] for every path, one thread
  get-python ARCH PATHS        Python barecat 0.3.1: bc[path]
  get-cython ARCH PATHS        barecat-cython 0.0.2: BarecatMmapCython(ARCH).read(path)
  open-loose TREE PATHS        open(TREE/path, 'rb').read()
  many-ours ARCH PATHS THREADS barecat_rs: bc.read_many(paths, threads=THREADS)
  gather-ours ARCH INDICES     barecat_rs: Records(ARCH).gather(indices) over the
                               archive's record table (memoryviews, no copy)
  gather-warm ARCH INDICES     barecat_rs: the same gather a second time in the same
                               process (the pages of the mapping already touched):
                               what a long-lived data loader sees
  lookup-floor ARCH PATHS      Python's sqlite3: the row of every path (`SELECT shard,
                               offset, size, crc32c FROM files WHERE path = ?`), no
                               read: the SQLite lookup alone, a floor of bc[path]
  touch-floor ARCH INDICES     one byte of each record read through a fresh memory
                               map of the shards (first touch of each page): the
                               page-fault floor of a zero-copy gather in a new process
  read-floor ARCH INDICES      every record's bytes through a memory map of the shards
                               whose pages were touched in an untimed first pass:
                               memoryview slices and the same checksum as the others
                               (the floor of the consumer's loop over a warm map)
  write-ours OUT N             barecat_rs: bc[path] = data for N small files
  write-python OUT N           Python barecat 0.3.1: the same
  import-ours                  import barecat_rs
"""
import sys
import time
import zlib


def paths_of(f):
    with open(f) as fh:
        return fh.read().split("\n")[:-1]


def small_files(n):
    """N (path, ~700 B content) pairs, the shape of the `tiny` set."""
    pool = bytes(range(256)) * 16
    return [(f"part_{i % 10:02d}/class_{(i // 10) % 100:03d}/item_{i:07d}.txt",
             i.to_bytes(8, "little") + pool[i % 1000:i % 1000 + 400 + i % 600]) for i in range(n)]


def main():
    op, args = sys.argv[1], sys.argv[2:]
    acc = 0
    if op == "import-ours":
        t = time.perf_counter()
        import barecat_rs  # noqa: F401

        elapsed = time.perf_counter() - t
    elif op.startswith("write-"):
        out, n = args[0], int(args[1])
        items = small_files(n)
        if op == "write-ours":
            import barecat_rs as mod
        else:
            import barecat as mod
        t = time.perf_counter()
        with mod.Barecat(out, readonly=False, overwrite=True) as bc:
            for p, d in items:
                bc[p] = d
        elapsed = time.perf_counter() - t
    else:
        target, paths = args[0], paths_of(args[1])
        if op == "get-ours":
            import barecat_rs

            bc = barecat_rs.Barecat(target)
            get = bc.__getitem__
        elif op == "get-python":
            import barecat

            bc = barecat.Barecat(target)
            get = bc.__getitem__
        elif op == "get-cython":
            # BarecatCython.read fails with NumPy 2 (it uses np.NPY_OWNDATA); the
            # memory-mapped reader works and copies nothing.
            from barecat_cython import BarecatMmapCython

            get = BarecatMmapCython(target).read
        elif op == "open-loose":
            def get(p, root=target + "/"):
                with open(root + p, "rb") as f:
                    return f.read()
        elif op == "gather-ours":
            import barecat_rs

            r = barecat_rs.Records(target)
            indices = [int(x) for x in paths]
            t = time.perf_counter()
            for v in r.gather(indices):
                acc = zlib.adler32(v, acc)
            elapsed = time.perf_counter() - t
            get = None
        elif op == "gather-warm":
            import barecat_rs

            r = barecat_rs.Records(target)
            indices = [int(x) for x in paths]
            for v in r.gather(indices):
                acc = zlib.adler32(v, acc)
            t = time.perf_counter()
            for v in r.gather(indices):
                acc = zlib.adler32(v, acc)
            elapsed = time.perf_counter() - t
            get = None
        elif op == "lookup-floor":
            import sqlite3

            con = sqlite3.connect(f"file:{target}?mode=ro", uri=True)
            q = "SELECT shard, offset, size, crc32c FROM files WHERE path = ?"

            def get(p, ex=con.execute):
                return ex(q, (p,)).fetchone()[2].to_bytes(8, "little")
        elif op in ("touch-floor", "read-floor"):
            import glob
            import mmap
            import sqlite3

            # Record i of the table is the i-th path in path order (as bench/python.py
            # wrote the indices): its shard and offset, looked up before timing.
            con = sqlite3.connect(f"file:{target}?mode=ro", uri=True)
            wanted = sorted({int(x) for x in paths})
            place = {}
            rows = con.execute("SELECT shard, offset, size FROM files ORDER BY path")
            k = 0
            for i, (shard, off, size) in enumerate(rows):
                if k < len(wanted) and wanted[k] == i:
                    place[i] = (shard, off, size)
                    k += 1
            spots = [place[int(x)] for x in paths]
            maps = []
            for f in sorted(glob.glob(glob.escape(target) + "-shard-*")):
                with open(f, "rb") as fh:
                    maps.append(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
            if op == "touch-floor":
                t = time.perf_counter()
                for shard, off, _ in spots:
                    acc += maps[shard][off]
                elapsed = time.perf_counter() - t
            else:
                views = [memoryview(m) for m in maps]
                for shard, off, size in spots:
                    acc = zlib.adler32(views[shard][off:off + size], acc)
                t = time.perf_counter()
                for shard, off, size in spots:
                    acc = zlib.adler32(views[shard][off:off + size], acc)
                elapsed = time.perf_counter() - t
                del views
            get = None
        elif op == "many-ours":
            import barecat_rs

            bc = barecat_rs.Barecat(target)
            threads = int(args[2])
            t = time.perf_counter()
            for d in bc.read_many(paths, threads=threads):
                acc = zlib.adler32(d, acc)
            elapsed = time.perf_counter() - t
            get = None
        else:
            raise SystemExit(f"unknown op {op}")
        if get is not None:
            t = time.perf_counter()
            for p in paths:
                acc = zlib.adler32(get(p), acc)
            elapsed = time.perf_counter() - t
    print(acc)
    print(f"elapsed {elapsed:.6f}", file=sys.stderr)


if __name__ == "__main__":
    main()
