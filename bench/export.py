#!/usr/bin/env python3
"""Export to zip (stored) and tar, written to /dev/null from a page-cached archive:
ours (`barecat-to-zip`, `barecat-to-tar`) against `cat` of the shards (the ceiling:
reading the bytes once) and Python barecat's `convert x.barecat y.zip|y.tar`.

Python's converter cannot write a zip to standard output, so both of its runs write
a file in bench/work (page cache); ours stream to /dev/null.

usage: bench/export.py [--scale S] [--rounds N] [--dataset images|tiny]
Targets: at least 70% of the throughput of cat (time ratio <= 1/0.7), and
at least 5x faster than Python's convert.
"""
import argparse

from harness import WORK, Case, ours, page_cache_warm, py_barecat, report, run
from exportdata import archive_of

ap = argparse.ArgumentParser()
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--dataset", choices=["images", "tiny"], default="images")
a = ap.parse_args()

tree, arch = archive_of(a.dataset, a.scale)
shards = sorted(arch.parent.glob(arch.name + "-shard-*"))
for p in [arch] + shards:
    page_cache_warm(p)
pyzip, pytar = WORK / "export-py.zip", WORK / "export-py.tar"
cases = [
    Case("barecat-to-zip (ours)", f"{ours('barecat-to-zip')} -q {arch} - > /dev/null"),
    Case("barecat-to-tar (ours)", f"{ours('barecat-to-tar')} -q {arch} - > /dev/null"),
    Case("cat of the shards", f"cat {' '.join(map(str, shards))} > /dev/null"),
    Case("python barecat convert .zip", f"{py_barecat()} convert -f {arch} {pyzip}",
         prepare=f"rm -f {pyzip}", note="writes a file"),
    Case("python barecat convert .tar", f"{py_barecat()} convert -f {arch} {pytar}",
         prepare=f"rm -f {pytar}", note="writes a file"),
]
res = run(f"export-{a.dataset}-{a.scale:g}", cases, rounds=a.rounds, warm=[arch] + shards)
for p in (pyzip, pytar):
    p.unlink(missing_ok=True)
cat = "cat of the shards"
report(res, reference=cat, targets=[
    ("to-zip at >= 70% of cat's throughput (time ratio <= 1.43)", "barecat-to-zip (ours)", cat,
     1 / 0.7, "le"),
    ("to-tar at >= 70% of cat's throughput (time ratio <= 1.43)", "barecat-to-tar (ours)", cat,
     1 / 0.7, "le"),
    ("to-zip at least 5x faster than Python convert .zip", "barecat-to-zip (ours)",
     "python barecat convert .zip", 5.0, "ge_speedup"),
    ("to-tar at least 5x faster than Python convert .tar", "barecat-to-tar (ours)",
     "python barecat convert .tar", 5.0, "ge_speedup"),
])
