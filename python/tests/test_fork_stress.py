"""Fork at random instants while other threads use barecat_rs: the PyTorch
DataLoader pattern (workers started with fork from a process that reads archives
and records on other threads). Every child, made by os.fork or by a multiprocessing
fork pool, must read correctly and exit within a bound; a child that hangs dumps
its Python stack (faulthandler) and is killed, and the test fails.

BARECAT_FORKS sets the number of os.fork children (default 150; run it with
thousands by hand, see RELIABILITY.md)."""
import faulthandler
import multiprocessing as mp
import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest

import barecat_rs
from barecat_rs import Barecat
from conftest import ROOT, contents, write_ours

FILES = contents(n=500, seed=26)
PATHS = sorted(FILES)
RECORDS = [random.Random(i).randbytes(i % 700) for i in range(800)]
CHILD_BOUND = 60.0
FORKS = int(os.environ.get("BARECAT_FORKS", "150"))
# The whole test's bound grows with the number of forks (a long run by hand).
TEST_BOUND = max(900, 3 * FORKS)
SERVER = ROOT / "tests" / "py" / "range_server.py"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    d = tmp_path_factory.mktemp("forks")
    arch = write_ours(d / "data.barecat", FILES)
    rec = d / "ds.zr"
    with barecat_rs.Records(str(rec), readonly=False, create=True, compress="zstd") as w:
        w.extend(RECORDS)
    # The server outlives the longest run (it stops by itself after its lifetime).
    lifetime = str(TEST_BOUND + 60)
    server = subprocess.Popen(
        [sys.executable, str(SERVER), str(d), "--lifetime", lifetime],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = server.stdout.readline()
        assert line.startswith("PORT "), line
        url = f"http://127.0.0.1:{int(line.split()[1])}/data.barecat"
        yield arch, rec, url
    finally:
        server.kill()
        server.wait(timeout=10)


def busy_threads(bc, remote, recs, stop, errors):
    """Parent threads that read, list, glob, walk, gather and read remotely in
    loops, each inside the library most of the time (the GIL released)."""

    def loop(kind):
        rng = random.Random(kind)
        try:
            while not stop.is_set():
                p = rng.choice(PATHS)
                if kind == 0:
                    assert bc[p] == FILES[p]
                    bc.read_many(rng.sample(PATHS, 20), threads=2)
                elif kind == 1:
                    bc.listdir("d3")
                    assert len(bc.glob("d1/**/*.bin", recursive=True)) > 0
                    sum(1 for _ in bc.walk(""))
                elif kind == 2:
                    idx = [rng.randrange(len(RECORDS)) for _ in range(300)]
                    got = recs.gather(idx, threads=2)
                    assert bytes(got[0]) == RECORDS[idx[0]]
                elif kind == 3:
                    assert remote[p] == FILES[p]
                else:
                    with Barecat(bc.path) as fresh:
                        assert fresh[p] == FILES[p]
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(f"thread {kind}: {e!r}")

    threads = [threading.Thread(target=loop, args=(k,), daemon=True) for k in range(5)]
    for t in threads:
        t.start()
    return threads


def child_reads(bc, remote, recs, arch, url, seed):
    rng = random.Random(seed)
    for _ in range(5):
        p = rng.choice(PATHS)
        assert bc[p] == FILES[p]
        assert remote[p] == FILES[p]
        i = rng.randrange(len(RECORDS))
        assert recs[i] == RECORDS[i]
    assert [bytes(v) for v in recs.gather([1, 2, 3])] == RECORDS[1:4]
    assert len(bc.listdir("d2")) > 0
    with Barecat(str(arch)) as fresh:
        assert fresh[PATHS[seed % len(PATHS)]] == FILES[PATHS[seed % len(PATHS)]]
    with Barecat(url) as fresh:
        assert fresh[PATHS[0]] == FILES[PATHS[0]]


def wait_bounded(pid, bound):
    """The exit status of `pid`, or None (after killing it) when it runs longer."""
    end = time.monotonic() + bound
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return status
        time.sleep(0.002)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


@pytest.mark.timeout(TEST_BOUND)
def test_os_fork_at_random_instants_while_threads_read(setup, tmp_path):
    arch, rec, url = setup
    bc = Barecat(str(arch))
    remote = Barecat(url)
    recs = barecat_rs.Records(str(rec))
    stop, errors = threading.Event(), []
    threads = busy_threads(bc, remote, recs, stop, errors)
    forks = FORKS
    rng = random.Random(0)
    failures = []
    done = 0
    try:
        time.sleep(0.2)
        for k in range(forks):
            time.sleep(rng.random() * 0.004)
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    # A hang dumps this child's stack to the log before the
                    # parent's bound kills it.
                    log = open(tmp_path / f"child-{k}.log", "w")
                    faulthandler.dump_traceback_later(CHILD_BOUND / 2, file=log, exit=True)
                    child_reads(bc, remote, recs, arch, url, k)
                except BaseException as e:  # noqa: BLE001
                    (tmp_path / f"child-{k}.err").write_text(repr(e))
                    code = 1
                os._exit(code)
            status = wait_bounded(pid, CHILD_BOUND)
            done += 1
            if status != 0:
                log = tmp_path / f"child-{k}.log"
                err = tmp_path / f"child-{k}.err"
                what = err.read_text() if err.exists() else ""
                stack = log.read_text() if log.exists() else ""
                failures.append(f"fork {k}: status {status} {what}\n{stack}")
                if len(failures) >= 3:
                    break
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    print(f"{done} forks, {len(failures)} failed")
    assert not failures, "\n".join(failures)
    assert not errors, errors


class Dataset:
    """A PyTorch-style dataset holding an archive, read in forked workers."""

    def __init__(self, path):
        self.bc = Barecat(path)

    def __len__(self):
        return len(PATHS)

    def __getitem__(self, i):
        return PATHS[i], self.bc[PATHS[i]]


def _init(ds):
    global SHARED
    SHARED = ds
    faulthandler.dump_traceback_later(CHILD_BOUND, exit=True)


def _item(i):
    return SHARED[i]


@pytest.mark.timeout(TEST_BOUND)
def test_fork_pools_started_while_threads_read(setup):
    arch, rec, url = setup
    ds = Dataset(str(arch))
    recs = barecat_rs.Records(str(rec))
    stop, errors = threading.Event(), []
    threads = busy_threads(ds.bc, Barecat(url), recs, stop, errors)
    rounds = max(4, FORKS // 25)
    try:
        ctx = mp.get_context("fork")
        for _ in range(rounds):
            with ctx.Pool(3, initializer=_init, initargs=(ds,)) as pool:
                r = pool.map_async(_item, range(0, len(PATHS), 7))
                got = r.get(timeout=CHILD_BOUND)
            assert all(FILES[p] == d for p, d in got)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    assert not errors, errors
