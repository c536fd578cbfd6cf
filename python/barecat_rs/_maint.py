"""Python barecat's archive-level maintenance methods of ``Barecat`` (verify,
defrag, merge, shard sizes), mixed into the class; the work runs in Rust."""

import os

from . import _native
from .exceptions import BarecatIntegrityError, FileNotFoundBarecatError


def _item_path(item):
    return getattr(item, "path", item)


def _no_dir(path):
    return FileNotFoundBarecatError(f"Directory {_item_path(path)} not found in index")


from .exceptions import BarecatPermissionError  # noqa: E402


class _ReadOnlyDefragError(BarecatPermissionError, ValueError):
    """``defrag`` of a read-only archive (Python barecat raises ``ValueError``)."""


class BarecatMaintenance:
    """Methods of ``Barecat`` beyond reading and writing files."""

    def __new__(cls, path, *args, **kwargs):
        names = ("shard_size_limit", "readonly", "overwrite", "auto_codec", "exist_ok",
                 "append_only", "threadsafe", "allow_writing_symlinked_shard", "wal",
                 "readonly_is_immutable")
        opts = dict(zip(names, args))
        opts.update(kwargs)
        readonly = opts.get("readonly", True)
        if opts.get("threadsafe") and not readonly:
            raise ValueError("Threadsafe mode is only supported for readonly Barecat.")
        if opts.pop("auto_codec", False) and not getattr(cls, "_auto_codec", False):
            import warnings

            warnings.warn("auto_codec is deprecated: use barecat_rs.DecodedView",
                          DeprecationWarning, stacklevel=2)
            cls = _auto_codec_class(cls)
        opts.pop("wal", None)
        opts.pop("readonly_is_immutable", None)
        return super().__new__(cls, path, **opts)

    def __init__(self, *args, **kwargs):
        pass

    # Python barecat looks a directory up (a file is "not found") or a file up (a
    # directory is "not found"): the same exception here.

    def listdir(self, path=""):
        try:
            return super().listdir(path)
        except NotADirectoryError:
            raise _no_dir(path) from None

    def _listing(self, path=""):
        try:
            return super()._listing(path)
        except NotADirectoryError:
            raise _no_dir(path) from None

    def read(self, item, offset=0, size=-1):
        try:
            return super().read(item, offset, size)
        except IsADirectoryError:
            raise FileNotFoundBarecatError(_item_path(item)) from None

    @property
    def auto_codec(self):
        return getattr(type(self), "_auto_codec", False)

    def register_codec(self, exts, encoder, decoder, nonfinal=False):
        """Use ``encoder``/``decoder`` for ``exts`` when ``auto_codec`` is on."""
        self._codec_view().register_codec(exts, encoder, decoder, nonfinal)

    def _codec_view(self):
        view = self.__dict__.get("_codecs")
        if view is None:
            from .codecs import DecodedView

            view = self.__dict__["_codecs"] = DecodedView(_RawStore(self))
        return view

    def raise_if_readonly(self, message):
        if self.readonly:
            raise ValueError(message)

    def raise_if_append_only(self, message):
        if self.append_only:
            raise ValueError(message)

    def _need_writable(self, what):
        if self.readonly:
            from .exceptions import BarecatPermissionError

            raise BarecatPermissionError(
                f"{os.fspath(self.path)}: {what} needs an archive opened with readonly=False")

    def check_crc32c(self, item):
        """True when the file's bytes match its stored CRC32C (or none is stored)."""
        info = self.index._as_fileinfo(item)
        try:
            self.read(info)
        except BarecatIntegrityError:
            return False
        return True

    def verify_integrity(self, quick=False):
        """True when no problem is found: the index, the shards and the CRC32C of
        every file (``quick``: of the last file only). Problems are logged."""
        ok, problems = _native._ix_verify(self, quick)
        if problems:
            import logging

            log = logging.getLogger("barecat_rs")
            for line in problems:
                log.warning("%s", line)
        return ok

    def defrag(self, quick=False):
        """Pack the files back to back (``quick``: fill holes from the end for a few
        seconds); returns the bytes given back. On a read-only archive: a
        ``PermissionError`` that is also the ``ValueError`` Python raises."""
        if self.readonly:
            raise _ReadOnlyDefragError(
                f"{os.fspath(self.path)}: Cannot defrag a read-only Barecat")
        self.raise_if_append_only("Cannot defrag an append-only archive")
        return _native._ix_defrag(self, quick)

    def merge_from_other_barecat(self, source_path, ignore_duplicates=False, prefix="",
                                 pattern=None, filter_rules=None):
        """Copy the files of the archive ``source_path`` into this one (below
        ``prefix``). A path both have is ``FileExistsBarecatError`` (nothing copied)
        unless ``ignore_duplicates`` (this archive's file stays)."""
        self._need_writable("merging")
        if pattern is not None or filter_rules is not None:
            return self._merge_selected(source_path, ignore_duplicates, prefix, pattern,
                                        filter_rules)
        return _native._ix_merge_from(self, os.fspath(source_path), ignore_duplicates,
                                      prefix or None)

    def _merge_selected(self, source_path, ignore_duplicates, prefix, pattern, filter_rules):
        # The files are chosen as Python barecat chooses them (its glob, recursive
        # with hidden files, or its first-match rules); the library's merge then
        # copies exactly those, in runs, with their directories.
        from ._barecat import Barecat

        with Barecat(source_path) as src:
            if filter_rules is not None:
                paths = [i.path for i in src.index.iterglob_infos_incl_excl(
                    filter_rules, only_files=True)]
            else:
                paths = src.index.glob_paths(pattern, recursive=True, include_hidden=True,
                                             only_files=True)
        _native._ix_merge_from(self, os.fspath(source_path), ignore_duplicates, prefix or None,
                               paths)
        return len(paths)

    def update_file(self, path, data=None, fileobj=None, bufsize=None):
        """Replace the content of an existing file; its row id and metadata stay.
        New content no longer than the old is written over the old bytes, as
        Python barecat does (behind an undo journal, docs/FORMAT.md §7.4); longer
        content is appended and the row repointed at it."""
        self._need_writable("updating files")
        self.raise_if_append_only("Cannot update files in an append-only archive")
        info = self.index.lookup_file(path)
        if data is None:
            if fileobj is None:
                raise ValueError("update_file() needs data or fileobj")
            data = fileobj.read()
        size = memoryview(data).nbytes
        if size <= info.size:
            expect = (info.shard, info.offset, info.size)
            pieces = [(0, data)] if size else []
            if self._fileobj_patch(info.path, expect, size, size, pieces=pieces) is not None:
                return
        self._fileobj_store(info.path, data=data)

    def logical_shard_end(self, shard_number):
        return _native._ix_shard_end(self, shard_number)

    def physical_shard_end(self, shard_number):
        ends = _native._ix_physical_shard_ends(self)
        if not 0 <= shard_number < len(ends):
            raise IndexError(f"shard {shard_number} does not exist")
        return ends[shard_number]

    @property
    def total_logical_size(self):
        return self.total_size

    @property
    def total_physical_size_seek(self):
        return sum(_native._ix_physical_shard_ends(self))

    @property
    def total_physical_size_stat(self):
        return sum(_native._ix_physical_shard_ends(self))

    def truncate_all_to_logical_size(self):
        """Cut each shard file back to the end of its last file."""
        self._need_writable("truncating shards")
        _native._ix_truncate_to_logical(self)


class _RawStore:
    """The archive's undecoded bytes, for the codec view of an auto_codec archive."""

    __slots__ = ("bc",)

    def __init__(self, bc):
        self.bc = bc

    def __getitem__(self, path):
        return self.bc.read(path)

    def __setitem__(self, path, data):
        self.bc._add_file(path, data)

    def read_many(self, paths, **kwargs):
        return self.bc.read_many(paths, **kwargs)


_AUTO = {}


def _auto_codec_class(cls):
    """A subclass of ``cls`` whose ``bc[path]`` decodes and ``bc[path] = obj``
    encodes by extension (Python barecat's ``auto_codec=True``); plain archives
    keep the native item access."""
    sub = _AUTO.get(cls)
    if sub is None:
        def __getitem__(self, path):
            if not self.isfile(path):
                raise KeyError(path)
            return self._codec_view()[path]

        def __setitem__(self, path, value):
            self._codec_view()[path] = value

        sub = _AUTO[cls] = type(cls.__name__, (cls,), {
            "__getitem__": __getitem__, "__setitem__": __setitem__, "_auto_codec": True,
            "__module__": cls.__module__, "__qualname__": cls.__qualname__})
    return sub
