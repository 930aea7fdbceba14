"""How much of an input sessionctx reads: at most a size limit, and only from a file or a pipe.

A session is read whole, so an input is bounded before it is read: a regular file over the
limit is refused from its size (a sparse 10 GB file is not read), stdin is read up to the
limit and refused past it, and what never ends or may never start (a character device such
as /dev/zero, a FIFO with no writer, a socket) is refused up front. The limit is
`--max-input SIZE`, else $SESSIONCTX_MAX_INPUT, else DEFAULT_MAX_INPUT (1 GiB). See
docs/safety.md.
"""

from __future__ import annotations

import io
import os
import re
import stat
import sys

from sessionctx.errors import BadArgument, InputError

DEFAULT_MAX_INPUT = 1 << 30
MAX_INPUT_ENV = "SESSIONCTX_MAX_INPUT"
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"\s*(\d+)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)
_CHUNK = 1 << 20

_chosen: int | None = None  # set by --max-input


class Unreadable(InputError):
    """An input refused before it was read (not a file, over the limit); `why` says why."""

    def __init__(self, label: str, why: str) -> None:
        super().__init__(f"{label}: {why}")
        self.label, self.why = label, why


def parse_size(text: str) -> int:
    """Bytes from '500M', '2G', '1048576', '64KiB' (powers of 1024)."""
    found = _SIZE.fullmatch(text)
    if not found:
        raise BadArgument(f"{text!r} is not a size: give bytes, or a number with K, M or G")
    return int(found.group(1)) * _UNITS[found.group(2).lower()]


def set_max_input(size: int | None) -> None:
    """The limit for this process (None: back to $SESSIONCTX_MAX_INPUT or the default)."""
    global _chosen
    _chosen = size


def max_input() -> int:
    if _chosen is not None:
        return _chosen
    env = os.environ.get(MAX_INPUT_ENV, "").strip()
    return parse_size(env) if env else DEFAULT_MAX_INPUT


def _mib(size: int) -> str:
    if size < 1 << 20:
        return f"{size:,} bytes"
    return f"{size / 1048576:.1f} MiB" if size < 1 << 30 else f"{size / (1 << 30):.1f} GiB"


def _too_large(label: str, size: int | None, limit: int) -> Unreadable:
    what = f"is {_mib(size)}, over" if size is not None else "holds more than"
    return Unreadable(label, f"{what} the {_mib(limit)} input limit; raise it with "
                      f"--max-input SIZE or ${MAX_INPUT_ENV} (docs/safety.md)")


_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a directory"))


def not_a_file(mode: int) -> str | None:
    """What a non-regular file is ('a character device'), or None for a regular file."""
    return next((name for test, name in _KINDS if test(mode)), None) if \
        not stat.S_ISREG(mode) else None


def read_file(path: str, limit: int | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at `path` (symlinks followed) and its stat when read.

    InputError for anything but a regular file, and for a file over the limit; OSError when
    it cannot be opened. Opened without blocking, so a FIFO with no writer is refused, not
    waited on."""
    limit = max_input() if limit is None else limit
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        kind = not_a_file(info.st_mode)
        if kind is not None:
            raise Unreadable(path, f"is {kind}, not a session file")
        if info.st_size > limit:
            raise _too_large(path, info.st_size, limit)
        os.set_blocking(fd, True)
        try:
            with os.fdopen(fd, "rb", buffering=0, closefd=False) as f:
                data = f.read()  # sized from the file: one buffer, no copies
        except MemoryError:
            raise Unreadable(path, "is too large to read into memory; lower --max-input") \
                from None
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while it was read
        raise _too_large(path, len(data), limit)
    return data, info


def read_stdin(limit: int | None = None) -> bytes:
    """Standard input up to the limit: a pipe, a file or a terminal; a device such as
    /dev/zero is refused before it is read."""
    limit = max_input() if limit is None else limit
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):  # not a real stream
        data = sys.stdin.buffer.read(limit + 1)
        if len(data) > limit:
            raise _too_large("<stdin>", None, limit) from None
        return data
    try:
        info = os.fstat(fd)
    except OSError as exc:
        raise Unreadable("<stdin>", f"cannot be read: {exc.strerror or exc}") from None
    if (stat.S_ISCHR(info.st_mode) and not os.isatty(fd)) or stat.S_ISBLK(info.st_mode):
        raise Unreadable("<stdin>", "is a device, not a session (give a file or a pipe)")
    if stat.S_ISREG(info.st_mode) and info.st_size > limit:
        raise _too_large("<stdin>", info.st_size, limit)
    return _read_upto(fd, limit, "<stdin>")


def _read_upto(fd: int, limit: int, label: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - size) or 1)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise _too_large(label, None, limit)
        return b"".join(chunks)
    except MemoryError:
        chunks.clear()
        raise Unreadable(label, "is too large to read into memory; lower --max-input") \
            from None
