"""barecat_rs.Records: records by integer index from Python, over a dataset
directory and over an archive's record table; writing; zero-copy views; worker
processes (fork, spawn) and threads."""
import multiprocessing as mp
import pickle
import random
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

import barecat_rs
from conftest import ours_bin, write_ours


def records_of(n=500, seed=3):
    rng = random.Random(seed)
    return [rng.randbytes(rng.choice([0, 1, 7, 100, rng.randrange(3000)])) for _ in range(n)]


@pytest.fixture(params=["none", "zstd", "flate"])
def dataset(tmp_path, request):
    recs = records_of()
    d = tmp_path / "ds.zr"
    with barecat_rs.Records(str(d), readonly=False, create=True, compress=request.param) as w:
        assert w.extend(recs[:100]) == 0
        for r in recs[100:]:
            w.append(r)
    return d, recs, request.param


def test_read_every_record_and_gather_in_request_order(dataset):
    d, recs, compress = dataset
    with barecat_rs.Records(str(d)) as r:
        assert len(r) == len(recs)
        assert r.compress == compress and r.dtype == "bytes"
        for i, want in enumerate(recs):
            assert r[i] == want
        assert r[-1] == recs[-1]
        assert list(r) == recs
        idx = [5, 3, 5, 499, 0, 3]
        views = r.gather(idx)
        assert [bytes(v) for v in views] == [recs[i] for i in idx]
        assert all(isinstance(v, memoryview) and v.readonly for v in views)
        assert bytes(r.view(7)) == recs[7]
        big = [random.Random(1).randrange(len(recs)) for _ in range(10_000)]
        assert [bytes(v) for v in r.gather(big, threads=2)] == [recs[i] for i in big]
        assert [bytes(v) for v in r.gather(iter([1, 2]))] == recs[1:3]


def test_out_of_range_and_bad_indices_raise(dataset):
    d, recs, _ = dataset
    with barecat_rs.Records(str(d)) as r:
        with pytest.raises(IndexError, match="out of range"):
            r[len(recs)]
        with pytest.raises(IndexError):
            r[-len(recs) - 1]
        with pytest.raises(IndexError):
            r.gather([0, 10**9])
        with pytest.raises(TypeError):
            r["x"]
        with pytest.raises(Exception):
            r.gather(["a"])


def test_views_outlive_the_object_and_a_closed_object_raises(dataset):
    d, recs, _ = dataset
    r = barecat_rs.Records(str(d))
    views = r.gather([1, 2, 3])
    view = r.view(4)
    r.close()
    with pytest.raises(ValueError, match="closed"):
        len(r)
    with pytest.raises(ValueError, match="closed"):
        r[0]
    del r
    assert [bytes(v) for v in views] == recs[1:4]
    assert bytes(view) == recs[4]


def test_modify_delete_and_reads_through_the_writer(tmp_path):
    d = tmp_path / "ds.zr"
    recs = records_of(50)
    with barecat_rs.Records(str(d), readonly=False, create=True) as w:
        w.extend(recs)
        w.modify(3, b"three")
        w[4] = bytearray(b"four")
        recs[3], recs[4] = b"three", b"four"
        # Reads through the writer see everything written so far.
        assert w[3] == b"three" and len(w) == 50
        del w[0]  # the last record takes its place
        recs[0] = recs.pop()
        w.delete(-1)
        recs.pop()
        assert len(w) == len(recs)
    with barecat_rs.Records(str(d)) as r:
        assert list(r) == recs
    # Reopen for writing without create: appends go on at the end.
    with barecat_rs.Records(str(d), readonly=False) as w:
        assert w.append(b"tail") == len(recs)
    assert barecat_rs.Records(str(d))[-1] == b"tail"


def test_writing_errors(tmp_path):
    d = tmp_path / "ds.zr"
    with pytest.raises(FileNotFoundError, match="no such dataset"):
        barecat_rs.Records(str(d), readonly=False)
    with barecat_rs.Records(str(d), readonly=False, create=True) as w:
        w.append(b"x")
        with pytest.raises(TypeError, match="bytes-like"):
            w.append(42)
        with pytest.raises(IndexError):
            w.modify(5, b"y")
        # One writer at a time.
        with pytest.raises(barecat_rs.BarecatError):
            barecat_rs.Records(str(d), readonly=False)
    r = barecat_rs.Records(str(d))
    with pytest.raises(PermissionError):
        r.append(b"z")
    with pytest.raises(ValueError, match="unknown compression"):
        barecat_rs.Records(str(tmp_path / "y"), readonly=False, create=True, compress="lz4")
    with pytest.raises(TypeError, match="pickled"):
        pickle.dumps(barecat_rs.Records(str(tmp_path / "z"), readonly=False, create=True))


def test_typed_records_as_numpy(tmp_path):
    np = pytest.importorskip("numpy")
    d = tmp_path / "f32.zr"
    arrays = [np.arange(n, dtype=np.float32) * 0.5 for n in (0, 1, 5, 1000)]
    with barecat_rs.Records(str(d), readonly=False, create=True, dtype="f32") as w:
        for a in arrays:
            w.append(a)
    with barecat_rs.Records(str(d)) as r:
        assert r.dtype == "f32"
        for a, v in zip(arrays, r.gather(range(len(arrays)))):
            np.testing.assert_array_equal(np.frombuffer(v, dtype=np.float32), a)


def test_record_table_of_an_archive_and_staleness(tmp_path, files):
    arch = write_ours(tmp_path / "data.barecat", files)
    subprocess.run([ours_bin("barecat-records"), "build", "-q", str(arch)], check=True)
    paths = sorted(files)
    with barecat_rs.Records(str(arch), check_crc=True) as r:
        assert len(r) == len(paths)
        assert [bytes(v) for v in r.gather(range(len(paths)))] == [files[p] for p in paths]
    # The archive changes: the table no longer matches and is refused.
    with barecat_rs.Barecat(str(arch), readonly=False) as bc:
        bc["new.bin"] = b"new"
    with pytest.raises(Exception, match="rebuild"):
        barecat_rs.Records(str(arch))
    with pytest.raises(PermissionError):
        barecat_rs.Records(str(arch), readonly=False)


def _read_all(r, n):
    return [bytes(v) for v in r.gather(range(n))]


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_worker_processes_read_every_record(dataset, method):
    d, recs, _ = dataset
    r = barecat_rs.Records(str(d))
    assert r[0] == recs[0]  # opened and used in the parent first
    ctx = mp.get_context(method)
    with ctx.Pool(2) as pool:
        got = pool.starmap(_read_all, [(r, len(recs))] * 2)
    assert got == [recs, recs]


def test_threads_read_every_record(dataset):
    d, recs, _ = dataset
    with barecat_rs.Records(str(d)) as r:

        def work(seed):
            rng = random.Random(seed)
            idx = [rng.randrange(len(recs)) for _ in range(2000)]
            return all(r[i] == recs[i] for i in idx[:500]) and [
                bytes(v) for v in r.gather(idx)
            ] == [recs[i] for i in idx]

        with ThreadPoolExecutor(4) as ex:
            assert all(ex.map(work, range(8)))
