#!/usr/bin/env python3
"""Per-file cost and peak memory of every command from 100k to 10M files,
and `list -R`, `find`, `tree` against Python barecat's, in one run.

usage: bench/scale.py [--sizes 100k,1m,10m] [--rounds N] [--only NAME,...]
                      [--peer-timeout SECONDS] [--keep]

For each size N the archive is built once through the library from generated
contents (examples/gen_archive.rs: N files of 400-1000 bytes, 1000 per directory, no
file on disk), and, up to --tree-max files (default 1M), a tree of the same files on
disk (extracted from the archive) with a GNU tar of it, for the commands that read a
tree or a tar. Then every command runs `--rounds` times (ours and its peers
alternating), each with its inputs in the page cache; the report gives, per command
and size: the median time, the time per file, peak RSS, and their ratios to the
smallest size; the peers (Python barecat 0.3.1, GNU tar) side by side with the ratio
of their time to ours.

Skipped, and said so in the report:
  * commands that need the tree or the tar (create, from-tar, from-zip, extract, GNU
    tar) above --tree-max files: a 10M-file tree does not fit this machine's disk and
    inodes comfortably;
  * peers that do not finish within --peer-timeout seconds (default 300);
  * mount (FUSE: bench/mount.py) and records (a record store of its own:
    bench/records.py).

Targets:
  * `ls -R`: per-file cost at 1M and 10M within 1.2x of that at 100k, and at least
    5x faster than Python barecat's `list -R` at every size;
  * every command: peak RSS at the largest size within 1.3x of that at the smallest
    (to-zip excepted: it holds the zip's central directory, ~100 bytes a file);
  * `find`, `tree`, `list -R` at 1M: at least 10x faster than Python barecat's.

Results: bench/results/scale.md and scale.json. Needs the release binary
(cargo build --release --bin barecat --example gen_archive), GNU time, GNU tar and
.venv with Python barecat 0.3.1 (bench/setup.sh).
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import RELEASE, RESULTS, ROOT, VENV, WORK, machine, sh

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--sizes", default="100k,1m,10m")
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--only", default="", help="comma-separated command names (default: all)")
ap.add_argument("--peer-timeout", type=float, default=300)
ap.add_argument("--tree-max", default="1m", help="largest size with a tree and a tar on disk")
ap.add_argument("--keep", action="store_true",
                help="keep the trees, tars and zips of each size (bench/work/scale) for the next run")
ap.add_argument("--name", default="scale", help="name of the result files")
a = ap.parse_args()


def count(s):
    s = s.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(s[-1:], 1)
    return int(float(s.rstrip("km")) * mult)


SIZES = [count(s) for s in a.sizes.split(",")]
TREE_MAX = count(a.tree_max)
ONLY = {x for x in a.only.split(",") if x}
B = str(RELEASE / "barecat")
GEN = RELEASE / "examples" / "gen_archive"
PY = str(VENV / "barecat")
DIR = WORK / "scale"
DIR.mkdir(parents=True, exist_ok=True)


def label(n):
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k"


# ------------------------------------------------------------------------- inputs

def archive(n):
    p = DIR / f"a{label(n)}.barecat"
    if not p.exists():
        if not GEN.exists():
            sh("cargo build --release --quiet --example gen_archive", cwd=str(ROOT))
        sh(f"{GEN} {p} {n}")
    return p


def tree(n, arch):
    t = DIR / f"t{label(n)}"
    if not (t / ".complete").exists():
        sh(f"rm -rf {t} && mkdir -p {t} && {B} extract -q -C {t} {arch} && touch {t}/.complete")
    return t


def tarball(n, t):
    p = DIR / f"t{label(n)}.tar"
    if not p.exists():
        sh(f"cd {t} && tar cf {p}.tmp part_* && mv {p}.tmp {p}")
    return p


def zipfile(n, arch):
    p = DIR / f"z{label(n)}.zip"
    if not p.exists():
        sh(f"{B} to-zip -q {arch} {p}")
    return p


def shards(p):
    return " ".join(shlex.quote(str(s)) for s in sorted(p.parent.glob(p.name + "-shard-*")))


def warm_cmd(paths):
    return " ".join(f"cat {shlex.quote(str(p))} > /dev/null;" for p in paths)


# ------------------------------------------------------------------------- commands
# Each command: name, what it reads ("index", "data", "tree", "tar", "zip"), our
# command, the peers' commands, and an untimed preparation run before each
# measurement (removing the previous output, copying an archive to change).
# {A} archive, {T} tree, {TAR} tar, {ZIP} zip, {O} output path, {X} output dir.

def commands():
    q = "part_000/class_00/item_00000000.txt"
    return [
        # Looking inside.
        ("ls -R", "index", f"{B} ls -R {{A}}", {"python list -R": f"{PY} list -R {{A}}",
                                                "GNU tar tf": "tar tf {TAR}"}),
        ("ls -R --json", "index", f"{B} ls -R --json {{A}}", {}),
        ("ls -R --jsonl", "index", f"{B} ls -R --jsonl {{A}}",
         {"python list -R --jsonl": f"{PY} list -R --jsonl {{A}}"}),
        ("ls glob", "index", f"{B} ls {{A}} 'part_*/**/*.txt'", {}),
        ("ls -l dir", "index", f"{B} ls -l {{A}} part_000/class_00",
         {"python list -l": f"{PY} list -l {{A}} part_000/class_00"}),
        ("list -R", "index", f"{B} list -R {{A}}", {"python list -R": f"{PY} list -R {{A}}"}),
        ("list -l -R", "index", f"{B} list -l -R {{A}}",
         {"python list -l -R": f"{PY} list -l -R {{A}}"}),
        ("list glob", "index", f"{B} list {{A}} '**/*.txt'",
         {"python list glob": f"{PY} list {{A}} '**/*.txt'"}),
        ("find", "index", f"{B} find {{A}}", {"python find": f"{PY} find {{A}}"}),
        ("find -name", "index", f"{B} find {{A}} -name '*7.txt'",
         {"python find -name": f"{PY} find {{A}} -name '*7.txt'"}),
        ("find -path -type f", "index", f"{B} find {{A}} -path 'part_000/*' -type f",
         {"python find -path": f"{PY} find {{A}} -path 'part_000/*' -type f"}),
        ("tree", "index", f"{B} tree {{A}}", {"python tree": f"{PY} tree {{A}}"}),
        ("du", "index", f"{B} du {{A}}", {"python du": f"{PY} du {{A}}"}),
        ("du -a", "index", f"{B} du -a {{A}}", {"python du -a": f"{PY} du -a {{A}}"}),
        ("du -s", "index", f"{B} du -s {{A}}", {"python du -s": f"{PY} du -s {{A}}"}),
        ("to-ncdu-json", "index", f"{B} to-ncdu-json {{A}}",
         {"python to-ncdu-json": f"{PY} to-ncdu-json {{A}}"}),
        ("index-to-csv", "index", f"{B} index-to-csv {{A}}",
         {"python index-to-csv": f"{PY} index-to-csv {{A}}"}),
        ("cat one file", "index", f"{B} cat {{A}} {q}", {"python cat": f"{PY} cat {{A}} {q}"}),
        # Interactive programs: ncdu's first screen (the root, from the directory
        # statistics; --print-screen draws it as text without a terminal), and the
        # shell's find over the whole archive (streamed).
        ("ncdu first screen", "index", f"{B} ncdu --print-screen {{A}}", {}),
        ("shell -c find -name", "index", f"{B} shell {{A}} -c 'find / -name \"*.jpg\"'",
         {"python shell -c find": f"{PY} shell {{A}} -c 'find / -name \"*.jpg\"'"}),
        ("sidecar", "index", f"{B} sidecar -q {{A}}", {}),
        ("repair --no-trim", "index", f"{B} repair -q --no-trim {{A}}", {}),
        # Checking.
        ("verify", "data", f"{B} verify -q {{A}}", {"python verify": f"{PY} verify {{A}}"}),
        ("verify --quick", "index", f"{B} verify -q --quick {{A}}",
         {"python verify --quick": f"{PY} verify --quick {{A}}"}),
        # Getting data out.
        ("to-tar -", "data", f"{B} to-tar -q {{A}} - > /dev/null",
         {"python convert to tar": f"{PY} convert {{A}} {{O}}.tar"}),
        ("to-zip", "data", f"{B} to-zip -q {{A}} {{O}}.zip", {}),
        ("extract", "data", f"{B} extract -q -C {{X}} {{A}}",
         {"python extract": f"{PY} extract {{A}} -C {{X}}", "GNU tar xf": "tar xf {TAR} -C {X}"}),
        # Getting data in.
        ("create", "tree", f"cd {{T}} && {B} create -q -f {{O}}.barecat part_*",
         {"python create": f"cd {{T}} && {PY} create -f {{O}}.barecat part_*",
          "GNU tar cf": "cd {T} && tar cf {O}.tar part_*"}),
        ("from-tar", "tar", f"{B} from-tar -q {{TAR}} {{O}}.barecat",
         {"python convert from tar": f"{PY} convert {{TAR}} {{O}}.barecat"}),
        ("from-zip", "zip", f"{B} from-zip -q {{ZIP}} {{O}}.barecat", {}),
        # Maintenance.
        ("merge", "data", f"{B} merge -q -f -o {{O}}.barecat {{A}}",
         {"python merge": f"{PY} merge -f -o {{O}}.barecat {{A}}"}),
        ("merge-symlink", "index", f"{B} merge-symlink -q -f -o {{O}}.barecat {{A}}", {}),
        ("defrag", "copy", f"{B} defrag -q {{C}}", {"python defrag": f"{PY} defrag {{C}}"}),
        ("defrag --quick", "copy", f"{B} defrag -q --quick {{C}}", {}),
        ("defrag --dry-run", "copy", f"{B} defrag --dry-run {{C}}", {}),
        ("reshard", "copy", f"{B} reshard -q -s 64M {{C}}", {}),
    ]


# ------------------------------------------------------------------------- measuring

def measure(cmd, prepare="", warm="", timeout=None):
    """(seconds, peak RSS KB) of one run, or (None, None) when it timed out. `warm`
    is a shell command reading the inputs into the page cache (untimed)."""
    if prepare:
        subprocess.run(prepare, shell=True, check=True)
    subprocess.run("sync", shell=True, check=True)
    if warm:
        subprocess.run(warm, shell=True, check=True)
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        inner = cmd if timeout is None else f"timeout {timeout:g} bash -c {shlex.quote(cmd)}"
        argv = ["/usr/bin/time", "-o", tf.name, "-f", "%M", "bash", "-c", inner]
        t0 = time.perf_counter()
        p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - t0
        rss = [int(x) for x in tf.read().split() if x.strip().isdigit()]
    if p.returncode == 124 and timeout is not None:
        return None, None
    if p.returncode != 0:
        raise SystemExit(f"command failed ({p.returncode}): {cmd}\n"
                         f"{p.stderr.decode(errors='replace')[-2000:]}")
    return elapsed, (rss[-1] if rss else 0)


results = {}   # (command, label, size) -> {"s": [...], "rss": [...], "skip": reason}
cmds = [c for c in commands() if not ONLY or c[0] in ONLY]
for n in SIZES:
    arch = archive(n)
    have_tree = n <= TREE_MAX
    t = tree(n, arch) if have_tree else None
    tar = tarball(n, t) if have_tree else None
    zp = zipfile(n, arch) if have_tree else None
    out = DIR / f"out-{label(n)}"
    xdir = DIR / f"x-{label(n)}"
    copy = DIR / f"c-{label(n)}.barecat"
    clean = (f"rm -rf {out}.barecat {out}.barecat-* {out}.tar {out}.zip {xdir}; mkdir -p {xdir}")
    copy_prep = (f"rm -f {copy} {copy}-*; cp {arch} {copy}; "
                 f"for s in {arch}-shard-*; do cp \"$s\" \"{copy}-shard-${{s##*-shard-}}\"; done; "
                 f"{VENV}/python -c \"import sqlite3; c = sqlite3.connect('{copy}'); "
                 f"c.execute('PRAGMA recursive_triggers = ON'); "
                 f"c.execute('DELETE FROM files WHERE rowid % 10 = 3'); c.commit()\"")
    fmt = {"A": arch, "T": t, "TAR": tar, "ZIP": zp, "O": out, "X": xdir, "C": copy}
    print(f"== {label(n)} files: {arch}", file=sys.stderr)
    for name, reads, ours_cmd, peers in cmds:
        need_tree = reads in ("tree", "tar", "zip") or name == "extract"
        rows = [(name + " (ours)", ours_cmd, None)] + [(k, v, a.peer_timeout) for k, v in peers.items()]
        for lab, cmd, tmo in rows:
            key = (name, lab, n)
            needs = ("{T}" in cmd or "{TAR}" in cmd or "{ZIP}" in cmd or need_tree)
            if needs and not have_tree:
                results[key] = {"skip": f"needs a tree of {label(n)} files on disk "
                                        f"(above --tree-max {a.tree_max})"}
        # This machine drops idle page cache within minutes: the inputs are read
        # again before every run.
        warm = warm_cmd([arch] + (sorted(arch.parent.glob(arch.name + "-shard-*"))
                                  if reads in ("data", "copy") else []))
        if reads == "tar" and tar:
            warm = warm_cmd([tar])
        if reads == "zip" and zp:
            warm = warm_cmd([zp])
        if reads == "tree" and t:
            warm = f"tar cf - -C {t} . > /dev/null"
        prepare = copy_prep if reads == "copy" else clean
        for r in range(a.rounds):
            order = rows if r % 2 == 0 else list(reversed(rows))
            for lab, cmd, tmo in order:
                key = (name, lab, n)
                res = results.setdefault(key, {"s": [], "rss": []})
                if res.get("skip"):
                    continue
                c = cmd.format(**{k: v for k, v in fmt.items() if v is not None})
                s, rss = measure(c, prepare, warm, tmo)
                if s is None:
                    res["skip"] = f"did not finish within {a.peer_timeout:g} s"
                    continue
                res["s"].append(s)
                res["rss"].append(rss)
                res["cmd"] = c
                print(f"  {label(n):>4} {lab:<34} {s:9.3f} s {rss / 1024:8.1f} MB", file=sys.stderr)
    subprocess.run(f"rm -rf {out}.barecat {out}.barecat-* {out}.tar {out}.zip {xdir} {copy} {copy}-*",
                   shell=True, check=False)
    if have_tree and not a.keep:
        # The tree, tar and zip take more disk than the archive; rebuilt when needed.
        subprocess.run(f"rm -rf {t} {tar} {zp}", shell=True, check=False)


# ------------------------------------------------------------------------- report

def med(key):
    r = results.get(key, {})
    return statistics.median(r["s"]) if r.get("s") else None


def rss(key):
    r = results.get(key, {})
    return max(r["rss"]) / 1024 if r.get("rss") else None


base = SIZES[0]
lines = [f"### Per-file cost and memory from {label(SIZES[0])} to {label(SIZES[-1])} files",
         "",
         f"{a.rounds} rounds (ours and peers alternating), medians; {machine()}; inputs in the "
         f"page cache. µs/file = median / files; ×{label(base)} = that ratio to the same at "
         f"{label(base)} files; peers: their median ÷ ours.", ""]
verdicts = []
for name, reads, ours_cmd, peers in cmds:
    o = name + " (ours)"
    lines += [f"#### {name}", "",
              "| files | ours s | µs/file | ×" + label(base) + " | RSS MB | ×" + label(base) + " |"
              + "".join(f" {p} s | ÷ours |" for p in peers),
              "|---:|---:|---:|---:|---:|---:|" + "---:|---:|" * len(peers)]
    for n in SIZES:
        k = (name, o, n)
        if results.get(k, {}).get("skip"):
            lines.append(f"| {label(n)} | skipped: {results[k]['skip']} |||||" + "||" * len(peers))
            continue
        m, r = med(k), rss(k)
        if m is None:
            continue
        mb, rb = med((name, o, base)), rss((name, o, base))
        per = m / n * 1e6
        perb = mb / base * 1e6 if mb else None
        row = (f"| {label(n)} | {m:.3f} | {per:.2f} | {per / perb:.2f} | {r:.1f} | {r / rb:.2f} |"
               if perb and rb else f"| {label(n)} | {m:.3f} | {per:.2f} | | {r:.1f} | |")
        for p in peers:
            pk = (name, p, n)
            if results.get(pk, {}).get("skip"):
                row += f" {results[pk]['skip']} | |"
            elif med(pk) is not None:
                row += f" {med(pk):.3f} | {med(pk) / m:.1f} |"
            else:
                row += " | |"
        lines.append(row)
    lines.append("")
    sizes_run = [n for n in SIZES if med((name, o, n)) is not None]
    if len(sizes_run) >= 2 and name != "to-zip":
        lo, hi = sizes_run[0], sizes_run[-1]
        ratio = rss((name, o, hi)) / rss((name, o, lo))
        verdicts.append((f"{name}: peak RSS at {label(hi)} within 1.3x of {label(lo)}",
                         f"{ratio:.2f}×", ratio <= 1.3))
    if name == "ls -R":
        for n in sizes_run[1:]:
            r = (med((name, o, n)) / n) / (med((name, o, base)) / base)
            verdicts.append((f"ls -R per-file cost at {label(n)} within 1.2x of {label(base)}",
                             f"{r:.2f}×", r <= 1.2))
        for n in sizes_run:
            pm = med((name, "python list -R", n))
            if pm:
                verdicts.append((f"ls -R at least 5x faster than Python list -R at {label(n)}",
                                 f"{pm / med((name, o, n)):.1f}×", pm / med((name, o, n)) >= 5))
    if name in ("find", "tree", "list -R") and 1_000_000 in sizes_run:
        peer = {"find": "python find", "tree": "python tree", "list -R": "python list -R"}[name]
        pm = med((name, peer, 1_000_000))
        if pm:
            sp = pm / med((name, o, 1_000_000))
            verdicts.append((f"{name} at 1M at least 10x faster than Python's", f"{sp:.1f}×", sp >= 10))
lines += ["#### Targets", "", "| target | measured | met |", "|---|---:|:---:|"]
lines += [f"| {d} | {v} | {'yes' if ok else '**no**'} |" for d, v, ok in verdicts]
lines += ["", "Commands (the last run of each):", ""]
for (name, lab, n), r in sorted(results.items(), key=lambda x: (x[0][0], x[0][2], x[0][1])):
    if n == SIZES[-1] and r.get("cmd"):
        lines.append(f"* `{lab}` at {label(n)}: `{r['cmd']}`")
skipped = sorted({(k[0], k[1], r["skip"]) for k, r in results.items() if r.get("skip")})
if skipped:
    lines += ["", "Skipped:", ""]
    lines += [f"* {lab} at some sizes: {why}" for _, lab, why in skipped]
lines += ["", "Not measured here: mount (FUSE; bench/mount.py), records (its own store; "
          "bench/records.py)."]
md = "\n".join(lines) + "\n"
RESULTS.mkdir(parents=True, exist_ok=True)
(RESULTS / f"{a.name}.md").write_text(md)
(RESULTS / f"{a.name}.json").write_text(json.dumps({
    "machine": machine(), "rounds": a.rounds, "sizes": SIZES,
    "results": [{"command": k[0], "label": k[1], "files": k[2], **v} for k, v in results.items()],
    "targets": [{"target": d, "measured": v, "met": ok} for d, v, ok in verdicts]}, indent=1))
print(md)
