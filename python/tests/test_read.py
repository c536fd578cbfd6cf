"""Reading through barecat_rs: the API of Python barecat, checked against Python
barecat 0.3.1 itself on the same archive."""
import io
import os
import pickle

import pytest

import barecat_rs
from barecat_rs import Barecat, Order
from conftest import contents, need, write_python


def test_every_byte_and_the_dict_interface(archive, files):
    with Barecat(archive) as bc:
        assert len(bc) == len(files) == bc.num_files
        assert sorted(bc) == sorted(files)
        assert sorted(bc.keys()) == sorted(files)
        for p, d in files.items():
            assert bc[p] == d
            assert p in bc
            assert bc.get(p) == d
        assert dict(bc.items()) == files
        assert bc.get("missing", 5) == 5
        assert "d0" not in bc  # directories are not keys
        assert bc.total_size == sum(map(len, files.values()))


def test_reads_an_archive_written_by_python_barecat(tmp_path):
    files = contents(n=120, seed=3)
    path = write_python(tmp_path / "py.barecat", files)
    with Barecat(path) as bc:
        assert {p: bc[p] for p in bc} == files
        assert bc.read_many(list(files), threads=2) == list(files.values())


def test_missing_and_directory_paths_raise_key_error(archive):
    with Barecat(archive) as bc:
        with pytest.raises(KeyError) as e:
            bc["no/such/file"]
        assert e.value.args == ("no/such/file",)
        with pytest.raises(KeyError):
            bc["d0"]
        with pytest.raises(barecat_rs.FileNotFoundBarecatError):
            bc.read("no/such/file")
        with pytest.raises(FileNotFoundError):
            bc.open("no/such/file", "rb")


def test_paths_are_normalized_as_python_barecat_does(archive, files):
    with Barecat(archive) as bc:
        assert bc["/d0//s0/./f0000.bin"] == files["d0/s0/f0000.bin"]
        assert bc.exists("./d0/") and bc.isdir("d0/s0") and not bc.isfile("d0")


def test_checksum_mismatch_raises_value_error(tmp_path):
    path = tmp_path / "c.barecat"
    with Barecat(path, readonly=False) as bc:
        bc["a"] = b"A" * 100
        bc["b"] = b"B" * 100_000
    shard = f"{path}-shard-00000"
    with open(shard, "r+b") as f:
        f.seek(10)
        f.write(b"x")
        f.seek(100 + 50_000)
        f.write(b"y")
    with Barecat(path) as bc:
        for p in ("a", "b"):
            with pytest.raises(ValueError, match="CRC32C mismatch"):
                bc[p]
            with pytest.raises(barecat_rs.BarecatIntegrityError):
                bc.read(p)
            with pytest.raises(ValueError):
                bc.read_many([p], threads=2)
            with pytest.raises(ValueError):
                bc.read_many([p], zero_copy=True)
            with pytest.raises(ValueError):
                bc.view(p)
        # Partial reads are not checked (as in Python barecat).
        assert bc.read("a", 0, 5) == b"AAAAA"


def test_read_ranges_readinto_and_file_objects(archive, files):
    data = files["big/large.bin"]
    with Barecat(archive) as bc:
        assert bc.read("big/large.bin", 1000, 10) == data[1000:1010]
        assert bc.read("big/large.bin", 299_990) == data[299_990:]
        assert bc.read("big/large.bin", 400_000) == b""
        buf = bytearray(64)
        assert bc.readinto("big/large.bin", buf, 5) == 64 and buf == data[5:69]
        whole = bytearray(len(data) + 10)
        assert bc.readinto("big/large.bin", whole) == len(data)
        assert whole[: len(data)] == data
        with pytest.raises(TypeError):
            bc.readinto("top.txt", b"readonly")
        info = bc.index.lookup_file("big/large.bin")
        assert bc.read(info) == data
        with bc.open("big/large.bin", "rb") as f:
            assert f.readable() and f.seekable() and not f.writable()
            assert f.read(3) == data[:3] and f.tell() == 3
            assert f.seek(-10, io.SEEK_END) == len(data) - 10
            assert f.read() == data[-10:]
            assert f.read() == b""
            f.seek(100)
            b = bytearray(7)
            assert f.readinto(b) == 7 and b == data[100:107]
            f.seek(len(data) + 5)
            assert f.read(3) == b""
            with pytest.raises(ValueError):
                f.seek(-1)
        with bc.open("top.txt") as f:  # text mode, as Python barecat's default
            assert f.read() == "top level\n"
        reader = io.BufferedReader(bc.open("big/large.bin", "rb"))
        assert reader.read() == data


def test_listing_matches_python_barecat(tmp_path):
    need("barecat")
    import barecat

    files = contents(n=80, seed=11)
    files[".hidden/x"] = b"h"
    files["d0/.dot"] = b"d"
    path = write_python(tmp_path / "l.barecat", files)
    with barecat.Barecat(str(path)) as theirs, Barecat(path) as ours:
        for d in ["", "d0", "d0/s1", "big"]:
            assert sorted(ours.listdir(d)) == sorted(theirs.listdir(d))
            assert sorted(e.path for e in ours.scandir(d)) == sorted(
                e.path for e in theirs.scandir(d))
        norm = lambda w: sorted((d, sorted(a), sorted(b)) for d, a, b in w)  # noqa: E731
        assert norm(ours.walk("")) == norm(theirs.walk(""))
        assert norm(ours.walk("d1")) == norm(theirs.walk("d1"))
        for pattern, rec, hidden in [("d0/*/*.bin", False, False), ("**/*.bin", True, False),
                                     ("**", True, True), ("**", True, False), ("d?", False, False),
                                     ("*/.dot", False, False), ("d[0-2]/s1", False, False)]:
            # Python barecat lists the root ('') for '**'; the root is never a match here.
            want = [p for p in theirs.glob(pattern, recursive=rec, include_hidden=hidden) if p]
            assert sorted(ours.glob(pattern, recursive=rec, include_hidden=hidden)) == sorted(
                want), pattern
        assert sorted(ours.globfiles("**", recursive=True)) == sorted(
            theirs.globfiles("**", recursive=True))
        assert ours.num_dirs == theirs.num_dirs
        for fo, ft in zip(ours.index.iter_all_fileinfos(Order.PATH),
                          theirs.index.iter_all_fileinfos(barecat.Order.PATH)):
            assert (fo.path, fo.shard, fo.offset, fo.size, fo.crc32c) == (
                ft.path, ft.shard, ft.offset, ft.size, ft.crc32c)
        # Their Order enum is accepted too.
        assert [f.path for f in ours.index.iter_all_fileinfos(barecat.Order.ADDRESS)] == [
            f.path for f in theirs.index.iter_all_fileinfos(barecat.Order.ADDRESS)]
        d = ours.index.lookup_dir("d0")
        t = theirs.index.lookup_dir("d0")
        assert (d.num_files, d.num_subdirs, d.num_files_tree, d.size_tree) == (
            t.num_files, t.num_subdirs, t.num_files_tree, t.size_tree)
    # A file is not a directory found, as in Python barecat.
    with pytest.raises(FileNotFoundError):
        Barecat(path).listdir("top.txt")


def test_iteration_orders(archive, files):
    with Barecat(archive) as bc:
        by_path = [f.path for f in bc.index.iter_all_fileinfos(Order.PATH)]
        assert by_path == sorted(files)
        desc = [f.path for f in bc.index.iter_all_fileinfos(Order.PATH | Order.DESC)]
        assert desc == sorted(files, reverse=True)
        addr = [(f.shard, f.offset) for f in bc.index.iter_all_fileinfos(Order.ADDRESS)]
        assert addr == sorted(addr)
        assert [f.path for f in bc.index.iter_all_fileinfos()] == list(files)
        rnd = [f.path for f in bc.index.iter_all_fileinfos(Order.RANDOM)]
        assert sorted(rnd) == sorted(files)
        # Paths alone come in path order, as Python barecat's (infos: insertion).
        assert list(bc.index.iter_all_filepaths()) == sorted(files)
        dirs = list(bc.dirs())
        assert dirs[0] == "" and "d0/s0" in dirs and dirs == sorted(dirs)


def test_pages_beyond_one(tmp_path):
    files = {f"p/{i:05d}": i.to_bytes(2, "little") for i in range(9000)}
    path = tmp_path / "pages.barecat"
    with Barecat(path, readonly=False) as bc:
        with bc.bulk():
            for p, d in files.items():
                bc[p] = d
    with Barecat(path) as bc:
        assert list(bc) == list(files)
        assert [f.path for f in bc.index.iter_all_fileinfos(Order.ADDRESS)] == list(files)
        assert len(list(bc.index.iter_all_dirinfos())) == 2


def test_info_objects(archive, files):
    with Barecat(archive) as bc:
        fi = bc.index.lookup_file("top.txt")
        assert fi.isfile() and not fi.isdir()
        assert fi.size == 10 and fi.end == fi.offset + 10
        assert fi.crc32c == barecat_rs.crc32c(b"top level\n")
        assert fi.asdict()["path"] == "top.txt"
        assert pickle.loads(pickle.dumps(fi)) == fi
        di = bc.index.lookup_dir("d0")
        assert di.isdir() and di.num_entries == di.num_subdirs + di.num_files == 3
        assert pickle.loads(pickle.dumps(di)) == di
        assert barecat_rs.BarecatFileInfo(path="x", mode=0o644).mode == 0o644


def test_zero_copy_views(archive, files):
    import gc

    bc = Barecat(archive)
    paths = list(files)[:50] + ["big/large.bin"]
    views = bc.read_many(paths, zero_copy=True, threads=2)
    one = bc.view("big/large.bin")
    assert all(isinstance(v, memoryview) and v.readonly for v in views)
    bc.close()
    del bc
    gc.collect()
    # The views keep the maps alive after the archive is gone.
    assert [bytes(v) for v in views] == [files[p] for p in paths]
    assert one.tobytes() == files["big/large.bin"] and one.format == "B"
    with pytest.raises(TypeError):
        one[0] = 1


def test_read_many_orders_and_errors(archive, files):
    paths = list(files) * 3
    with Barecat(archive) as bc:
        for threads in (None, 1, 2, 4):
            assert bc.read_many(paths, threads=threads) == [files[p] for p in paths]
        assert bc.read_many([]) == []
        with pytest.raises(KeyError):
            bc.read_many(list(files)[:10] + ["missing"], threads=2)


def test_closed_archive_raises_value_error(archive):
    bc = Barecat(archive)
    bc.close()
    bc.close()
    assert bc.closed
    for op in (lambda: bc["top.txt"], lambda: len(bc), lambda: bc.listdir(""),
               lambda: bc.read_many(["top.txt"]), lambda: list(bc)):
        with pytest.raises(ValueError, match="closed"):
            op()


def test_errors_carry_the_commands_messages(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such archive"):
        Barecat(tmp_path / "nothing")
    bogus = tmp_path / "bogus"
    bogus.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(ValueError, match="not a barecat archive"):
        Barecat(bogus)
    with pytest.raises(ValueError, match="unknown URL scheme"):
        Barecat("gopher://bucket/key")


def test_pickling_keeps_only_the_path(archive, files):
    bc = Barecat(archive)
    blob = pickle.dumps(bc)
    assert len(blob) < 300
    clone = pickle.loads(blob)
    assert clone["top.txt"] == files["top.txt"] and clone.readonly
    w = Barecat(os.fspath(archive) + "-w", readonly=False)
    with pytest.raises(ValueError, match="pickle"):
        pickle.dumps(w)
    w.close()


def test_rust_panic_becomes_an_exception():
    from barecat_rs import _native

    for in_pool in (False, True):
        with pytest.raises(BaseException, match="deliberate panic") as e:
            _native._panic_for_tests(in_pool)
        assert type(e.value).__name__ == "PanicException"


def test_import_loads_no_heavy_module():
    import subprocess
    import sys

    code = ("import sys, barecat_rs; "
            "print(sorted(m for m in ('numpy', 'PIL', 'dask', 'json', 'pickle') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
