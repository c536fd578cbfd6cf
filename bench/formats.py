#!/usr/bin/env python3
"""Import of other archive formats: ours against the tools that read them, side by
side in one run, on the `images` dataset (incompressible ~50 KB files, like JPEGs).

usage: bench/formats.py [--scale S] [--rounds N] [--only NAME,...]

Targets, as ratios of medians (outputs on tmpfs, inputs warm in the page cache):
  * .tar.lz4, .tar.lz, .tar.Z: `barecat-from-tar IN OUT` within 1.2x of
    `lz4 -dc` / `lzip -dc` / `uncompress -c` piped into `barecat-from-tar - OUT`;
  * .7z: `barecat-from-archive` within 1.2x of `7z x` to tmpfs;
  * rar, ISO 9660, cpio: `barecat-from-archive` within 1.2x of `bsdtar -x` to tmpfs.
The decoder alone (`... -dc IN > /dev/null`) is timed too: the floor of both.

The rar is stored (the tool that writes compressed rars is not free software; a
stored rar is what a dataset of JPEGs becomes anyway), written by a few lines of
Python here; the others by their own tools.
"""
import argparse
import struct
import zlib
from pathlib import Path

from harness import DATA, WORK, Case, ours, report, run, sh

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--scale", type=float, default=0.06)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--only", default="", help="comma-separated: lz4,lzip,Z,7z,rar,iso,cpio")
a = ap.parse_args()
only = set(filter(None, a.only.split(",")))

sh(f"python3 gen_dataset.py images --scale {a.scale:g} > /dev/null", cwd=str(WORK.parent))
t = DATA / ("images" if a.scale == 1 else f"images@{a.scale:g}")
WORK.mkdir(parents=True, exist_ok=True)
SHM = Path("/dev/shm/barecat-bench-formats")
SHM.mkdir(parents=True, exist_ok=True)
name = t.name
src = f"-C {t.parent} {name}"


def made(path, cmd):
    """Make `path` with `cmd` once (it writes `path`.tmp)."""
    if not path.exists():
        sh(cmd.format(out=f"{path}.tmp"))
        Path(f"{path}.tmp").rename(path)
    return path


def rar5(out, root):
    """A RAR 5 archive of the files below `root`, stored."""
    def vint(n):
        b = bytearray()
        while True:
            c = n & 0x7f
            n >>= 7
            b.append(c | (0x80 if n else 0))
            if not n:
                return bytes(b)

    def header(body):
        h = vint(len(body)) + body
        return struct.pack("<I", zlib.crc32(h)) + h

    with open(out, "wb") as f:
        f.write(b"Rar!\x1a\x07\x01\x00")
        f.write(header(b"\x01\x00\x00"))
        for p in sorted(root.rglob("*")):
            if not p.is_file() or p.name.startswith("."):
                continue
            data = p.read_bytes()
            rel = str(p.relative_to(root.parent)).encode()
            body = (vint(2) + vint(2) + vint(len(data)) + vint(0x6) + vint(len(data)) + vint(0o100644)
                    + struct.pack("<II", int(p.stat().st_mtime), zlib.crc32(data))
                    + vint(0) + vint(1) + vint(len(rel)) + rel)
            f.write(header(body))
            f.write(data)
        f.write(header(b"\x05\x00\x00"))


tar = made(WORK / f"{name}.tar", f"tar -cf {{out}} {src}")
inputs = {
    "lz4": made(WORK / f"{name}.tar.lz4", f"lz4 -q -c {tar} > {{out}}"),
    "lzip": made(WORK / f"{name}.tar.lz", f"lzip -c {tar} > {{out}}"),
    "Z": made(WORK / f"{name}.tar.Z", f"compress -c {tar} > {{out}}"),
    "7z": made(WORK / f"{name}.7z", f"7z a -bd {{out}}.7z {t} > /dev/null && mv {{out}}.7z {{out}}"),
    "iso": made(WORK / f"{name}.iso", f"genisoimage -quiet -R -J -o {{out}} {t}"),
    "cpio": made(WORK / f"{name}.cpio", f"bsdtar --format newc -cf {{out}} {src}"),
}
rar = WORK / f"{name}.rar"
if not rar.exists():
    rar5(f"{rar}.tmp", t)
    Path(f"{rar}.tmp").rename(rar)
inputs["rar"] = rar

decoders = {"lz4": "lz4 -dc", "lzip": "lzip -dc", "Z": "uncompress -c"}
results = []
for fmt, path in inputs.items():
    if only and fmt not in only:
        continue
    out = SHM / f"out-{fmt}"
    clean = f"rm -rf {out}*"
    ref_dir = SHM / f"x-{fmt}"
    OURS = f"ours ({fmt})"
    if fmt in decoders:
        dec = decoders[fmt]
        PIPE = f"{dec} | from-tar -"
        cases = [
            Case(OURS, f"{ours('barecat-from-tar')} -q {path} {out}.barecat", prepare=clean),
            Case(PIPE, f"{dec} {path} | {ours('barecat-from-tar')} -q - {out}.barecat", prepare=clean),
            Case(f"{dec} > /dev/null (floor)", f"{dec} {path} > /dev/null"),
        ]
        targets = [(f"{fmt}: within 1.2x of {dec} piped into from-tar", OURS, PIPE, 1.2, "le")]
    else:
        ref = "7z x" if fmt == "7z" else "bsdtar -x"
        cmd = (f"7z x -bd -y -o{ref_dir} {path} > /dev/null" if fmt == "7z"
               else f"mkdir -p {ref_dir} && bsdtar -xf {path} -C {ref_dir}")
        REF = f"{ref} to tmpfs"
        cases = [
            Case(OURS, f"{ours('barecat-from-archive')} -q {path} {out}.barecat", prepare=clean),
            Case(REF, cmd, prepare=f"rm -rf {ref_dir}"),
        ]
        targets = [(f"{fmt}: within 1.2x of {ref} to tmpfs", OURS, REF, 1.2, "le")]
    res = run(f"formats-{fmt}-{a.scale:g}", cases, rounds=a.rounds, warm=[path])
    results.append(report(res, reference=OURS, targets=targets,
                          extra=f"Input: `{path.name}` ({path.stat().st_size / 2**20:.0f} MiB; "
                                f"{(t / '.complete').read_text().strip()} files of `{name}`)."))
    sh(f"rm -rf {out}* {ref_dir}")
print("\n".join(f"{d}: {'met' if ok else 'NOT met'}" for r in results for d, ok in r))
