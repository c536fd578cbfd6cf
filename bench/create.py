#!/usr/bin/env python3
"""Create: `barecat-create` against Python barecat's `barecat create`, GNU `tar -cf` and
the read bound `find … -type f -print0 | xargs -0 cat > /dev/null`, on the `images` and
`tiny` datasets, in the same run.

usage: bench/create.py [--scale S] [--rounds N] [--sets images,tiny] [--no-python]

Targets, as median ratios:
  * at least 10x faster than Python's `barecat create` (default invocation, one thread);
  * no slower than `tar -cf` of the same tree (ratio <= 1.0), on both sets;
  * on `images`, within 1.3x of the read bound;
  * peak RSS below 100 MB for the create of the 1M-file `tiny` set;
  * per-file cost at 1M files within 1.2x of that at 100k (`tiny` at 1/10 of the
    scale is timed too: the time ratio must stay <= 12 for 10x the files).

Our create fdatasyncs the shards before every commit (durability); tar does not sync.
Every run starts cold: the page cache is dropped before it (untimed).
"""
import argparse

from harness import DATA, WORK, Case, ours, py_barecat, report, run, sh

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--sets", default="images,tiny")
ap.add_argument("--no-python", action="store_true", help="leave out Python barecat (slow)")
a = ap.parse_args()


def tree(name, scale):
    sh(f"python3 gen_dataset.py {name} --scale {scale:g} > /dev/null", cwd=str(WORK.parent))
    return DATA / (name if scale == 1 else f"{name}@{scale:g}")


def cases(t, tag):
    out = WORK / f"create-{tag}"
    return [
        Case("barecat-create (ours)",
             f"{ours('barecat-create')} -q -f {out}.barecat -C {t.parent} {t.name}",
             prepare=f"rm -f {out}.barecat {out}.barecat-shard-*"),
        Case("tar -cf", f"tar -cf {out}.tar -C {t.parent} {t.name}", prepare=f"rm -f {out}.tar"),
        Case("read bound (find | xargs cat)",
             f"find {t} -type f -print0 | xargs -0 cat > /dev/null"),
    ] + ([] if tag != "images" else [
        Case("read + write bound (find | xargs cat > one file; sync)",
             f"find {t} -type f -print0 | xargs -0 cat > {out}.cat; sync",
             prepare=f"rm -f {out}.cat",
             note="reads every file and writes their bytes once, durably"),
    ]) + ([] if a.no_python else [
        Case("python barecat create",
             f"{py_barecat()} create -f -C {t.parent} {out}-py.barecat {t.name}",
             prepare=f"rm -f {out}-py.barecat {out}-py.barecat-shard-*"),
    ])


OURS = "barecat-create (ours)"
for name in a.sets.split(","):
    t = tree(name, a.scale)
    cs = cases(t, name)
    targets = [("no slower than tar -cf (ratio <= 1.0)", OURS, "tar -cf", 1.0, "le")]
    if not a.no_python:
        targets.insert(0, ("at least 10x faster than Python barecat create", OURS,
                           "python barecat create", 10.0, "ge_speedup"))
    if name == "images":
        targets.append(("within 1.3x of the read bound", OURS, "read bound (find | xargs cat)",
                        1.3, "le"))
    if name == "tiny":
        targets.append(("peak RSS < 100 MB", OURS, None, 100.0, "rss_mb_le"))
        small = tree(name, a.scale / 10)
        out = WORK / "create-tiny-small"
        cs.append(Case("barecat-create (ours), 1/10 of the files",
                       f"{ours('barecat-create')} -q -f {out}.barecat -C {small.parent} {small.name}",
                       prepare=f"rm -f {out}.barecat {out}.barecat-shard-*"))
        targets.append(("per-file cost at 10x the files <= 1.2x (time ratio <= 12)", OURS,
                        "barecat-create (ours), 1/10 of the files", 12.0, "le"))
    res = run(f"create-{name}-{a.scale:g}", cs, rounds=a.rounds, cold=True)
    report(res, reference=OURS, targets=targets,
           extra=f"Dataset: `{t.name}` ({(t / '.complete').read_text().strip()} files).")
