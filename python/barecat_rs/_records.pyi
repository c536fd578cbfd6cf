import os
from collections.abc import Iterator
from typing import Any

from typing_extensions import Self

from ._native import _Records

class Records(_Records):
    """Records by integer index, from a dataset directory or an archive's record table."""

    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> bool: ...
    def __iter__(self) -> Iterator[bytes]: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

def _reopen(cls: type[Records], path: str | os.PathLike[str], check_crc: bool) -> Records: ...
