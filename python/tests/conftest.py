"""Shared helpers of the barecat_rs tests.

`need("module")` skips a test whose peer (a pip package of tests/peers.txt) is
missing, with one line naming it; under CI=true it fails instead, so CI cannot go
green by skipping.
"""
import importlib.util
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def in_ci():
    return os.environ.get("CI", "") not in ("", "0", "false")


def need(*modules):
    for m in modules:
        if importlib.util.find_spec(m) is None:
            msg = f"{m} is not installed ({sys.executable} -m pip install {m}, or run ./scripts/test.sh)"
            if in_ci():
                pytest.fail(msg + ": CI must have every peer of tests/peers.txt")
            pytest.skip(msg)


def contents(n=300, seed=7, max_size=5000):
    """A deterministic set of paths and contents: nested directories, an empty
    file, sizes across the copy limit of the reader."""
    rng = random.Random(seed)
    files = {}
    for i in range(n):
        d = f"d{i % 7}/s{i % 3}"
        size = rng.choice([0, 1, 17, 100, rng.randrange(max_size)])
        files[f"{d}/f{i:04d}.bin"] = rng.randbytes(size)
    files["big/large.bin"] = rng.randbytes(300_000)
    files["top.txt"] = b"top level\n"
    return files


def write_ours(path, files, **kw):
    import barecat_rs

    with barecat_rs.Barecat(str(path), readonly=False, **kw) as bc:
        for p, d in files.items():
            bc[p] = d
    return path


def write_python(path, files):
    need("barecat")
    import barecat

    with barecat.Barecat(str(path), readonly=False) as bc:
        for p, d in files.items():
            bc[p] = d
    return path


def python_verify(path):
    """Python barecat's own check of an archive: every CRC and the index."""
    need("barecat")
    import barecat

    with barecat.Barecat(str(path), readonly=True) as bc:
        return bc.verify_integrity()


@pytest.fixture
def files():
    return contents()


@pytest.fixture
def archive(tmp_path, files):
    return write_ours(tmp_path / "data.barecat", files)


def ours_bin(name):
    """A command of this repository (built by cargo), or skip."""
    for profile in ("debug", "release"):
        p = ROOT / "target" / profile / name
        if p.exists():
            return str(p)
    if shutil.which(name):
        return name
    msg = f"{name} is not built (cargo build)"
    if in_ci():
        pytest.fail(msg)
    pytest.skip(msg)


def run(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)
