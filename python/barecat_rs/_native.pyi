"""Type stubs of the native module (python/src/*.rs, built with pyo3)."""

import datetime
import os
from collections.abc import Iterable, Sequence
from typing import Any, Literal, final, overload

from typing_extensions import Buffer, Self

__version__: str

__all__ = [
    "__version__",
    "_Archive",
    "PageCursor",
    "BarecatFileInfo",
    "BarecatDirInfo",
    "MappedBytes",
    "_Records",
    "merge",
    "merge_symlink",
    "crc32c",
    "remote_stats",
    "_panic_for_tests",
]

_Bytes = Buffer
_Size = int | str

@final
class BarecatFileInfo:
    """A file row of the index (all fields settable)."""

    path: str
    shard: int | None
    offset: int | None
    size: int | None
    crc32c: int | None
    mode: int | None
    uid: int | None
    gid: int | None
    mtime_ns: int | None
    def __new__(
        cls,
        path: str = "",
        shard: int | None = None,
        offset: int | None = None,
        size: int | None = None,
        crc32c: int | None = None,
        mode: int | None = None,
        uid: int | None = None,
        gid: int | None = None,
        mtime_ns: int | None = None,
    ) -> Self: ...
    @property
    def end(self) -> int | None:
        """One past the last byte of the file in its shard."""
    @property
    def mtime_dt(self) -> datetime.datetime | None: ...
    def isfile(self) -> bool: ...
    def isdir(self) -> bool: ...
    def asdict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

@final
class BarecatDirInfo:
    """A directory row of the index, with its subtree statistics."""

    path: str
    num_subdirs: int | None
    num_files: int | None
    num_files_tree: int | None
    size_tree: int | None
    mode: int | None
    uid: int | None
    gid: int | None
    mtime_ns: int | None
    def __new__(
        cls,
        path: str = "",
        num_subdirs: int | None = None,
        num_files: int | None = None,
        num_files_tree: int | None = None,
        size_tree: int | None = None,
        mode: int | None = None,
        uid: int | None = None,
        gid: int | None = None,
        mtime_ns: int | None = None,
    ) -> Self: ...
    @property
    def num_entries(self) -> int:
        """Entries directly inside: subdirectories plus files."""
    @property
    def mtime_dt(self) -> datetime.datetime | None: ...
    def isfile(self) -> bool: ...
    def isdir(self) -> bool: ...
    def asdict(self) -> dict[str, Any]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

@final
class MappedBytes:
    """Read-only bytes inside a memory map (a buffer: wrap it in memoryview)."""

    def __len__(self) -> int: ...

@final
class PageCursor:
    """A position in a paged iteration over files (opaque)."""

_Item = str | os.PathLike[str] | BarecatFileInfo

class _Archive:
    """The native archive object; ``barecat_rs.Barecat`` derives from it."""

    def __new__(
        cls,
        path: str | os.PathLike[str],
        shard_size_limit: _Size | None = None,
        readonly: bool = True,
        overwrite: bool = False,
        auto_codec: bool = False,
        exist_ok: bool = True,
        append_only: bool = False,
        threadsafe: bool = True,
        allow_writing_symlinked_shard: bool = False,
        **kwargs: Any,
    ) -> Self: ...
    @property
    def path(self) -> str | os.PathLike[str]: ...
    @property
    def readonly(self) -> bool: ...
    @property
    def append_only(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    @property
    def num_files(self) -> int: ...
    @property
    def num_dirs(self) -> int: ...
    @property
    def total_size(self) -> int: ...
    @property
    def shard_size_limit(self) -> int: ...
    @shard_size_limit.setter
    def shard_size_limit(self, value: _Size) -> None: ...
    def __getitem__(self, key: str, /) -> bytes: ...
    def __setitem__(self, key: str, value: _Bytes, /) -> None: ...
    def __delitem__(self, key: str, /) -> None: ...
    def __contains__(self, key: object, /) -> bool: ...
    def __len__(self) -> int: ...
    def read(self, item: _Item, offset: int = 0, size: int = -1) -> bytes: ...
    def readinto(self, item: _Item, buffer: Buffer, offset: int = 0) -> int: ...
    def view(self, item: _Item) -> memoryview: ...
    @overload
    def read_many(
        self, paths: Iterable[str], threads: int | None = None, zero_copy: Literal[False] = False
    ) -> list[bytes]: ...
    @overload
    def read_many(
        self, paths: Iterable[str], threads: int | None = None, *, zero_copy: Literal[True]
    ) -> list[memoryview]: ...
    def exists(self, path: str) -> bool: ...
    def isfile(self, path: str) -> bool: ...
    def isdir(self, path: str) -> bool: ...
    def listdir(self, path: str = "") -> list[str]: ...
    def add_by_path(
        self, filesys_path: str | os.PathLike[str], store_path: str | None = None, dir_exist_ok: bool = False
    ) -> None: ...
    def remove(self, path: str) -> None: ...
    def rmdir(self, path: str) -> None: ...
    def rmtree(self, path: str) -> int: ...
    def rename(self, old_path: str, new_path: str, overwrite: bool = False) -> None: ...
    def commit(self) -> None: ...
    def update_treestats(self) -> int: ...
    def close(self) -> None: ...
    def _info(self, path: str) -> BarecatFileInfo | BarecatDirInfo | None: ...
    def _listing(self, path: str = "") -> tuple[str, list[BarecatDirInfo], list[BarecatFileInfo]]: ...
    def _glob(self, pattern: str, recursive: bool = False, include_hidden: bool = False, only_files: bool = False) -> list[str]: ...
    def _files_page(
        self, order: str, cursor: PageCursor | None = None, limit: int = 4096
    ) -> tuple[list[BarecatFileInfo], PageCursor]: ...
    def _dirs_page(self, after: str | None = None, limit: int = 4096) -> list[BarecatDirInfo]: ...
    def _add_file(
        self,
        path: str,
        data: _Bytes,
        mode: int | None = None,
        uid: int | None = None,
        gid: int | None = None,
        mtime_ns: int | None = None,
        file_exist_ok: bool = False,
    ) -> BarecatFileInfo | None: ...
    def _add_dir(
        self,
        path: str,
        mode: int | None = None,
        uid: int | None = None,
        gid: int | None = None,
        mtime_ns: int | None = None,
        dir_exist_ok: bool = False,
    ) -> None: ...
    def _set_bulk(self, on: bool) -> None: ...
    def _fileobj_target(self, path: str) -> tuple[str, BarecatFileInfo | None]: ...
    def _fileobj_store(
        self, path: str, data: _Bytes | list[_Bytes] | None = None, fd: int | None = None, exclusive: bool = False
    ) -> BarecatFileInfo: ...
    def _fileobj_patch(
        self,
        path: str,
        expect: tuple[int, int, int],
        new_size: int,
        zeros_from: int,
        pieces: list[tuple[int, _Bytes]] | None = None,
        fd: int | None = None,
    ) -> BarecatFileInfo | None: ...
    def _reopen_args(self) -> tuple[str | os.PathLike[str]]: ...

_Dtype = Literal["bytes", "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f16", "bf16", "f32", "f64"]
_Compress = Literal["none", "zstd", "flate"]

class _Records:
    """The native record store object; ``barecat_rs.Records`` derives from it."""

    def __new__(
        cls,
        path: str | os.PathLike[str],
        readonly: bool = True,
        *,
        create: bool = False,
        overwrite: bool = False,
        compress: _Compress = "none",
        dtype: _Dtype = "bytes",
        chunk_records: int | None = None,
        chunk_bytes: _Size | None = None,
        writers: int = 1,
        check_crc: bool = False,
    ) -> Self: ...
    @property
    def path(self) -> os.PathLike[str]: ...
    @property
    def readonly(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    @property
    def dtype(self) -> str: ...
    @property
    def compress(self) -> str: ...
    def __len__(self) -> int: ...
    def __getitem__(self, key: int, /) -> bytes: ...
    def __setitem__(self, key: int, value: _Bytes, /) -> None: ...
    def __delitem__(self, key: int, /) -> None: ...
    def view(self, i: int) -> MappedBytes: ...
    def gather(self, indices: Sequence[int] | Buffer, *, threads: int = 0, check_crc: bool | None = None) -> list[memoryview]: ...
    def append(self, data: _Bytes) -> int: ...
    def extend(self, records: Iterable[_Bytes]) -> int: ...
    def modify(self, i: int, data: _Bytes) -> None: ...
    def delete(self, i: int) -> None: ...
    def commit(self) -> None: ...
    def close(self) -> None: ...
    def _reopen_args(self) -> tuple[os.PathLike[str], bool]: ...

def merge(
    output: str | os.PathLike[str],
    inputs: Sequence[str | os.PathLike[str]],
    overwrite: bool = False,
    append: bool = False,
    ignore_duplicates: bool = False,
    shard_size_limit: _Size | None = None,
    duplicates: Literal["first", "last", "error"] | None = None,
) -> dict[str, int | None]: ...
def merge_symlink(
    output: str | os.PathLike[str],
    inputs: Sequence[str | os.PathLike[str]],
    overwrite: bool = False,
    ignore_duplicates: bool = False,
    prefix: str | None = None,
    as_subdirs: bool = False,
) -> dict[str, int | None]: ...
def completion_script(shell: str) -> bytes | None: ...
def crc32c(data: _Bytes) -> int: ...
def remote_stats() -> dict[str, dict[str, int | None]]: ...
def _panic_for_tests(in_pool: bool = False) -> None: ...
