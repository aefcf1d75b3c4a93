"""Packs a pure-Python package into a wheel, offline and with the standard library only.

A wheel is a zip of the package's files and a `<name>-<version>.dist-info/` with METADATA, WHEEL
and RECORD (each file's SHA-256 and size). Timestamps are fixed, so the same sources give the same
bytes, and the same prepared-environment hash on every build.

    python3 make_wheel.py SOURCE_DIR OUT_DIR NAME VERSION

packs every top-level package (a directory with __init__.py) and module of SOURCE_DIR, writes
OUT_DIR/<name>-<version>-py3-none-any.whl and prints its path.
"""

import base64
import hashlib
import os
import sys
import zipfile

FIXED_TIME = (2020, 1, 1, 0, 0, 0)


def _record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def _sources(source_dir):
    """(archive path, bytes) of every package file and module, sorted."""
    found = []
    for entry in sorted(os.listdir(source_dir)):
        path = os.path.join(source_dir, entry)
        if entry.endswith(".py") and os.path.isfile(path):
            found.append(entry)
        elif os.path.isfile(os.path.join(path, "__init__.py")):
            for parent, directories, names in os.walk(path):
                directories[:] = sorted(d for d in directories if d != "__pycache__")
                for name in sorted(names):
                    if not name.endswith(".pyc"):
                        found.append(os.path.relpath(os.path.join(parent, name), source_dir))
    result = []
    for relative in found:
        with open(os.path.join(source_dir, relative), "rb") as f:
            result.append((relative.replace(os.sep, "/"), f.read()))
    return result


def make_wheel(source_dir, out_dir, name, version):
    """Writes the wheel and returns its path."""
    distribution = name.replace("-", "_")
    info = f"{distribution}-{version}.dist-info"
    files = _sources(source_dir)
    if not files:
        raise ValueError(f"{source_dir} holds no package or module")
    files.append((f"{info}/METADATA", (f"Metadata-Version: 2.1\nName: {name}\n"
                                       f"Version: {version}\nSummary: {name}, packed by "
                                       "make_wheel.py\n").encode()))
    files.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: cairn-make-wheel\n"
                                   b"Root-Is-Purelib: true\nTag: py3-none-any\n"))
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in files)
    files.append((f"{info}/RECORD", (record + f"{info}/RECORD,,\n").encode()))
    os.makedirs(out_dir, exist_ok=True)
    wheel = os.path.join(out_dir, f"{distribution}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(wheel + ".tmp", "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in files:
            entry = zipfile.ZipInfo(path, FIXED_TIME)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, data)
    os.replace(wheel + ".tmp", wheel)
    return wheel


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    print(make_wheel(*sys.argv[1:]))
