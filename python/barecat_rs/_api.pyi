"""Module-level functions of Python barecat's API."""

import os
from collections.abc import Sequence
from typing import Any, overload

from ._barecat import Barecat

_Path = str | os.PathLike[str]
_Size = int | str

__all__ = [
    "open", "exists", "remove", "extract", "merge", "merge_symlink", "archive2barecat",
    "barecat2archive", "read_index", "write_index", "get_cached_reader",
    "get_completion_script", "Sharder",
]

def open(path: _Path, mode: str = "r", auto_codec: bool = False, threadsafe_reader: bool = True) -> Barecat: ...
def exists(path: _Path) -> bool: ...
def remove(path: _Path) -> None: ...
@overload
def merge(
    source_paths: Sequence[_Path],
    target_path: _Path,
    shard_size_limit: _Size | None = None,
    overwrite: bool = False,
    ignore_duplicates: bool = False,
    as_subdirs: bool = False,
    prefix: str | None = None,
    pattern: str | None = None,
    filter_rules: list[tuple[str, str]] | None = None,
) -> None: ...
@overload
def merge(source_paths: _Path, target_path: Sequence[_Path], **kwargs: Any) -> dict[str, int | None]: ...
@overload
def merge_symlink(
    source_paths: Sequence[_Path],
    target_path: _Path,
    overwrite: bool = False,
    ignore_duplicates: bool = False,
    as_subdirs: bool = False,
    prefix: str | None = None,
    pattern: str | None = None,
    filter_rules: list[tuple[str, str]] | None = None,
) -> None: ...
@overload
def merge_symlink(
    source_paths: _Path,
    target_path: Sequence[_Path],
    overwrite: bool = False,
    ignore_duplicates: bool = False,
    as_subdirs: bool = False,
    prefix: str | None = None,
) -> dict[str, int | None]: ...
def extract(barecat_path: _Path, target_directory: _Path) -> None: ...
def builtins_open(path: _Path, mode: str) -> Any: ...
def archive2barecat(src_path: _Path, target_path: _Path, shard_size_limit: _Size | None = None, overwrite: bool = False) -> None: ...
def barecat2archive(src_path: _Path, target_path: _Path, root_dir: str | None = None) -> None: ...
def read_index(path: _Path) -> dict[str, tuple[int, int, int]]: ...
def write_index(dictionary: dict[str, tuple[int, int, int]], target_path: _Path) -> None: ...
def get_cached_reader(path: _Path, auto_codec: bool | None = None) -> Barecat: ...
def get_completion_script(shell: str = "bash") -> str: ...

class Sharder:
    """The shard files of an archive (reading and sizes)."""

    path: str
    readonly: bool
    append_only: bool
    shard_size_limit: _Size | None
    def __init__(
        self,
        path: _Path,
        shard_size_limit: _Size | None = None,
        readonly: bool = True,
        append_only: bool = False,
        threadsafe: bool = False,
        allow_writing_symlinked_shard: bool = False,
    ) -> None: ...
    @property
    def num_shards(self) -> int: ...
    def physical_shard_end(self, shard_number: int) -> int: ...
    @property
    def total_physical_size_stat(self) -> int: ...
    @property
    def total_physical_size_seek(self) -> int: ...
    def read_from_address(self, shard: int, offset: int, size: int) -> bytes: ...
    def close(self) -> None: ...
