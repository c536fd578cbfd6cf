#!/usr/bin/env python3
"""Random reads from a warm client, for bench/remote.py.

    remote_reads.py ours URL LIST N SEED      barecat_rs.Barecat(URL)[path] for N random paths
    remote_reads.py plain URL LIST N SEED     the same files with plain ranged GETs of
                                              their known shard, offset and size
    remote_reads.py curlconfig URL LIST N SEED   print a curl --config file of those GETs
                                              (one `next` block per file: curl reuses
                                              its connection)

LIST has one `path<TAB>shard<TAB>offset<TAB>size` line per file (barecat-index-to-csv
turned into tabs). Both sides read the same N files in the same order over one
keep-alive connection after a warm-up (ours: the index in memory, its connection
open; plain: its connection open), check each length, and print `elapsed SECONDS`
of the N reads as the last line of stderr.
"""
import http.client
import random
import sys
import time
import urllib.parse


def main():
    side, url, listing, n, seed = sys.argv[1:6]
    n, seed = int(n), int(seed)
    rows = []
    with open(listing) as f:
        for line in f:
            p, shard, off, size = line.rstrip("\n").split("\t")
            rows.append((p, int(shard), int(off), int(size)))
    rng = random.Random(seed)
    pick = [rows[rng.randrange(len(rows))] for _ in range(n)]
    warm = [rows[rng.randrange(len(rows))] for _ in range(100)]
    if side == "curlconfig":
        blocks = [f'url = "{url}-shard-{r[1]:05d}"\nrange = "{r[2]}-{r[2] + r[3] - 1}"\n'
                  f'output = "/dev/null"\n' for r in warm + pick if r[3] > 0]
        print("next\n".join(blocks), end="")
        return
    if side == "ours":
        import barecat_rs

        bc = barecat_rs.Barecat(url)
        for r in warm:
            assert len(bc[r[0]]) == r[3]
        t0 = time.perf_counter()
        for r in pick:
            if len(bc[r[0]]) != r[3]:
                raise SystemExit(f"{r[0]}: wrong length")
        dt = time.perf_counter() - t0
    else:
        u = urllib.parse.urlsplit(url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)

        def get(r):
            shard = f"{u.path}-shard-{r[1]:05d}"
            if r[3] == 0:
                return 0
            conn.request("GET", shard, headers={"Range": f"bytes={r[2]}-{r[2] + r[3] - 1}"})
            resp = conn.getresponse()
            body = resp.read()
            if resp.status != 206 or len(body) != r[3]:
                raise SystemExit(f"{shard}: status {resp.status}, {len(body)} bytes")
            return len(body)

        for r in warm:
            get(r)
        t0 = time.perf_counter()
        for r in pick:
            get(r)
        dt = time.perf_counter() - t0
    print(f"elapsed {dt:.6f}", file=sys.stderr)


if __name__ == "__main__":
    main()
