#!/usr/bin/env bash
# Build the seed corpora of the fuzz targets in fuzz/corpus/<target>/ from small real
# files: tar streams written by GNU tar, bsdtar and Python (every header format,
# long names, links, sparse files, each compression), zip files written by Info-ZIP,
# bsdtar and Python (every method the importer reads, zip64, symlinks), and small
# barecat archives for the archive targets. A few KB each; nothing here is committed.
set -euo pipefail
cd "$(dirname "$0")"
out=corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"/{tar_import,zip_import,archive_bytes,archive_rows,sidecar_parse}

# A small tree with every kind of member.
t=$tmp/tree
mkdir -p "$t/d/e" "$t/empty"
printf 'hello\n' >"$t/a.txt"
printf 'x%.0s' $(seq 1 700) >"$t/d/b.bin"
: >"$t/d/e/zero"
ln -s ../a.txt "$t/d/link"
ln "$t/a.txt" "$t/hard"
long=$(printf 'n%.0s' $(seq 1 120))
printf 'long\n' >"$t/d/$long"
truncate -s 64K "$t/sparse"
printf 'end' >>"$t/sparse"
chmod 4755 "$t/d/b.bin"
touch -d '2001-02-03 04:05:06.789' "$t/a.txt"

T=$out/tar_import
for f in gnu oldgnu ustar pax v7; do
    tar -C "$t" -b 1 --format=$f -cf "$T/gnu-$f.tar" a.txt d empty hard 2>/dev/null || true
done
tar -C "$t" -b 1 --format=pax --sparse -cf "$T/gnu-sparse-pax.tar" sparse
tar -C "$t" -b 1 --format=gnu --sparse -cf "$T/gnu-sparse-gnu.tar" sparse
for f in pax ustar gnutar v7 cpio; do
    bsdtar -C "$t" --format $f -cf "$T/bsd-$f.tar" a.txt d hard 2>/dev/null || true
done
python3 - "$t" "$T" <<'PY'
import sys, tarfile, io
t, out = sys.argv[1], sys.argv[2]
for name, fmt in [("py-pax", tarfile.PAX_FORMAT), ("py-gnu", tarfile.GNU_FORMAT),
                  ("py-ustar", tarfile.USTAR_FORMAT)]:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tf:
        tf.add(f"{t}/a.txt", "a.txt")
        if fmt != tarfile.USTAR_FORMAT:
            tf.add(f"{t}/d", "d")
        ti = tarfile.TarInfo("x/" + "é" * (60 if fmt != tarfile.USTAR_FORMAT else 20))
        ti.size = 3
        ti.mtime = 1.5
        tf.addfile(ti, io.BytesIO(b"abc"))
    open(f"{out}/{name}.tar", "wb").write(buf.getvalue().rstrip(b"\0") + b"\0" * 1024)
PY
base=$T/gnu-pax.tar
gzip -9c "$base" >"$T/c.tar.gz"
bzip2 -9c "$base" >"$T/c.tar.bz2"
xz -c "$base" >"$T/c.tar.xz"
zstd -q -19 -c "$base" >"$T/c.tar.zst"

Z=$out/zip_import
(cd "$t" && zip -q -r -y -X "$OLDPWD/$Z/infozip-deflate.zip" a.txt d empty)
(cd "$t" && zip -q -r -y -0 "$OLDPWD/$Z/infozip-store.zip" a.txt d)
(cd "$t" && zip -q -fz "$OLDPWD/$Z/infozip-zip64.zip" a.txt)
(cd "$t" && printf 'stdin' | zip -q "$OLDPWD/$Z/infozip-stream.zip" -)
bsdtar -C "$t" --format zip -cf "$Z/bsd.zip" a.txt d
bsdtar -C "$t" --format zip --options zip:compression=store -cf "$Z/bsd-store.zip" a.txt
python3 - "$Z" <<'PY'
import sys, zipfile
out = sys.argv[1]
for name, m in [("py-stored", zipfile.ZIP_STORED), ("py-deflated", zipfile.ZIP_DEFLATED),
                ("py-bzip2", zipfile.ZIP_BZIP2), ("py-lzma", zipfile.ZIP_LZMA)]:
    with zipfile.ZipFile(f"{out}/{name}.zip", "w", m) as z:
        z.writestr("a/b.txt", b"hello " * 20)
        z.writestr("a/", b"")
        zi = zipfile.ZipInfo("../evil", (2020, 1, 2, 3, 4, 6))
        zi.external_attr = 0o100644 << 16
        z.writestr(zi, b"x")
PY

# Barecat archives: archive_bytes takes a 4-byte little-endian index length, the
# index, then one shard; archive_rows takes 11-byte edit operations.
python3 - "$tmp" "$out" <<'PY'
import sys, sqlite3, struct, zlib, os
tmp, out = sys.argv[1], sys.argv[2]
p = f"{tmp}/s.barecat"
c = sqlite3.connect(p)
c.executescript("""
PRAGMA page_size=512;
CREATE TABLE files(path TEXT PRIMARY KEY NOT NULL, parent TEXT, shard INTEGER NOT NULL,
  offset INTEGER NOT NULL, size INTEGER DEFAULT 0, crc32c INTEGER DEFAULT NULL,
  mode INTEGER DEFAULT NULL, uid INTEGER DEFAULT NULL, gid INTEGER DEFAULT NULL,
  mtime_ns INTEGER DEFAULT NULL);
CREATE TABLE dirs(path TEXT PRIMARY KEY, parent TEXT, num_subdirs INTEGER DEFAULT 0,
  num_files INTEGER DEFAULT 0, num_files_tree INTEGER DEFAULT 0,
  size_tree INTEGER DEFAULT 0, mode INTEGER DEFAULT NULL, uid INTEGER DEFAULT NULL,
  gid INTEGER DEFAULT NULL, mtime_ns INTEGER DEFAULT NULL);
CREATE TABLE config(key TEXT PRIMARY KEY, value_text TEXT DEFAULT NULL,
  value_int INTEGER DEFAULT NULL) WITHOUT ROWID;
INSERT INTO config VALUES('use_triggers',NULL,1),('shard_size_limit',NULL,9223372036854775807),
  ('schema_version_major',NULL,0),('schema_version_minor',NULL,3);
INSERT INTO dirs VALUES('',NULL,1,1,2,8,16877,NULL,NULL,NULL),('a','',0,1,1,3,16877,NULL,NULL,NULL);
""")
c.execute("INSERT INTO files VALUES('x','',0,0,5,?,33188,0,0,0)", (0,))
c.execute("INSERT INTO files VALUES('a/y','a',0,5,3,NULL,33188,0,0,0)")
c.commit(); c.close()
idx = open(p, "rb").read()
open(f"{out}/archive_bytes/small", "wb").write(struct.pack("<I", len(idx)) + idx + b"hello" + b"abc")
for i in range(8):
    open(f"{out}/archive_rows/op{i}", "wb").write(bytes([i * 37 % 256, i]) + os.urandom(9))
# sidecar_parse: a mode byte (even: a sidecar file follows; odd: a body, which the
# target compresses), index length (u32 LE), page-1 length (u16 LE), page 1, then
# the sidecar or the body. The sidecars bundle every page of the small index
# (512-byte pages), compressed by the zstd program (with and without a checksum);
# one has page 1 with only its 100-byte header given, one is of another format.
import subprocess
ps = 512
n = len(idx) // ps
def body(pagenos):
    first = 8 + 8 * len(pagenos)
    return struct.pack("<II", ps, len(pagenos)) + b"".join(
        struct.pack("<II", p, first + i * ps) for i, p in enumerate(pagenos)
    ) + b"".join(idx[(p - 1) * ps : p * ps] for p in pagenos)
def sidecar(pagenos, extra=()):
    frame = subprocess.run(["zstd", "-q", "-3", "-c", *extra], input=body(pagenos),
                           capture_output=True, check=True).stdout
    return b"SFBTM\0\0\0" + struct.pack("<I", 3) + frame
def seed(name, mode, blob, p1=idx[:ps]):
    open(f"{out}/sidecar_parse/{name}", "wb").write(
        bytes([mode]) + struct.pack("<IH", len(idx), len(p1)) + p1 + blob)
seed("all-pages", 0, sidecar(list(range(1, n + 1)), ["--no-check"]))
seed("all-pages-checksum", 0, sidecar(list(range(1, n + 1))))
seed("page1-header-only", 0, sidecar([1]), idx[:100])
seed("other-format", 0, b"SQPC\0\0\0\0" + bytes(40))
seed("body-all-pages", 1, body(list(range(1, n + 1))))
seed("body-page1", 1, body([1]))
PY
du -sh "$out"/*
