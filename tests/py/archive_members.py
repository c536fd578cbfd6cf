"""What Python's tarfile or zipfile sees in an archive: one JSON document on stdout.

    archive_members.py tarfile|zipfile PATH

{"error": null or the message of the exception that stopped reading,
 "members": [{"name": hex of the raw name, "kind": "file" | "link" | "dir" | "other",
              "data": hex of the content (files and links), "error": message when the
              content cannot be read}]}

Tar names are the raw bytes (tarfile decodes them with surrogateescape); zip names
are the decoded names as UTF-8 (zipfile decodes CP437 or UTF-8, as the importer
does). A tar whose reading stops half way (tarfile stops quietly at a damaged
header) lists what came before.
"""
import json
import sys
import tarfile
import zipfile


def tar_members(path):
    out = {"error": None, "members": []}
    try:
        t = tarfile.open(path)
    except Exception as e:  # noqa: BLE001 - any failure is the answer
        out["error"] = f"{type(e).__name__}: {e}"
        return out
    try:
        for m in t:
            name = m.name.encode("utf-8", "surrogateescape")
            kind = "file" if m.isreg() else "link" if m.islnk() else "dir" if m.isdir() else "other"
            rec = {"name": name.hex(), "kind": kind}
            if kind in ("file", "link"):
                try:
                    rec["data"] = t.extractfile(m).read().hex()
                except Exception as e:  # noqa: BLE001
                    rec["error"] = f"{type(e).__name__}: {e}"
            out["members"].append(rec)
    except Exception as e:  # noqa: BLE001
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def zip_members(path):
    out = {"error": None, "members": []}
    try:
        z = zipfile.ZipFile(path)
    except Exception as e:  # noqa: BLE001
        out["error"] = f"{type(e).__name__}: {e}"
        return out
    for i in z.infolist():
        kind = "dir" if i.is_dir() else "file"
        rec = {"name": i.filename.encode("utf-8", "surrogateescape").hex(), "kind": kind}
        if kind == "file":
            try:
                rec["data"] = z.read(i).hex()
            except Exception as e:  # noqa: BLE001
                rec["error"] = f"{type(e).__name__}: {e}"
        out["members"].append(rec)
    return out


if __name__ == "__main__":
    kind, path = sys.argv[1], sys.argv[2]
    print(json.dumps(tar_members(path) if kind == "tarfile" else zip_members(path)))
