#!/usr/bin/env python3
"""Deterministic benchmark datasets.

usage: gen_dataset.py {images,tiny,all} [--scale S] [--root DIR]

  images  100,000 files of ~50 KB (30-70 KB, incompressible, like JPEGs) in 100
          class directories: about 5 GB.  bench/data/images/train/class_NNN/img_NNNNNN.jpg
  tiny    1,000,000 files of ~700 B (400-1000 B) in 10 x 100 class directories.
          bench/data/tiny/part_NN/class_NNN/item_NNNNNNN.txt

The trees go to $BARECAT_BENCH_DATA when set, else bench/data.
--scale multiplies the file counts (0.01 for a quick run); the output directory is
named after the scale (images, images@0.01, ...). The same arguments always give
byte-identical trees. A finished tree is marked with .complete and reused.
"""
import argparse
import os
import random
import sys
from pathlib import Path

ROOT = Path(os.environ.get("BARECAT_BENCH_DATA") or Path(__file__).resolve().parent / "data")


def tree_dir(root, name, scale):
    return root / (name if scale == 1 else f"{name}@{scale:g}")


def generate(root, name, scale):
    out = tree_dir(root, name, scale)
    if (out / ".complete").exists():
        return out
    if name == "images":
        count, lo, hi, seed = int(100_000 * scale), 30_000, 70_000, 1
    else:
        count, lo, hi, seed = int(1_000_000 * scale), 400, 1000, 2
    rng = random.Random(seed)
    # One pool of random bytes, sliced at random offsets: fast and deterministic.
    pool = rng.randbytes(8 << 20)
    for i in range(count):
        size = rng.randint(lo, hi)
        start = rng.randrange(0, len(pool) - size)
        if name == "images":
            path = out / "train" / f"class_{i % 100:03d}" / f"img_{i:06d}.jpg"
        else:
            path = out / f"part_{i % 10:02d}" / f"class_{(i // 10) % 100:03d}" / f"item_{i:07d}.txt"
        if i < 1000 or i % 1000 == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
        # Vary the first bytes by index so no two files are equal.
        data = i.to_bytes(8, "little") + pool[start + 8:start + size]
        with open(path, "wb") as f:
            f.write(data)
        if i % 100_000 == 0 and i:
            print(f"  {name}: {i}/{count}", file=sys.stderr)
    (out / ".complete").write_text(f"{count}\n")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("which", choices=["images", "tiny", "all"])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--root", type=Path, default=ROOT)
    a = ap.parse_args()
    for name in (["images", "tiny"] if a.which == "all" else [a.which]):
        print(generate(a.root, name, a.scale))


if __name__ == "__main__":
    main()
