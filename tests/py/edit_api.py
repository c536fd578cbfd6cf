"""Apply edits to an archive with Python barecat's own API, for comparing our rm,
mv, chmod and touch with it.

usage: edit_api.py ARCHIVE OPS.json
OPS is a JSON list of operations, each a list: ["remove", PATH], ["rmtree", PATH],
["rmdir", PATH], ["rename", OLD, NEW], ["chmod", PATH, MODE],
["mtime", PATH, MTIME_NS]. Applied in order, in one session.
"""
import json
import sys

from barecat import Barecat

archive, ops_file = sys.argv[1], sys.argv[2]
with open(ops_file) as f:
    ops = json.load(f)
with Barecat(archive, readonly=False) as bc:
    for op, *args in ops:
        if op == "remove":
            bc.remove(args[0])
        elif op == "rmtree":
            bc.rmtree(args[0])
        elif op == "rmdir":
            bc.rmdir(args[0])
        elif op == "rename":
            bc.rename(args[0], args[1])
        elif op == "chmod":
            bc.index.chmod(args[0], args[1])
        elif op == "mtime":
            bc.index.update_mtime(args[0], args[1])
        else:
            raise ValueError(op)
print("edited")
