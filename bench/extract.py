#!/usr/bin/env python3
"""Extraction of the `tiny` set (1M files of ~700 B) into an empty directory: ours
(`barecat-extract`) against GNU `tar -xf` of the equivalent tar and Python barecat's
`extract`, all from page cache into a directory on the same file system.

usage: bench/extract.py [--scale S] [--rounds N] [--dest DIR]

--dest picks the directory extracted into (default bench/work/extract-out), e.g. a
tmpfs to take the disk out of the comparison.
Targets (issue 4): median ratio to `tar -xf` <= 1.0; at least 5x faster than Python.
"""
import argparse

from harness import WORK, Case, ours, page_cache_warm, py_barecat, report, run, sh
from exportdata import archive_of

ap = argparse.ArgumentParser()
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--dest", default=str(WORK / "extract-out"))
a = ap.parse_args()

tree, arch = archive_of("tiny", a.scale)
tarf = WORK / f"extract-tiny-{a.scale:g}.tar"
if not tarf.exists():
    sh(f"tar -cf {tarf}.tmp -C {tree.parent} {tree.name} && mv {tarf}.tmp {tarf}")
for p in [arch, tarf] + sorted(arch.parent.glob(arch.name + "-shard-*")):
    page_cache_warm(p)

out = a.dest
# The previous run's tree is removed, and dirty pages written, before each run.
fresh = f"rm -rf {out} && mkdir -p {out} && sync"
cases = [
    Case("barecat-extract (ours)", f"{ours('barecat-extract')} -q {arch} -C {out}", prepare=fresh),
    Case("GNU tar -xf", f"tar -xf {tarf} -C {out}", prepare=fresh),
    Case("python barecat extract", f"{py_barecat()} extract {arch} -C {out}", prepare=fresh),
]
name = f"extract-tiny-{a.scale:g}" + ("" if a.dest == str(WORK / "extract-out") else "-dest")
res = run(name, cases, rounds=a.rounds, cold=True)
sh(f"rm -rf {out}")
report(res, reference="barecat-extract (ours)", targets=[
    ("extract no slower than GNU tar -xf (ratio <= 1.0)", "barecat-extract (ours)", "GNU tar -xf",
     1.0, "le"),
    ("at least 5x faster than Python barecat extract", "barecat-extract (ours)",
     "python barecat extract", 5.0, "ge_speedup"),
])
