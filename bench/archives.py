"""Archives of the benchmark datasets, built once and reused (bench/work/*.barecat).

They are built by the library's `build_archive` example (every file of the tree, in
sorted order, stored under PREFIX/), which can also take every n-th file only (the
two halves merged by bench/maint.py).
"""
import os
import subprocess
import sys
from pathlib import Path

from harness import RELEASE, ROOT, WORK, sh

EXAMPLE = RELEASE / "examples" / "build_archive"


def dataset(name, scale):
    """Generate (once) and return the tree of a dataset."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "gen_dataset.py"), name,
                          "--scale", str(scale)], check=True, capture_output=True, text=True)
    return Path(out.stdout.strip().splitlines()[-1])


def archive(name, scale, prefix=None, limit=None, part=None):
    """An archive of dataset `name` at `scale`, its files stored under `prefix`
    (default: the dataset name); with part=(k, n), only every n-th file from the k-th."""
    WORK.mkdir(parents=True, exist_ok=True)
    tree = dataset(name, scale)
    prefix = prefix or name
    tag = f"-part{part[0]}of{part[1]}" if part else ""
    path = WORK / f"{name}-{scale:g}-{prefix}{tag}.barecat"
    if path.exists():
        return path
    if not EXAMPLE.exists():
        sh("cargo build --release --quiet --example build_archive", cwd=str(ROOT))
    args = [str(EXAMPLE), str(path), str(tree), "--prefix", prefix]
    if limit:
        args += ["-s", str(limit)]
    if part:
        args += ["--part", f"{part[0]}/{part[1]}"]
    print(f"  building {path.name}", file=sys.stderr)
    subprocess.run(args, check=True)
    return path


def warm(path):
    """Read an archive's index and shards once, so the timed runs start from page cache."""
    sh(f"cat {path} {path}-shard-* > /dev/null")


def copy_archive(src, dst):
    """Shell command copying the archive at `src` to `dst` (index and shards)."""
    return (f"rm -f {dst} {dst}-shard-*; cp {src} {dst}; "
            f"for s in {src}-shard-*; do cp \"$s\" \"{dst}-shard-${{s##*-shard-}}\"; done")


def shards(path):
    return f"{path}-shard-*"


def live_bytes(path):
    """Sum of the file sizes of an archive."""
    import sqlite3
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    return c.execute("SELECT coalesce(sum(size), 0) FROM files").fetchone()[0]
