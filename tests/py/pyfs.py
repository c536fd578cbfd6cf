"""Small Python-side helpers for the interop tests.

usage: pyfs.py COMMAND ARGS...
  put ARCHIVE PATH HEXDATA      store one file with bc[PATH] = data (creating the archive)
  delete ARCHIVE PATH...        delete files
  rmtree ARCHIVE DIR            remove a directory recursively
  limit ARCHIVE                 print the stored shard size limit
"""
import sys

from barecat import Barecat

cmd, archive, *rest = sys.argv[1:]
if cmd == "put":
    with Barecat(archive, readonly=False) as bc:
        bc[rest[0]] = bytes.fromhex(rest[1])
elif cmd == "delete":
    with Barecat(archive, readonly=False) as bc:
        for p in rest:
            del bc[p]
elif cmd == "rmtree":
    with Barecat(archive, readonly=False) as bc:
        bc.rmtree(rest[0])
elif cmd == "limit":
    with Barecat(archive, readonly=True) as bc:
        print(bc.shard_size_limit)
else:
    sys.exit(f"unknown command {cmd}")
