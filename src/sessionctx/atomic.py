"""Writing a file whole or not at all, owner-only.

The new bytes go to a temporary file beside the target, are fsynced, and are renamed over it,
and the directory is fsynced: after a crash at any point the target holds either its old bytes
or the new ones, never a mix. Session data is private, so every file made here is 0600.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

OWNER_ONLY = 0o600


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)) or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_new(path: str, data: bytes, mode: int = OWNER_ONLY) -> None:
    """Create `path` with `data`, fsynced; never overwrites (FileExistsError if it exists)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(path)
        raise
    os.close(fd)
    _fsync_dir(path)


def replace_atomically(path: str, data: bytes, mode: int = OWNER_ONLY,
                       check: Callable[[], None] | None = None) -> None:
    """Replace the file at `path` with `data` in one rename.

    `check` runs after the new bytes are safely on disk and just before the rename; if it
    raises, the temporary file is removed and `path` is left as it was.
    """
    directory = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    for attempt in range(100):
        tmp = os.path.join(directory, f".{base}.{os.getpid()}.{attempt}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(f"no free temporary name beside {path}")
    try:
        try:
            _write_all(fd, data)
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        if check is not None:
            check()
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path)
