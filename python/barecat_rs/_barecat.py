"""The ``Barecat`` class: the native archive object plus the parts of Python
barecat's API that are naturally Python (iteration, walking, file objects, the
``index`` namespace, pickling)."""

import os
from collections.abc import MutableMapping
from contextlib import contextmanager
from enum import Flag, auto

from . import _fileobj
from ._fileobj import BarecatFileObject  # noqa: F401 - kept importable from here
from ._native import BarecatDirInfo, BarecatFileInfo, _Archive
from .exceptions import FileNotFoundBarecatError
from ._maint import BarecatMaintenance

SHARD_SIZE_UNLIMITED = (1 << 63) - 1


class Order(Flag):
    """Order of iteration, as in Python barecat. ``ANY`` is insertion order."""

    ANY = auto()
    RANDOM = auto()
    ADDRESS = auto()
    PATH = auto()
    DESC = auto()


def _order(order):
    """Our Order from ours or from Python barecat's (matched by member names)."""
    if isinstance(order, Order):
        return order
    result = Order(0)
    cls = type(order)
    for member in Order:
        other = getattr(cls, member.name, None)
        if other is not None and other & order:
            result |= member
    return result or Order.ANY


def _ordered(items, order, key):
    if order & Order.RANDOM:
        import random

        items = list(items)
        random.shuffle(items)
        return iter(items)
    if order & Order.DESC:
        return iter(sorted(items, key=key, reverse=True))
    return items


def _reopen(cls, path, options):
    return cls(path, **options)



def _paged(fetch):
    """Everything ``fetch(cursor)`` gives a page at a time: it returns ``(page,
    next cursor)``, the cursor None after the last page (None for the first)."""
    cursor = None
    while True:
        page, cursor = fetch(cursor)
        yield from page
        if cursor is None:
            return

class Barecat(BarecatMaintenance, _Archive, MutableMapping):
    """A barecat archive, for reading (default) or writing.

    ``Barecat(path, readonly=True)`` opens an existing archive for reading; any
    number of threads may read at once, and the object can be pickled (only the
    path travels) and used across ``fork``. ``Barecat(path, readonly=False,
    overwrite=False, exist_ok=True, shard_size_limit=None)`` opens or creates one
    for writing; ``close()`` (or leaving the ``with`` block) commits.
    """

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __reduce__(self):
        (path,) = self._reopen_args()
        return _reopen, (type(self), path, {"readonly": True})

    # ------------------------------------------------------------ dict interface

    def __iter__(self):
        return self.files()

    def keys(self):
        return self.files()

    def items(self):
        for fi in self.index.iter_all_fileinfos():
            yield fi.path, self.read(fi)

    def values(self):
        for _, data in self.items():
            yield data

    def get(self, path, default=None):
        try:
            return self[path]
        except KeyError:
            return default

    def files(self):
        """All file paths, in path order (the order of Python barecat's, which reads
        them from the path index)."""
        return self._paths("files", "path")

    def dirs(self):
        """All directory paths, in path order (the root is ``''``)."""
        return self._paths("dirs", "path")

    def _paths(self, table, order):
        """Paths of ``table`` in ``order``, read a page at a time (paths only)."""
        return _paged(lambda cursor: self._paths_page(table, order, cursor))

    # ------------------------------------------------------------ file system

    def open(self, item, mode="r", encoding=None, errors=None, newline=None):
        """A file object for a file of the archive, in any mode of Python's
        ``open`` (``r``, ``r+``, ``w``, ``w+``, ``x``, ``x+``, ``a``, ``a+``; binary
        with ``b``, else text): see ``barecat_rs._fileobj``."""
        return _fileobj.open_file(self, item, mode, encoding, errors, newline)

    def close(self):
        """Close the file objects still open for writing (storing their content),
        then commit and close the archive."""
        try:
            _fileobj.close_all(self)
        finally:
            super().close()

    def _file_info(self, path):
        info = self._info(path)
        if info is None:
            raise FileNotFoundBarecatError(f"{path}: no such file or directory in archive")
        if isinstance(info, BarecatDirInfo):
            from .exceptions import NotAFileBarecatError

            raise NotAFileBarecatError(f"{info.path}: is a directory in archive")
        return info

    def walk(self, path=""):
        """Like ``os.walk``: (dirpath, dirnames, filenames) for every directory below
        ``path``, top-down, names sorted (the root is reported as ``'.'``, as Python
        barecat does)."""
        from ._native import _ix_walk

        yield from _ix_walk(self, path, False)

    def scandir(self, path=""):
        """Infos (``BarecatDirInfo`` then ``BarecatFileInfo``) of the entries directly
        in ``path``."""
        _, dirs, files = self._listing(path)
        return iter(dirs + files)

    def glob(self, pattern, recursive=False, include_hidden=False):
        """Paths of files and directories matching ``pattern`` (Python ``glob``
        rules; ``**`` spans directories when ``recursive``)."""
        return self._glob(pattern, recursive, include_hidden, False)

    def globfiles(self, pattern, recursive=False, include_hidden=False):
        return self._glob(pattern, recursive, include_hidden, True)

    def iglob(self, pattern, recursive=False, include_hidden=False):
        return iter(self._glob(pattern, recursive, include_hidden, False))

    def iglobfiles(self, pattern, recursive=False, include_hidden=False):
        return iter(self._glob(pattern, recursive, include_hidden, True))

    # ------------------------------------------------------------ writing

    def add(self, item, *, data=None, fileobj=None, bufsize=None, dir_exist_ok=False,
            file_exist_ok=False):
        """Add a file (``item`` a path or a ``BarecatFileInfo`` carrying metadata;
        content from ``data`` or read from ``fileobj``) or a directory (``item`` a
        ``BarecatDirInfo``). Missing parent directories are created."""
        if isinstance(item, BarecatDirInfo):
            self._add_dir(item.path, item.mode, item.uid, item.gid, item.mtime_ns, dir_exist_ok)
            return
        info = item if isinstance(item, BarecatFileInfo) else BarecatFileInfo(path=os.fspath(item))
        if data is None:
            if fileobj is None:
                raise ValueError("add() needs data or fileobj")
            data = fileobj.read()
        added = self._add_file(info.path, data, info.mode, info.uid, info.gid, info.mtime_ns,
                               file_exist_ok)
        if added is not None and isinstance(item, BarecatFileInfo):
            item.shard, item.offset, item.size, item.crc32c = (
                added.shard, added.offset, added.size, added.crc32c)

    def mkdir(self, path, mode=0o755, exist_ok=False):
        """Create a directory (and missing parents)."""
        self._add_dir(path, mode, None, None, None, exist_ok)

    @contextmanager
    def bulk(self):
        """Bulk import: everything added in the block is one transaction, committed
        at its end (the directory statistics are updated once)."""
        self._set_bulk(True)
        try:
            yield self
        finally:
            if not self.closed:
                self._set_bulk(False)

    @property
    def index(self):
        ix = self.__dict__.get("_index")
        if ix is None:
            from ._index import Index as FullIndex

            ix = self.__dict__["_index"] = FullIndex(self)
        return ix
