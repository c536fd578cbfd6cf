"""barecat_rs: fast reading and writing of barecat archives from Python.

A drop-in for Python barecat's ``Barecat`` in data loaders: the same API
(``bc[path]``, ``read``, ``open``, ``listdir``, ``walk``, ``glob``, ...), reads
that release the GIL, batch reads on a thread pool (``read_many``), zero-copy
views of the shards, objects that survive ``fork`` and pickle for ``spawn``
workers::

    import barecat_rs
    with barecat_rs.Barecat("train.barecat") as bc:
        img = bc["images/000001.jpg"]
        batch = bc.read_many(paths, threads=8)
    records = barecat_rs.Records("train.barecat")   # after `barecat-records build`
    views = records.gather([3, 1, 4])               # memoryviews, no copy

A URL opens a remote archive read-only, by ranged requests (credentials and
endpoints from the usual ``AWS_*`` variables)::

    bc = barecat_rs.Barecat("s3://bucket/datasets/train.barecat")
"""

from ._native import (
    BarecatDirInfo,
    BarecatFileInfo,
    __version__,
    crc32c,
    remote_stats,
)
from .exceptions import *  # noqa: F401,F403
from .exceptions import __all__ as _exceptions
from ._barecat import Barecat, Order, SHARD_SIZE_UNLIMITED
from ._fileobj import BarecatFileObject, BarecatReadOnlyFileObject, BarecatReadWriteFileObject
from ._index import Index
from ._api import (
    Sharder,
    archive2barecat,
    barecat2archive,
    exists,
    extract,
    get_cached_reader,
    get_completion_script,
    merge,
    merge_symlink,
    open,
    read_index,
    remove,
    write_index,
)
from ._records import Records

FileInfo = BarecatFileInfo
DirInfo = BarecatDirInfo
BarecatEntryInfo = (BarecatFileInfo, BarecatDirInfo)


def __getattr__(name):
    # The codecs (and what they import) load on first use: `import barecat_rs`
    # stays fast.
    if name == "DecodedView":
        from .codecs import DecodedView

        return DecodedView
    raise AttributeError(f"module 'barecat_rs' has no attribute {name!r}")


__all__ = [
    "Barecat",
    "BarecatDirInfo",
    "BarecatEntryInfo",
    "BarecatFileInfo",
    "BarecatFileObject",
    "BarecatReadOnlyFileObject",
    "BarecatReadWriteFileObject",
    "DecodedView",
    "DirInfo",
    "FileInfo",
    "Index",
    "Order",
    "Records",
    "SHARD_SIZE_UNLIMITED",
    "crc32c",
    "Sharder",
    "archive2barecat",
    "barecat2archive",
    "exists",
    "extract",
    "get_cached_reader",
    "get_completion_script",
    "merge",
    "merge_symlink",
    "open",
    "read_index",
    "remote_stats",
    "remove",
    "write_index",
    "__version__",
] + _exceptions
