"""The ``Records`` class: records by integer index (``r[i]``), from a record
dataset directory or from the record table of a barecat archive."""

from ._native import _Records


def _reopen(cls, path, check_crc):
    return cls(path, check_crc=check_crc)


class Records(_Records):
    """Records by integer index.

    ``Records(path)`` reads a dataset directory (``barecat-records create``) or a
    barecat archive that has a record table (``barecat-records build``):
    ``len(r)``, ``r[i]`` (``bytes``), ``r.view(i)`` and ``r.gather(indices)``
    (read-only buffers over the mapped chunks: no copy when uncompressed).
    ``check_crc=True`` checks every record read against its stored CRC32C.

    ``Records(path, readonly=False, create=True, compress="zstd", dtype="f32")``
    creates (or, without ``create``, opens) a dataset for writing: ``append``,
    ``extend``, ``modify`` (also ``r[i] = data``), ``delete`` (also ``del r[i]``:
    the last record takes the place of the deleted one), ``commit``, ``close``.
    A reader pickles as its path (for ``spawn`` workers) and keeps working in a
    forked child.
    """

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __reduce__(self):
        path, check_crc = self._reopen_args()
        return _reopen, (type(self), path, check_crc)
