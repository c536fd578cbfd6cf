"""Change an archive with Python barecat's own writing API, for the interop tests.

usage: modify.py ARCHIVE
Adds files (new and existing directories), deletes files, makes and removes
directories and renames entries, all with triggers on, as Python users do.
"""
import sys

from barecat import Barecat

archive = sys.argv[1]
with Barecat(archive, readonly=False) as bc:
    bc["py_added/new.txt"] = b"added by python\n"
    bc["py_added/deeper/more.bin"] = bytes(range(256)) * 3
    bc["nested/a/py_in_existing_dir.txt"] = b"python was here"
    bc.mkdir("py_empty_dir")
    victims = sorted(p for p in bc.index.iter_all_filepaths() if p.startswith("multi/"))[:3]
    for p in victims:
        del bc[p]
    bc.rename("nested/a/py_in_existing_dir.txt", "py_added/moved.txt")
    bc.rename("py_added/deeper", "py_added/renamed_deeper")
    bc.rmdir("py_empty_dir")
print("modified")
