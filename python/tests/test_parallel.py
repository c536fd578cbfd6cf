"""Data-loader safety: threads, and worker processes started by fork, spawn and
forkserver (with an archive object created before the fork, or pickled), all
reading the same archive and checking every byte."""
import hashlib
import multiprocessing as mp
import os
import threading

import pytest

from barecat_rs import Barecat
from conftest import contents, write_ours

FILES = contents(n=400, seed=21)


def digest(items):
    h = hashlib.sha256()
    for p, d in items:
        h.update(p.encode() + b"\0" + d)
    return h.hexdigest()


def expected(paths):
    return digest((p, FILES[p]) for p in paths)


def worker_read(bc, paths):
    """Read every path (by `bc[path]`, `read_many` and zero-copy views) and return a
    digest plus the process id."""
    got = [(p, bc[p]) for p in paths]
    many = bc.read_many(paths, threads=2)
    views = bc.read_many(paths, zero_copy=True, threads=2)
    assert many == [d for _, d in got]
    assert [bytes(v) for v in views] == many
    return os.getpid(), digest(got)


def _init(bc):
    global SHARED
    SHARED = bc


def _task(paths):
    return worker_read(SHARED, paths)


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    return write_ours(tmp_path_factory.mktemp("par") / "p.barecat", FILES)


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_worker_processes_read_every_byte(archive, method):
    bc = Barecat(archive)
    paths = list(FILES)
    # Use the archive in the parent first: the children inherit (fork) or
    # receive by pickling (spawn, forkserver) an object that is already open.
    assert bc[paths[0]] == FILES[paths[0]]
    bc.read_many(paths[:10], threads=2)
    chunks = [paths[i::4] for i in range(4)] * 2
    ctx = mp.get_context(method)
    with ctx.Pool(3, initializer=_init, initargs=(bc,)) as pool:
        results = pool.map(_task, chunks)
    assert [r[1] for r in results] == [expected(c) for c in chunks]
    assert all(pid != os.getpid() for pid, _ in results)
    # And the parent still reads correctly afterwards.
    assert worker_read(bc, paths)[1] == expected(paths)


def test_forked_child_with_a_writer_refuses_to_write(tmp_path):
    w = Barecat(tmp_path / "w.barecat", readonly=False)
    w["a"] = b"1"
    ctx = mp.get_context("fork")
    q = ctx.Queue()

    def child():
        try:
            w["b"] = b"2"
            q.put("wrote")
        except Exception as e:  # noqa: BLE001
            q.put(type(e).__name__ + ": " + str(e))

    p = ctx.Process(target=child)
    p.start()
    msg = q.get(timeout=60)
    p.join(60)
    assert "forked child cannot write" in msg
    w["c"] = b"3"
    w.close()
    with Barecat(tmp_path / "w.barecat") as bc:
        assert sorted(bc) == ["a", "c"]


def test_threads_read_every_byte(archive):
    bc = Barecat(archive)
    paths = list(FILES)
    errors = []
    results = {}

    def run(i):
        try:
            order = paths[i:] + paths[:i]
            results[i] = worker_read(bc, order)[1] == expected(order)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == {i: True for i in range(8)}


@pytest.mark.timeout(120)
def test_globs_in_threads_beside_reads_and_writes(tmp_path):
    """Globs hand their paths over a few thousand at a time, taking the GIL back
    for each batch: several of them at once, beside threads that read and one
    that writes, all finish, each with every path in order."""
    files = {f"d{i % 7}/f{i:05d}.txt": b"x" * (i % 5) for i in range(12_000)}
    path = write_ours(tmp_path / "g.barecat", files)
    want = sorted(files)
    want_dirs = sorted({p.split("/")[0] for p in files} | set(files))
    bc = Barecat(path)
    writer = Barecat(tmp_path / "w.barecat", readonly=False)
    errors = []

    def run(i):
        try:
            for _ in range(3):
                if i % 3 == 0:
                    assert bc.index.glob_paths("**/*.txt", recursive=True) == want
                elif i % 3 == 1:
                    assert bc.glob("**", recursive=True) == want_dirs
                else:
                    assert [bc[p] for p in want[:2000]] == [files[p] for p in want[:2000]]
                writer_files = [f"n/{i}/{k}" for k in range(300)]
                with lock:
                    for p in writer_files:
                        writer[p] = b"w"
                    assert writer.index.glob_paths(f"n/{i}/*") == sorted(writer_files)
                    for p in writer_files:
                        del writer[p]
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    lock = threading.Lock()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.close()
    assert not errors, errors


class Dataset:
    """The DataLoader pattern: a dataset holding a Barecat, indexed in workers."""

    def __init__(self, path):
        self.bc = Barecat(path)
        self.paths = sorted(self.bc)

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return self.paths[i], self.bc[self.paths[i]]


def _item(i):
    return SHARED[i]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_dataset_in_worker_processes(archive, method):
    ds = Dataset(archive)
    assert ds[0][1] == FILES[ds.paths[0]]
    with mp.get_context(method).Pool(2, initializer=_init, initargs=(ds,)) as pool:
        got = pool.map(_item, range(len(ds)))
    assert dict(got) == FILES
