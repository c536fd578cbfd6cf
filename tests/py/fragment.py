"""Make a fragmented archive with Python barecat, for the defrag comparisons.

usage: fragment.py ARCHIVE SEED FILES SHARD_LIMIT [equal]

Adds FILES files of pseudo-random sizes (1 byte to 40 KB, a few up to 400 KB; with
`equal`, all of 4096 bytes, as records or thumbnails of one size) in a few
directories, then deletes about a third of them at random: the holes of an archive
that lived a while.
"""
import random
import sys

from barecat import Barecat

archive, seed, n, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
equal = sys.argv[5:] == ["equal"]
rng = random.Random(seed)
with Barecat(archive, readonly=False, overwrite=True, shard_size_limit=limit) as bc:
    paths = []
    for i in range(n):
        size = rng.randint(1, 40_000) if rng.random() < 0.95 else rng.randint(1, 400_000)
        if equal:
            size = 4096
        p = f"d{i % 7}/f{i:05d}.bin"
        block = bytes(rng.getrandbits(8) for _ in range(64))
        bc[p] = (block * (size // 64 + 1))[:size]
        paths.append(p)
    for p in rng.sample(paths, n // 3):
        del bc[p]
print("fragmented")
