"""Who else is writing a session file: processes holding it open for writing (Linux /proc).

An agent such as Codex keeps its session file open and appends to it. Replacing that file
(repair) leaves the agent appending to the old inode, and appending beside it (compact) can
interleave with its lines, so writers refuse while one is found. Only processes whose /proc
entries this user may read are seen (all of them for root); elsewhere none are, and the
backup kept as a hard link of the original still catches what is appended after a swap.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from sessionctx import decoding
from sessionctx.errors import SessionctxError

_PROC = "/proc"
_ACCESS_MODE = 0o3  # O_ACCMODE: 0 read-only, 1 write-only, 2 read-write


class LiveWriter(SessionctxError):
    """Another process holds the session open for writing; nothing was written."""


@dataclass(frozen=True, slots=True)
class Writer:
    pid: int
    name: str

    def __str__(self) -> str:
        return f"{self.name} (pid {self.pid})"


def writers(path: str) -> list[Writer]:
    """The processes other than this one that hold the file at `path` open for writing."""
    try:
        target = os.stat(path)
    except OSError:
        return []
    me = os.getpid()
    found: list[Writer] = []
    try:
        pids = [int(p) for p in os.listdir(_PROC) if p.isdigit()]
    except OSError:
        return []
    for pid in pids:
        if pid == me:
            continue
        if _writes(pid, target.st_dev, target.st_ino):
            found.append(Writer(pid, _name(pid)))
    return found


def _writes(pid: int, dev: int, ino: int) -> bool:
    folder = f"{_PROC}/{pid}/fd"
    try:
        fds = os.listdir(folder)
    except OSError:  # gone, or another user's process
        return False
    for fd in fds:
        try:
            info = os.stat(f"{folder}/{fd}")
        except OSError:
            continue
        if info.st_ino == ino and info.st_dev == dev and _open_for_writing(pid, fd):
            return True
    return False


def _open_for_writing(pid: int, fd: str) -> bool:
    try:
        with open(f"{_PROC}/{pid}/fdinfo/{fd}", encoding="ascii") as f:
            for line in f:
                if line.startswith("flags:"):
                    return int(line.split()[1], 8) & _ACCESS_MODE != 0
    except (OSError, ValueError):
        return False
    return False


def _name(pid: int) -> str:
    try:
        with open(f"{_PROC}/{pid}/comm", encoding="utf-8", errors="replace") as f:
            return f.read().strip() or "a process"
    except OSError:
        return "a process"


def refuse_if_written(path: str, flag: str = "--force") -> None:
    """Raise LiveWriter naming every process that is writing `path`."""
    found = writers(path)
    if not found:
        return
    names = ", ".join(str(w) for w in found)
    verb = "is" if len(found) == 1 else "are"
    raise LiveWriter(f"{path}: {names} {verb} writing this session: quit it, or `{flag}`; "
                     "nothing was written")


TAIL_GRACE_SECONDS = 60.0


def unfinished_tail(raw: bytes, mtime_ns: int, now: float | None = None) -> int:
    """Where the last line starts when its writer may still be finishing it, else -1.

    A last line without a newline that is not a JSON value yet, in a file written to less
    than TAIL_GRACE_SECONDS ago, is taken as a line being written, not a torn one: repair
    leaves it and compact does not append after it. An older one is torn (a crash cut it);
    a complete JSON value is a record. A file that is one JSON document has no such line.
    """
    if not raw or raw.endswith(b"\n"):
        return -1
    start = raw.rfind(b"\n") + 1
    age = (time.time() if now is None else now) - mtime_ns / 1e9
    if age >= TAIL_GRACE_SECONDS or decoding.decode_or_none(raw[start:]) is not None:
        return -1
    if start and raw.lstrip()[:1] in (b"[", b"{") and \
            decoding.decode_or_none(raw) is not None:
        return -1
    return start
