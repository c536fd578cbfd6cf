"""Writing through barecat_rs: what Python barecat 0.3.1 then reads and verifies."""
import os

import pytest

import barecat_rs
from barecat_rs import Barecat, BarecatDirInfo, BarecatFileInfo
from conftest import contents, need, ours_bin, python_verify, run, write_ours


def read_with_python(path):
    need("barecat")
    import barecat

    with barecat.Barecat(str(path)) as bc:
        return {p: bc[p] for p in bc}


def test_written_archive_passes_python_barecat_verify(tmp_path):
    files = contents(n=500, seed=5)
    path = write_ours(tmp_path / "w.barecat", files)
    assert python_verify(path)
    assert read_with_python(path) == files
    run(ours_bin("barecat-verify"), "-q", str(path))


def test_bulk_mode_and_reopening_to_append(tmp_path):
    path = tmp_path / "bulk.barecat"
    first = {f"a/{i}": os.urandom(i % 50) for i in range(2000)}
    with Barecat(path, readonly=False) as bc:
        with bc.index.no_triggers():
            for p, d in first.items():
                bc.add(p, data=d)
        bc.index.update_treestats()
    more = {f"b/c/{i}": os.urandom(10) for i in range(100)}
    with Barecat(path, readonly=False) as bc:
        with bc.bulk():
            for p, d in more.items():
                bc[p] = d
    assert python_verify(path)
    assert read_with_python(path) == {**first, **more}


def test_metadata_dirs_and_add_by_path(tmp_path):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "f.txt").write_bytes(b"from disk")
    os.utime(src / "sub" / "f.txt", ns=(1_600_000_000_123_456_789, 1_600_000_000_123_456_789))
    os.chmod(src / "sub" / "f.txt", 0o640)
    path = tmp_path / "meta.barecat"
    with Barecat(path, readonly=False) as bc:
        bc.add_by_path(str(src / "sub"), "sub")
        bc.add_by_path(str(src / "sub" / "f.txt"), "sub/f.txt")
        info = BarecatFileInfo(path="m/x", mode=0o100600, uid=12, gid=34, mtime_ns=99)
        bc.add(info, data=b"meta")
        assert info.size == 4 and info.crc32c == barecat_rs.crc32c(b"meta")
        bc.add(BarecatDirInfo(path="empty/dir", mode=0o40700))
        bc.mkdir("made")
        with pytest.raises(FileExistsError):
            bc.mkdir("made")
        bc.mkdir("made", exist_ok=True)
        import io

        bc.add("from/fileobj", fileobj=io.BytesIO(b"stream"))
        bc.add("m/x", data=b"other", file_exist_ok=True)  # skipped
    assert python_verify(path)
    need("barecat")
    import barecat

    with barecat.Barecat(str(path)) as theirs:
        f = theirs.index.lookup_file("sub/f.txt")
        assert (f.mode & 0o777, f.mtime_ns) == (0o640, 1_600_000_000_123_456_789)
        x = theirs.index.lookup_file("m/x")
        assert (x.mode, x.uid, x.gid, x.mtime_ns) == (0o100600, 12, 34, 99)
        assert theirs["m/x"] == b"meta" and theirs["from/fileobj"] == b"stream"
        assert theirs.isdir("empty/dir") and theirs.isdir("made")


def test_conflicts_raise_python_barecats_exceptions(tmp_path):
    with Barecat(tmp_path / "c.barecat", readonly=False) as bc:
        bc["a/b"] = b"1"
        with pytest.raises(barecat_rs.FileExistsBarecatError):
            bc["a/b"] = b"2"
        with pytest.raises(barecat_rs.IsADirectoryBarecatError):
            bc["a"] = b"2"
        with pytest.raises(barecat_rs.NotADirectoryBarecatError):
            bc["a/b/c"] = b"2"
        with pytest.raises(ValueError, match="invalid archive path"):
            bc["../escape"] = b"2"
        with pytest.raises(TypeError):
            bc["s"] = "text is not bytes"
        assert bc["a/b"] == b"1"
    with pytest.raises(FileExistsError):
        Barecat(tmp_path / "c.barecat", readonly=False, exist_ok=False)
    ro = Barecat(tmp_path / "c.barecat")
    with pytest.raises(PermissionError):
        ro["new"] = b"x"
    with pytest.raises(PermissionError):
        del ro["a/b"]


def test_delete_rename_rmtree(tmp_path):
    path = tmp_path / "m.barecat"
    with Barecat(path, readonly=False) as bc:
        for i in range(10):
            bc[f"d/e/{i}"] = bytes([i]) * (i + 1)
        bc["keep"] = b"k"
        del bc["d/e/0"]
        with pytest.raises(KeyError):
            del bc["d/e/0"]
        with pytest.raises(KeyError):
            del bc["d"]
        bc.rename("d/e/1", "moved/one")
        bc.rename("d/e", "f")
        assert bc["f/2"] == b"\x02\x02\x02"
        bc["scratch/x"] = b"x"
        bc.rmtree("scratch")
        bc.mkdir("gone")
        bc.rmdir("gone")
        with pytest.raises(barecat_rs.DirectoryNotEmptyBarecatError):
            bc.rmdir("f")
        assert sorted(bc) == sorted(["keep", "moved/one"] + [f"f/{i}" for i in range(2, 10)])
    assert python_verify(path)
    assert read_with_python(path)["moved/one"] == b"\x01\x01"


def test_append_only_refuses_deletes(tmp_path):
    path = write_ours(tmp_path / "ao.barecat", {"a": b"1"})
    with Barecat(path, readonly=False, append_only=True) as bc:
        bc["b"] = b"2"
        with pytest.raises(PermissionError):
            del bc["a"]
        with pytest.raises(PermissionError):
            bc.rename("a", "c")
    assert read_with_python(path) == {"a": b"1", "b": b"2"}


def test_reads_in_write_mode_see_the_open_batch(tmp_path):
    with Barecat(tmp_path / "rw.barecat", readonly=False) as bc:
        bc["x/y"] = b"abc" * 1000
        assert bc["x/y"] == b"abc" * 1000
        assert bc.read("x/y", 3, 3) == b"abc"
        assert bc.read_many(["x/y"]) == [b"abc" * 1000]
        assert "x/y" in bc and bc.isdir("x") and len(bc) == 1
        assert bc.listdir("x") == ["y"]
        assert bc.index.lookup_dir("x").num_files == 1
        with bc.open("x/y", "rb") as f:
            f.seek(2999)
            assert f.read() == b"c"


def test_shard_size_limit_rotates_shards(tmp_path):
    path = tmp_path / "s.barecat"
    files = {f"f{i}": bytes([i]) * 400 for i in range(10)}
    write_ours(path, files, shard_size_limit="1K")
    assert os.path.exists(f"{path}-shard-00004")
    with Barecat(path) as bc:
        assert bc.shard_size_limit == 1024
        assert {p: bc[p] for p in bc} == files
    assert python_verify(path)
    with Barecat(path, readonly=False) as bc:
        bc.shard_size_limit = "2K"
        assert bc.shard_size_limit == 2048


def test_overwrite_replaces_an_archive(tmp_path):
    path = write_ours(tmp_path / "o.barecat", {"old": b"1"})
    write_ours(path, {"new": b"2"}, overwrite=True)
    assert read_with_python(path) == {"new": b"2"}


def test_garbage_collected_writer_commits(tmp_path):
    import gc

    path = tmp_path / "gc.barecat"
    bc = Barecat(path, readonly=False)
    bc["kept"] = b"yes"
    del bc
    gc.collect()
    assert read_with_python(path) == {"kept": b"yes"}


def test_merge_and_merge_symlink(tmp_path):
    a = write_ours(tmp_path / "a.barecat", {"x/1": b"one"})
    b = write_ours(tmp_path / "b.barecat", {"y/2": b"two"})
    r = barecat_rs.merge_symlink(str(tmp_path / "linked.barecat"), [str(a), str(b)])
    assert r["files"] == 2 and r["shards"] == 2
    assert os.path.islink(f"{tmp_path}/linked.barecat-shard-00001")
    r = barecat_rs.merge(str(tmp_path / "copied.barecat"), [str(a), str(b)])
    assert r["files"] == 2
    for out in ("linked.barecat", "copied.barecat"):
        assert read_with_python(tmp_path / out) == {"x/1": b"one", "y/2": b"two"}
    with pytest.raises(FileExistsError, match="already exists"):
        barecat_rs.merge(str(tmp_path / "copied.barecat"), [str(a)])


def test_killed_python_writer_leaves_a_readable_archive(tmp_path):
    """A writer process killed (SIGKILL) in the middle of a bulk import: everything
    it committed reads back and verifies; nothing it did not commit is visible."""
    import signal
    import subprocess
    import sys

    path = tmp_path / "killed.barecat"
    child = subprocess.Popen([sys.executable, "-c", f"""
import barecat_rs
bc = barecat_rs.Barecat({str(path)!r}, readonly=False)
with bc.bulk():
    for i in range(10**9):
        bc[f"d{{i % 7}}/f{{i}}"] = bytes([i % 251]) * (i % 3000)
        if i == 999:
            bc.commit()
            print("committed", flush=True)
"""], stdout=subprocess.PIPE, text=True)
    try:
        # Killed while it goes on writing into its open transaction.
        assert child.stdout.readline().strip() == "committed"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    with Barecat(path) as bc:
        names = list(bc)
        assert len(names) >= 1000
        for p in names:
            i = int(p.rpartition("/f")[2])
            assert bc[p] == bytes([i % 251]) * (i % 3000)
    assert python_verify(path)
    run(ours_bin("barecat-verify"), "-q", str(path))
