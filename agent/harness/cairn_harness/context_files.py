"""Writes the experiment's model-definition files (the "context") into the work directory.

The master refuses contexts that escape their directory, but the harness checks again before
writing: a path that is absolute, contains '..', or would resolve outside the work directory
(through a symlink) is refused and nothing more is written.
"""

import base64
import binascii
import os

from cairn_harness.master_client import HarnessError

DEFAULT_MODE = 0o644


def write_context(files, root):
    """Writes each {"path", "content" (base64), "mode"} of `files` under `root`.

    Returns the relative paths written."""
    root_real = os.path.realpath(root)
    seen = set()
    written = []
    for entry in files:
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path, str):
            raise HarnessError(f"context entry without a string path: {entry!r}")
        relative = _checked_relative_path(path)
        if relative in seen:
            raise HarnessError(f"context lists {path!r} twice")
        seen.add(relative)
        try:
            content = base64.b64decode(entry.get("content", ""), validate=True)
        except (binascii.Error, TypeError, ValueError) as error:
            raise HarnessError(f"context file {path!r}: content is not base64 ({error})") from None
        mode = entry.get("mode") or DEFAULT_MODE
        if not isinstance(mode, int):
            raise HarnessError(f"context file {path!r}: mode {mode!r} is not an integer")

        target = os.path.join(root_real, relative)
        parent = os.path.dirname(target)
        os.makedirs(parent, exist_ok=True)
        if not _inside(os.path.realpath(parent), root_real):
            raise HarnessError(f"context file {path!r} resolves outside the work directory")
        # O_NOFOLLOW: a symlink planted at the file's own name is not followed either.
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        os.chmod(target, mode & 0o777)
        written.append(relative)
    return written


def _checked_relative_path(path):
    if not path or path.startswith("/") or "\0" in path:
        raise HarnessError(f"context path {path!r} is not a relative path")
    parts = [part for part in path.split("/") if part != "."]
    if not parts or any(part in ("", "..") for part in parts):
        raise HarnessError(f"context path {path!r} has an empty or '..' component")
    return os.path.join(*parts)


def _inside(path, root):
    return path == root or path.startswith(root + os.sep)
