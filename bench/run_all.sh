#!/usr/bin/env bash
# Every benchmark of BENCHMARKS.md, at full scale, one after the other (a few hours on
# 2 cores). Results go to bench/results/*.md and *.json; BENCHMARKS.md quotes them.
#
#   bench/run_all.sh [ROUNDS]        # default 5 rounds
#
# Needs root (cold-cache runs drop the page cache) and ~40 GB of free disk; the
# outputs of each script are removed before the next one starts.
set -euo pipefail
cd "$(dirname "$0")"
rounds="${1:-5}"
./setup.sh
python3 gen_dataset.py all
clean() { rm -f work/create-* work/from-tar-* work/export-py.* work/extract-fs.img work/images.tar; }
python3 create.py --rounds "$rounds"; clean
python3 from_tar.py --rounds "$rounds"; clean
python3 extract.py --rounds "$rounds"; clean
python3 export.py --rounds "$rounds"
python3 verify.py --rounds "$rounds"
python3 maint.py --rounds "$rounds"
python3 rebuild.py --rounds "$rounds"
python3 python.py --rounds "$rounds"; rm -f work/python-writes.barecat*
python3 mount.py --rounds "$rounds"
python3 sidecar.py --rounds "$rounds"; rm -f work/sidecar-*
python3 records.py --rounds "$rounds"
python3 reshard_wrap.py --rounds "$rounds"
python3 remote.py --rounds "$rounds"
(cd .. && cargo build --release --quiet --bin barecat --example gen_archive)
python3 scale.py --rounds 3
ls -l results/
