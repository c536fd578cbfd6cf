"""barecat_rs: fast reading and writing of barecat archives from Python."""

from ._barecat import (
    SHARD_SIZE_UNLIMITED as SHARD_SIZE_UNLIMITED,
    Barecat as Barecat,
    Index as Index,
    Order as Order,
)
from ._fileobj import (
    BarecatFileObject as BarecatFileObject,
    BarecatReadOnlyFileObject as BarecatReadOnlyFileObject,
    BarecatReadWriteFileObject as BarecatReadWriteFileObject,
)
from ._native import (
    BarecatDirInfo as BarecatDirInfo,
    BarecatFileInfo as BarecatFileInfo,
    __version__ as __version__,
    crc32c as crc32c,
    merge as merge,
    merge_symlink as merge_symlink,
    remote_stats as remote_stats,
)
from ._records import Records as Records
from .codecs import DecodedView as DecodedView
from .exceptions import (
    BarecatError as BarecatError,
    BarecatIntegrityError as BarecatIntegrityError,
    BarecatLockedError as BarecatLockedError,
    BarecatPermissionError as BarecatPermissionError,
    BarecatReadOnlyError as BarecatReadOnlyError,
    BarecatValueError as BarecatValueError,
    DirectoryNotEmptyBarecatError as DirectoryNotEmptyBarecatError,
    FileExistsBarecatError as FileExistsBarecatError,
    FileNotFoundBarecatError as FileNotFoundBarecatError,
    FileTooLargeBarecatError as FileTooLargeBarecatError,
    IsADirectoryBarecatError as IsADirectoryBarecatError,
    NotADirectoryBarecatError as NotADirectoryBarecatError,
    NotEnoughSpaceBarecatError as NotEnoughSpaceBarecatError,
)

FileInfo = BarecatFileInfo
DirInfo = BarecatDirInfo

__all__ = [
    "Barecat",
    "BarecatDirInfo",
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
    "merge",
    "merge_symlink",
    "remote_stats",
    "__version__",
    "BarecatError",
    "BarecatIntegrityError",
    "BarecatLockedError",
    "BarecatPermissionError",
    "BarecatReadOnlyError",
    "BarecatValueError",
    "DirectoryNotEmptyBarecatError",
    "FileExistsBarecatError",
    "FileNotFoundBarecatError",
    "FileTooLargeBarecatError",
    "IsADirectoryBarecatError",
    "NotADirectoryBarecatError",
    "NotEnoughSpaceBarecatError",
]
