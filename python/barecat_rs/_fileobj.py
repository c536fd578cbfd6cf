"""File objects of ``Barecat.open``: reading, writing, appending and rewriting a
file of an archive, in every mode Python barecat accepts.

``BarecatReadOnlyFileObject`` (modes ``r``/``rb``) reads straight from the shards.
``BarecatReadWriteFileObject`` (``r+``, ``w``, ``w+``, ``x``, ``x+``, ``a``, ``a+``,
with or without ``b``) gathers the file's changes and hands them to the archive's
writer when it is closed: the pages written through ``r+`` (64 KiB each, read from
the archive when first touched), or the whole new content, in memory or in a
temporary file once it grows past ``SPILL_LIMIT`` bytes.

Where the bytes land is Python barecat's choice: a changed file that did not grow
is written over its old bytes, in place (only the changed pages for ``r+``); a new
file, or one that grew, gets its content appended to the last shard and its row
repointed at it. Unlike Python barecat, nothing reaches the shard before
``close``, and an in-place rewrite saves the bytes it overwrites in an undo journal
first (docs/FORMAT.md §7.4): a process killed at any moment leaves each file with
its old content or its new one, never a mix.

Text modes wrap the binary object in an ``io.TextIOWrapper`` (UTF-8 unless told
otherwise), as Python barecat does.
"""

import io
import os
import tempfile

from ._native import BarecatFileInfo, _Archive
from .exceptions import (
    BarecatPermissionError,
    BarecatReadOnlyError,
    BelowAFileBarecatError,
    FileExistsBarecatError,
    FileNotFoundBarecatError,
    IsADirectoryBarecatError,
    NotADirectoryBarecatError,
    NotAFileBarecatError,
)

#: Content of a file object beyond this many bytes goes to a temporary file (in the
#: archive's directory) instead of memory.
SPILL_LIMIT = 64 << 20

#: Chunk size of ``readline`` and of copies into a spill file.
_CHUNK = 1 << 20

#: Writes of at least this many bytes to a file written from start to end are kept
#: as they are until the file is stored; smaller ones are gathered.
_PIECE = 64 << 10

#: The pages of a file changed through ``r+``: read from the archive when first
#: written, written back in place when the file is closed.
_PAGE = 64 << 10


def _pwrite_all(fd, data, pos):
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, pos)
        view = view[n:]
        pos += n


class _Size(int):
    """A file object's size: an ``int`` (``f.size``, as Python barecat's attribute)
    that can also be called (``f.size()``)."""

    __slots__ = ()

    def __call__(self):
        return int(self)


_MODES = {}


def _parse_mode(mode):
    """``(kind, plus, binary)`` of a mode string, with the checks of ``open``:
    ``kind`` is one of ``'r'``, ``'w'``, ``'x'``, ``'a'``."""
    parsed = _MODES.get(mode) if isinstance(mode, str) else None
    if parsed is None:
        parsed = _MODES[mode] = _check_mode(mode)
    return parsed


def _check_mode(mode):
    if not isinstance(mode, str):
        raise TypeError(f"open() argument 'mode' must be str, not {type(mode).__name__}")
    chars = set(mode)
    if len(chars) != len(mode) or not chars <= set("rwxabt+"):
        raise ValueError(f"invalid mode: {mode!r}")
    kinds = chars & set("rwxa")
    if len(kinds) != 1:
        raise ValueError(
            f"invalid mode: {mode!r} (must have exactly one of create/read/write/append mode)"
        )
    if "b" in chars and "t" in chars:
        raise ValueError(f"invalid mode: {mode!r} (can't have text and binary mode at once)")
    return kinds.pop(), "+" in chars, "b" in chars


def _as_bytes_view(data):
    """A flat byte view of a bytes-like object."""
    if isinstance(data, str):
        raise TypeError("a bytes-like object is required, not 'str'")
    mv = memoryview(data)
    if mv.format == "B" and mv.ndim == 1:
        return mv
    if mv.c_contiguous:
        return mv.cast("B")
    return memoryview(mv.tobytes())


def open_file(bc, item, mode="r", encoding=None, errors=None, newline=None):
    """``Barecat.open``: a file object for ``item`` (a path or a
    ``BarecatFileInfo``) of archive ``bc`` in ``mode``."""
    kind, plus, binary = _parse_mode(mode)
    if binary:
        for name, value in (("encoding", encoding), ("errors", errors), ("newline", newline)):
            if value is not None:
                raise ValueError(f"binary mode doesn't take an {name} argument")
    if isinstance(item, BarecatFileInfo):
        path = item.path
    else:
        path = os.fspath(item)
        if not isinstance(path, str):
            raise TypeError(f"a str path is required, not {type(path).__name__}")
    if kind == "r" and not plus:
        if isinstance(item, BarecatFileInfo) and item.size is not None:
            info = item
        else:
            info = bc._file_info(path)
        raw = BarecatReadOnlyFileObject(bc, info)
    else:
        binary_mode = kind + ("+" if plus else "") + "b"
        raw = BarecatReadWriteFileObject._open(bc, path, kind, plus, binary_mode)
    if binary:
        if raw.writable():
            _track(bc, raw, raw)
        return raw
    # The layers of a file of the file system: text over buffered over raw.
    if kind == "r" and not plus:
        buffered = io.BufferedReader(raw)
    elif plus:
        buffered = io.BufferedRandom(raw)
    else:
        buffered = io.BufferedWriter(raw)
    text = io.TextIOWrapper(buffered, encoding=encoding or "utf-8", errors=errors, newline=newline)
    if raw.writable():
        _track(bc, raw, text)
    return text


def _track(bc, raw, f):
    """Remember an open writable file object ``f`` of ``bc`` (``raw`` itself, or the
    text layer over it) until ``raw`` is closed, for ``close_all``."""
    bc.__dict__.setdefault("_open_fileobjs", {})[id(raw)] = f
    raw._tracked = True


def close_all(bc):
    """Close (and so store) every file object still open for writing on ``bc``;
    called when the archive closes. The first failure is raised after all were
    tried."""
    live = bc.__dict__.pop("_open_fileobjs", None)
    if not live:
        return
    first = None
    for f in list(live.values()):
        try:
            f.close()
        except Exception as e:  # noqa: BLE001 - re-raised below
            first = first or e
    if first is not None:
        raise first


class BarecatFileObject(io.RawIOBase):
    """Base class of the file objects of ``Barecat.open`` (as in Python barecat):
    seekable binary files. ``len(f)`` and ``f.size`` (also callable, ``f.size()``)
    give the file's current size."""

    def __init__(self):
        super().__init__()
        self._pos = 0

    # -- to be provided by subclasses: _size_now(), _pread(pos, n)

    @property
    def size(self):
        return _Size(self._size_now())

    def __len__(self):
        return self._size_now()

    def seekable(self):
        return True

    def tell(self):
        self._check()
        return self._pos

    def seek(self, offset, whence=io.SEEK_SET):
        self._check()
        offset = offset.__index__()
        if whence == io.SEEK_SET:
            pos = offset
        elif whence == io.SEEK_CUR:
            pos = self._pos + offset
        elif whence == io.SEEK_END:
            pos = self._size_now() + offset
        else:
            raise ValueError(f"invalid whence ({whence}, should be 0, 1 or 2)")
        if pos < 0:
            raise ValueError(f"negative seek position {pos}")
        self._pos = pos
        return pos

    def read(self, size=-1):
        self._check_readable()
        end = self._size_now()
        if size is None or size < 0:
            n = end - self._pos
        else:
            n = min(size, end - self._pos)
        if n <= 0:
            return b""
        data = self._pread(self._pos, n)
        self._pos += len(data)
        return data

    def readall(self):
        return self.read(-1)

    def readinto(self, buffer):
        self._check_readable()
        mv = _as_bytes_view(buffer)
        if mv.readonly:
            raise TypeError("readinto() argument must be read-write bytes-like object")
        n = min(len(mv), self._size_now() - self._pos)
        if n <= 0:
            return 0
        data = self._pread(self._pos, n)
        mv[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def readline(self, size=-1):
        self._check_readable()
        end = self._size_now()
        if size is not None and size >= 0:
            end = min(end, self._pos + size)
        parts = []
        pos = self._pos
        while pos < end:
            chunk = self._pread(pos, min(_CHUNK if parts else 8192, end - pos))
            if not chunk:
                break
            i = chunk.find(b"\n")
            if i >= 0:
                parts.append(chunk[: i + 1])
                pos += i + 1
                break
            parts.append(chunk)
            pos += len(chunk)
        self._pos = pos
        return b"".join(parts)

    def sendfile(self, out_fd, offset=0, count=None):
        """Write ``count`` bytes (all up to the end when None) from ``offset`` of the
        file to the file descriptor ``out_fd``; returns the number written and
        leaves the position after them."""
        self._check_readable()
        size = self._size_now()
        if offset < 0 or offset > size:
            raise ValueError(f"{self.name}: offset {offset} out of bounds (size {size})")
        count = size - offset if count is None else max(0, min(count, size - offset))
        if hasattr(out_fd, "fileno"):
            out_fd = out_fd.fileno()
        sent = 0
        while sent < count:
            chunk = self._pread(offset + sent, min(_CHUNK * 8, count - sent))
            if not chunk:
                break
            view = memoryview(chunk)
            while view:
                n = os.write(out_fd, view)
                view = view[n:]
                sent += n
        self._pos = offset + sent
        return sent

    def _check(self):
        if self.closed:
            raise ValueError(f"I/O operation on closed file {self.name!r}")

    def _check_readable(self):
        self._check()
        if not self.readable():
            raise io.UnsupportedOperation(f"{self.name}: file not open for reading")

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r} mode={self.mode!r}>"


class BarecatReadOnlyFileObject(BarecatFileObject):
    """A file of an archive opened for reading (mode ``'rb'``): a window onto its
    bytes in the shard. CRCs are not checked (as in Python barecat); seeking past
    the end is allowed and reads there return nothing."""

    def __init__(self, bc, info):
        super().__init__()
        self._bc = bc
        self._info = info

    @property
    def name(self):
        return self._info.path

    @property
    def mode(self):
        return "rb"

    def readable(self):
        return True

    def writable(self):
        return False

    def write(self, data):
        self._check()
        raise io.UnsupportedOperation(f"{self.name}: file not open for writing")

    def truncate(self, size=None):
        self._check()
        raise io.UnsupportedOperation(f"{self.name}: file not open for writing")

    def readinto(self, buffer):
        self._check()
        n = self._bc.readinto(self._info, buffer, self._pos) if self._pos < self._info.size else 0
        self._pos += n
        return n

    def _size_now(self):
        return self._info.size

    def _pread(self, pos, n):
        return self._bc.read(self._info, pos, n)


class BarecatReadWriteFileObject(BarecatFileObject):
    """A file of an archive opened for writing (modes ``r+b``, ``wb``, ``w+b``,
    ``xb``, ``x+b``, ``ab``, ``a+b``).

    Changes are gathered (the changed pages of an ``r+`` file; otherwise the
    content, in memory or, beyond ``SPILL_LIMIT`` bytes, in a temporary file in
    the archive's directory) and stored when the file is closed: a changed file
    that did not grow is rewritten in place, a new file is added, one that grew
    gets its new bytes appended and its row repointed at them. The row id and
    metadata of an existing file are kept. Until then the archive shows the old
    content. Closing the archive closes the file objects still open on it.
    """

    def __init__(self, bc, path, mode, base, old, *, readable, append, exclusive, changed):
        super().__init__()
        self._bc = bc
        self._path = path
        self._mode = mode
        self._base = base  # the stored file the content starts from, or None
        self._old = old  # the file stored at the path when opened, or None
        # 'r+' of a non-empty file: changed pages over the stored file ({page
        # number: bytearray of _PAGE bytes}), once something is written. Stored
        # bytes at or after _horizon (where the file was cut) read as zeros.
        self._paged = not append and base is not None and base.size > 0
        self._pages = None
        self._spans = {}  # page number: (start, end) of what was written in it
        self._horizon = self._size_of(base)
        self._size = base.size if base is not None else 0
        self._orig_size = self._size
        self._buf = None  # the content when held in memory
        # The content of a new or emptied file written from start to end: pieces
        # (large writes kept as they are, small ones gathered), joined only when
        # something else than appending is done.
        self._chunks = None
        self._spill = None  # the content when held in a temporary file
        self._readable = readable
        self._append = append
        self._exclusive = exclusive
        self._dirty = changed
        self._tracked = False
        if append:
            self._pos = self._size

    @classmethod
    def _open(cls, bc, path, kind, plus, mode):
        if bc.readonly:
            # The checks of a read-write archive that need no writer come first,
            # as in Python barecat.
            info = bc._info(path)
            is_file = isinstance(info, BarecatFileInfo)
            if kind == "x" and is_file:
                raise FileExistsBarecatError(f"{path}: file exists in archive")
            if kind == "r" and not is_file:
                if info is not None:
                    raise NotAFileBarecatError(f"{path}: is a directory in archive")
                raise FileNotFoundBarecatError(f"{path}: no such file in archive")
            raise BarecatReadOnlyError(
                f"{path}: cannot open for writing (mode {mode!r}), the archive is read-only"
            )
        try:
            norm, info = bc._fileobj_target(path)
        except (IsADirectoryBarecatError, NotADirectoryBarecatError) as e:
            if kind != "r":
                raise
            # 'r+' needs an existing file: Python barecat's FileNotFoundBarecatError.
            cls = NotAFileBarecatError if isinstance(e, IsADirectoryError) else BelowAFileBarecatError
            raise cls(str(e)) from None
        if kind == "x" and info is not None:
            raise FileExistsBarecatError(f"{norm}: file exists in archive")
        if kind == "r" and info is None:
            raise FileNotFoundBarecatError(f"{norm}: no such file in archive")
        if info is not None and bc.append_only:
            raise BarecatPermissionError(
                f"{norm}: cannot open an existing file for writing (mode {mode!r}) in an "
                "archive opened with append_only=True"
            )
        keep = info if kind in ("r", "a") else None
        f = cls(
            bc,
            norm,
            mode,
            keep,
            info,
            readable=plus or kind == "r",
            append=kind == "a",
            exclusive=kind == "x",
            # New files are stored even when nothing is written, and 'w' empties
            # an existing file even when nothing is written.
            changed=info is None or kind == "w",
        )
        return f

    # ------------------------------------------------------------ attributes

    @property
    def name(self):
        return self._path

    @property
    def mode(self):
        return self._mode

    @property
    def original_size(self):
        """The size of the file when it was opened (0 for a new or emptied file)."""
        return self._orig_size

    @property
    def dirty(self):
        """True when closing will store new content."""
        return self._dirty

    def readable(self):
        return self._readable

    def writable(self):
        return True

    def _size_now(self):
        return self._size

    # ------------------------------------------------------------ content

    @staticmethod
    def _size_of(info):
        return info.size if info is not None else 0

    def _pread(self, pos, n):
        n = min(n, self._size - pos)
        if n <= 0:
            return b""
        if self._pages is not None:
            return self._paged_read(pos, n)
        if self._chunks is not None:
            self._join()
        if self._buf is not None:
            return bytes(self._buf[pos : pos + n])
        if self._spill is not None:
            return os.pread(self._spill.fileno(), n, pos)
        return self._bc.read(self._base, pos, n)

    # ------------------------------------------------------------ r+ pages

    def _page(self, idx):
        """Page ``idx`` (its part of the stored file's extent: the last page may
        be shorter), read from the stored file when first touched."""
        page = self._pages.get(idx)
        if page is None:
            start = idx * _PAGE
            length = min(_PAGE, self._base.size - start)
            have = max(0, min(length, self._horizon - start))
            page = bytearray(_Archive.read(self._bc, self._base, start, have)) if have else bytearray()
            if have < length:
                page.extend(bytes(length - have))
            self._pages[idx] = page
        return page

    def _paged_write(self, pos, mv):
        pages = self._pages
        end, i = pos + len(mv), 0
        spans = self._spans
        while pos < end:
            idx, off = divmod(pos, _PAGE)
            k = min(end - pos, _PAGE - off)
            if off == 0 and k == min(_PAGE, self._base.size - pos) and idx not in pages:
                pages[idx] = bytearray(mv[i : i + k])
            else:
                self._page(idx)[off : off + k] = mv[i : i + k]
            span = spans.get(idx)
            spans[idx] = (off, off + k) if span is None else (min(span[0], off), max(span[1], off + k))
            pos += k
            i += k
        if len(pages) * _PAGE > SPILL_LIMIT:
            self._load()

    def _paged_read(self, pos, n):
        pages, parts, end = self._pages, [], pos + n
        while pos < end:
            idx = pos // _PAGE
            page = pages.get(idx)
            if page is not None:
                off = pos - idx * _PAGE
                k = min(end - pos, _PAGE - off)
                parts.append(bytes(page[off : off + k]))
                pos += k
                continue
            run_end = (idx + 1) * _PAGE
            while run_end < end and run_end // _PAGE not in pages:
                run_end += _PAGE
            run_end = min(run_end, end)
            stored = max(0, min(run_end, self._horizon) - pos)
            if stored:
                parts.append(self._bc.read(self._base, pos, stored))
            if run_end - pos > stored:
                parts.append(bytes(run_end - pos - stored))
            pos = run_end
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _paged_truncate(self, size):
        if size < self._size:
            self._horizon = min(self._horizon, size)
            idx, off = divmod(size, _PAGE)
            for i in [i for i in self._pages if i > idx or (i == idx and off == 0)]:
                del self._pages[i]
                self._spans.pop(i, None)
            page = self._pages.get(idx)
            if page is not None and off < len(page):
                page[off:] = bytes(len(page) - off)
            span = self._spans.get(idx)
            if span is not None:
                if span[0] >= off:
                    del self._spans[idx]
                else:
                    self._spans[idx] = (span[0], min(span[1], off))
        self._size = size

    def _start_paging(self, end):
        """Whether a change ending at ``end`` goes into pages."""
        if self._pages is not None:
            if end <= self._base.size:
                return True
            self._load()
            return False
        if self._paged and self._buf is None and self._spill is None and end <= self._base.size:
            self._pages = {}
            return True
        return False

    # ------------------------------------------------------------ whole content

    def _load(self):
        """Bring the content into memory (or a spill file) before changing it."""
        if self._chunks is not None:
            self._join()
        if self._buf is not None or self._spill is not None:
            return
        if self._pages is not None:
            size = self._size
            if size <= SPILL_LIMIT:
                self._buf = bytearray(self._paged_read(0, size))
            else:
                self._new_spill()
                fd = self._spill.fileno()
                for at in range(0, size, _CHUNK * 8):
                    _pwrite_all(fd, self._paged_read(at, min(_CHUNK * 8, size - at)), at)
            self._pages = None
            self._spans = {}
            return
        base = self._base
        if base is None or base.size == 0:
            self._buf = bytearray()
        elif base.size <= SPILL_LIMIT:
            self._buf = bytearray(self._bc.read(base))
        else:
            self._new_spill()
            fd = self._spill.fileno()
            for at in range(0, base.size, _CHUNK * 8):
                os.pwrite(fd, self._bc.read(base, at, _CHUNK * 8), at)

    def _new_spill(self):
        where = os.path.dirname(os.path.abspath(os.fspath(self._bc.path)))
        try:
            self._spill = tempfile.TemporaryFile(dir=where)
        except OSError:
            self._spill = tempfile.TemporaryFile()

    def _to_spill(self):
        self._new_spill()
        _pwrite_all(self._spill.fileno(), self._buf, 0)
        self._buf = None

    def _join(self):
        """The pieces of a file written from start to end, joined into one buffer."""
        self._buf = bytearray().join(self._chunks)
        self._chunks = None

    def _append_piece(self, data, mv):
        chunks = self._chunks
        if chunks is None:
            chunks = self._chunks = []
        if len(mv) >= _PIECE:
            # Kept as it is when immutable (no copy), else copied.
            chunks.append(data if type(data) is bytes else mv.tobytes())
        elif chunks and type(chunks[-1]) is bytearray:
            chunks[-1] += mv
        else:
            chunks.append(bytearray(mv))
        if self._size + len(mv) > SPILL_LIMIT:
            self._new_spill()
            fd, at = self._spill.fileno(), 0
            for piece in chunks:
                _pwrite_all(fd, piece, at)
                at += len(piece)
            self._chunks = None

    def write(self, data):
        self._check()
        mv = _as_bytes_view(data)
        n = len(mv)
        if n == 0:
            return 0
        if self._append:
            self._pos = self._size
        pos = self._pos
        if self._paged and self._start_paging(pos + n):
            self._paged_write(pos, mv)
            self._pos = pos + n
            if self._pos > self._size:
                self._size = self._pos
            self._dirty = True
            return n
        if (
            pos == self._size
            and self._buf is None
            and self._spill is None
            and (self._chunks is not None or self._base is None or self._base.size == 0)
        ):
            self._append_piece(data, mv)
            self._pos = self._size = pos + n
            self._dirty = True
            return n
        self._load()
        buf = self._buf
        if buf is not None:
            have = len(buf)
            if pos == have:
                buf += mv
            elif pos > have:
                buf.extend(bytes(pos - have))
                buf += mv
            else:
                buf[pos : pos + n] = mv
            if len(buf) > SPILL_LIMIT:
                self._to_spill()
        else:
            _pwrite_all(self._spill.fileno(), mv, pos)
        self._pos = pos + n
        if self._pos > self._size:
            self._size = self._pos
        self._dirty = True
        return n

    def truncate(self, size=None):
        self._check()
        if size is None:
            size = self._pos
        size = size.__index__()
        if size < 0:
            raise ValueError(f"{self._path}: negative size value {size}")
        if size == self._size:
            return size
        if self._paged and self._start_paging(size):
            self._paged_truncate(size)
            self._dirty = True
            return size
        self._load()
        if self._buf is not None and size > SPILL_LIMIT:
            self._to_spill()
        if self._buf is not None:
            if size < len(self._buf):
                del self._buf[size:]
            else:
                self._buf.extend(bytes(size - len(self._buf)))
        else:
            os.ftruncate(self._spill.fileno(), size)
        self._size = size
        self._dirty = True
        return size

    def flush(self):
        """Nothing to do: the content reaches the archive when the file is closed."""
        self._check()

    def close(self):
        """Store the content (when changed) and close. The file object is closed
        even when storing fails; the archive is then left as it was."""
        if self.closed:
            return
        try:
            if self._dirty:
                self._store()
        finally:
            self._release()
            if self._tracked:
                self._bc.__dict__.get("_open_fileobjs", {}).pop(id(self), None)
            super().close()

    def _store(self):
        bc = self._bc
        old = self._old
        if old is not None and self._size <= old.size and not self._exclusive:
            if self._rewrite_in_place(old):
                return
            self._load()
        if self._spill is not None:
            bc._fileobj_store(self._path, fd=self._spill.fileno(), exclusive=self._exclusive)
        elif self._chunks is not None:
            chunks = self._chunks
            data = chunks[0] if len(chunks) == 1 else chunks
            bc._fileobj_store(self._path, data=data, exclusive=self._exclusive)
        else:
            data = self._buf if self._buf is not None else b""
            bc._fileobj_store(self._path, data=data, exclusive=self._exclusive)

    def _rewrite_in_place(self, old):
        """Write the changes over the stored bytes (Python barecat's placement of a
        file that did not grow); False when the archive cannot do it for this
        file (its shard is a link, its bytes are shared), changing nothing."""
        size = self._size
        expect = (old.shard, old.offset, old.size)
        if self._pages is not None:
            # What was written of each page; the rest of the content is the stored
            # bytes, and zeros past where the file was cut (``_horizon``).
            pieces = []
            for i in sorted(self._spans):
                lo, hi = self._spans[i]
                hi = min(hi, size - i * _PAGE)
                if lo < hi:
                    pieces.append((i * _PAGE + lo, memoryview(self._pages[i])[lo:hi]))
            done = self._bc._fileobj_patch(self._path, expect, size, self._horizon, pieces=pieces)
        elif self._spill is not None:
            done = self._bc._fileobj_patch(self._path, expect, size, 0, fd=self._spill.fileno())
        else:
            if self._chunks is not None:
                pieces, at = [], 0
                for c in self._chunks:
                    pieces.append((at, c))
                    at += len(c)
            elif self._buf is not None:
                pieces = [(0, self._buf)]
            else:
                # Nothing loaded: the stored bytes up to the size, zeros after.
                pieces = []
            zeros_from = self._horizon if self._base is not None else 0
            done = self._bc._fileobj_patch(self._path, expect, size, zeros_from, pieces=pieces)
        return done is not None

    def _release(self):
        self._pages = None
        self._spans = {}
        self._buf = None
        self._chunks = None
        if self._spill is not None:
            self._spill.close()
            self._spill = None
