"""Exceptions of barecat_rs, with the names of Python barecat's.

Each also derives from the matching built-in exception, so both ``except
FileNotFoundBarecatError`` (code written for Python barecat) and ``except
FileNotFoundError`` work. Messages are the one-line messages of the barecat
commands (path, then the problem).
"""


class BarecatError(Exception):
    """Base class of every barecat_rs error."""


class FileExistsBarecatError(BarecatError, FileExistsError):
    """The path exists already (as a file or a directory), or the archive does."""


class FileNotFoundBarecatError(BarecatError, FileNotFoundError):
    """No such file or directory in the archive, or no such archive."""


class DirectoryNotEmptyBarecatError(BarecatError, OSError):
    """A directory that must be empty is not."""


class IsADirectoryBarecatError(BarecatError, IsADirectoryError):
    """A directory where a file is needed."""


class NotADirectoryBarecatError(BarecatError, NotADirectoryError):
    """A file where a directory is needed (for example a parent of a new path)."""


class NotAFileBarecatError(IsADirectoryBarecatError, FileNotFoundBarecatError):
    """A directory opened as a file for reading (``open(path)``, ``'r+'``). Python
    barecat raises ``FileNotFoundBarecatError`` there, which this is too."""


class BelowAFileBarecatError(NotADirectoryBarecatError, FileNotFoundBarecatError):
    """A path below a file opened for reading and writing (``'r+'``): a
    ``NotADirectoryError``, and the ``FileNotFoundBarecatError`` of Python barecat."""


class BarecatIntegrityError(BarecatError, ValueError):
    """Stored bytes do not match their checksum, or the index points at bytes the
    shards do not hold."""


class FileTooLargeBarecatError(BarecatError, ValueError):
    """Kept for compatibility: barecat_rs gives a file larger than the shard size
    limit a shard of its own instead of refusing it."""


class NotEnoughSpaceBarecatError(BarecatError):
    """Kept for compatibility with Python barecat."""


class BarecatValueError(BarecatError, ValueError):
    """An invalid argument: a path that may not be stored, a bad pattern or size, a
    file that is not an archive."""


class BarecatTypeError(BarecatError, TypeError, ValueError):
    """Data that cannot be stored: not a bytes-like object (a ``str``, ``None``, a
    list, a number). A ``TypeError``, and the ``ValueError`` Python barecat raises
    for most such values."""


class BarecatPermissionError(BarecatError, PermissionError):
    """Writing to an archive opened read-only (or append-only), or through a
    symlinked shard."""


class BarecatReadOnlyError(BarecatPermissionError, ValueError):
    """Opening a file for writing in an archive opened read-only. Also a
    ``ValueError``, which is what Python barecat raises there."""


class BarecatLockedError(BarecatError, BlockingIOError):
    """Another process is writing the archive."""


__all__ = [name for name in dir() if name.endswith("Error")]
