#!/usr/bin/env python3
"""Full verify of the `images` set (100k files of ~50 KB, ~5 GB) from page cache:
`barecat-verify` against `cat` of its shards to /dev/null and Python barecat's
`verify`, side by side.

usage: bench/verify.py [--scale S] [--rounds N]
Targets: within 1.5x of cat; at least 4x faster than Python barecat.
"""
import argparse

from archives import archive, shards, warm
from harness import Case, ours, py_barecat, report, run

ap = argparse.ArgumentParser()
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
a = ap.parse_args()

arch = archive("images", a.scale, limit="1G")
warm(arch)
cases = [
    Case("barecat-verify (ours)", f"{ours('barecat-verify')} -q {arch}"),
    Case("cat shards > /dev/null", f"cat {shards(arch)} > /dev/null",
         note="reads every byte once, checks nothing"),
    Case("python barecat verify", f"{py_barecat()} verify {arch}"),
]
res = run(f"verify-images-{a.scale:g}", cases, rounds=a.rounds,
          warm=[arch] + sorted(arch.parent.glob(arch.name + "-shard-*")))
report(res, reference="barecat-verify (ours)", targets=[
    ("full verify within 1.5x of cat", "barecat-verify (ours)", "cat shards > /dev/null", 1.5, "le"),
    ("at least 4x faster than Python barecat", "barecat-verify (ours)", "python barecat verify",
     4.0, "ge_speedup"),
])
