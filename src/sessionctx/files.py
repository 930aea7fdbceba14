"""Files sessionctx creates: owner-only, and written whole or not at all.

Sessions hold source code, pasted secrets and tool output, so every file sessionctx creates is
0600 and every folder 0700. Setting SESSIONCTX_PRIVATE=0 creates them with the process umask
instead (for a store shared by a group). A file that is replaced keeps the permissions it had.

Every writer in sessionctx goes through here: `write_atomically` for a file written whole
(export, repair, a rewritten session), `append_whole` for bytes added to the end of an open
file (the JSONL store, a checkpoint appended to a session file). Both either finish, fsynced,
or raise OSError leaving the target byte-identical and no temporary file behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterable

PRIVATE_ENV = "SESSIONCTX_PRIVATE"
PRIVATE_FILE, PRIVATE_DIR = 0o600, 0o700


def _private() -> bool:
    return os.environ.get(PRIVATE_ENV, "1").strip().lower() not in ("0", "no", "false", "off")


def _umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The permissions of a file sessionctx creates."""
    return PRIVATE_FILE if _private() else 0o666 & ~_umask()


def dir_mode() -> int:
    """The permissions of a folder sessionctx creates."""
    return PRIVATE_DIR if _private() else 0o777 & ~_umask()


def make_dirs(path: str) -> None:
    """Create `path` and its missing parents; the folders created are owner-only."""
    if os.path.isdir(path):
        return
    parent = os.path.dirname(os.path.abspath(path))
    if parent != path:
        make_dirs(parent)
    try:
        os.mkdir(path, dir_mode())
    except FileExistsError:
        if not os.path.isdir(path):
            raise
        return
    os.chmod(path, dir_mode())  # exact, whatever the umask


def create_private(path: str, flags: int = os.O_RDWR) -> int:
    """Open `path`, creating it owner-only if missing; never through a symlink or a FIFO.

    Returns the descriptor of a regular file or raises OSError (ELOOP for a symlink, EISDIR for
    a folder, EINVAL for anything else that is not a regular file).
    """
    mode = file_mode()
    base = flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd, created = os.open(path, base | os.O_CREAT | os.O_EXCL, mode), True
    except FileExistsError:
        fd, created = os.open(path, base), False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EISDIR if stat.S_ISDIR(info.st_mode) else errno.EINVAL,
                          "not a regular file", path)
        if created:
            os.fchmod(fd, mode)  # exact, whatever the umask
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` (a full disk or a size limit raises OSError, never a short
    write taken for a whole one)."""
    with memoryview(data) as view:
        done = 0
        while done < len(data):
            n = os.write(fd, view[done:])
            if n <= 0:
                raise OSError(errno.ENOSPC, "no space left: the write made no progress")
            done += n


def create_new(path: str, data: bytes) -> None:
    """Create `path` holding `data`, fsynced, with `file_mode()`; never over an existing file
    (FileExistsError) and never through a symlink. A failed write leaves no file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 PRIVATE_FILE)
    try:
        try:
            write_all(fd, data)
            os.fchmod(fd, file_mode())
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    _sync_dir(os.path.dirname(os.path.abspath(path)))


def append_whole(fd: int, data: bytes) -> None:
    """Append `data` at the end of `fd` (held under the caller's lock) and fsync; on any failure
    the file is cut back to its size before, so it stays byte-identical."""
    size = os.lseek(fd, 0, os.SEEK_END)
    try:
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
            os.fsync(fd)
        raise


def write_atomically(path: str, data: bytes | Iterable[bytes], *, mode: int | None = None,
                     owner: tuple[int, int] | None = None,
                     check: Callable[[], None] | None = None) -> None:
    """Replace (or create) `path` with `data`: whole, fsynced, or not at all.

    The bytes go to a temporary file beside `path` that is renamed over it once fsynced; on
    failure the temporary file is removed and `path` is left as it was. The file keeps the
    permissions of the one it replaces, else `mode`, else `file_mode()`; with `owner` (uid,
    gid) it is given that owner and group, or nothing is replaced. `check`, when given,
    runs once the new bytes are on disk, just before the rename: if it raises, nothing is
    replaced (a writer uses it to make sure `path` did not change meanwhile).
    """
    folder = os.path.dirname(os.path.abspath(path))
    try:
        info: os.stat_result | None = os.stat(path)
    except OSError:
        info = None
    if info is not None and (stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
        # a device or a pipe (`-o /dev/null`, `/dev/stdout`) is written through, never
        # replaced: a rename would put a regular file where the device was
        _write_through(path, data)
        return
    if mode is None:
        mode = stat.S_IMODE(info.st_mode) if info is not None and stat.S_ISREG(info.st_mode) \
            else None
    final_mode = file_mode() if mode is None else mode
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 PRIVATE_FILE)
    try:
        try:
            for chunk in ([data] if isinstance(data, bytes | bytearray | memoryview) else data):
                write_all(fd, bytes(chunk))
            if owner is not None:
                _own(fd, *owner)
            os.fchmod(fd, final_mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        if check is not None:
            check()
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_dir(folder)


def _write_through(path: str, data: bytes | Iterable[bytes]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        for chunk in ([data] if isinstance(data, bytes | bytearray | memoryview) else data):
            write_all(fd, bytes(chunk))
    finally:
        os.close(fd)


def _own(fd: int, uid: int, gid: int) -> None:
    info = os.fstat(fd)
    if (info.st_uid, info.st_gid) == (uid, gid):
        return
    try:
        os.fchown(fd, uid, gid)
    except PermissionError:
        raise OSError(errno.EPERM, "the new file cannot be given the owner and group of the "
                      f"old one (uid {uid}, gid {gid})") from None


def _sync_dir(folder: str) -> None:
    """Make a rename durable (best effort: some file systems refuse to fsync a folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
