#!/usr/bin/env python3
"""Maintenance commands against their peers, each in one run:

  du        `barecat-du -s` on the 1M-file `tiny` archive          (target < 50 ms)
  symlink   `barecat-merge-symlink` of two 1M-file archives         (target < 10 s)
  merge     `barecat-merge` of two archives of half the `images` set each vs `cat`
            of their live bytes into one file                       (target <= 1.5x)
  defrag    full `barecat-defrag` after deleting 10% of the files vs `cp` of the live
            bytes                                                   (target <= 2x)

usage: bench/maint.py [--scale S] [--rounds N] [--only du,symlink,merge,defrag]

`cat` and `cp` do not sync; merge and defrag make their output durable (fdatasync
before every commit), so the peers also get a `sync` of their output in a second
variant, for a like-for-like comparison.
"""
import argparse
import sqlite3

from archives import archive, copy_archive, live_bytes, shards, warm
from harness import WORK, Case, ours, page_cache_warm, report, run, sh

ap = argparse.ArgumentParser()
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--only", default="du,symlink,merge,defrag")
a = ap.parse_args()
only = set(a.only.split(","))
s = f"{a.scale:g}"

if "du" in only:
    tiny = archive("tiny", a.scale)
    cases = [Case("barecat-du -s (ours)", f"{ours('barecat-du')} -s {tiny}")]
    res = run(f"du-tiny-{s}", cases, rounds=a.rounds, warm=[tiny])
    report(res, reference="barecat-du -s (ours)", targets=[
        ("du -s of the 1M-file archive under 50 ms", "barecat-du -s (ours)", None, 0.05,
         "seconds_le")])

if "symlink" in only:
    t1 = archive("tiny", a.scale, prefix="one")
    t2 = archive("tiny", a.scale, prefix="two")
    out = WORK / f"symlink-{s}.barecat"
    cases = [Case("barecat-merge-symlink (ours)",
                  f"{ours('barecat-merge-symlink')} -q -f -o {out} {t1} {t2}")]
    res = run(f"merge-symlink-tiny-{s}", cases, rounds=a.rounds, warm=[t1, t2])
    report(res, reference="barecat-merge-symlink (ours)", targets=[
        ("symlink merge of two 1M-file archives under 10 s", "barecat-merge-symlink (ours)",
         None, 10.0, "seconds_le")])

if "merge" in only:
    i1 = archive("images", a.scale, limit="1G", part=(0, 2))
    i2 = archive("images", a.scale, limit="1G", part=(1, 2))
    for x in (i1, i2):
        warm(x)
    out = WORK / f"merged-{s}.barecat"
    catout = WORK / f"merged-{s}.cat"
    clean = f"rm -f {out} {out}-shard-* {catout}"
    cases = [
        Case("barecat-merge (ours)", f"{ours('barecat-merge')} -q -f -o {out} {i1} {i2}",
             prepare=clean),
        Case("cat live bytes > file", f"cat {shards(i1)} {shards(i2)} > {catout}", prepare=clean,
             note="the inputs have no holes: their shards are exactly their live bytes"),
        Case("cat live bytes > file; sync", f"cat {shards(i1)} {shards(i2)} > {catout}; "
             f"sync {catout}", prepare=clean),
    ]
    res = run(f"merge-images-{s}", cases, rounds=a.rounds, cold=True)
    sh(clean)
    report(res, reference="barecat-merge (ours)", targets=[
        ("merge within 1.5x of cat of the live bytes", "barecat-merge (ours)",
         "cat live bytes > file", 1.5, "le"),
        ("merge within 1.5x of cat + sync", "barecat-merge (ours)",
         "cat live bytes > file; sync", 1.5, "le"),
    ])

if "defrag" in only:
    base = archive("images", a.scale, limit="1G")
    holey = WORK / f"holey-{s}.barecat"
    if not holey.exists():
        sh(copy_archive(base, holey))
        c = sqlite3.connect(holey)
        c.execute("PRAGMA recursive_triggers = ON")
        c.execute("DELETE FROM files WHERE rowid % 10 = 3")
        c.commit()
        c.close()
    live = live_bytes(holey)
    work = WORK / f"defrag-{s}.barecat"
    livefile = WORK / f"live-{s}.bin"
    copyfile = WORK / f"live-{s}.copy"
    sh(f"head -c {live} /dev/urandom > {livefile}")
    page_cache_warm(livefile)
    cases = [
        Case("barecat-defrag (ours)", f"{ours('barecat-defrag')} -q {work}",
             prepare=copy_archive(holey, work) + f"; sync {work} {shards(work)}; "
             f"cat {shards(work)} > /dev/null",
             note="after deleting 10% of the files; the copy of the archive is untimed "
                  "(and synced, so that no write of the copy is left for defrag's syncs)"),
        Case("cp of the live bytes", f"cp {livefile} {copyfile}", prepare=f"rm -f {copyfile}",
             note=f"{live} bytes"),
        Case("cp of the live bytes; sync", f"cp {livefile} {copyfile}; sync {copyfile}",
             prepare=f"rm -f {copyfile}"),
    ]
    res = run(f"defrag-images-{s}", cases, rounds=a.rounds, cold=True)
    sh(f"rm -f {work} {work}-shard-* {copyfile}")
    report(res, reference="barecat-defrag (ours)", targets=[
        ("full defrag within 2x of cp of the live bytes", "barecat-defrag (ours)",
         "cp of the live bytes", 2.0, "le"),
        ("full defrag within 2x of cp + sync", "barecat-defrag (ours)",
         "cp of the live bytes; sync", 2.0, "le"),
    ])
