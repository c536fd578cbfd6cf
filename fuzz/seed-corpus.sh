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
mkdir -p "$out"/{tar_import,zip_import,archive_bytes,archive_rows,records_open,sidecar_parse,decompress,archive_import}

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
# The archives other tools wrote over the years, crafted block by block: sizes on
# headers that carry no data (with and without data behind them), signed
# checksums, Solaris X and global PAX headers, duplicate names, a damaged header,
# a lone zero block, an unknown type, names that are not UTF-8.
python3 - "$T" <<'PY'
import sys
out = sys.argv[1]
def octal(n, w):
    return ("%0*o" % (w - 1, n)).encode() + b"\0"
def header(name, typ=b"0", size=0, link=b"", magic=b"ustar\x0000", signed=False, uname=b"root"):
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108] = octal(0o644, 8); h[108:116] = octal(0, 8); h[116:124] = octal(0, 8)
    h[124:136] = octal(size, 12); h[136:148] = octal(1700000000, 12)
    h[148:156] = b" " * 8
    h[156:157] = typ
    h[157:157 + len(link)] = link
    h[257:265] = magic
    h[265:265 + len(uname)] = uname
    s = sum((b - 256 if b > 127 else b) for b in h) if signed else sum(h)
    h[148:156] = ("%06o" % s).encode() + b"\0 "
    return bytes(h)
def data(b):
    return b + b"\0" * (-len(b) % 512)
def pax(typ, recs):
    body = b""
    for k, v in recs:
        rec = b" " + k + b"=" + v + b"\n"
        n = len(rec) + 1
        while len(str(n).encode()) + len(rec) != n:
            n += 1
        body += str(n).encode() + rec
    return header(b"PaxHeaders/x", typ, len(body)) + data(body)
def write(name, parts):
    open(f"{out}/{name}", "wb").write(b"".join(parts) + b"\0" * 1024)
tail = [header(b"empty-file"), header(b"after", size=3), data(b"abc")]
for t in b"123456V":
    t = bytes([t])
    link = b"f0" if t in b"12" else b""
    name = b"x/" if t == b"5" else b"x"
    write(f"craft-nodata-{t.decode()}.tar", [header(b"f0", size=2), data(b"f0"), header(name, t, 255, link)] + tail)
    write(f"craft-data-{t.decode()}.tar", [header(b"f0", size=2), data(b"f0"), header(name, t, 255, link), data(b"Q" * 255)] + tail)
write("craft-slash-dirs.tar", [header(b"d/", b"0", 255), header(b"e/", b"\0", 100)] + tail)
write("craft-signed.tar", [header(b"s", size=1, signed=True, uname=b"\xe4\xf6\xfc"), data(b"s")] + tail)
write("craft-solaris-x.tar", [pax(b"g", [(b"mtime", b"1.5"), (b"uid", b"7")]), pax(b"X", [(b"path", b"solaris/" * 20 + b"f"), (b"mtime", b"1041808783.123")]), header(b"short", size=2), data(b"xy")] + tail)
write("craft-duplicates.tar", [header(b"a", size=1), data(b"1"), header(b"a", size=2), data(b"22"), header(b"l", b"1", 0, b"a"), header(b"./a", size=3), data(b"333")])
bad = bytearray(header(b"damaged", size=600)); bad[0] ^= 1
write("craft-damaged.tar", [header(b"a", size=1), data(b"a"), bytes(bad), data(b"z" * 600)] + tail)
write("craft-lone-zero.tar", [header(b"a", size=1), data(b"a"), b"\0" * 512, header(b"b", size=1), data(b"b")])
write("craft-types.tar", [header(b"u", b"Z", 3), data(b"zzz"), header(b"m", b"M", 3), data(b"mmm"), header(b"caf\xe9", size=1), data(b"c")])
PY
# CPython's tarfile test archives, where installed (libFuzzer reads their first
# -max_len bytes).
for f in /usr/lib/python3*/test/testtar.tar /root/.pyenv/versions/*/lib/python*/test/testtar.tar \
    /root/.pyenv/versions/*/lib/python*/test/archivetestdata/testtar.tar; do
    [ -f "$f" ] && cp "$f" "$T/cpython-$(sha1sum <"$f" | cut -c1-8).tar"
done
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
# Names written on Windows with backslashes, and a name twice.
import warnings
warnings.simplefilter("ignore")
with zipfile.ZipFile(f"{out}/py-backslash-dup.zip", "w") as z:
    for name, data in [("a\\b\\c", b"abc"), ("d\\e\\", b""), ("x", b"1"), ("x", b"22")]:
        zi = zipfile.ZipInfo(name, (2024, 1, 2, 3, 4, 6))
        zi.create_system = 0
        z.writestr(zi, data)
PY

# Other formats for archive_import (small, from the tools installed here), and
# compressed streams for decompress (its first byte chooses the decoder: 0 auto,
# 1 lz4, 2 compress, 3 gzip, 4 names, 5 lz4 round trip).
A=$out/archive_import
for f in 7zip cpio newc odc bin xar argnu arbsd iso9660 zip pax; do
    bsdtar -C "$t" --format $f -cf "$A/bsd.$f" a.txt d hard 2>/dev/null || true
done
bsdtar -C "$t" --format newc --gzip -cf "$A/bsd.newc.gz" a.txt d hard
(cd "$t" && find a.txt d | cpio -o -H crc --quiet >"$OLDPWD/$A/gnu.crc") || true
(cd "$t" && 7z a -bd -m0=PPMd "$OLDPWD/$A/p7.7z" a.txt d >/dev/null) || true
(cd "$t" && gcab -c "$OLDPWD/$A/t.cab" a.txt d/b.bin) 2>/dev/null || true
D=$out/decompress
for mode in 0 1 2 3; do :; done
{ printf '\000'; lz4 -q -c "$base"; } >"$D/auto-lz4"
{ printf '\000'; lzip -c "$base"; } >"$D/auto-lzip"
{ printf '\000'; compress -c "$base"; } >"$D/auto-Z"
{ printf '\001'; lz4 -q -B4 -BD -BX -c "$base"; } >"$D/lz4-linked"
{ printf '\001'; lz4 -q -l -c "$base"; } >"$D/lz4-legacy"
{ printf '\002'; compress -c "$base" | tail -c +3; } >"$D/lzw"
{ printf '\003'; gzip -c "$base" | tail -c +3; printf 'trailing'; } >"$D/gzip"
printf '\004\x8f\xe0\xa8' >"$D/names"
{ printf '\005\x3f'; head -c 3000 "$base"; } >"$D/roundtrip"

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

# Record datasets and tables for records_open, written from docs/FORMAT.md
# alone: a dataset split as [u32 len][meta.json][u32 len][offset][u32 len][crc]
# [u32 len][chunk 0][u32 len][chunk 1] after a 0 byte, and (after a 1 byte) the
# record table of the target's archive (a: "hello", b/c: "world!", e: empty).
python3 - "$out/records_open" <<'PY'
import json, struct, sys
out = sys.argv[1]
def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF
recs = [b"hello", b"world!!", b"", b"x" * 100, bytes(range(40))]
chunks = [b"", b""]
offset = b""; crc = b""
for i, r in enumerate(recs):
    c = i % 2
    if r:
        offset += struct.pack("<IQI", c, len(chunks[c]), len(r))
    else:
        offset += bytes(16)
    crc += struct.pack("<I", crc32c(r) if r else 0)
    chunks[c] += r
for variant, extra in [("plain", {}), ("redo", {"redo": [[0, 1, 0, 7, crc32c(b"world!!")]]}),
                       ("retire", {"retire": [5]})]:
    meta = {"format": "zrecord", "version": 1, "length": len(recs), "dtype": "bytes",
            "compress": "none",
            "chunks": {"num": 2, "size": 65536, "max_bytes": 1 << 30, "grow": 1 << 30,
                       "unfull": [[0, len(chunks[0]), 3], [1, len(chunks[1]), 2]]},
            "table_grow": 1 << 20}
    meta.update(extra)
    parts = [json.dumps(meta).encode(), offset, crc, chunks[0], chunks[1]]
    open(f"{out}/{variant}", "wb").write(b"\0" + b"".join(struct.pack("<I", len(p)) + p for p in parts))
entries = struct.pack("<IQI", 0, 0, 5) + struct.pack("<IQI", 0, 5, 6) + bytes(16)
crcs = struct.pack("<III", crc32c(b"hello"), crc32c(b"world!"), 0)
h = bytearray(4096)
h[0:8] = b"BCRECTBL"; h[8:12] = struct.pack("<I", 1); h[12:16] = struct.pack("<I", 4096)
h[16:24] = struct.pack("<Q", 3); h[24] = 0
h[48:56] = struct.pack("<Q", 3); h[56:64] = struct.pack("<Q", 11)
h[72:76] = struct.pack("<I", crc32c(bytes(h[:72])))
open(f"{out}/table", "wb").write(b"\1" + bytes(h) + entries + crcs)
PY
du -sh "$out"/*
