"""DecodedView: the built-in codec set, stacking, custom codecs; archives written
with codecs read back through Python barecat's own DecodedView."""
import pytest

from barecat_rs import Barecat, DecodedView
from conftest import need


def test_builtin_codecs_round_trip(tmp_path):
    need("numpy", "msgpack", "PIL")
    import numpy as np

    arr = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    img = (np.arange(16 * 16 * 3) % 251).astype(np.uint8).reshape(16, 16, 3)
    values = {
        "a.json": {"x": [1, 2, 3], "y": "z"},
        "b.pkl": {"set": {1, 2}, "t": (1, "a")},
        "c.pickle": [None, 1.5],
        "d.npy": arr,
        "e.npz": {"a": arr, "b": np.array([1, 2])},
        "f.msgpack": {"arr": arr, "n": 3},
        "g.png": img,
        "h.bmp": img,
        "i.npy.gz": arr,
        "j.json.bz2": {"k": 1},
        "k.pkl.xz": [1, 2, 3],
        "l.npy.gz.bz2": arr,
        "raw.bin": b"untouched",
        "r.gz": b"compressed bytes",
    }
    path = tmp_path / "codecs.barecat"
    with Barecat(path, readonly=False) as bc:
        dec = DecodedView(bc)
        for k, v in values.items():
            dec[k] = v
    with Barecat(path) as bc:
        dec = DecodedView(bc)
        assert bc["raw.bin"] == b"untouched"
        assert dec["a.json"] == values["a.json"]
        assert dec["b.pkl"] == values["b.pkl"] and dec["c.pickle"] == values["c.pickle"]
        for k in ("d.npy", "i.npy.gz", "l.npy.gz.bz2"):
            np.testing.assert_array_equal(dec[k], arr)
        e = dec["e.npz"]
        np.testing.assert_array_equal(e["a"], arr)
        f = dec["f.msgpack"]
        np.testing.assert_array_equal(f["arr"], arr)
        assert f["n"] == 3
        np.testing.assert_array_equal(dec["g.png"], img)
        np.testing.assert_array_equal(dec["h.bmp"], img)
        assert dec["j.json.bz2"] == {"k": 1} and dec["k.pkl.xz"] == [1, 2, 3]
        assert dec["r.gz"] == b"compressed bytes"
        assert len(dec) == len(values) and "a.json" in dec
        many = dec.read_many(["a.json", "d.npy"], threads=2)
        assert many[0] == values["a.json"]
        np.testing.assert_array_equal(many[1], arr)
    with Barecat(tmp_path / "j.barecat", readonly=False) as bc:
        DecodedView(bc)["x.jpg"] = img
        back = DecodedView(bc)["x.jpg"]
        assert back.shape == img.shape and abs(back.astype(int) - img).mean() < 8


def test_python_barecat_decodes_what_we_encoded(tmp_path):
    need("barecat", "numpy")
    import barecat
    import numpy as np

    arr = np.arange(10, dtype=np.int64)
    path = tmp_path / "x.barecat"
    with Barecat(path, readonly=False) as bc:
        dec = DecodedView(bc)
        dec["a.json"] = {"a": 1}
        dec["b.npy.gz"] = arr
        dec["c.pkl"] = ("t", 1)
    with barecat.Barecat(str(path)) as theirs:
        dec = barecat.DecodedView(theirs)
        assert dec["a.json"] == {"a": 1}
        np.testing.assert_array_equal(dec["b.npy.gz"], arr)
        assert dec["c.pkl"] == ("t", 1)


def test_custom_codecs(tmp_path):
    with Barecat(tmp_path / "c.barecat", readonly=False) as bc:
        dec = DecodedView(bc)
        dec.register_codec([".upper"], lambda s: s.upper().encode(), lambda b: b.decode().lower())
        dec.register_codec("rot", lambda b: bytes(x ^ 1 for x in b),
                           lambda b: bytes(x ^ 1 for x in b), nonfinal=True)
        dec["a.upper"] = "hello"
        dec["b.upper.rot"] = "stacked"
        assert bc["a.upper"] == b"HELLO"
        assert dec["a.upper"] == "hello" and dec["b.upper.rot"] == "stacked"
        dec.clear_codecs()
        assert dec["a.upper"] == b"HELLO"
        with pytest.raises(KeyError):
            dec["missing.json"]
