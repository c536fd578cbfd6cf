#!/usr/bin/env python3
"""Remote archives: reading archives from a loopback HTTP server, side by
side with curl, plain ranged GETs and ratarmount over fsspec HTTP, in one run.

usage: bench/remote.py [--scale S] [--rounds N] [--server nginx|python] [--only images,reads,counts]

Data: the `images` set (100k files of ~50 KB, 5 GB at S = 1) in an archive of 1 GB
shards, and the `tiny` set (1M files of ~700 B at S = 1) as an archive and as a tar,
served from bench/work/remote/ by nginx (Debian's, started here on 127.0.0.1 with a
config of our own; `--server python` or no nginx: tests/py/range_server.py).

Measured, in one run:
  * extract and verify of `images` over HTTP against `curl` downloading the shards to
    /dev/null. Target: each within 1.5x of curl (median ratio <= 1.5). Beside them,
    the extract of the same archive from the local disk: writing 100k files costs
    more than receiving their bytes, and that floor is reported with the target.
  * 10,000 random reads of `tiny` files from a warm client: barecat_rs.Barecat(URL)
    with the index in memory, against plain ranged GETs of the same files at their
    known shard offsets (bench/remote_reads.py, one keep-alive connection each).
    Target: at least 80% of the plain rate (ours/plain time <= 1.25).
  * Exact request counts (`--stats`), not times: opening `tiny` with a fresh
    sidecar (target <= 3 requests) and a cold lookup + read of one file (target
    <= 1 index + 1 shard request), and the same without the sidecar.
  * Bytes transferred to read one file of `tiny`: ours, against ratarmount 1.x over
    fsspec HTTP on `tiny` as a tar (it must build its index of the tar first).
  * Peak RSS of extract and verify (GNU time), against the bounds: the read-ahead
    budget (BARECAT_REMOTE_READAHEAD, 64 MiB per shard) and the page caches.

Peers: curl and nginx (apt), ratarmount, fsspec and aiohttp (pip, bench/setup.sh).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from harness import BENCH, DATA, ROOT, VENV, WORK, Case, ours, report, run, sh

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--server", choices=["nginx", "python"], default=None)
ap.add_argument("--only", default="images,reads,counts", help="the tables to measure (default: all)")
a = ap.parse_args()

REMOTE = WORK / "remote"
REMOTE.mkdir(parents=True, exist_ok=True)
RANGE_SERVER = ROOT / "tests" / "py" / "range_server.py"


def tree(name, scale):
    sh(f"python3 gen_dataset.py {name} --scale {scale:g} > /dev/null", cwd=str(BENCH))
    return DATA / (name if scale == 1 else f"{name}@{scale:g}")


def once(path, build):
    if not Path(path).exists():
        sh(build)


# ------------------------------------------------------------------ data
images = tree("images", a.scale)
tiny = tree("tiny", a.scale)
img_bc, tiny_bc, tiny_tar = REMOTE / "images.barecat", REMOTE / "tiny.barecat", REMOTE / "tiny.tar"
once(img_bc, f"{ours('barecat-create')} -q -s 1G -C {images.parent} {img_bc} {images.name}")
once(tiny_bc, f"{ours('barecat-create')} -q -C {tiny.parent} {tiny_bc} {tiny.name}")
once(tiny_tar, f"tar -cf {tiny_tar} -C {tiny.parent} {tiny.name}")
listing = REMOTE / "tiny.tsv"
once(listing, f"{ours('barecat-index-to-csv')} {tiny_bc} | tail -n +2 | tr -d '\"\\r' | "
              f"cut -d, -f1-4 | tr , '\\t' > {listing}")


# ------------------------------------------------------------------ servers
def start_python_server():
    p = subprocess.Popen([sys.executable, str(RANGE_SERVER), str(REMOTE), "--lifetime", "86400"],
                         stdout=subprocess.PIPE, text=True)
    port = int(p.stdout.readline().split()[1])
    return p, port


def start_nginx():
    port = 18000 + os.getpid() % 1000
    conf = REMOTE / "nginx.conf"
    conf.write_text(f"""
daemon off;
worker_processes 2;
pid {REMOTE}/nginx.pid;
error_log {REMOTE}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    server {{
        listen 127.0.0.1:{port};
        root {REMOTE};
        location / {{ }}
    }}
}}
""")
    p = subprocess.Popen(["nginx", "-c", str(conf), "-p", str(REMOTE)])
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/tiny.barecat", timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    return p, port


use_nginx = a.server == "nginx" or (a.server is None and shutil.which("nginx"))
fast, fast_port = start_nginx() if use_nginx else start_python_server()
counting, count_port = start_python_server()
server_name = "nginx" if use_nginx else "tests/py/range_server.py"
base = f"http://127.0.0.1:{fast_port}"
cbase = f"http://127.0.0.1:{count_port}"


def ctl(path):
    req = urllib.request.Request(f"{cbase}/__ctl/{path}", method="POST", data=b"")
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read() or b"null")


try:
    ONLY = set(a.only.split(","))
    # -------------------------------------------------- extract and verify vs curl
    shards = sorted(p.name for p in REMOTE.glob("images.barecat-shard-*"))
    if "images" in ONLY:
        curl = "curl -sf " + " ".join(f"-o /dev/null {base}/{s}" for s in shards)
        out = WORK / "remote-extract"
        cases = [
            Case("curl (shards to /dev/null)", curl),
            Case("barecat-extract (ours)", f"{ours('barecat-extract')} -q {base}/images.barecat -C {out}",
                 prepare=f"rm -rf {out}; mkdir -p {out}"),
            Case("barecat-verify (ours)", f"{ours('barecat-verify')} -q {base}/images.barecat"),
            Case("barecat-extract of the local archive", f"{ours('barecat-extract')} -q {REMOTE}/images.barecat -C {out}",
                 prepare=f"rm -rf {out}; mkdir -p {out}",
                 note="the same archive from the local disk: what writing the 100k files costs"),
        ]
        res = run("remote-images", cases, rounds=a.rounds)
        sh(f"rm -rf {out}")
        rss = {c.label: max(s[1] for s in c.samples) / 1024 for c in cases}
        report(res, reference=cases[0].label, targets=[
            ("extract within 1.5x of curl", cases[1].label, cases[0].label, 1.5, "le"),
            ("verify within 1.5x of curl", cases[2].label, cases[0].label, 1.5, "le"),
            ("bound: the local extract within 1.5x of curl", cases[3].label, cases[0].label, 1.5, "le"),
            ("extract within 1.5x of the local extract", cases[1].label, cases[3].label, 1.5, "le"),
        ], extra=(f"Server: {server_name} on 127.0.0.1. `images`: {len(shards)} shard(s). "
                  f"Peak RSS: extract {rss[cases[1].label]:.0f} MB, verify {rss[cases[2].label]:.0f} MB "
                  f"(bounds: 64 MiB of read-ahead per shard being read, SQLite's and our page "
                  f"caches, the index downloaded when it is at most 32 MiB)."))

    # -------------------------------------------------- random reads, warm client
    if "reads" in ONLY:
        reads = BENCH / "remote_reads.py"
        n = 10000
        env = "BARECAT_REMOTE_DOWNLOAD_LIMIT=4G"
        curl_cfg = REMOTE / "reads.curl"
        sh(f"python3 {reads} curlconfig {base}/tiny.barecat {listing} {n} 1 > {curl_cfg}")
        cases = [
            Case("curl, ranged GETs of known offsets", f"curl -sf --config {curl_cfg}",
                 note="100 warm-up reads included, one process, one kept-alive connection"),
            Case("python http.client, ranged GETs of known offsets",
                 f"{VENV}/python {reads} plain {base}/tiny.barecat {listing} {n} 1", inner=True),
            Case("barecat_rs.Barecat(url)[path] (ours)",
                 f"{env} {VENV}/python {reads} ours {base}/tiny.barecat {listing} {n} 1", inner=True),
        ]
        res = run("remote-random-reads", cases, rounds=a.rounds)
        report(res, reference=cases[0].label, targets=[
            ("at least 80% of the rate of curl's ranged GETs", cases[2].label, cases[0].label, 1.25, "le"),
            ("at least 80% of the rate of python's ranged GETs", cases[2].label, cases[1].label, 1.25, "le"),
        ], extra=(f"{n} random files of `tiny`, the same ones on every side; server: {server_name}. "
                  f"Ours and python's time the {n} reads only (after 100 warm-up reads; ours with "
                  f"the index in memory); curl's wall time includes its start and the 100 warm-up "
                  f"reads (which favours ours slightly)."))

    # -------------------------------------------------- counts and bytes (exact)
    if "counts" not in ONLY:
        raise SystemExit(0)

    def stats_of(args, env=None):
        p = subprocess.run([ours("barecat")] + args, capture_output=True,
                           env=dict(os.environ, **(env or {})))
        err = p.stderr.decode(errors="replace")
        if p.returncode != 0:
            raise SystemExit(f"{args}: {err}")
        st = {}
        for line in err.splitlines():
            if "remote " in line and ": " in line:
                kind, rest = line.split("remote ", 1)[1].split(": ", 1)
                nums = [int(x) for x in rest.replace(",", "").split() if x.isdigit()]
                st[kind] = nums[:2]
        return st

    rows = listing.read_text().splitlines()
    path = rows[12345 % len(rows)].split("\t")[0]
    lines = []
    ctl("reset")
    with_sc = stats_of(["cat", "--stats", "--index-mode", "range", f"{cbase}/tiny.barecat", path])
    served = ctl("bytes")
    lines.append(f"* cold open + lookup + read of `{path}` with the sidecar (`--index-mode range`): "
                 f"sidecar {with_sc['sidecar'][0]}, index {with_sc['index'][0]}, shards "
                 f"{with_sc['shards'][0]} requests; {with_sc['total'][1]:,} bytes "
                 f"(server: {served:,})")
    side = REMOTE / "tiny.barecat-btreemeta"
    side.rename(side.with_suffix(".away"))
    try:
        no_sc = stats_of(["cat", "--stats", "--index-mode", "range", f"{cbase}/tiny.barecat", path])
    finally:
        side.with_suffix(".away").rename(side)
    lines.append(f"* the same without the sidecar: index {no_sc['index'][0]}, shards "
                 f"{no_sc['shards'][0]} requests; {no_sc['total'][1]:,} bytes")
    # Opening alone: the library counts it apart (bench/remote_reads.py does not).
    code = ("import barecat_rs,sys; b=barecat_rs.remote_stats(); "
            "bc=barecat_rs.Barecat(sys.argv[1]); a=barecat_rs.remote_stats(); "
            "print(sum(a[k]['requests']-b[k]['requests'] for k in a))")
    opened = subprocess.run([f"{VENV}/python", "-c", code, f"{cbase}/tiny.barecat"],
                            capture_output=True, text=True,
                            env=dict(os.environ, BARECAT_REMOTE_DOWNLOAD_LIMIT="0"))
    lines.append(f"* opening alone (range mode): {opened.stdout.strip() or opened.stderr.strip()} requests")
    # ratarmount over fsspec HTTP, on the same files as a tar.
    rat = VENV / "ratarmount"
    if rat.exists():
        mnt = WORK / "remote-ratarmount"
        mnt.mkdir(exist_ok=True)
        # Its index of the tar is cached in ~/.cache/ratarmount: removed, so that
        # the run builds it (as a first reader of the archive does).
        sh("rm -f ~/.cache/ratarmount/*tiny.tar* ~/.ratarmount/*tiny.tar*", check=False)
        ctl("reset")
        t0 = time.time()
        # fsspec keeps threads: ratarmount stays in the foreground (-f).
        proc = subprocess.Popen([str(rat), "-f", f"{cbase}/tiny.tar", str(mnt)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        inner = mnt / path  # the tar holds the same relative paths
        deadline = time.time() + 7200
        while not inner.exists():
            if proc.poll() is not None or time.time() > deadline:
                raise SystemExit("ratarmount did not mount the tar")
            time.sleep(0.2)
        data = inner.read_bytes()
        subprocess.run(["fusermount3", "-u", str(mnt)], check=False)
        proc.wait(timeout=120)
        rb = ctl("bytes")
        lines.append(f"* ratarmount over fsspec HTTP, the same file from `tiny.tar` "
                     f"({tiny_tar.stat().st_size:,} bytes): {rb:,} bytes transferred, "
                     f"{time.time() - t0:.1f} s ({len(data)} bytes read); ours / ratarmount = "
                     f"{with_sc['total'][1] / max(rb, 1):.5f}")
    else:
        lines.append("* ratarmount: not installed (bench/setup.sh installs it)")
    md = ("# remote-counts\n\nExact counts from `--stats` (and the server's own byte counter), "
          "`tiny` set, tests/py/range_server.py on 127.0.0.1.\n\n" + "\n".join(lines) + "\n")
    (BENCH / "results").mkdir(exist_ok=True)
    (BENCH / "results" / "remote-counts.md").write_text(md)
    print(md)
finally:
    for p in (fast, counting):
        p.terminate()
        p.wait(timeout=30)
