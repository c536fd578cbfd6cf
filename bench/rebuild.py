#!/usr/bin/env python3
"""Statistics rebuild at 1M files: ours (`barecat-repair --no-trim`, a handful of set-based
SQL statements) against Python barecat's `update_dirs()` + `update_treestats()`, on the same
archive of the 1M-file `tiny` set. Before each run the stored counters are zeroed, so both
rebuild from scratch.

usage: bench/rebuild.py [--scale S] [--rounds N]
Target: 1M files in seconds, not minutes.
"""
import argparse

from harness import DATA, WORK, Case, ours, report, run, sh, VENV

ap = argparse.ArgumentParser()
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
a = ap.parse_args()

tree = DATA / ("tiny" if a.scale == 1 else f"tiny@{a.scale:g}")
sh(f"python3 gen_dataset.py tiny --scale {a.scale} > /dev/null", cwd=str(WORK.parent))
arch = WORK / f"rebuild-{a.scale:g}.barecat"
if not arch.exists():
    sh(f"{ours('barecat-create')} -q -f {arch} -C {tree.parent} {tree.name}")

zero = (f"{VENV}/python -c \"import sqlite3; c = sqlite3.connect('{arch}'); "
        f"c.execute('UPDATE dirs SET num_files=0, num_subdirs=0, num_files_tree=0, size_tree=0'); "
        f"c.commit()\"")
python_rebuild = (f"{VENV}/python -c \"from barecat import Barecat; "
                  f"bc = Barecat('{arch}', readonly=False); bc.index.update_dirs(); "
                  f"bc.index.update_treestats(); bc.close()\" > /dev/null")
cases = [
    Case("barecat-repair (ours)", f"{ours('barecat-repair')} -q --no-trim {arch}", prepare=zero),
    Case("python update_dirs+update_treestats", python_rebuild, prepare=zero),
]
res = run(f"rebuild-stats-{a.scale:g}", cases, rounds=a.rounds, warm=[arch])
sh(f"{ours('barecat-repair')} -q --no-trim {arch}")
report(res, reference="barecat-repair (ours)", targets=[
    ("rebuild of 1M files in seconds (≤ 5 s)", "barecat-repair (ours)", None, 5.0, "seconds_le"),
    ("faster than Python's rebuild", "barecat-repair (ours)", "python update_dirs+update_treestats",
     1.0, "ge_speedup"),
])
