#!/usr/bin/env python3
"""The Python module barecat_rs against Python barecat 0.3.1, barecat-cython 0.0.2
(when it installs) and loose files, side by side in one run, on the `tiny` set
(1M files of ~700 B).

usage: bench/python.py [--scale S] [--rounds N] [--paths N] [--writes N]

Each command runs in a fresh interpreter of .venv and times only its operation
(not the interpreter's start-up; see bench/py_ops.py). Needs bench/setup.sh first
(release build of barecat_rs into .venv, the peers).

Targets:
  * random reads by path (20k random paths, one thread): at least 5x Python barecat
    `bc[path]`, faster than barecat-cython, and at least 1.5x `open().read()` of the
    same loose files from page cache;
  * `read_many` with 2 threads at least 1.7x its one-thread rate;
  * `Records.gather` of the 20k files by integer index (the archive's record table,
    path order) at least 20x Python barecat's `bc[path]` loop over the same files;
  * 100k small writes through `bc[path] = data` at least 5x Python barecat;
  * `import barecat_rs` under 50 ms.
"""
import argparse
import os
import random
import shlex
import subprocess
from pathlib import Path

from archives import archive, dataset
from harness import VENV, WORK, Case, report, run

ap = argparse.ArgumentParser()
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--paths", type=int, default=20_000)
ap.add_argument("--writes", type=int, default=100_000)
a = ap.parse_args()

py = str(VENV / "python")
ops = str(Path(__file__).resolve().parent / "py_ops.py")


def has(module):
    return subprocess.run([py, "-c", f"import {module}"], capture_output=True).returncode == 0


if not has("barecat_rs"):
    raise SystemExit("barecat_rs is not installed in .venv: run bench/setup.sh")

tree = dataset("tiny", a.scale)
arch = archive("tiny", a.scale)
shard_files = sorted(arch.parent.glob(arch.name + "-shard-*"))
count = int(1_000_000 * a.scale)
rng = random.Random(17)
picks = [rng.randrange(count) for _ in range(min(a.paths, count))]
rel = [f"part_{i % 10:02d}/class_{(i // 10) % 100:03d}/item_{i:07d}.txt" for i in picks]
WORK.mkdir(parents=True, exist_ok=True)
stored = WORK / f"python-paths-{a.scale:g}.txt"
loose = WORK / f"python-loose-{a.scale:g}.txt"
stored.write_text("".join(f"tiny/{p}\n" for p in rel))
loose.write_text("".join(f"{p}\n" for p in rel))
# Record i of the archive's record table (path order) is the i-th path in sorted
# order: the indices of the same 20k files.
all_paths = sorted(f"part_{i % 10:02d}/class_{(i // 10) % 100:03d}/item_{i:07d}.txt"
                   for i in range(count))
rank = {p: k for k, p in enumerate(all_paths)}
del all_paths
indices = WORK / f"python-indices-{a.scale:g}.txt"
indices.write_text("".join(f"{rank[p]}\n" for p in rel))
del rank
table = Path(f"{arch}-records")
if not table.exists():
    subprocess.run([str(Path(__file__).resolve().parents[1] / "target/release/barecat-records"),
                    "build", "-q", str(arch)], check=True)

# barecat-cython opens the legacy layout (index at ARCH-sqlite-index): a directory of
# links gives it one without touching the archive.
legacy = WORK / "python-cython" / arch.name
legacy.parent.mkdir(parents=True, exist_ok=True)
for src, dst in [(arch, Path(f"{legacy}-sqlite-index"))] + [
        (s, Path(f"{legacy}-shard-{s.name.rsplit('-', 1)[1]}")) for s in shard_files]:
    if not dst.is_symlink():
        dst.symlink_to(src)


def op(*args):
    return " ".join(shlex.quote(str(x)) for x in (py, ops) + args)


warm_arch = [arch] + shard_files
ours = "barecat_rs bc[path]"
cases = [
    Case(ours, op("get-ours", arch, stored), inner=True, warm=warm_arch),
    Case("python barecat bc[path]", op("get-python", arch, stored), inner=True, warm=warm_arch),
    Case("open().read() loose files", op("open-loose", tree, loose), inner=True, warm=[tree],
         note="the same files unpacked, from page cache"),
    Case("barecat_rs read_many, 1 thread", op("many-ours", arch, stored, 1), inner=True,
         warm=warm_arch),
    Case("barecat_rs read_many, 2 threads", op("many-ours", arch, stored, 2), inner=True,
         warm=warm_arch),
    Case("barecat_rs Records.gather", op("gather-ours", arch, indices), inner=True,
         warm=warm_arch + [table]),
    Case("barecat_rs Records.gather, 2nd pass", op("gather-warm", arch, indices), inner=True,
         warm=warm_arch + [table],
         note="the same gather again in the same process: the mapping's pages touched"),
    Case("floor: SQLite lookup alone", op("lookup-floor", arch, stored), inner=True,
         warm=warm_arch,
         note="Python's sqlite3, the row of each path, no read: no reader by path beats it"),
    Case("floor: first touch of each record's page", op("touch-floor", arch, indices),
         inner=True, warm=warm_arch,
         note="one byte per record through a fresh mmap of the shard (one page fault each)"),
    Case("floor: checksum of each record, warm map", op("read-floor", arch, indices),
         inner=True, warm=warm_arch,
         note="memoryview slices of a mapping touched before, the loop's own checksum"),
]
targets = [
    ("random reads by path: at least 5x Python barecat", ours, "python barecat bc[path]", 5.0,
     "ge_speedup"),
    ("faster than open().read() of the loose files", ours, "open().read() loose files", 1.0,
     "ge_speedup"),
    ("at least 1.5x open().read() of the loose files", ours, "open().read() loose files", 1.5,
     "ge_speedup"),
    ("read_many: 2 threads at least 1.7x one", "barecat_rs read_many, 2 threads",
     "barecat_rs read_many, 1 thread", 1.7, "ge_speedup"),
    ("Records.gather at least 20x Python barecat bc[path]", "barecat_rs Records.gather",
     "python barecat bc[path]", 20.0, "ge_speedup"),
    ("Records.gather, 2nd pass, at least 20x Python barecat bc[path]",
     "barecat_rs Records.gather, 2nd pass", "python barecat bc[path]", 20.0, "ge_speedup"),
    ("bound: SQLite lookup alone at least 5x Python barecat bc[path]",
     "floor: SQLite lookup alone", "python barecat bc[path]", 5.0, "ge_speedup"),
    ("bound: page faults alone at least 20x Python barecat bc[path]",
     "floor: first touch of each record's page", "python barecat bc[path]", 20.0,
     "ge_speedup"),
    ("bound: the loop over a warm map alone at least 20x Python barecat bc[path]",
     "floor: checksum of each record, warm map", "python barecat bc[path]", 20.0,
     "ge_speedup"),
]
extra = ""
if has("barecat_cython"):
    cases.insert(2, Case("barecat-cython read", op("get-cython", legacy, stored), inner=True,
                         warm=warm_arch))
    targets.insert(1, ("faster than barecat-cython 0.0.2", ours, "barecat-cython read", 1.0,
                       "ge_speedup"))
else:
    extra = "barecat-cython 0.0.2 is not installed in .venv (it did not install): not measured."
res = run(f"python-reads-{a.scale:g}", cases, rounds=a.rounds)
report(res, reference=ours, targets=targets, extra=extra)

n = max(1, int(a.writes * min(1.0, a.scale * 10)))
out = WORK / "python-writes.barecat"
rm = f"rm -f {out} {out}-shard-*"
writes = [
    Case(f"barecat_rs bc[path] = data ({n} files)", op("write-ours", out, n), inner=True,
         prepare=rm),
    Case(f"python barecat bc[path] = data ({n} files)", op("write-python", out, n), inner=True,
         prepare=rm),
]
res = run(f"python-writes-{a.scale:g}", writes, rounds=a.rounds, warmup=False)
report(res, reference=writes[0].label, targets=[
    ("small writes: at least 5x Python barecat", writes[0].label, writes[1].label, 5.0,
     "ge_speedup")])
os.system(rm)

imports = [Case("import barecat_rs", op("import-ours"), inner=True)]
res = run("python-import", imports, rounds=a.rounds)
report(res, reference="import barecat_rs", targets=[
    ("import barecat_rs under 50 ms", "import barecat_rs", "import barecat_rs", 0.05,
     "seconds_le")])
