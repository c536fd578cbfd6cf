"""barecat_rs: fast reading and writing of barecat archives from Python."""

from ._barecat import (
    SHARD_SIZE_UNLIMITED as SHARD_SIZE_UNLIMITED,
    Barecat as Barecat,
    Order as Order,
)
from ._fileobj import (
    BarecatFileObject as BarecatFileObject,
    BarecatReadOnlyFileObject as BarecatReadOnlyFileObject,
    BarecatReadWriteFileObject as BarecatReadWriteFileObject,
)
from ._index import Index as Index
from ._api import (
    Sharder as Sharder,
    archive2barecat as archive2barecat,
    barecat2archive as barecat2archive,
    exists as exists,
    extract as extract,
    get_cached_reader as get_cached_reader,
    get_completion_script as get_completion_script,
    merge as merge,
    merge_symlink as merge_symlink,
    open as open,
    read_index as read_index,
    remove as remove,
    write_index as write_index,
)
from ._native import (
    BarecatDirInfo as BarecatDirInfo,
    BarecatFileInfo as BarecatFileInfo,
    __version__ as __version__,
    crc32c as crc32c,
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
    BarecatTypeError as BarecatTypeError,
    NotAFileBarecatError as NotAFileBarecatError,
    BelowAFileBarecatError as BelowAFileBarecatError,
    NotEnoughSpaceBarecatError as NotEnoughSpaceBarecatError,
)

FileInfo = BarecatFileInfo
DirInfo = BarecatDirInfo
BarecatEntryInfo: tuple[type[BarecatFileInfo], type[BarecatDirInfo]]

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
    "BarecatTypeError",
    "NotAFileBarecatError",
    "BelowAFileBarecatError",
    "NotADirectoryBarecatError",
    "NotEnoughSpaceBarecatError",
]
