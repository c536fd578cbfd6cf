#!/usr/bin/env python3
"""Scale-out ingest with Dask: build one barecat archive on many machines.

Each Dask task packs its share of the input files into a part archive of its own
(no coordination between writers), then the parts are joined into OUT:

* without copying (default): OUT's shards are symbolic links to the parts' shards
  and only the indexes are merged (barecat-merge-symlink); keep the parts where
  they are and do not modify them afterwards;
* or by copying (--copy): one self-contained archive (barecat-merge).

    python examples/dask_ingest.py SRC_DIR OUT [--parts N] [--scheduler ADDRESS] [--copy]

Without --scheduler a LocalCluster of 2 worker processes runs here. With
--scheduler tcp://HOST:8786 the workers of that cluster write the parts: SRC_DIR
and the directory of OUT must then be on a file system that every worker sees
(the parts go to OUT-parts/). Paths in the archive are relative to SRC_DIR.
"""
import argparse
import os
import sys
import time


def list_files(src):
    """Every regular file below `src`, as sorted paths relative to it."""
    out = []
    for root, dirs, files in os.walk(src):
        dirs.sort()
        rel = os.path.relpath(root, src)
        for name in sorted(files):
            out.append(name if rel == "." else f"{rel}/{name}")
    return out


def write_part(part, src, paths):
    """Pack `paths` (relative to `src`) into the new archive `part`; runs on a
    worker. Returns (files, bytes)."""
    import barecat_rs

    n = size = 0
    with barecat_rs.Barecat(part, readonly=False, overwrite=True) as bc:
        with bc.bulk():
            for rel in paths:
                bc.add_by_path(os.path.join(src, rel), rel)
                n += 1
                size += os.path.getsize(os.path.join(src, rel))
    return n, size


def ingest(client, src, out, parts, copy=False):
    """Write `parts` part archives on the cluster of `client`, then join them into
    `out`. Returns a summary dict."""
    import barecat_rs

    src = os.path.abspath(src)
    out = os.path.abspath(out)
    files = list_files(src)
    parts = max(1, min(parts, len(files)))
    step = -(-len(files) // parts)
    shares = [files[i * step:(i + 1) * step] for i in range(parts)]
    part_dir = out + "-parts"
    os.makedirs(part_dir, exist_ok=True)
    part_paths = [os.path.join(part_dir, f"part-{i:05d}.barecat") for i in range(parts)]
    futures = client.map(write_part, part_paths, [src] * parts, shares, pure=False)
    written = client.gather(futures)
    join = barecat_rs.merge if copy else barecat_rs.merge_symlink
    report = join(out, part_paths, overwrite=True)
    return {
        "files": sum(n for n, _ in written),
        "bytes": sum(b for _, b in written),
        "parts": parts,
        "joined": "merge" if copy else "merge_symlink",
        "merge": report,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", help="directory to pack")
    ap.add_argument("out", help="archive to create (replaced if it exists)")
    ap.add_argument("--parts", type=int, default=8, help="part archives (tasks) to write")
    ap.add_argument("--scheduler", help="address of a running Dask scheduler")
    ap.add_argument("--workers", type=int, default=2, help="local worker processes")
    ap.add_argument("--copy", action="store_true", help="copy the parts into OUT (merge)")
    args = ap.parse_args(argv)

    from dask.distributed import Client, LocalCluster

    start = time.time()
    if args.scheduler:
        client = Client(args.scheduler)
        cluster = None
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        summary = ingest(client, args.src, args.out, args.parts, copy=args.copy)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    print(f"{summary['files']} files ({summary['bytes']} bytes) in {summary['parts']} parts, "
          f"joined by {summary['joined']} into {args.out} in {time.time() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
