"""Who else is writing a session file: processes holding it open for writing.

An agent such as Codex keeps its session file open and appends to it. Replacing that file
(repair) leaves the agent appending to the old inode, and appending beside it (compact) can
interleave with its lines, so writers refuse while one is found. Linux is asked through /proc;
a system without it (macOS, the BSDs) through `lsof`. Only processes this user may inspect are
seen (all of them for root). Where neither way exists, nothing can be seen, and a writer
refuses rather than take that for "no writer" (`Undetectable`); the backup kept as a hard link
of the original still catches what is appended after a swap.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass

from sessionctx import decoding
from sessionctx.errors import SessionctxError

_PROC = "/proc"
_LSOF = "lsof"
_LSOF_SECONDS = 60.0
_ACCESS_MODE = 0o3  # O_ACCMODE: 0 read-only, 1 write-only, 2 read-write


class LiveWriter(SessionctxError):
    """Another process holds the session open for writing (or none can be seen); nothing was
    written."""


class Undetectable(SessionctxError):
    """This system gives no way to see which processes hold a file open (no /proc, no lsof,
    or lsof failed)."""


@dataclass(frozen=True, slots=True)
class Writer:
    pid: int
    name: str

    def __str__(self) -> str:
        return f"{self.name} (pid {self.pid})"


def writers(path: str) -> list[Writer]:
    """The processes other than this one that hold the file at `path` open for writing, seen
    through /proc where the system has it, else through `lsof`; Undetectable when neither can
    be asked."""
    try:
        target = os.stat(path)
    except OSError:
        return []
    if os.path.isdir(f"{_PROC}/self/fd"):
        return _proc_writers(target.st_dev, target.st_ino)
    lsof = shutil.which(_LSOF)
    if lsof is None:
        raise Undetectable(f"{path}: cannot tell whether another process is writing it: this "
                           "system has neither /proc nor lsof")
    return _lsof_writers(lsof, path)


def _proc_writers(dev: int, ino: int) -> list[Writer]:
    me = os.getpid()
    found: list[Writer] = []
    try:
        pids = [int(p) for p in os.listdir(_PROC) if p.isdigit()]
    except OSError:
        return []
    for pid in pids:
        if pid == me:
            continue
        if _writes(pid, dev, ino):
            found.append(Writer(pid, _name(pid)))
    return found


def _lsof_writers(lsof: str, path: str) -> list[Writer]:
    """The writers `lsof` lists for `path`: its field output names each process (p, c) and
    each of its descriptors of the file with its access (a: r, w or u for read-write)."""
    try:
        proc = subprocess.run([lsof, "-w", "-n", "-P", "-F", "pcfa", "--", path],
                              capture_output=True, timeout=_LSOF_SECONDS, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Undetectable(f"{path}: cannot tell whether another process is writing it: "
                           f"lsof failed ({exc})") from None
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and proc.stderr.strip()):
        why = proc.stderr.decode("utf-8", "replace").strip() or f"exit {proc.returncode}"
        raise Undetectable(f"{path}: cannot tell whether another process is writing it: "
                           f"lsof failed ({why})")
    me = os.getpid()
    found: dict[int, Writer] = {}
    pid, name = -1, "a process"
    for line in out.splitlines():
        field, value = line[:1], line[1:]
        if field == "p":
            pid, name = (int(value) if value.isdigit() else -1), "a process"
        elif field == "c":
            name = value or "a process"
        elif field == "a" and value in ("w", "u") and pid not in (-1, me):
            found.setdefault(pid, Writer(pid, name))
    return list(found.values())


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
    """Raise LiveWriter naming every process that is writing `path`, or saying that none can
    be seen on this system (never taken for "no writer")."""
    try:
        found = writers(path)
    except Undetectable as exc:
        raise LiveWriter(f"{exc}; quit any agent that may be writing it, then run again with "
                         f"`{flag}`; nothing was written") from None
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
