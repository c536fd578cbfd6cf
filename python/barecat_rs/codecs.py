"""``DecodedView``: encode and decode file contents by extension.

``DecodedView(bc)`` wraps a ``Barecat`` (or any mapping of paths to bytes):
``dec['a.json'] = {...}`` stores JSON, ``dec['x.npy.gz']`` loads a gzipped NumPy
array. Extensions are matched from the end of the name: a *final* codec (json,
pickle, npy, npz, msgpack, images) turns bytes into an object; a *nonfinal* one
(gz, bz2, xz) turns bytes into bytes and the extension before it is looked at
next, so compression stacks on any format.

Built in: ``.json``, ``.pkl``/``.pickle``, ``.npy``, ``.npz`` (NumPy), ``.msgpack``
(when ``msgpack`` is installed; NumPy arrays round-trip), images ``.jpg``,
``.jpeg``, ``.png``, ``.bmp``, ``.gif``, ``.tif``, ``.tiff``, ``.webp`` (NumPy
arrays, RGB, through Pillow or else OpenCV, when one is installed), and ``.gz``,
``.bz2``, ``.xz``. The libraries are imported on first use.
"""

import io
import importlib.util
from collections.abc import MutableMapping


def _json_enc(obj):
    import json

    return json.dumps(obj).encode("utf-8")


def _json_dec(data):
    import json

    return json.loads(bytes(data))


def _pickle_enc(obj):
    import pickle

    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def _pickle_dec(data):
    import pickle

    return pickle.loads(data)


def _npy_enc(arr):
    import numpy as np

    buf = io.BytesIO()
    np.save(buf, np.asarray(arr), allow_pickle=False)
    return buf.getvalue()


def _npy_dec(data):
    import numpy as np

    return np.load(io.BytesIO(data), allow_pickle=False)


def _npz_enc(arrays):
    import numpy as np

    buf = io.BytesIO()
    np.savez(buf, **dict(arrays))
    return buf.getvalue()


def _npz_dec(data):
    import numpy as np

    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _msgpack_default(obj):
    import numpy as np

    if isinstance(obj, np.ndarray):
        return {"__ndarray__": True, "dtype": obj.dtype.str, "shape": list(obj.shape),
                "data": np.ascontiguousarray(obj).tobytes()}
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"cannot serialize {type(obj).__name__} with msgpack")


def _msgpack_hook(obj):
    if obj.get("__ndarray__") is True:
        import numpy as np

        return np.frombuffer(obj["data"], dtype=np.dtype(obj["dtype"])).reshape(obj["shape"])
    return obj


def _msgpack_enc(obj):
    import msgpack

    return msgpack.packb(obj, default=_msgpack_default, use_bin_type=True)


def _msgpack_dec(data):
    import msgpack

    return msgpack.unpackb(data, object_hook=_msgpack_hook, raw=False)


_PIL_FORMATS = {".jpg": "JPEG", ".jpeg": "JPEG", ".png": "PNG", ".bmp": "BMP", ".gif": "GIF",
                ".tif": "TIFF", ".tiff": "TIFF", ".webp": "WEBP"}


def _have(module):
    return importlib.util.find_spec(module) is not None


def _image_codec(ext):
    fmt = _PIL_FORMATS[ext]

    def encode(arr):
        import numpy as np

        arr = np.asarray(arr)
        if _have("PIL"):
            from PIL import Image

            buf = io.BytesIO()
            img = Image.fromarray(arr)
            kwargs = {"quality": 95} if fmt == "JPEG" else {}
            img.save(buf, format=fmt, **kwargs)
            return buf.getvalue()
        import cv2

        if arr.ndim == 3 and arr.shape[2] == 3:
            arr = arr[..., ::-1]
        ok, out = cv2.imencode(ext, arr)
        if not ok:
            raise ValueError(f"OpenCV could not encode a {ext} image")
        return out.tobytes()

    def decode(data):
        import numpy as np

        if _have("PIL"):
            from PIL import Image

            with Image.open(io.BytesIO(data)) as img:
                return np.asarray(img)
        import cv2

        arr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
        if arr is None:
            raise ValueError(f"OpenCV could not decode a {ext} image")
        if arr.ndim == 3 and arr.shape[2] == 3:
            arr = arr[..., ::-1]
        return arr

    return encode, decode


def _compress(module, **kwargs):
    def encode(data):
        return importlib.import_module(module).compress(bytes(data), **kwargs)

    def decode(data):
        return importlib.import_module(module).decompress(data)

    return encode, decode


def _builtin_codecs():
    codecs = {
        ".json": (_json_enc, _json_dec, False),
        ".pkl": (_pickle_enc, _pickle_dec, False),
        ".pickle": (_pickle_enc, _pickle_dec, False),
        ".gz": (*_compress("gzip"), True),
        ".bz2": (*_compress("bz2"), True),
        ".xz": (*_compress("lzma"), True),
    }
    if _have("numpy"):
        codecs[".npy"] = (_npy_enc, _npy_dec, False)
        codecs[".npz"] = (_npz_enc, _npz_dec, False)
        if _have("msgpack"):
            codecs[".msgpack"] = (_msgpack_enc, _msgpack_dec, False)
        if _have("PIL") or _have("cv2"):
            for ext in _PIL_FORMATS:
                codecs[ext] = (*_image_codec(ext), False)
    elif _have("msgpack"):
        codecs[".msgpack"] = (_msgpack_enc, _msgpack_dec, False)
    return codecs


def _split_ext(name):
    """('a/b.npy', '.gz') for 'a/b.npy.gz'; ext is lowercase, '' when none."""
    base = name.rpartition("/")[2]
    dot = base.rfind(".")
    if dot <= 0:
        return name, ""
    cut = len(name) - len(base) + dot
    return name[:cut], name[cut:].lower()


class DecodedView(MutableMapping):
    """A view of a mapping of paths to bytes (a ``Barecat``) that encodes values on
    write and decodes them on read according to the path's extensions. Paths
    without a codec pass bytes through unchanged."""

    def __init__(self, store):
        self.store = store
        self._codecs = _builtin_codecs()

    def register_codec(self, exts, encoder, decoder, nonfinal=False):
        """Use ``encoder(obj) -> bytes`` and ``decoder(bytes) -> obj`` for the
        extensions ``exts`` (``'.yaml'`` or a list); ``nonfinal`` marks a layer that
        maps bytes to bytes (compression) and may wrap another format."""
        if isinstance(exts, str):
            exts = [exts]
        for ext in exts:
            ext = ext.lower()
            if not ext.startswith("."):
                ext = "." + ext
            self._codecs[ext] = (encoder, decoder, nonfinal)

    def clear_codecs(self):
        """Forget every codec (built-in ones included)."""
        self._codecs = {}

    def _chain(self, path):
        """The codecs of `path`, outermost (last extension) first."""
        chain = []
        name = path
        while True:
            name, ext = _split_ext(name)
            codec = self._codecs.get(ext) if ext else None
            if codec is None:
                return chain
            chain.append(codec)
            if not codec[2]:
                return chain

    def encode(self, path, value):
        for enc, _, _ in reversed(self._chain(path)):
            value = enc(value)
        return value

    def decode(self, path, data):
        for _, dec, _ in self._chain(path):
            data = dec(data)
        return data

    def __getitem__(self, path):
        return self.decode(path, self.store[path])

    def __setitem__(self, path, value):
        self.store[path] = self.encode(path, value)

    def __delitem__(self, path):
        del self.store[path]

    def __iter__(self):
        return iter(self.store)

    def __len__(self):
        return len(self.store)

    def __contains__(self, path):
        return path in self.store

    def keys(self):
        return self.store.keys()

    def items(self):
        for path in self.store.keys():
            yield path, self[path]

    def values(self):
        for _, value in self.items():
            yield value

    def read_many(self, paths, **kwargs):
        """Decoded contents of many files (the reads run in parallel, see
        ``Barecat.read_many``)."""
        paths = list(paths)
        return [self.decode(p, d) for p, d in zip(paths, self.store.read_many(paths, **kwargs))]
