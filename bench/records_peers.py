#!/usr/bin/env python3
"""The peers of bench/records.py, each printing `count bytes crc32c` of the records it
gathered (CRC32C of all their bytes in request order, as `barecat-records gather
--digest` prints), so that the bench can check that every contender read the same
bytes.

usage:
  records_peers.py build-megatron FRAMED PREFIX   # PREFIX.bin + PREFIX.idx from a
                                                  # `gather --framing len` stream
  records_peers.py megatron PREFIX INDICES        # Megatron-style reader (numpy memmap)
  records_peers.py barecat ARCHIVE INDICES        # Python barecat 0.3.1, bc[path],
                                                  # record i = i-th path in path order
  records_peers.py indices N COUNT SEED OUT [--sorted]
"""
import random
import struct
import sys

MAGIC = b"MMIDIDX\x00\x00"


def read_indices(path):
    with open(path) as f:
        return [int(w) for w in f.read().split()]


def build_megatron(framed, prefix):
    """Write PREFIX.bin (the records back to back) and PREFIX.idx in the layout of
    Megatron-LM's MMapIndexedDataset: magic, version, dtype code (1 = uint8), number of
    sequences, number of documents, sizes int32[], pointers int64[], doc_idx int64[]."""
    import numpy as np
    sizes, pointers, pos = [], [], 0
    with open(framed, "rb") as f, open(prefix + ".bin", "wb") as out:
        while True:
            h = f.read(8)
            if len(h) < 8:
                break
            (n,) = struct.unpack("<Q", h)
            out.write(f.read(n))
            sizes.append(n)
            pointers.append(pos)
            pos += n
    with open(prefix + ".idx", "wb") as out:
        out.write(MAGIC)
        out.write(struct.pack("<Q", 1))
        out.write(struct.pack("<B", 1))
        out.write(struct.pack("<Q", len(sizes)))
        out.write(struct.pack("<Q", len(sizes) + 1))
        out.write(np.array(sizes, dtype=np.int32).tobytes(order="C"))
        out.write(np.array(pointers, dtype=np.int64).tobytes(order="C"))
        out.write(np.arange(len(sizes) + 1, dtype=np.int64).tobytes(order="C"))


class MMapIndexedDataset:
    """What Megatron-LM's reader does: memory-map the .idx, view sizes and pointers as
    numpy arrays, memory-map the .bin, and hand out np.frombuffer views."""

    def __init__(self, prefix):
        import numpy as np
        self.np = np
        idx = np.memmap(prefix + ".idx", mode="r", order="C")
        buf = memoryview(idx)
        assert bytes(buf[:9]) == MAGIC
        (n,) = struct.unpack("<Q", bytes(buf[18:26]))
        self.sizes = np.frombuffer(buf, dtype=np.int32, count=n, offset=34)
        self.pointers = np.frombuffer(buf, dtype=np.int64, count=n, offset=34 + 4 * n)
        self.bin = memoryview(np.memmap(prefix + ".bin", mode="r", order="C"))

    def __getitem__(self, i):
        ptr, size = self.pointers[i], self.sizes[i]
        return self.np.frombuffer(self.bin, dtype=self.np.uint8, count=size, offset=ptr)


def megatron(prefix, indices):
    import crc32c
    ds = MMapIndexedDataset(prefix)
    crc, count, total = 0, 0, 0
    for i in read_indices(indices):
        a = ds[i]
        crc = crc32c.crc32c(a, crc)
        count += 1
        total += a.size
    print(f"{count} {total} {crc:08x}")


def barecat_reader(archive, indices):
    import crc32c
    from barecat import Barecat
    with Barecat(archive) as bc:
        paths = sorted(bc.index.iter_all_filepaths())
        crc, count, total = 0, 0, 0
        for i in read_indices(indices):
            data = bc[paths[i]]
            crc = crc32c.crc32c(data, crc)
            count += 1
            total += len(data)
    print(f"{count} {total} {crc:08x}")


def make_indices(n, count, seed, out, sort):
    rng = random.Random(seed)
    idx = [rng.randrange(n) for _ in range(count)]
    if sort:
        idx.sort()
    with open(out, "w") as f:
        f.write("\n".join(map(str, idx)) + "\n")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "build-megatron":
        build_megatron(*args)
    elif cmd == "megatron":
        megatron(*args)
    elif cmd == "barecat":
        barecat_reader(*args)
    elif cmd == "indices":
        make_indices(int(args[0]), int(args[1]), int(args[2]), args[3], "--sorted" in args)
    else:
        raise SystemExit(__doc__)
