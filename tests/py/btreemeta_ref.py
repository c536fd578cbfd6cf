"""An independent producer and parser of SFBTM v3 B-tree sidecars, written from
the format's description (docs/FORMAT.md §9): pages chosen with SQLite's `dbstat` through
APSW, read from the database file at (pageno - 1) * page_size, body compressed
with the `zstandard` package. The tests compare its output with barecat-sidecar's
byte for byte, and each side parses the other's.

usage:
  btreemeta_ref.py build INDEX OUT [LEVEL]   write INDEX's sidecar to OUT
  btreemeta_ref.py parse SIDECAR             print {"page_size", "pages": [[pageno,
                                             the page in hex], ...]} as JSON
Exit status 3 with a reason on stderr when the producer refuses (journal mode,
dbstat missing, short read).
"""
import json
import struct
import sys

import apsw
import zstandard

MAGIC = b"SFBTM\x00\x00\x00"
VERSION = 3
ROLLBACK_MODES = {"off", "delete", "memory", "truncate", "persist"}
SELECT = (
    "SELECT pageno FROM dbstat WHERE pagetype = 'internal' "
    "OR name IN ('sqlite_master', 'sqlite_schema') ORDER BY pageno"
)


class Refused(Exception):
    pass


def pick_pages(db_path):
    con = apsw.Connection(db_path, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        mode = con.execute("PRAGMA journal_mode").fetchone()[0].lower()
        if mode not in ROLLBACK_MODES:
            raise Refused(f"unsupported_journal_mode {mode}")
        size = con.execute("PRAGMA page_size").fetchone()[0]
        if not isinstance(size, int):
            raise Refused("invalid_page_size")
        try:
            numbers = {row[0] for row in con.execute(SELECT)}
        except apsw.SQLError as e:
            raise Refused(f"dbstat_unavailable {e}")
    finally:
        con.close()
    numbers.add(1)
    return size, sorted(numbers)


def build(db_path, level):
    size, numbers = pick_pages(db_path)
    slabs = []
    with open(db_path, "rb") as f:
        for n in numbers:
            f.seek((n - 1) * size)
            page = f.read(size)
            if len(page) != size:
                raise Refused(f"short_page_read {n}")
            slabs.append(page)
    count = len(numbers)
    first = 8 + 8 * count
    table = b"".join(
        struct.pack("<II", n, first + i * size) for i, n in enumerate(numbers)
    )
    body = struct.pack("<II", size, count) + table + b"".join(slabs)
    frame = zstandard.ZstdCompressor(level=level).compress(body)
    return MAGIC + struct.pack("<I", VERSION) + frame


def parse(blob):
    if blob[:8] != MAGIC:
        raise ValueError("bad magic")
    (version,) = struct.unpack("<I", blob[8:12])
    if version != VERSION:
        raise ValueError(f"format_version {version}")
    body = zstandard.ZstdDecompressor().decompress(blob[12:])
    size, count = struct.unpack("<II", body[:8])
    if size < 512 or size > 65536 or size & (size - 1):
        raise ValueError(f"page size {size}")
    pages = []
    last = 0
    for i in range(count):
        n, off = struct.unpack("<II", body[8 + 8 * i : 16 + 8 * i])
        if n <= last:
            raise ValueError(f"page {n} after {last}")
        if off + size > len(body):
            raise ValueError(f"page {n} out of bounds")
        last = n
        pages.append([n, body[off : off + size].hex()])
    return {"page_size": size, "pages": pages}


def main(argv):
    if argv[1] == "build":
        level = int(argv[4]) if len(argv) > 4 else 3
        try:
            blob = build(argv[2], level)
        except Refused as e:
            print(e, file=sys.stderr)
            return 3
        with open(argv[3], "wb") as f:
            f.write(blob)
        return 0
    if argv[1] == "parse":
        with open(argv[2], "rb") as f:
            print(json.dumps(parse(f.read())))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
