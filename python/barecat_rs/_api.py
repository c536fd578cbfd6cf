"""Module-level functions of Python barecat's API: ``open``, ``exists``,
``remove``, merging, conversion to and from tar and zip, extraction, index
dumps and the cached reader."""

import os
import threading

from . import _native
from ._barecat import Barecat

__all__ = [
    "open", "exists", "remove", "extract", "merge", "merge_symlink", "archive2barecat",
    "barecat2archive", "read_index", "write_index", "get_cached_reader",
    "get_completion_script", "Sharder",
]

_MODES = {
    # mode: (readonly, overwrite, exist_ok, append_only)
    "r": (True, False, True, False),
    "r+": (False, False, True, False),
    "w+": (False, True, True, False),
    "a+": (False, False, True, True),
    "ax+": (False, False, False, True),
    "x+": (False, False, False, False),
}


def open(path, mode="r", auto_codec=False, threadsafe_reader=True):  # noqa: A001
    """Open an archive: ``'r'`` read, ``'r+'`` read-write, ``'w+'`` overwrite,
    ``'a+'`` append-only, ``'x+'`` / ``'ax+'`` create (refusing an existing one)."""
    try:
        readonly, overwrite, exist_ok, append_only = _MODES[mode]
    except (KeyError, TypeError):
        raise ValueError(f"Invalid mode: {mode}") from None
    if readonly:
        return Barecat(path, readonly=True, auto_codec=auto_codec)
    return Barecat(path, readonly=False, overwrite=overwrite, exist_ok=exist_ok,
                   append_only=append_only, auto_codec=auto_codec)


def exists(path):
    """Whether an archive exists at ``path`` (an index file, a legacy
    ``-sqlite-index`` or shard files)."""
    return _native._api_exists(os.fspath(path))


def remove(path):
    """Remove an archive: its index, its shards and SQLite's side files."""
    _native._api_remove(os.fspath(path))


def _is_path_list(x):
    return isinstance(x, (list, tuple))


def merge(source_paths, target_path, shard_size_limit=None, overwrite=False,
          ignore_duplicates=False, as_subdirs=False, prefix=None, pattern=None,
          filter_rules=None, **kwargs):
    """Copy the files of ``source_paths`` (archives, tar or zip files) into
    ``target_path`` (Python barecat's argument order; an existing target is
    added to unless ``overwrite``).

    The earlier barecat_rs form ``merge(output, inputs, overwrite=False,
    append=False, ignore_duplicates=False, shard_size_limit=None,
    duplicates=None)`` (output first, an existing output refused unless
    ``append`` or ``overwrite``) still works and returns a dict of counts.
    """
    if not _is_path_list(source_paths) and _is_path_list(target_path):
        return _native.merge(source_paths, target_path, shard_size_limit=shard_size_limit,
                             overwrite=overwrite, ignore_duplicates=ignore_duplicates, **kwargs)
    if kwargs:
        raise TypeError(f"merge() got unexpected keyword arguments {sorted(kwargs)}")
    if as_subdirs or prefix or pattern is not None or filter_rules is not None:
        return _merge_selected(source_paths, target_path, shard_size_limit, overwrite,
                               ignore_duplicates, as_subdirs, prefix, pattern, filter_rules)
    append = not overwrite and exists(target_path)
    _native.merge(os.fspath(target_path), [os.fspath(p) for p in source_paths],
                  overwrite=overwrite, append=append, ignore_duplicates=ignore_duplicates,
                  shard_size_limit=shard_size_limit)


def _merge_selected(source_paths, target_path, shard_size_limit, overwrite, ignore_duplicates,
                    as_subdirs, prefix, pattern, filter_rules):
    import posixpath

    with Barecat(target_path, readonly=False, overwrite=overwrite,
                 shard_size_limit=shard_size_limit) as out:
        for src in source_paths:
            sub = prefix or ""
            if as_subdirs:
                name = os.path.basename(os.fspath(src))
                for ext in (".barecat", ".tar.gz", ".tgz", ".tar", ".zip"):
                    if name.endswith(ext):
                        name = name[: -len(ext)]
                        break
                sub = posixpath.join(sub, name) if sub else name
            out.merge_from_other_barecat(src, ignore_duplicates=ignore_duplicates, prefix=sub,
                                         pattern=pattern, filter_rules=filter_rules)


def merge_symlink(source_paths, target_path, overwrite=False, ignore_duplicates=False,
                  as_subdirs=False, prefix=None, pattern=None, filter_rules=None):
    """Join archives without copying: the target's shards link to the sources'.
    Python barecat's order (sources first); ``merge_symlink(output, inputs)`` (the
    earlier barecat_rs form) returns a dict of counts."""
    if pattern or filter_rules:
        # Python barecat refuses them too (it exits the process).
        from .exceptions import BarecatValueError

        raise BarecatValueError("merge_symlink: a pattern or filter rules are not "
                                "supported with symlinks (the shards are linked whole)")
    kw = dict(overwrite=overwrite, ignore_duplicates=ignore_duplicates, prefix=prefix,
              as_subdirs=as_subdirs)
    if not _is_path_list(source_paths) and _is_path_list(target_path):
        source_paths, target_path = target_path, source_paths
        return _native.merge_symlink(os.fspath(target_path),
                                     [os.fspath(p) for p in source_paths], **kw)
    _native.merge_symlink(os.fspath(target_path), [os.fspath(p) for p in source_paths], **kw)


def extract(barecat_path, target_directory):
    """Write every file of an archive below ``target_directory``. Paths are
    checked: nothing is written outside it."""
    with Barecat(barecat_path) as bc:
        root = os.path.realpath(target_directory)
        for info in bc.index.iter_all_fileinfos():
            dest = os.path.realpath(os.path.join(root, info.path))
            if os.path.commonpath([root, dest]) != root:
                from .exceptions import BarecatValueError

                raise BarecatValueError(f"{info.path}: would be written outside "
                                        f"{target_directory}")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with builtins_open(dest, "wb") as f:
                f.write(bc.read(info))


def builtins_open(path, mode):
    import builtins

    return builtins.open(path, mode)


def archive2barecat(src_path, target_path, shard_size_limit=None, overwrite=False):
    """Convert a tar or zip file into an archive."""
    _native.merge(target_path, [os.fspath(src_path)], overwrite=overwrite,
                  shard_size_limit=shard_size_limit)


def barecat2archive(src_path, target_path, root_dir=None):
    """Write an archive's files (and directories) into a tar (``.tar``,
    ``.tar.gz``, ...) or ``.zip`` file."""
    import tarfile
    import zipfile

    with Barecat(src_path) as bc:
        infos = list(bc.index.iter_all_infos(order=_order_path()))
        target = os.fspath(target_path)

        def arcname(p):
            return f"{root_dir}/{p}" if root_dir else p

        if target.endswith(".zip"):
            with zipfile.ZipFile(target, "w") as z:
                for info in infos:
                    if info.path == "":
                        continue
                    if info.isdir():
                        z.writestr(arcname(info.path) + "/", b"")
                    else:
                        z.writestr(arcname(info.path), bc.read(info))
            return
        import io

        with tarfile.open(target, "w:" + _tar_compression(target)) as t:
            for info in infos:
                if info.path == "":
                    continue
                ti = tarfile.TarInfo(arcname(info.path))
                ti.mode = (info.mode or (0o755 if info.isdir() else 0o644)) & 0o7777
                ti.uid, ti.gid = info.uid or 0, info.gid or 0
                ti.mtime = (info.mtime_ns or 0) // 1_000_000_000
                if info.isdir():
                    ti.type = tarfile.DIRTYPE
                    t.addfile(ti)
                else:
                    data = bc.read(info)
                    ti.size = len(data)
                    t.addfile(ti, io.BytesIO(data))


def _order_path():
    from ._barecat import Order

    return Order.PATH


def _tar_compression(name):
    for ext, comp in ((".tar.gz", "gz"), (".tgz", "gz"), (".tar.bz2", "bz2"), (".tbz2", "bz2"),
                      (".tar.xz", "xz"), (".txz", "xz")):
        if name.lower().endswith(ext):
            return comp
    return ""


def read_index(path):
    """``{path: (shard, offset, size)}`` for every file of an archive's index."""
    with Barecat(path) as bc:
        return {f.path: (f.shard, f.offset, f.size) for f in bc.index.iter_all_fileinfos()}


def write_index(dictionary, target_path):
    """Add rows ``{path: (shard, offset, size)}`` to the index at ``target_path``
    (created when missing), for bytes already in its shards."""
    from ._native import BarecatFileInfo

    with Barecat(target_path, readonly=False) as bc:
        idx = bc.index
        with bc.bulk():
            for path, (shard, offset, size) in dictionary.items():
                idx.add_file(BarecatFileInfo(path=path, shard=shard, offset=offset, size=size))


_cache = threading.local()


def get_cached_reader(path, auto_codec=None):
    """A read-only archive cached per thread and per process (for data-loader
    workers)."""
    key = (os.getpid(), os.fspath(path), bool(auto_codec))
    readers = getattr(_cache, "readers", None)
    if readers is None:
        readers = _cache.readers = {}
    bc = readers.get(key)
    if bc is None or bc.closed:
        bc = readers[key] = Barecat(path, readonly=True, auto_codec=bool(auto_codec))
    return bc


def get_completion_script(shell="bash"):
    """The path of the completion script of the ``barecat`` command for ``shell``
    (``'bash'``, ``'zsh'`` or ``'fish'``), as Python barecat returns it (a path
    to ``source``): the one installed beside the package or in the source tree,
    else one generated from the command's definitions into the user's cache
    directory (``$XDG_CACHE_HOME/barecat_rs/completions``)."""
    names = {"bash": ("bash", "barecat"), "zsh": ("zsh", "_barecat"),
             "fish": ("fish", "barecat.fish")}
    if shell not in names:
        raise ValueError(f"Unsupported shell: {shell}")
    sub, name = names[shell]
    here = os.path.dirname(os.path.abspath(__file__))
    for base in (os.path.join(here, "completions"),
                 os.path.join(here, os.pardir, os.pardir, "completions")):
        p = os.path.normpath(os.path.join(base, sub, name))
        if os.path.isfile(p):
            return p
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    target = os.path.join(cache, "barecat_rs", "completions", sub, name)
    script = _native.completion_script(shell)
    try:
        with builtins_open(target, "rb") as f:
            if f.read() == script:
                return target
    except OSError:
        pass
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = f"{target}.{os.getpid()}.tmp"
    with builtins_open(tmp, "wb") as f:
        f.write(script)
    os.replace(tmp, target)
    return target


class Sharder:
    """The shard files of an archive, as Python barecat's ``Sharder`` reports them
    (reading and sizes; writing goes through ``Barecat``)."""

    def __init__(self, path, shard_size_limit=None, readonly=True, append_only=False,
                 threadsafe=False, allow_writing_symlinked_shard=False):
        self.path = os.fspath(path)
        self.readonly = readonly
        self.append_only = append_only
        self.shard_size_limit = shard_size_limit

    def _paths(self):
        import glob as _glob
        import re

        found = {}
        for p in _glob.glob(_glob.escape(self.path) + "-shard-*"):
            m = re.fullmatch(r"-shard-(\d{5,})", p[len(self.path):])
            if m:
                found[int(m.group(1))] = p
        return [found[i] for i in sorted(found)]

    @property
    def num_shards(self):
        return len(self._paths())

    def physical_shard_end(self, shard_number):
        return os.path.getsize(self._paths()[shard_number])

    @property
    def total_physical_size_stat(self):
        return sum(os.path.getsize(p) for p in self._paths())

    total_physical_size_seek = total_physical_size_stat

    def read_from_address(self, shard, offset, size):
        with builtins_open(self._paths()[shard], "rb") as f:
            f.seek(offset)
            return f.read(size)

    def close(self):
        pass
