#!/usr/bin/env python3
"""Reshard and convert --wrap against their bounds and Python barecat, each in one run:

  reshard   `barecat reshard` of the `images` archive (5 GB at scale 1), 1 GiB
            shards to 256 MiB ones (the first shard stays, the rest is written
            once) and back (files move into the larger shards), vs `cp` of the
            archive's bytes, without and with `sync`            (target <= 2x cp)
            Python barecat's reshard is timed where it works: to larger shards
            (to smaller ones it fails once the archive has more files than its
            first fetch, see tests/it/maint/dropin.rs).
  wrap      `barecat convert --wrap` of a GNU tar of `images` (an index of the
            tar in place, with the CRC32C of every member computed on the way)
            vs reading the tar once, `cat x.tar > /dev/null`      (target <= 1.3x)
            and Python barecat's `convert --wrap` (which reads only the headers
            and stores no checksum)

usage: bench/reshard_wrap.py [--scale S] [--rounds N] [--only reshard,wrap]
                             [--cache cold|warm]

Every run starts cold (page cache dropped, needs root) unless --cache warm, where
the input is read into the page cache right before every run. The archive that
reshard rewrites is copied back into place before every run (untimed, synced).
"""
import argparse

from archives import archive, copy_archive, shards
from harness import DATA, WORK, Case, ours, py_barecat, report, run, sh

ap = argparse.ArgumentParser(description=__doc__,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--only", default="reshard,wrap")
ap.add_argument("--cache", default="cold", choices=["cold", "warm"])
a = ap.parse_args()
only = set(a.only.split(","))
s = f"{a.scale:g}"
cold = a.cache == "cold"
BARECAT = ours("barecat")

if "reshard" in only:
    # At small scales the shards shrink with the data, so that the same moves happen.
    big = "1G" if a.scale >= 1 else f"{max(int(1024 * a.scale), 1)}M"
    small = "256M" if a.scale >= 1 else f"{max(int(256 * 1024 * a.scale), 64)}K"
    base = archive("images", a.scale, limit=big)
    tiny_shards = WORK / f"images-{s}-reshard-small.barecat"
    if not tiny_shards.exists():
        sh(copy_archive(base, tiny_shards))
        sh(f"{BARECAT} reshard -q -s {small} {tiny_shards}")
    work = WORK / f"reshard-{s}.barecat"
    pywork = WORK / f"reshard-py-{s}.barecat"
    copyfile = WORK / f"reshard-{s}.copy"
    prepare = lambda src, dst: (copy_archive(src, dst) + f"; sync {dst} {shards(dst)}"
                                + f"; cat {shards(dst)} > /dev/null")
    cases = [
        Case(f"barecat reshard -s {small} (ours)", f"{BARECAT} reshard -q -s {small} {work}",
             prepare=prepare(base, work),
             note=f"from {big} shards: the first shard stays, the rest is written once"),
        Case(f"barecat reshard -s {big} (ours)", f"{BARECAT} reshard -q -s {big} {work}",
             prepare=prepare(tiny_shards, work),
             note=f"from {small} shards: files move into the first shards"),
        Case(f"python barecat reshard -s {big}", f"{py_barecat()} reshard -s {big} {pywork}",
             prepare=prepare(tiny_shards, pywork)),
        Case("copy of the archive's bytes", f"cat {shards(base)} > {copyfile}",
             prepare=f"rm -f {copyfile}; cat {shards(base)} > /dev/null",
             note="one file holding every shard's bytes"),
        Case("copy of the archive's bytes; sync", f"cat {shards(base)} > {copyfile}; sync {copyfile}",
             prepare=f"rm -f {copyfile}; cat {shards(base)} > /dev/null"),
    ]
    res = run(f"reshard-images-{s}-{a.cache}", cases, rounds=a.rounds, cold=cold,
              warm=[] if cold else [base])
    sh(f"rm -f {work} {work}-shard-* {pywork} {pywork}-shard-* {copyfile}")
    report(res, reference=f"barecat reshard -s {small} (ours)", targets=[
        ("reshard to smaller shards within 2x of cp of the bytes",
         f"barecat reshard -s {small} (ours)", "copy of the archive's bytes", 2.0, "le"),
        ("reshard to larger shards within 2x of cp of the bytes",
         f"barecat reshard -s {big} (ours)", "copy of the archive's bytes", 2.0, "le"),
        ("reshard to smaller shards within 2x of cp + sync",
         f"barecat reshard -s {small} (ours)", "copy of the archive's bytes; sync", 2.0, "le"),
    ], extra="Ours fdatasyncs what it writes before every commit; `cp` (`cat > file`) "
             "does not, hence the variant with `sync`.")

if "wrap" in only:
    sh(f"python3 gen_dataset.py images --scale {a.scale:g} > /dev/null", cwd=str(WORK.parent))
    t = DATA / ("images" if a.scale == 1 else f"images@{a.scale:g}")
    WORK.mkdir(parents=True, exist_ok=True)
    tar = WORK / f"{t.name}.tar"
    if not tar.exists():
        sh(f"tar -cf {tar}.tmp -C {t.parent} {t.name} && mv {tar}.tmp {tar}")
    out = WORK / f"wrap-{s}.barecat"
    pyout = WORK / f"wrap-py-{s}.barecat"
    OURS = "barecat convert --wrap (ours)"
    cases = [
        Case(OURS, f"{BARECAT} convert -q -f --wrap {tar} {out}",
             note="CRC32C of every member"),
        Case("cat x.tar > /dev/null", f"cat {tar} > /dev/null"),
        Case("python barecat convert --wrap", f"{py_barecat()} convert -f --wrap {tar} {pyout}",
             note="headers only, no checksum"),
    ]
    res = run(f"wrap-images-{s}-{a.cache}", cases, rounds=a.rounds, cold=cold,
              warm=[] if cold else [tar])
    sh(f"rm -f {out} {out}-shard-* {out}-btreemeta {pyout} {pyout}-shard-*")
    report(res, reference=OURS, targets=[
        ("convert --wrap within 1.3x of reading the tar once", OURS, "cat x.tar > /dev/null",
         1.3, "le"),
    ], extra=f"Input: GNU tar of `{t.name}` ({tar.stat().st_size / 2**20:.0f} MiB).")
