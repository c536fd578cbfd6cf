#!/usr/bin/env python3
"""Reading through a mounted archive: `barecat-mount` (ours) side by side with
Python's `barecat-mount` 0.1.3 (PyPI) and ratarmount (on a tar of the same files),
with the unpacked tree as the floor. Everything warm (page cache and the mounts'
own caches primed by an untimed first run).

1. random reads of 20k files of the `images` set (100k files of ~50 KB) by
   `xargs cat > /dev/null`, the same random list for every mount;
2. `find MNT | wc -l` over the `tiny` set (1M files of ~700 B);
3. `tar -cf - MNT | cat > /dev/null` over the `images` set (5 GB): every byte of
   every file. The pipe matters: GNU tar writing to /dev/null itself notices it and
   reads no file content at all.

usage: bench/mount.py [--scale S] [--rounds N] [--only random,find,tar]

The peers are installed into bench/work/mount-peers-* venvs on first use:
barecat-mount 0.1.3 is built against libfuse3 (Debian libfuse3-dev) and only runs
with Python barecat 0.2.7 (it imports modules that 0.3 removed), which opens our
schema-0.3 archives through a `-sqlite-index` link (its legacy naming) and needs
absolute paths; it is run with --mmap, its fastest read mode. ratarmount indexes
its tar on the first (untimed) mount.

Targets: random reads at least 5x faster than barecat-mount 0.1.3 and
at least as fast as ratarmount; find at least 5x faster than barecat-mount 0.1.3;
tar of every file within 1.5x of the unpacked tree.
"""
import argparse
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from archives import archive, dataset
from harness import WORK, Case, ours, report, run, sh

ap = argparse.ArgumentParser()
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--files", type=int, default=20_000, help="files read by the random-read case")
ap.add_argument("--only", default="random,find,tar")
a = ap.parse_args()
only = set(a.only.split(","))

BM_VENV = WORK / "mount-peers-barecat-mount"
RM_VENV = WORK / "mount-peers-ratarmount"


def peers():
    """Install barecat-mount 0.1.3 and ratarmount (once)."""
    if subprocess.run("pkg-config --exists fuse3", shell=True).returncode != 0:
        sudo = "" if os.geteuid() == 0 else "sudo "
        sh(f"{sudo}apt-get install -y -qq libfuse3-dev pkg-config")
    if not (BM_VENV / "bin" / "barecat-mount").exists():
        sh(f"{sys.executable} -m venv {BM_VENV}")
        sh(f"{BM_VENV}/bin/pip install -q barecat==0.2.7 crc32c numpy")
        sh(f"{BM_VENV}/bin/pip install -q --no-deps barecat-mount==0.1.3 barecat-cython==0.0.2")
    if not (RM_VENV / "bin" / "ratarmount").exists():
        sh(f"{sys.executable} -m venv {RM_VENV}")
        sh(f"{RM_VENV}/bin/pip install -q ratarmount")


def wait_mounted(mnt, timeout=600):
    t0 = time.time()
    while not os.path.ismount(mnt):
        if time.time() - t0 > timeout:
            raise SystemExit(f"{mnt}: not mounted after {timeout} s")
        time.sleep(0.1)


def unmount(mnt):
    if os.path.ismount(mnt):
        subprocess.run(["fusermount3", "-u", str(mnt)], check=False)


class Mounts:
    """Our mount, barecat-mount's and ratarmount's of the same data; unmounted at exit."""

    def __init__(self, name, arch, tar):
        self.base = WORK / f"mnt-{name}"
        self.points = {}
        for who in ("ours", "barecat-mount", "ratarmount"):
            p = self.base / who
            unmount(p)
            p.mkdir(parents=True, exist_ok=True)
            self.points[who] = p
        sh(f"{ours('barecat-mount')} {arch} {self.points['ours']}")
        legacy = Path(f"{arch}-sqlite-index")
        if not legacy.exists():
            legacy.symlink_to(arch.name)
        sh(f"{BM_VENV}/bin/barecat-mount --mmap {arch.resolve()} {self.points['barecat-mount'].resolve()}")
        if tar is not None:
            sh(f"{RM_VENV}/bin/ratarmount {tar} {self.points['ratarmount']}")
        for who, p in self.points.items():
            if who != "ratarmount" or tar is not None:
                wait_mounted(p)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.points.values():
            unmount(p)


def tar_of(name, tree):
    """A plain tar of the dataset tree, members under `name/` like the archive's."""
    out = WORK / f"{name}-{a.scale:g}.tar"
    if not out.exists():
        sh(f"tar -cf {out}.tmp -C {tree.parent} --transform 's,^{tree.name},{name},' {tree.name}")
        os.rename(f"{out}.tmp", out)
    return out


def tree_link(name, tree):
    """A directory holding `name` -> the unpacked tree, so paths match the mounts'."""
    d = WORK / f"tree-{name}-{a.scale:g}"
    d.mkdir(parents=True, exist_ok=True)
    link = d / name
    if not link.exists():
        link.symlink_to(tree)
    return d


peers()

if "random" in only or "tar" in only:
    arch = archive("images", a.scale, limit="1G")
    tree = dataset("images", a.scale)
    tar = tar_of("images", tree)
    floor = tree_link("images", tree)
    with Mounts("images", arch, tar) as m:
        if "random" in only:
            con = sqlite3.connect(f"file:{arch}?mode=ro", uri=True)
            paths = [r[0] for r in con.execute("SELECT path FROM files ORDER BY path")]
            random.Random(18).shuffle(paths)
            lst = WORK / f"mount-random-{a.scale:g}.txt"
            lst.write_text("\n".join(paths[: a.files]) + "\n")
            n = min(a.files, len(paths))
            read = f"xargs -a {lst} -d '\\n' cat > /dev/null"
            cases = [
                Case("barecat-mount (ours)", f"cd {m.points['ours']} && {read}"),
                Case("barecat-mount 0.1.3 (Python, --mmap)", f"cd {m.points['barecat-mount']} && {read}"),
                Case("ratarmount (tar)", f"cd {m.points['ratarmount']} && {read}"),
                Case("unpacked tree", f"cd {floor} && {read}", note="no mount: the floor"),
            ]
            res = run(f"mount-random-{n}-images-{a.scale:g}", cases, rounds=a.rounds,
                      warm=[arch, tree])
            report(res, reference="barecat-mount (ours)", targets=[
                ("random reads ≥5x faster than barecat-mount 0.1.3", "barecat-mount (ours)",
                 "barecat-mount 0.1.3 (Python, --mmap)", 5.0, "ge_speedup"),
                ("random reads at least as fast as ratarmount", "barecat-mount (ours)",
                 "ratarmount (tar)", 1.0, "le"),
            ])
        if "tar" in only:
            cases = [
                Case("barecat-mount (ours)", f"cd {m.points['ours']} && tar -cf - images | cat > /dev/null"),
                Case("unpacked tree", f"cd {floor} && tar -chf - images | cat > /dev/null",
                     note="-h follows the link to the tree"),
            ]
            res = run(f"mount-tar-images-{a.scale:g}", cases, rounds=a.rounds, warm=[arch, tree])
            report(res, reference="barecat-mount (ours)", targets=[
                ("tar of every file within 1.5x of the unpacked tree", "barecat-mount (ours)",
                 "unpacked tree", 1.5, "le"),
            ])

if "find" in only:
    arch = archive("tiny", a.scale)
    tree = dataset("tiny", a.scale)
    floor = tree_link("tiny", tree)
    with Mounts("tiny", arch, None) as m:
        cases = [
            Case("barecat-mount (ours)", f"find {m.points['ours']} | wc -l"),
            Case("barecat-mount 0.1.3 (Python, --mmap)", f"find {m.points['barecat-mount']} | wc -l"),
            Case("unpacked tree", f"find -L {floor} | wc -l", note="no mount: the floor"),
        ]
        res = run(f"mount-find-tiny-{a.scale:g}", cases, rounds=a.rounds, warm=[arch])
        report(res, reference="barecat-mount (ours)", targets=[
            ("find ≥5x faster than barecat-mount 0.1.3", "barecat-mount (ours)",
             "barecat-mount 0.1.3 (Python, --mmap)", 5.0, "ge_speedup"),
        ])
