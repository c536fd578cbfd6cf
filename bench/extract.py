#!/usr/bin/env python3
"""Extraction of the `tiny` set (1M files of ~700 B) into an empty directory: ours
(`barecat-extract`) against GNU `tar -xf` of the equivalent tar and Python barecat's
`extract`, from a cold cache.

usage: bench/extract.py [--scale S] [--rounds N] [--dest DIR]

By default every run extracts into a brand-new ext4 file system (a loop device on a
sparse file in bench/work, made with mkfs.ext4 before each run, untimed): removing
a million-file tree and creating one again at once on the same ext4 file system
makes its inode allocator scan "recently deleted" inodes, which costs more than the
extraction itself and hits parallel writers hardest. --dest DIR extracts into DIR
instead (emptied before every run), e.g. a tmpfs. Needs root.
Targets: median ratio to `tar -xf` <= 1.0; at least 5x faster than Python.

Also timed: the kernel's floor, bench/floor_create.c (built with gcc): a C program
that creates the same files with nothing but openat, write, futimens and close on as
many threads as we use, without reading or checking anything.
"""
import os
import argparse

from harness import WORK, Case, ours, py_barecat, report, run, sh
from exportdata import archive_of

ap = argparse.ArgumentParser()
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--dest", default=None)
a = ap.parse_args()

tree, arch = archive_of("tiny", a.scale)
tarf = WORK / f"extract-tiny-{a.scale:g}.tar"
if not tarf.exists():
    sh(f"tar -cf {tarf}.tmp -C {tree.parent} {tree.name} && mv {tarf}.tmp {tarf}")

if a.dest:
    out = a.dest
    # The previous run's tree is removed, and dirty pages written, before each run.
    fresh = f"rm -rf {out} && mkdir -p {out} && sync"
    cleanup = f"rm -rf {out}"
else:
    img, out = WORK / "extract-fs.img", WORK / "extract-mnt"
    files = int((tree / ".complete").read_text())
    fresh = (f"(umount {out} 2>/dev/null || true) && rm -f {img} && mkdir -p {out} && "
             f"truncate -s {max(2, files * 12 // 1_000_000 + 2)}G {img} && "
             f"mkfs.ext4 -q -F -N {files + files // 2 + 10_000} {img} && "
             f"mount -o loop {img} {out}")
    cleanup = f"umount {out}; rm -f {img}"
manifest = WORK / f"extract-tiny-{a.scale:g}.manifest"
if not manifest.exists():
    with open(f"{manifest}.tmp", "w") as m:
        for d, subdirs, names in os.walk(tree):
            subdirs.sort()
            rel = os.path.relpath(d, tree.parent)
            for n in sorted(names):
                if not n.startswith("."):
                    m.write(f"{rel}/{n}\t{os.path.getsize(os.path.join(d, n))}\n")
    os.rename(f"{manifest}.tmp", manifest)
floor = WORK / "floor_create"
sh(f"gcc -O2 -pthread -o {floor} {WORK.parent / 'floor_create.c'}")
cases = [
    Case("barecat-extract (ours)", f"{ours('barecat-extract')} -q {arch} -C {out}", prepare=fresh),
    Case("GNU tar -xf", f"tar -xf {tarf} -C {out}", prepare=fresh),
    Case("kernel floor (C, a thread per core)", f"{floor} {manifest} {out} {os.cpu_count()}",
         prepare=fresh),
    Case("python barecat extract", f"{py_barecat()} extract {arch} -C {out}", prepare=fresh),
]
name = f"extract-tiny-{a.scale:g}" + ("-dest" if a.dest else "")
res = run(name, cases, rounds=a.rounds, cold=True)
sh(cleanup)
report(res, reference="barecat-extract (ours)", targets=[
    ("extract no slower than GNU tar -xf (ratio <= 1.0)", "barecat-extract (ours)", "GNU tar -xf",
     1.0, "le"),
    ("at least 5x faster than Python barecat extract", "barecat-extract (ours)",
     "python barecat extract", 5.0, "ge_speedup"),
])
