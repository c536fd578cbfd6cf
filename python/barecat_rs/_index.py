"""``bc.index``: Python barecat's ``Index`` API over the native archive.

Every query (globs, walks, listings, lookups) runs in Rust, with the GIL released
for a reader; this module only turns arguments and results into Python barecat's
shapes. ``Index(path, readonly=...)`` also opens an index on its own, as in Python
barecat (it is then the archive opened through that path).
"""

import heapq
import itertools
import os
import posixpath
import random
from contextlib import contextmanager

from . import _native
from ._barecat import Order, _order, _ordered, _paged
from ._native import BarecatDirInfo, BarecatFileInfo
from .exceptions import (
    BarecatError,
    DirectoryNotEmptyBarecatError,
    FileExistsBarecatError,
    FileNotFoundBarecatError,
    IsADirectoryBarecatError,
    NotADirectoryBarecatError,
)


def normalize_path(path):
    """An archive path as Python barecat normalizes it: ``normpath``, no leading
    ``/``, the root is ``''``."""
    p = posixpath.normpath(os.fspath(path)).lstrip("/")
    return "" if p == "." else p


def _path_of(item):
    return item.path if isinstance(item, (BarecatFileInfo, BarecatDirInfo)) else normalize_path(item)


def _sort(items, order, key=None):
    """``items`` (a list) in ``order`` (Python barecat's ``Order``)."""
    order = _order(order)
    if order & Order.ADDRESS:
        def k(x):
            return (getattr(x, "shard", None) or 0, getattr(x, "offset", None) or 0)
        items.sort(key=k, reverse=bool(order & Order.DESC))
    elif order & Order.PATH:
        items.sort(key=key or (lambda x: x if isinstance(x, str) else x.path),
                   reverse=bool(order & Order.DESC))
    elif order & Order.RANDOM:
        random.shuffle(items)
    return items


def _normalized_pattern(pattern):
    """A SQLite GLOB pattern normalized as a path: ``posixpath.normpath``, no
    leading ``/``, ``.`` for the root becomes ``''``."""
    p = posixpath.normpath(pattern).lstrip("/")
    return "" if p == "." else p


class Index:
    """The index of an archive (``bc.index``), or ``Index(path, readonly=True)`` on
    its own."""

    __slots__ = ("_bc", "_owned", "_attached")

    def __init__(self, bc, shard_size_limit=None, bufsize=None, readonly=True, wal=False,
                 readonly_is_immutable=False):
        if isinstance(bc, (str, bytes, os.PathLike)):
            from ._barecat import Barecat

            path = os.fspath(bc)
            if readonly and not os.path.exists(path):
                raise FileNotFoundError(
                    f"Index file {path} does not exist, so cannot be opened in readonly mode.")
            bc = Barecat(path, readonly=readonly, shard_size_limit=shard_size_limit)
            self._owned = True
        else:
            self._owned = False
        self._attached = None
        self._bc = bc

    # ---------------------------------------------------------------- lifecycle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    @property
    def path(self):
        return os.fspath(self._bc.path)

    @property
    def readonly(self):
        return self._bc.readonly

    @property
    def is_closed(self):
        return self._bc.closed

    def close(self):
        """Close the index (for ``bc.index``: the archive commits; it stays open)."""
        if self._owned:
            self._bc.close()
        else:
            self._bc.commit()

    def optimize(self):
        """Commit (the index is analyzed when the archive closes)."""
        self._bc.commit()

    def __len__(self):
        return self._bc.num_files

    def __iter__(self):
        return self.iter_all_fileinfos()

    def __contains__(self, path):
        return self._bc.isfile(path)

    # ---------------------------------------------------------------- lookups

    def lookup_file(self, path, normalized=False):
        info = self._bc._info(path)
        if not isinstance(info, BarecatFileInfo):
            raise FileNotFoundBarecatError(normalize_path(path))
        return info

    def lookup_dir(self, dirpath):
        info = self._bc._info(dirpath)
        if not isinstance(info, BarecatDirInfo):
            raise FileNotFoundBarecatError(
                f"Directory {normalize_path(dirpath)} not found in index")
        return info

    def lookup(self, path):
        info = self._bc._info(path)
        if info is None:
            raise FileNotFoundBarecatError(
                f"Directory {normalize_path(path)} not found in index")
        return info

    def lookup_files(self, paths):
        if not paths:
            return []
        return _native._ix_lookup_files(self._bc, [os.fspath(p) for p in paths])

    def _as_dirinfo(self, item):
        return item if isinstance(item, BarecatDirInfo) else self.lookup_dir(item)

    def _as_fileinfo(self, item):
        return item if isinstance(item, BarecatFileInfo) else self.lookup_file(item)

    # ---------------------------------------------------------------- iteration

    def iter_all_infos(self, order=Order.ANY, bufsize=None):
        items = list(self.iter_all_dirinfos()) + list(self.iter_all_fileinfos())
        order = _order(order)
        if order & (Order.PATH | Order.ADDRESS | Order.RANDOM):
            _sort(items, order)
        return iter(items)

    def iter_all_paths(self, order=Order.ANY, bufsize=None):
        order = _order(order)
        if order & (Order.ADDRESS | Order.RANDOM | Order.DESC):
            return (i.path for i in self.iter_all_infos(order))
        dirs = self._bc._paths("dirs", "path")
        files = self._bc._paths("files", "path")
        if order & Order.PATH:
            return heapq.merge(dirs, files)
        # ANY: the directories, then the files, each in path order (Python's).
        return itertools.chain(dirs, files)

    # ---------------------------------------------------------------- listings

    def _listing(self, item):
        path = item.path if isinstance(item, BarecatDirInfo) else item
        try:
            return self._bc._listing(path)
        except (FileNotFoundError, NotADirectoryError):
            raise FileNotFoundBarecatError(
                f"Directory {normalize_path(path)} not found in index") from None

    def list_direct_fileinfos(self, dirpath, order=Order.ANY):
        try:
            _, _, files = self._listing(dirpath)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return _sort(files, order)

    def list_subdir_dirinfos(self, dirpath, order=Order.ANY):
        try:
            _, dirs, _ = self._listing(dirpath)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return _sort(dirs, order)

    def iter_direct_fileinfos(self, diritem, order=Order.ANY, bufsize=None):
        return iter(self.list_direct_fileinfos(_path_of(diritem), order))

    def iter_subdir_dirinfos(self, diritem, order=Order.ANY, bufsize=None):
        return iter(self.list_subdir_dirinfos(_path_of(diritem), order))

    def listdir_infos(self, diritem, order=Order.ANY):
        _, dirs, files = self._listing(diritem)
        return _sort(dirs, order) + _sort(files, order)

    def listdir_names(self, diritem, order=Order.ANY):
        return [posixpath.basename(i.path) for i in self.listdir_infos(diritem, order)]

    def iterdir_infos(self, diritem, order=Order.ANY, bufsize=None):
        return iter(self.listdir_infos(diritem, order))

    def iterdir_names(self, diritem, order=Order.ANY, bufsize=None):
        return iter(self.listdir_names(diritem, order))

    # ---------------------------------------------------------------- globs

    def glob_paths(self, pattern, recursive=False, include_hidden=False, only_files=False):
        return self._bc._glob(pattern, recursive, include_hidden, only_files)

    def iterglob_paths(self, pattern, recursive=False, include_hidden=False, bufsize=None,
                       only_files=False):
        return self._glob_pages(pattern, recursive, include_hidden, bufsize, only_files, False)

    def iterglob_infos(self, pattern, recursive=False, include_hidden=False, bufsize=None,
                       only_files=False):
        return self._glob_pages(pattern, recursive, include_hidden, bufsize, only_files, True)

    def _glob_pages(self, pattern, recursive, include_hidden, bufsize, only_files, infos):
        """A glob's paths (or infos) a page at a time, the first page read now (so
        that a bad pattern raises here): the objects of a page are freed, and their
        memory reused, while the caller goes through the next ones."""
        limit = bufsize if isinstance(bufsize, int) and bufsize > 0 else 16384

        def page(after):
            return _native._ix_glob_page(self._bc, pattern, recursive, include_hidden,
                                         only_files, after, limit, infos)

        def pages(first, after):
            yield first
            while after is not None:
                was = after
                items, after = page(after)
                if after is not None and after <= was:
                    raise RuntimeError(f"glob {pattern!r}: a page did not move past {was!r}")
                yield items

        return itertools.chain.from_iterable(pages(*page(None)))

    def iterglob_infos_incl_excl(self, rules, default_include=True, only_files=False,
                                 bufsize=None):
        """Infos passing rsync-style rules ``[('+'|'-', pattern), ...]``: the first
        rule whose Python glob (recursive, hidden files included) matches decides;
        no match: ``default_include``."""
        compiled = []
        for sign, pattern in rules:
            if sign not in ("+", "-"):
                raise ValueError(f"rule sign must be '+' or '-', not {sign!r}")
            compiled.append((sign == "+", pattern))
        # Each rule's matches (paths), in Rust; then the first match wins, per
        # entry of one scan of the index.
        matched = [
            set(self._bc._glob(p, True, True, only_files))
            for _, p in compiled
        ]
        everything = list(self.iter_all_fileinfos(order=Order.PATH))
        if not only_files:
            everything = [d for d in self.iter_all_dirinfos() if d.path] + everything
        out = []
        for info in everything:
            for (include, _), paths in zip(compiled, matched):
                if info.path in paths:
                    if include:
                        out.append(info)
                    break
            else:
                if default_include:
                    out.append(info)
        return iter(out)

    def raw_glob_paths(self, pattern, order=Order.ANY):
        return self._raw([(True, pattern)], order, False, False)

    def raw_iterglob_paths(self, pattern, order=Order.ANY, only_files=False, bufsize=None):
        return iter(self._raw([(True, pattern)], order, only_files, False))

    def raw_iterglob_paths_multi(self, patterns, order=Order.ANY, only_files=False,
                                 bufsize=None):
        return iter(self._raw([(True, p) for p in patterns], order, only_files, False))

    def raw_iterglob_infos(self, pattern, only_files=False, bufsize=None):
        return iter(self._raw([(True, pattern)], Order.ANY, only_files, True))

    def raw_iterglob_infos_incl_excl(self, patterns, only_files=False, bufsize=None):
        """``patterns``: ``[(include, sqlite_glob), ...]``, joined in SQL as Python
        barecat joins them."""
        rules = [(bool(inc), p) for inc, p in patterns]
        return iter(self._raw(rules, Order.ANY, only_files, True))

    def _raw(self, rules, order, only_files, infos):
        # Patterns are normalized as paths first, as Python barecat does ('a//*'
        # is 'a/*', '/x' is 'x').
        rules = [(inc, _normalized_pattern(p)) for inc, p in rules]
        found = _native._ix_raw_glob(self._bc, rules, only_files, True)
        _sort(found, order)
        return found if infos else [i.path for i in found]

    # ---------------------------------------------------------------- walks

    def walk_infos(self, rootitem="", bufsize=32):
        """``(dirinfo, subdirinfos, fileinfos)`` for every directory below
        ``rootitem``, top-down, depth first, children sorted by path."""
        yield from _native._ix_walk(self._bc, _path_of(rootitem), True)

    def walk_names(self, rootitem="", bufsize=32):
        """``(dirpath, subdirnames, filenames)``; the root is ``'.'``."""
        yield from _native._ix_walk(self._bc, _path_of(rootitem), False)

    # ---------------------------------------------------------------- shards

    def get_last_file(self):
        last = _native._ix_last_file(self._bc)
        if last is None:
            raise LookupError("Index is empty, it has no last file")
        return last

    def logical_shard_end(self, shard):
        return _native._ix_shard_end(self._bc, shard)

    @property
    def num_used_shards(self):
        return _native._ix_num_used_shards(self._bc)

    @property
    def shard_size_limit(self):
        return self._bc.shard_size_limit

    @shard_size_limit.setter
    def shard_size_limit(self, value):
        if self._bc.readonly:
            raise ValueError("Cannot set shard size limit on a read-only index")
        self._bc.shard_size_limit = value

    def find_space(self, path, size):
        """The file's info when ``size`` bytes fit where it is (before the next
        file of its shard, or the shard size limit), else None."""
        finfo = self._as_fileinfo(path)
        if size - finfo.size <= 0:
            return finfo
        following = [
            f.offset for f in self.iter_all_fileinfos(order=Order.ADDRESS)
            if f.shard == finfo.shard and f.offset > finfo.offset
        ]
        limit = min(following) if following else self.shard_size_limit
        return finfo if limit - finfo.offset >= size else None

    # ---------------------------------------------------------------- writing

    def _writable(self, what):
        if self._bc.readonly:
            from .exceptions import BarecatPermissionError

            raise BarecatPermissionError(f"{self.path}: {what} needs an archive opened with "
                                         "readonly=False")

    def add(self, info):
        if isinstance(info, BarecatFileInfo):
            self.add_file(info)
        else:
            self.add_dir(info)

    def add_file(self, finfo):
        """Index a file whose bytes are already in a shard (shard, offset and size
        given); missing parent directories are created."""
        self._writable("adding files")
        _native._ix_add_extent(self._bc, finfo)

    def add_files(self, finfos):
        self._writable("adding files")
        finfos = list(finfos)
        # Refuse the whole batch before adding any (Python's is one statement).
        seen = set()
        for f in finfos:
            p = normalize_path(f.path)
            if p in seen or self._bc.isfile(p):
                raise FileExistsBarecatError([x.path for x in finfos])
            seen.add(p)
        for f in finfos:
            _native._ix_add_extent(self._bc, f)

    def add_dir(self, dinfo, exist_ok=False):
        """Add a directory; with ``exist_ok`` an existing one gets the new metadata
        (its statistics are kept)."""
        self._writable("adding directories")
        p = normalize_path(dinfo.path)
        if self._bc.isfile(p):
            raise NotADirectoryBarecatError(p)
        self._bc._add_dir(p, dinfo.mode, dinfo.uid, dinfo.gid, dinfo.mtime_ns, exist_ok)

    def update_file(self, path, new_shard=None, new_offset=None, new_size=None,
                    new_crc32c=None, new_mtime_ns=None, new_mode=None, new_uid=None,
                    new_gid=None):
        """Point a file's row elsewhere and/or change its metadata (nothing is
        written to the shards)."""
        self._writable("updating files")
        old = self.lookup_file(path)
        if all(v is None for v in (new_shard, new_offset, new_size, new_crc32c)):
            self.chmod_fields(old.path, new_mode, new_uid, new_gid, new_mtime_ns)
            return
        new = BarecatFileInfo(
            path=old.path,
            shard=old.shard if new_shard is None else new_shard,
            offset=old.offset if new_offset is None else new_offset,
            size=old.size if new_size is None else new_size,
            crc32c=old.crc32c if new_crc32c is None else new_crc32c,
            mode=old.mode if new_mode is None else new_mode,
            uid=old.uid if new_uid is None else new_uid,
            gid=old.gid if new_gid is None else new_gid,
            mtime_ns=old.mtime_ns if new_mtime_ns is None else new_mtime_ns,
        )
        with self._bc.bulk():
            self._bc.remove(old.path)
            _native._ix_add_extent(self._bc, new)

    def chmod_fields(self, path, mode=None, uid=None, gid=None, mtime_ns=None):
        self._writable("changing metadata")
        try:
            _native._ix_set_meta(self._bc, path, mode, uid, gid, mtime_ns)
        except FileNotFoundError:
            raise FileNotFoundBarecatError(f"Path {normalize_path(path)} not found in index") \
                from None

    def chmod(self, path, mode):
        self.chmod_fields(path, mode=mode)

    def chown(self, path, uid, gid):
        self.chmod_fields(path, uid=uid, gid=gid)

    def update_mtime(self, path, mtime_ns):
        self.chmod_fields(path, mtime_ns=mtime_ns)

    def update_dirs(self):
        """Ancestor directories always exist here (each write adds them)."""
        self._writable("updating directories")

    def rename(self, old, new, allow_overwrite=False):
        path = _path_of(old)
        if self._bc.isfile(path):
            self.rename_file(path, new, allow_overwrite)
        elif self._bc.isdir(path):
            self.rename_dir(path, new, allow_overwrite)
        else:
            raise FileNotFoundBarecatError(path)

    def rename_file(self, old, new, allow_overwrite=False):
        self._writable("renaming")
        old_path, new_path = _path_of(old), normalize_path(new)
        if not self._bc.isfile(old_path):
            raise FileNotFoundBarecatError(old_path)
        # A directory at new_path is IsADirectoryBarecatError, a file there
        # (without allow_overwrite) FileExistsBarecatError: the writer's own checks.
        self._bc.rename(old_path, new_path, overwrite=allow_overwrite)

    def rename_dir(self, old, new, allow_overwrite=False):
        self._writable("renaming")
        old_path, new_path = _path_of(old), normalize_path(new)
        if old_path == "":
            raise BarecatError("Cannot rename the root directory")
        if not self._bc.isdir(old_path):
            raise FileNotFoundBarecatError(old_path)
        if self._bc.isfile(new_path):
            raise NotADirectoryBarecatError(new_path)
        if self._bc.isdir(new_path):
            if not allow_overwrite:
                raise FileExistsBarecatError(new_path)
            if self._bc.listdir(new_path):
                raise DirectoryNotEmptyBarecatError(new_path)
        if new_path == old_path or new_path.startswith(old_path + "/"):
            from .exceptions import BarecatValueError

            raise BarecatValueError(f"{new_path}: cannot move {old_path} into itself")
        self._bc.rename(old_path, new_path, overwrite=allow_overwrite)

    def remove_file(self, item):
        self._writable("removing files")
        path = _path_of(item)
        if not self._bc.isfile(path):
            raise FileNotFoundBarecatError(path)
        self._bc.remove(path)

    def remove_files(self, items):
        self._writable("removing files")
        with self._bc.bulk():
            for x in items:
                path = _path_of(x)
                if self._bc.isfile(path):
                    self._bc.remove(path)

    def remove_empty_dir(self, item):
        self._writable("removing directories")
        dinfo = self._as_dirinfo(item)
        if dinfo.num_entries != 0:
            raise DirectoryNotEmptyBarecatError(item)
        self._bc.rmdir(dinfo.path)

    def remove_recursively(self, item):
        self._writable("removing directories")
        dinfo = self._as_dirinfo(item)
        if dinfo.path == "":
            raise BarecatError("Cannot remove the root directory")
        self._bc.rmtree(dinfo.path)

    # ---------------------------------------------------------------- maintenance

    def verify_integrity(self):
        """Whether the index is sound: SQLite's own check, the directory statistics,
        the parent of every row."""
        ok, _ = _native._ix_verify(self._bc, True)
        return ok

    def merge_from_other_barecat(self, source_index_path, ignore_duplicates=False, prefix=None,
                                 update_treestats=True):
        """Copy the files of another archive into this one (Python barecat's
        symlink merge adds only rows and expects the shards to be linked
        separately; here the bytes are copied, so the result is complete)."""
        self._writable("merging")
        return _native._ix_merge_from(self._bc, os.fspath(source_index_path),
                                      ignore_duplicates, prefix)

    def check_merge_conflicts(self, prefix=""):
        """Raise ``ValueError`` when the source attached with ``attached_database``
        has a file where this index has a directory or the reverse, or when an
        ancestor of ``prefix`` is a file here; returns the SQL expression of the
        prefixed path that Python barecat returns."""
        prefix = prefix or ""
        if prefix:
            escaped = prefix.replace("'", "''")
            expr = f"CASE WHEN path = '' THEN '{escaped}' ELSE '{escaped}/' || path END"
            parts = prefix.split("/")
            for i in range(len(parts)):
                ancestor = "/".join(parts[: i + 1])
                if self._bc.isfile(ancestor):
                    raise ValueError(
                        f"Cannot use prefix '{prefix}': '{ancestor}' exists as a file")
        else:
            expr = "path"
        src = getattr(self, "_attached", None)
        if src is not None:
            from ._barecat import Barecat

            with Barecat(src) as other:
                for info in other.index.iter_all_infos():
                    p = (f"{prefix}/{info.path}" if info.path else prefix) if prefix else info.path
                    mine = self._bc._info(p)
                    if mine is None or type(mine) is type(info):
                        continue
                    if isinstance(info, BarecatFileInfo):
                        raise ValueError(f"Source file '{p}' conflicts with target directory")
                    raise ValueError(f"Source directory '{p}' conflicts with target file")
        return expr

    @contextmanager
    def bulk_mode(self, drop_indexes=False, update_dirs_at_end=True,
                  update_treestats_at_end=True):
        """One transaction for the whole block (indexes are never dropped)."""
        with self._bc.bulk():
            yield self

    @contextmanager
    def no_foreign_keys(self):
        """Kept for compatibility: every write here keeps the index consistent."""
        yield

    @contextmanager
    def attached_database(self, path, name="sourcedb", readonly=True):
        """Remembers ``path`` for ``check_merge_conflicts`` (no SQL is exposed)."""
        self._attached = os.fspath(path)
        try:
            yield
        finally:
            self._attached = None

    # ---------------------------------------------------------------- as before

    def iter_all_fileinfos(self, order=Order.ANY, bufsize=None):
        """Every file's info, in ``order`` (``ANY`` = insertion, ``PATH``, ``ADDRESS``,
        with ``DESC`` or ``RANDOM``)."""
        order = _order(order)
        if order & Order.ADDRESS:
            native = "address"
            key = lambda f: (f.shard, f.offset)  # noqa: E731
        elif order & Order.PATH:
            native = "path"
            key = lambda f: f.path  # noqa: E731
        else:
            native = "insertion"
            key = None
        if order & (Order.DESC | Order.RANDOM):
            items = list(self._pages(native))
            if key is None and order & Order.DESC:
                items.reverse()
                return iter(items)
            return _ordered(items, order, key)
        return self._pages(native)

    def _pages(self, native):
        return _paged(lambda cursor: self._bc._files_page(native, cursor))

    def iter_all_dirinfos(self, order=Order.ANY, bufsize=None):
        order = _order(order)

        def pages():
            return _paged(self._bc._dirs_page)

        if order & (Order.DESC | Order.RANDOM):
            return _ordered(list(pages()), order, lambda d: d.path)
        return pages()

    def iter_all_filepaths(self, order=Order.ANY, bufsize=None):
        order = _order(order)
        if order & (Order.RANDOM | Order.DESC):
            return (f.path for f in self.iter_all_fileinfos(order))
        # ANY is path order, as Python barecat's (read from the path index).
        return self._bc._paths("files", "address" if order & Order.ADDRESS else "path")

    def iter_all_dirpaths(self, order=Order.ANY, bufsize=None):
        if _order(order) & (Order.RANDOM | Order.DESC):
            return (d.path for d in self.iter_all_dirinfos(order))
        return self._bc._paths("dirs", "path")

    def exists(self, path):
        return self._bc.exists(path)

    def isfile(self, path):
        return self._bc.isfile(path)

    def isdir(self, path):
        return self._bc.isdir(path)

    @property
    def num_files(self):
        return self._bc.num_files

    @property
    def num_dirs(self):
        return self._bc.num_dirs

    @property
    def total_size(self):
        return self._bc.total_size

    def no_triggers(self):
        """Python barecat's bulk-import recipe; here the same as ``bc.bulk()``."""
        return self._bc.bulk()

    def update_treestats(self):
        return self._bc.update_treestats()
