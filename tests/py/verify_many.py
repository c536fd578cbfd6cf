"""Python barecat's full verify of many archives in one interpreter.

usage: verify_many.py < paths

Reads one archive path per line on stdin and answers one line on stdout for each:
`ok N` (N files verified) or `FAIL <reason>`. It runs what `barecat verify ARCHIVE`
runs: the CRC32C of every file in address order, then the index checks. Starting
Python once instead of once per archive keeps tests that verify hundreds of
archives fast.
"""
import sys
import traceback

import barecat
from barecat.core.index import Order


def verify(path):
    with barecat.Barecat(path, threadsafe=True) as bc:
        bad = [
            fi.path
            for fi in bc.index.iter_all_fileinfos(order=Order.ADDRESS)
            if not bc.check_crc32c(fi)
        ]
        if bad:
            return f"FAIL CRC32C mismatch: {bad[:5]}"
        if not bc.index.verify_integrity():
            return "FAIL index integrity errors"
        return f"ok {bc.num_files}"


for line in sys.stdin:
    path = line.rstrip("\n")
    try:
        answer = verify(path)
    except Exception as e:  # report, keep serving
        answer = "FAIL " + "".join(traceback.format_exception_only(type(e), e)).strip()
    print(answer.replace("\n", " "), flush=True)
