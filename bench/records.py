#!/usr/bin/env python3
"""Records (barecat-records) on the `tiny` set (1M records of ~700 B) and
the `images` set (100k records of ~50 KB), side by side with their peers.

usage: bench/records.py [--scale S] [--rounds N] [--sets tiny,images]

Every contender of a gather prints `count bytes crc32c` of the records it read (the
CRC32C of all their bytes in request order): they are checked to agree before the
timed rounds. Targets:

* gather of as many random indices as records (1M on tiny), every byte touched
  (CRC32C), warm: >= 50x Python barecat 0.3.1 `bc[path]`, >= 3x a Megatron-style
  .idx/.bin reader (numpy memmap), <= 2x the bound (bench/floor_gather.c: the same
  bytes copied in request order from one preloaded buffer and CRC32C-ed);
* the same gather with indices sorted by address, cold: <= 1.3x `cat` of the chunks;
* append of all records (`create --framed`): <= 1.5x writing their bytes into one
  file plus fdatasync (`dd conv=fdatasync`);
* rebalance after deleting 30%, cold: <= 2x `cp` of the live bytes (+ fdatasync),
  beside the bound of what a rebalance must do (read every chunk, write the live
  bytes durably, remove the old chunks);
* `build` over the 1M-file archive: < 2 s; random get through the table >= 10x faster
  per record than a path lookup through the index (`barecat-cat` of the same files);
* peak RSS of the gather independent of the number of indices (1M vs 100k requests).
"""
import argparse
import subprocess
import sys
from pathlib import Path

from archives import archive
from harness import WORK, Case, ROOT, VENV, ours, report, run, sh, summary

ap = argparse.ArgumentParser()
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--sets", default="tiny,images")
ap.add_argument("--only", default="gather,sorted,append,rebalance,build",
                help="the tables to measure (default: all)")
a = ap.parse_args()
ONLY = set(a.only.split(","))

PY = str(VENV / "python")
PEERS = str(ROOT / "bench" / "records_peers.py")
REC = ours("barecat-records")
WORK.mkdir(parents=True, exist_ok=True)
FLOOR = WORK / "floor_gather"
sh(f"gcc -O2 -msse4.2 -o {FLOOR} {ROOT / 'bench' / 'floor_gather.c'}")
sh(f"{PY} -c 'import numpy, crc32c' 2>/dev/null || {VENV / 'pip'} install --quiet numpy crc32c")


def out(cmd):
    return subprocess.run(cmd, shell=True, check=True, capture_output=True, text=True).stdout


def agree(cmds):
    """Run each command once; all must print the same digest."""
    seen = {}
    for label, cmd in cmds:
        seen[label] = out(cmd).strip().splitlines()[-1]
    if len(set(seen.values())) != 1:
        raise SystemExit(f"contenders disagree: {seen}")
    print(f"  all contenders read the same bytes: {next(iter(seen.values()))}", file=sys.stderr)


for name in a.sets.split(","):
    arch = archive(name, a.scale)
    tag = f"{name}-{a.scale:g}"
    ds = WORK / f"records-{tag}.zr"
    framed = WORK / f"records-{tag}.framed"
    mega = WORK / f"records-{tag}-megatron"
    if not (ds / "meta.json").exists():
        sh(f"{REC} create {ds} --from {arch} -f -q")
    n = int(out(f"{REC} info --json {ds} | {PY} -c 'import json,sys; print(json.load(sys.stdin)[\"length\"])'"))
    if not framed.exists():
        sh(f"seq 0 {n - 1} | {REC} gather {ds} --indices - --framing len > {framed}")
    if not Path(f"{mega}.idx").exists():
        sh(f"{PY} {PEERS} build-megatron {framed} {mega}")
    rnd, srt, few = (WORK / f"records-{tag}-{k}.idx.txt" for k in ("random", "sorted", "tenth"))
    sh(f"{PY} {PEERS} indices {n} {n} 7 {rnd}")
    sh(f"{PY} {PEERS} indices {n} {n} 7 {srt} --sorted")
    sh(f"{PY} {PEERS} indices {n} {max(1, n // 10)} 7 {few}")
    sh(f"{REC} build {arch} -q")
    chunks = f"{ds}/chunk/*.zr"
    warm = [ds, arch] + sorted(arch.parent.glob(arch.name + "-shard-*")) + [Path(f"{mega}.bin")]

    # ---- gather, random indices, warm
    if "gather" in ONLY:
        g = {
            "gather dataset (ours)": f"{REC} gather {ds} --indices {rnd} --digest --no-check",
            "gather archive table (ours)": f"{REC} gather {arch} --indices {rnd} --digest --no-check",
            "gather 1/10 of the indices (ours)": f"{REC} gather {ds} --indices {few} --digest --no-check",
            "megatron-style .idx/.bin (python)": f"{PY} {PEERS} megatron {mega} {rnd}",
            "bound: copy from a preloaded buffer": f"{FLOOR} {mega} {rnd}",
            "python barecat bc[path]": f"{PY} {PEERS} barecat {arch} {rnd}",
        }
        agree([(k, v) for k, v in g.items() if "1/10" not in k])
        cases = [Case(k, v) for k, v in g.items()]
        # The same bound, timing its copy loop alone (the dataset in memory, every page of
        # it touched, the indices parsed): the memory's own cost of the random accesses.
        cases.append(Case("bound: its copy loop alone", g["bound: copy from a preloaded buffer"],
                          inner=True))
        res = run(f"records-gather-{tag}", cases, rounds=a.rounds, warm=warm)
        rows = {c.label: summary(c) for c in res["cases"]}
        rss_bound = rows["gather 1/10 of the indices (ours)"]["peak_rss_mb"] + 16 * n / 1e6 + 32
        report(res, reference="gather dataset (ours)", targets=[
            (">= 50x Python barecat bc[path]", "gather dataset (ours)", "python barecat bc[path]",
             50.0, "ge_speedup"),
            (">= 3x the Megatron-style reader", "gather dataset (ours)",
             "megatron-style .idx/.bin (python)", 3.0, "ge_speedup"),
            ("<= 2x the preloaded-buffer bound", "gather dataset (ours)",
             "bound: copy from a preloaded buffer", 2.0, "le"),
            ("archive table: >= 50x Python barecat", "gather archive table (ours)",
             "python barecat bc[path]", 50.0, "ge_speedup"),
            ("bound: the copy loop alone >= 50x Python barecat", "bound: its copy loop alone",
             "python barecat bc[path]", 50.0, "ge_speedup"),
            (f"peak RSS of all requests <= that of 1/10 + the table + 32 MB ({rss_bound:.0f} MB)",
             "gather dataset (ours)", "gather dataset (ours)", rss_bound, "rss_mb_le"),
        ], extra="Every contender prints the CRC32C of all the bytes it read; they agree.")

    # ---- gather, indices sorted by address, cold
    if "sorted" in ONLY:
        cases = [
            Case("sorted gather (ours)", f"{REC} gather {ds} --indices {srt} --digest --no-check"),
            Case("cat chunks > /dev/null", f"cat {chunks} > /dev/null"),
        ]
        res = run(f"records-sorted-cold-{tag}", cases, rounds=a.rounds, cold=True)
        report(res, reference="sorted gather (ours)", targets=[
            ("<= 1.3x cat of the chunks", "sorted gather (ours)", "cat chunks > /dev/null", 1.3, "le"),
        ])

    # ---- append all records
    if "append" in ONLY:
        new = WORK / f"records-{tag}-new.zr"
        copy = WORK / f"records-{tag}-copy.bin"
        cases = [
            Case("append all records (ours)", f"{REC} create {new} --framed {framed} -q",
                 prepare=f"rm -rf {new}", warm=(framed,)),
            Case("dd bytes + fdatasync", f"dd if={mega}.bin of={copy} bs=8M conv=fdatasync status=none",
                 prepare=f"rm -f {copy}", warm=(Path(f"{mega}.bin"),)),
        ]
        res = run(f"records-append-{tag}", cases, rounds=a.rounds)
        report(res, reference="append all records (ours)", targets=[
            ("<= 1.5x write + fdatasync", "append all records (ours)", "dd bytes + fdatasync", 1.5, "le"),
        ])
        sh(f"rm -rf {new} {copy}")

    # ---- rebalance after deleting 30%
    if "rebalance" in ONLY:
        reb = WORK / f"records-{tag}-reb.zr"
        dele = WORK / f"records-{tag}-delete.idx.txt"
        live = WORK / f"records-{tag}-live.bin"
        sh(f"{PY} -c 'import random; r = random.Random(5); "
           f"print(*r.sample(range({n}), {n * 3 // 10}), sep=chr(10))' > {dele}")
        sh(f"rm -rf {reb}.tpl && cp -r {ds} {reb}.tpl && {REC} delete {reb}.tpl --indices {dele} -q")
        live_bytes = int(out(f"{REC} info --json {reb}.tpl | {PY} -c "
                             f"'import json,sys; print(json.load(sys.stdin)[\"utilization\"][\"live_bytes\"])'"))
        sh(f"head -c {live_bytes} {mega}.bin > {live}")
        cases = [
            Case("rebalance (ours)", f"{REC} rebalance {reb} -q",
                 prepare=f"rm -rf {reb} && cp -r {reb}.tpl {reb}"),
            Case("cp live bytes + fdatasync", f"cp {live} {live}.copy && sync -d {live}.copy",
                 prepare=f"rm -f {live}.copy"),
            # What a rebalance cannot avoid: reading every chunk (the deleted records
            # lie between the live ones), writing the live bytes durably, removing
            # the old chunks.
            Case("bound: cat every chunk + cp live bytes + fdatasync + rm the chunks",
                 f"cat {reb}/chunk/* > /dev/null && cp {live} {live}.copy && "
                 f"sync -d {live}.copy && rm {reb}/chunk/*",
                 prepare=f"rm -rf {reb} {live}.copy && cp -r {reb}.tpl {reb}"),
        ]
        res = run(f"records-rebalance-{tag}", cases, rounds=a.rounds, cold=True)
        report(res, reference="rebalance (ours)", targets=[
            ("<= 2x cp of the live bytes", "rebalance (ours)", "cp live bytes + fdatasync", 2.0, "le"),
        ])
        sh(f"rm -rf {reb} {reb}.tpl {live} {live}.copy")

    # ---- build, and random get through the table vs a path lookup
    if "build" in ONLY:
        k = max(1, n // 10)
        some = WORK / f"records-{tag}-some.idx.txt"
        paths = WORK / f"records-{tag}-some.paths"
        sh(f"head -n {k} {rnd} > {some}")
        sh(f"{PY} -c 'import sys; from barecat import Barecat\n"
           f"bc = Barecat(sys.argv[1]); p = sorted(bc.index.iter_all_filepaths())\n"
           f"print(*(p[int(i)] for i in open(sys.argv[2])), sep=chr(10))' {arch} {some} > {paths}")
        cases = [
            Case("build (ours)", f"{REC} build {arch} -q"),
            Case(f"get {k} records through the table (ours)",
                 f"{REC} gather {arch} --indices {some} > /dev/null",
                 note="CRC-checked, like barecat-cat"),
            Case(f"cat {k} files by path (ours)", f"xargs -a {paths} -d '\\n' {ours('barecat-cat')} {arch} > /dev/null"),
            # The bytes' own cost: the same records copied and checksummed out of memory
            # (the copy loop alone). No reader, by index or by path, gets below it, so
            # the path cat's time over it is the largest speedup any lookup could give.
            Case(f"bound: the {k} records' bytes alone", f"{FLOOR} {mega} {some}", inner=True),
        ]
        res = run(f"records-build-get-{tag}", cases, rounds=a.rounds, warm=warm)
        report(res, reference="build (ours)", targets=[
            ("build < 2 s (1M files at scale 1)", "build (ours)", "build (ours)", 2.0, "seconds_le"),
            (">= 10x faster per record than a path lookup", f"get {k} records through the table (ours)",
             f"cat {k} files by path (ours)", 10.0, "ge_speedup"),
            ("floor: the path cat over the bytes' own cost >= 10x (else 10x is below the floor)",
             f"bound: the {k} records' bytes alone", f"cat {k} files by path (ours)", 10.0, "ge_speedup"),
        ])
