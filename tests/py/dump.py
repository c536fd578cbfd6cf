"""Dump an archive through Python barecat's API as JSON, for the interop tests.

usage: dump.py ARCHIVE OUT.json

Every file is read with bc[path], which checks its CRC32C. The dump holds the
content (hex), the metadata, the directory statistics, the walk, and the result of
Python's own integrity check.
"""
import json
import sys

from barecat import Barecat

archive, out = sys.argv[1], sys.argv[2]
with Barecat(archive, readonly=True) as bc:
    files = {}
    for fi in bc.index.iter_all_fileinfos():
        data = bc[fi.path]
        files[fi.path] = {
            "hex": data.hex(),
            "size": fi.size,
            "crc32c": fi.crc32c,
            "mode": fi.mode,
            "uid": fi.uid,
            "gid": fi.gid,
            "mtime_ns": fi.mtime_ns,
        }
    dirs = {}
    for di in bc.index.iter_all_dirinfos():
        dirs[di.path] = [di.num_subdirs, di.num_files, di.num_files_tree, di.size_tree]
    walk = [[d, sorted(sub), sorted(fs)] for d, sub, fs in bc.walk("")]
    result = {
        "files": files,
        "dirs": dirs,
        "walk": walk,
        "num_files": bc.num_files,
        "total_size": bc.total_size,
        "integrity_ok": bool(bc.index.verify_integrity()),
        "shard_size_limit": bc.shard_size_limit,
    }
with open(out, "w") as f:
    json.dump(result, f)
