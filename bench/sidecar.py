#!/usr/bin/env python3
"""B-tree sidecar (`ARCHIVE-btreemeta`): its size as a fraction of the index, and the
time to write it as a fraction of the create that produced the archive, for the
`tiny` set at 100k and at 1M files; side by side with the reference producer
(tests/py/btreemeta_ref.py: APSW's dbstat + the zstandard package) on the same index.

usage: bench/sidecar.py [--scale S] [--rounds N]

--scale S times the `tiny` set at S/10 (100k files at S = 1) and at S (1M files).
Per set, in one run:
  * `barecat-create --no-sidecar` and `barecat-create` (which writes the sidecar at
    the end), cold: the page cache is dropped before every run;
  * `barecat-sidecar` rewriting the sidecar of that archive, and the reference
    producer writing one, warm (the index was just written: it is in page cache,
    as it is when a writer finishes).

Targets, as medians:
  * writing the sidecar takes under 2% of the create that produced the archive
    (`barecat-sidecar` / `barecat-create --no-sidecar` <= 0.02); the two creates
    show the same cost in line (their difference is within the noise of a cold
    create, so it is reported, not judged);
  * the sidecar's size as a fraction of the index is reported (docs/FORMAT.md §9 says
    about 0.2%); not a pass/fail target.

Needs apsw and zstandard in .venv (`scripts/test.sh` installs them with the other
test peers).
"""
import argparse
import json
import subprocess

from harness import DATA, ROOT, VENV, WORK, Case, ours, report, run, sh

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--scale", type=float, default=1.0)
ap.add_argument("--rounds", type=int, default=5)
a = ap.parse_args()

REF = ROOT / "tests" / "py" / "btreemeta_ref.py"
CREATE = "barecat-create --no-sidecar (ours)"
CREATE_SC = "barecat-create, with the sidecar (ours)"
REBUILD = "barecat-sidecar (ours)"
PEER = "reference producer (apsw + zstandard)"


def tree(scale):
    sh(f"python3 gen_dataset.py tiny --scale {scale:g} > /dev/null", cwd=str(WORK.parent))
    return DATA / ("tiny" if scale == 1 else f"tiny@{scale:g}")


for scale in (a.scale / 10, a.scale):
    t = tree(scale)
    out = WORK / f"sidecar-{scale:g}.barecat"
    rm = f"rm -f {out} {out}-shard-* {out}-btreemeta"
    create = f"{ours('barecat-create')} -q -f -C {t.parent} {out} {t.name}"
    cases = [
        Case(CREATE, create.replace(" -f ", " -f --no-sidecar "), prepare=rm, cold=True),
        Case(CREATE_SC, create, prepare=rm, cold=True),
        Case(REBUILD, f"{ours('barecat-sidecar')} -q {out}",
             prepare=f"test -f {out} || {create}", warm=[out]),
        Case(PEER, f"{VENV}/python {REF} build {out} {WORK}/sidecar-ref.btreemeta 3",
             prepare=f"test -f {out} || {create}", warm=[out]),
    ]
    res = run(f"sidecar-tiny-{scale:g}", cases, rounds=a.rounds)
    # Sizes, from the archive the last create left (with its sidecar written again).
    # The reference producer runs again on this archive: the one it wrote during the
    # rounds may be of an earlier create (the same files, rows in another order).
    sh(f"{ours('barecat-sidecar')} -q {out}")
    sh(f"{VENV}/python {REF} build {out} {WORK}/sidecar-ref.btreemeta 3")
    chk = json.loads(subprocess.run([ours("barecat-sidecar"), "--check", "--json", str(out)],
                                    check=True, capture_output=True, text=True).stdout)
    same = subprocess.run(["cmp", "-s", f"{out}-btreemeta", f"{WORK}/sidecar-ref.btreemeta"]).returncode == 0
    files = (t / ".complete").read_text().strip()
    frac = 100.0 * chk["bytes"] / chk["index_bytes"]
    extra = (f"Dataset: `{t.name}` ({files} files). Index {chk['index_bytes']:,} bytes; "
             f"sidecar {chk['bytes']:,} bytes = **{frac:.3f}% of the index** "
             f"({chk['pages']} pages of {chk['page_size']} bytes); "
             f"byte-identical to the reference producer's: {'yes' if same else '**no**'}.")
    report(res, reference=CREATE, targets=[
        ("writing the sidecar < 2% of the create", REBUILD, CREATE, 0.02, "le"),
    ], extra=extra)
    sh(f"{rm} {WORK}/sidecar-ref.btreemeta")
