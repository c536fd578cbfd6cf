"""Remote archives through barecat_rs: a URL wherever a path is read, against real
servers on loopback (the tests' HTTP range server, moto for S3), started and
stopped here with bounded lifetimes."""
import multiprocessing
import os
import pickle
import socket
import subprocess
import sys
import time

import pytest

import barecat_rs
from barecat_rs import Barecat
from conftest import ROOT, need

SERVER = ROOT / "tests" / "py" / "range_server.py"


@pytest.fixture
def http(archive):
    """The directory of `archive`, served over HTTP; yields the archive's URL."""
    p = subprocess.Popen(
        [sys.executable, str(SERVER), str(archive.parent), "--lifetime", "300"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = p.stdout.readline()
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/{archive.name}"
    finally:
        p.kill()
        p.wait(timeout=10)


def test_a_url_reads_what_the_path_reads(archive, files, http):
    with Barecat(http) as bc:
        assert bc.readonly
        assert len(bc) == len(files)
        for p, d in files.items():
            assert bc[p] == d
        assert sorted(bc.listdir("d1")) == sorted(Barecat(archive).listdir("d1"))
        batch = bc.read_many(list(files)[:50], threads=4)
        assert [bytes(b) for b in batch] == list(files.values())[:50]
        with bc.open("big/large.bin", "rb") as f:
            f.seek(1000)
            assert f.read(10) == files["big/large.bin"][1000:1010]
    st = barecat_rs.remote_stats()
    assert st["index"]["requests"] >= 1 and st["shards"]["bytes"] > 0


def _worker(bc, path, q):
    q.put(bytes(bc[path]))


def test_a_remote_archive_survives_fork_and_pickling(archive, files, http):
    bc = Barecat(http)
    path = "d3/s0/f0003.bin"
    assert bc[path] == files[path]
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    proc = ctx.Process(target=_worker, args=(bc, path, q))
    proc.start()
    assert q.get(timeout=60) == files[path]
    proc.join(timeout=60)
    clone = pickle.loads(pickle.dumps(bc))
    assert clone["top.txt"] == files["top.txt"]


def test_remote_archives_are_read_only_and_bad_urls_are_value_errors(http):
    with pytest.raises(Exception, match="remote storage is not supported"):
        Barecat(http, readonly=False)
    with pytest.raises(ValueError, match="unknown URL scheme"):
        Barecat("ftp://example.org/x")
    with pytest.raises(Exception, match="no such archive"):
        Barecat(http.rsplit("/", 1)[0] + "/missing.barecat")


def test_merge_takes_remote_inputs(tmp_path, files, http):
    out = tmp_path / "copy.barecat"
    barecat_rs.merge(str(out), [http])
    with Barecat(out) as bc:
        assert dict(bc.items()) == files


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_s3_with_moto(archive, files, monkeypatch):
    need("moto", "boto3")
    import boto3

    port = _free_port()
    p = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.time() < deadline, "moto did not start"
                time.sleep(0.1)
        endpoint = f"http://127.0.0.1:{port}"
        s3 = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="k",
            aws_secret_access_key="s",
            region_name="us-east-1",
        )
        s3.create_bucket(Bucket="pytest-bucket")
        for f in archive.parent.iterdir():
            if f.name.startswith(archive.name):
                s3.upload_file(str(f), "pytest-bucket", "ds/" + f.name)
        for k, v in {
            "AWS_ACCESS_KEY_ID": "k",
            "AWS_SECRET_ACCESS_KEY": "s",
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ALLOW_HTTP": "true",
            "AWS_REGION": "us-east-1",
        }.items():
            monkeypatch.setenv(k, v)
        with Barecat(f"s3://pytest-bucket/ds/{archive.name}") as bc:
            assert dict(bc.items()) == files
    finally:
        p.kill()
        p.wait(timeout=10)
