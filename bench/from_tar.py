#!/usr/bin/env python3
"""From-tar: `barecat-from-tar` against Python barecat's `barecat convert x.tar y.barecat`
and `cp x.tar y.tar`, on a GNU tar of the `images` dataset, in the same run.

usage: bench/from_tar.py [--scale S] [--rounds N] [--set images|tiny] [--no-python]

Targets, as median ratios:
  * at least 5x faster than Python's `barecat convert`;
  * within 1.5x of `cp x.tar y.tar`;
  * peak RSS below 100 MB for a from-tar of the tar read from stdin.

The tar is made once (GNU tar, default format); every run starts cold (the page cache
is dropped before it, untimed). Our conversion fdatasyncs the shards before every
commit; cp does not sync, so `cp` followed by `sync` is timed too.
"""
import argparse

from harness import DATA, WORK, Case, ours, py_barecat, report, run, sh

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--set", default="images", choices=["images", "tiny"])
ap.add_argument("--no-python", action="store_true", help="leave out Python barecat (slow)")
a = ap.parse_args()

sh(f"python3 gen_dataset.py {a.set} --scale {a.scale:g} > /dev/null", cwd=str(WORK.parent))
t = DATA / (a.set if a.scale == 1 else f"{a.set}@{a.scale:g}")
WORK.mkdir(parents=True, exist_ok=True)
tar = WORK / f"{t.name}.tar"
if not tar.exists():
    sh(f"tar -cf {tar}.tmp -C {t.parent} {t.name} && mv {tar}.tmp {tar}")
out = WORK / f"from-tar-{t.name}"
OURS = "barecat-from-tar (ours)"
STDIN = "barecat-from-tar (ours, stdin)"
cases = [
    Case(OURS, f"{ours('barecat-from-tar')} -q {tar} {out}.barecat",
         prepare=f"rm -f {out}.barecat {out}.barecat-shard-*"),
    Case(STDIN, f"{ours('barecat-from-tar')} -q - {out}-stdin.barecat < {tar}",
         prepare=f"rm -f {out}-stdin.barecat {out}-stdin.barecat-shard-*"),
    Case("cp x.tar y.tar", f"cp {tar} {out}.copy.tar", prepare=f"rm -f {out}.copy.tar"),
    Case("cp x.tar y.tar; sync", f"cp {tar} {out}.copy.tar; sync", prepare=f"rm -f {out}.copy.tar"),
] + ([] if a.no_python else [
    Case("python barecat convert", f"{py_barecat()} convert -f {tar} {out}-py.barecat",
         prepare=f"rm -f {out}-py.barecat {out}-py.barecat-shard-*"),
])
targets = [
    ("within 1.5x of cp x.tar y.tar", OURS, "cp x.tar y.tar", 1.5, "le"),
    ("peak RSS < 100 MB (tar from stdin)", STDIN, None, 100.0, "rss_mb_le"),
]
if not a.no_python:
    targets.insert(0, ("at least 5x faster than Python barecat convert", OURS,
                       "python barecat convert", 5.0, "ge_speedup"))
res = run(f"from-tar-{a.set}-{a.scale:g}", cases, rounds=a.rounds, cold=True)
report(res, reference=OURS, targets=targets,
       extra=f"Input: GNU tar of `{t.name}` ({tar.stat().st_size / 2**20:.0f} MiB, "
             f"{(t / '.complete').read_text().strip()} files).")
