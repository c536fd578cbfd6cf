"""Benchmark runner shared by the bench/*.py scripts.

Each benchmark times several commands (ours and the peers') on the same data in the
same run. Rounds alternate the order of the commands, so that slow drifts of a noisy
machine hit every command alike. Every measurement records wall time and peak RSS
(from GNU time). Reports give medians, min/max, ratios against a chosen reference and
the exact commands, as Markdown (bench/results/NAME.md) and JSON (NAME.json).

Usage from a script:

    from harness import Case, run, report
    cases = [Case("ours", "target/release/barecat-create -f out.bc data/x", prepare="rm -rf out*"), ...]
    res = run("create-images", cases, rounds=5)
    report(res, reference="ours", targets=[...])
"""
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DATA = Path(os.environ.get("BARECAT_BENCH_DATA") or BENCH / "data")
WORK = BENCH / "work"
RESULTS = BENCH / "results"
RELEASE = ROOT / "target" / "release"
VENV = ROOT / ".venv" / "bin"


def ours(cmd):
    """Path of one of our release binaries, e.g. ours('barecat-create')."""
    return str(RELEASE / cmd)


def py_barecat():
    return str(VENV / "barecat")


def sh(cmd, cwd=None, check=True):
    """Run a shell command (untimed), echoing it."""
    print(f"  $ {cmd}", file=sys.stderr)
    return subprocess.run(cmd, shell=True, cwd=cwd, check=check)


def page_cache_warm(path):
    """Read a tree or file once so that the timed run starts from page cache.

    This machine reclaims idle page cache within a minute or two, so cases that must
    start from page cache list their inputs in `Case.warm`: they are read again right
    before every run."""
    subprocess.run(f"find {shlex.quote(str(path))} -type f -print0 | xargs -0 cat > /dev/null",
                   shell=True, check=True)


@dataclass
class Case:
    label: str
    cmd: str
    prepare: str = ""          # untimed, before every run (e.g. remove the last output)
    cwd: str = ""
    note: str = ""
    cold: bool = False         # drop the page cache before every run (untimed)
    warm: tuple = ()           # files or trees read into the page cache before every run
    inner: bool = False        # the command times its own measured work and prints
                               # "elapsed SECONDS" as the last line of stderr: that time
                               # is used instead of the wall time (no interpreter start-up)
    samples: list = field(default_factory=list)   # (seconds, peak_rss_kb)


def drop_caches():
    """Write dirty pages, then drop the page, dentry and inode caches (needs root)."""
    subprocess.run("sync", shell=True, check=True)
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError as e:
        raise SystemExit(f"cold-cache runs need root (cannot drop caches: {e})")


def measure(case):
    if case.prepare:
        subprocess.run(case.prepare, shell=True, check=True, cwd=case.cwd or None)
    # Dirty pages of an earlier run must not be written back during this one.
    subprocess.run("sync", shell=True, check=True)
    if case.cold:
        drop_caches()
    for p in case.warm:
        page_cache_warm(p)
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        argv = ["/usr/bin/time", "-o", tf.name, "-f", "%M", "bash", "-c", case.cmd]
        t0 = time.perf_counter()
        p = subprocess.run(argv, cwd=case.cwd or None, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - t0
        rss_lines = [l for l in tf.read().split() if l.strip().isdigit()]
    if p.returncode != 0:
        raise SystemExit(f"{case.label}: command failed ({p.returncode}): {case.cmd}\n"
                         f"{p.stderr.decode(errors='replace')[-2000:]}")
    rss = int(rss_lines[-1]) if rss_lines else 0
    if case.inner:
        last = p.stderr.decode(errors="replace").strip().splitlines()[-1:]
        if not last or not last[0].startswith("elapsed "):
            raise SystemExit(f"{case.label}: no 'elapsed SECONDS' line on stderr: {case.cmd}")
        elapsed = float(last[0].split()[1])
    return elapsed, rss


def run(name, cases, rounds=5, warmup=True, cold=False, warm=()):
    """Time every case `rounds` times, alternating their order each round.

    cold=True drops the page cache before every run; warm=[paths] reads those files
    or trees into the page cache before every run (both untimed)."""
    WORK.mkdir(parents=True, exist_ok=True)
    for c in cases:
        c.cold = c.cold or cold
        c.warm = tuple(c.warm) + tuple(warm)
    if cold:
        cache = "cold: caches dropped (`sync; echo 3 > /proc/sys/vm/drop_caches`) before every run"
    elif warm:
        cache = "warm: inputs read into the page cache right before every run"
    else:
        cache = "as left by the previous run"
    print(f"== {name}: {len(cases)} commands x {rounds} rounds", file=sys.stderr)
    # A warm-up run primes caches; pointless (and slow) when every run starts cold.
    if warmup and not cold:
        for c in cases:
            measure(c)
    for r in range(rounds):
        order = cases[r % len(cases):] + cases[:r % len(cases)]
        if r % 2:
            order = list(reversed(order))
        for c in order:
            s = measure(c)
            c.samples.append(s)
            print(f"  round {r + 1}: {c.label:<28} {s[0]:8.3f} s  {s[1] / 1024:8.1f} MB",
                  file=sys.stderr)
    return {"name": name, "rounds": rounds, "cases": cases, "cache": cache}


def summary(case):
    times = [s[0] for s in case.samples]
    rss = [s[1] for s in case.samples]
    return {
        "label": case.label,
        "cmd": case.cmd,
        "note": case.note,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "peak_rss_mb": max(rss) / 1024,
        "samples_s": times,
    }


def machine():
    cpu = subprocess.run("nproc", shell=True, capture_output=True, text=True).stdout.strip()
    mem = subprocess.run("free -g | awk '/Mem:/{print $2}'", shell=True, capture_output=True,
                         text=True).stdout.strip()
    kernel = os.uname().release
    return f"{cpu} cores, {mem} GiB RAM, Linux {kernel}"


def report(res, reference, targets=(), extra=""):
    """Write bench/results/NAME.{json,md}.

    `targets` is a list of (description, case_label, other_label, bound, kind) where the
    ratio is median(case)/median(other) and kind is 'le' (ratio <= bound passes) or
    'ge_speedup' (median(other)/median(case) >= bound passes).
    """
    RESULTS.mkdir(parents=True, exist_ok=True)
    rows = [summary(c) for c in res["cases"]]
    by = {r["label"]: r for r in rows}
    ref = by[reference]["median_s"]
    lines = [f"### {res['name']}", "",
             f"{res['rounds']} rounds (alternating order), medians; {machine()}; "
             f"ratio = median / median of `{reference}`. Page cache: {res.get('cache', '?')}.",
             "",
             "| command | median s | min s | max s | ratio | peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['label'].replace('|', chr(92) + '|')} | {r['median_s']:.3f} | {r['min_s']:.3f} | "
                     f"{r['max_s']:.3f} | {r['median_s'] / ref:.2f} | {r['peak_rss_mb']:.1f} |")
    verdicts = []
    if targets:
        lines += ["", "| target | measured | met |", "|---|---:|:---:|"]
        for desc, a, b, bound, kind in targets:
            if kind == "le":
                v = by[a]["median_s"] / by[b]["median_s"]
                ok = v <= bound
                shown = f"{v:.2f}×"
            elif kind == "ge_speedup":
                v = by[b]["median_s"] / by[a]["median_s"]
                ok = v >= bound
                shown = f"{v:.1f}× faster"
            elif kind == "rss_mb_le":
                v = by[a]["peak_rss_mb"]
                ok = v <= bound
                shown = f"{v:.1f} MB"
            elif kind == "seconds_le":
                v = by[a]["median_s"]
                ok = v <= bound
                shown = f"{v:.3f} s"
            else:
                raise ValueError(kind)
            verdicts.append((desc, ok))
            lines.append(f"| {desc} | {shown} | {'yes' if ok else '**no**'} |")
    lines += ["", "Commands:", ""]
    for r in rows:
        lines.append(f"* `{r['label']}`: `{r['cmd']}`" + (f" ({r['note']})" if r["note"] else ""))
    if extra:
        lines += ["", extra]
    md = "\n".join(lines) + "\n"
    (RESULTS / f"{res['name']}.md").write_text(md)
    (RESULTS / f"{res['name']}.json").write_text(json.dumps(
        {"name": res["name"], "rounds": res["rounds"], "machine": machine(), "rows": rows,
         "targets": [{"target": d, "met": ok} for d, ok in verdicts]}, indent=1))
    print(md)
    return verdicts
