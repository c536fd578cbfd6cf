"""examples/dask_ingest.py on a real dask.distributed LocalCluster with 2 worker
processes: parts written by the workers, joined by merge_symlink and by merge; the
result read back through barecat_rs and verified by Python barecat."""
import os
import random
import subprocess
import sys

import pytest

from barecat_rs import Barecat
from conftest import ROOT, need, python_verify


@pytest.mark.parametrize("copy", [False, True])
def test_dask_ingest_with_two_local_workers(tmp_path, copy):
    need("dask", "distributed")
    rng = random.Random(1)
    src = tmp_path / "src"
    want = {}
    for i in range(120):
        rel = f"c{i % 5}/s{i % 2}/img{i:04d}.bin"
        (src / os.path.dirname(rel)).mkdir(parents=True, exist_ok=True)
        data = rng.randbytes(rng.randrange(3000))
        (src / rel).write_bytes(data)
        want[rel] = data
    out = tmp_path / "all.barecat"
    cmd = [sys.executable, str(ROOT / "examples" / "dask_ingest.py"), str(src), str(out),
           "--parts", "5", "--workers", "2"] + (["--copy"] if copy else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "120 files" in r.stdout and "5 parts" in r.stdout
    # merge_symlink links each part's shard; merge copies everything into one shard.
    assert os.path.islink(f"{out}-shard-00000") == (not copy)
    assert os.path.exists(f"{out}-shard-00004") == (not copy)
    with Barecat(out) as bc:
        assert {p: bc[p] for p in bc} == want
    assert python_verify(out)
