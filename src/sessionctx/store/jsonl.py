"""The JSONL store: one `<session>.jsonl` file per session in a directory, for exchange.

Writers take an exclusive `flock` on the file, append under it and fsync before returning; an
append that fails (full disk, file size limit) is cut back, so the file stays byte-identical and
no seq is returned for it. Existing bytes are never rewritten: a torn line left by a crash stays
in the file and is reported with its line number, and the next append starts on a fresh line.

A batch of several records is one buffer whose lines, all but the last, start with a space
(JSON whitespace, so every line is still plain JSON): such a line belongs to a batch that the
next line without it, whole and ended by a newline, closes. A batch a crash cut short therefore
never shows as records; the next append removes it, as no one was ever told its seqs. A
record's seq is its position among the readable records of the file.

Session files are opened without following symlinks and must be regular files (a FIFO, folder
or link named `*.jsonl` is refused); a file that cannot be read is reported for its session
and never hides the other sessions.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, unquote

from sessionctx.changes import Source
from sessionctx.context import BuildOptions, Context
from sessionctx.files import append_whole, create_private, make_dirs
from sessionctx.records import Problem, Record, read_bytes
from sessionctx.store.base import (
    NotASessionStore,
    ReadOnlyStore,
    SessionChanged,
    SessionInfo,
    StoreError,
    check_session,
    context_from,
    encode,
    kind_of,
    require_checkpoint,
    write_jsonl,
)

SUFFIX = ".jsonl"
_CONTINUED = b" "  # starts every line of a batch but its last


@dataclass(frozen=True, slots=True)
class _Known:
    """A session file as this store last left it: a later append whose file still matches
    (same inode, size and mtime) needs no scan, and one that grew is scanned from here."""

    ino: int
    size: int
    mtime_ns: int
    last_seq: int


@dataclass(frozen=True, slots=True)
class _Scan:
    records: list[Record]
    problems: list[Problem]
    unfinished_at: int | None  # byte offset where a batch left unfinished at the end starts


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "is a symbolic link, which the store never follows"
    if exc.errno == errno.EISDIR:
        return "is a folder, not a session file"
    if exc.errno == errno.EINVAL and exc.strerror == "not a regular file":
        return "is not a regular file (a FIFO, socket or device), not a session file"
    return str(exc.strerror or exc)


def _continued_lines(raw: bytes) -> set[int]:
    """The numbers of the lines that start with the batch marker."""
    marked = {1} if raw.startswith(_CONTINUED) else set()
    line, counted = 1, 0
    pos = raw.find(b"\n" + _CONTINUED)
    while pos >= 0:
        line += raw.count(b"\n", counted, pos + 1)
        counted = pos + 1
        marked.add(line)
        pos = raw.find(b"\n" + _CONTINUED, pos + 1)
    return marked


def _offset_of_line(raw: bytes, line: int) -> int:
    pos = 0
    for _ in range(line - 1):
        pos = raw.index(b"\n", pos) + 1
    return pos


def _finished(records: list[Record], raw: bytes, path: str) -> _Scan:
    """The records outside batches a crash cut short, and a problem for each such batch."""
    if b"\n" + _CONTINUED not in raw and not raw.startswith(_CONTINUED):
        return _Scan(records, [], None)
    marked = _continued_lines(raw)
    unterminated = None if raw.endswith(b"\n") else raw.count(b"\n") + 1
    kept: list[Record] = []
    problems: list[Problem] = []
    batch: list[Record] = []
    previous = 0
    for record in records:
        line = record.source.line or 0
        if batch and line != previous + 1:  # a line that is no record broke the batch
            problems.append(_torn_batch(batch, path, line - 1))
            batch = []
        previous = line
        if line in marked or (batch and line == unterminated):
            batch.append(record)
            continue
        kept.extend(batch)
        kept.append(record)
        batch = []
    if batch:
        last_line = raw.count(b"\n") + (0 if raw.endswith(b"\n") else 1)
        problems.append(_torn_batch(batch, path, last_line))
        return _Scan(kept, problems, _offset_of_line(raw, batch[0].source.line or 1))
    last_start = raw.rfind(b"\n") + 1
    if not raw.endswith(b"\n") and raw.startswith(_CONTINUED, last_start):
        return _Scan(kept, problems, last_start)  # a batch torn inside its first line
    return _Scan(kept, problems, None)


def _torn_batch(batch: list[Record], path: str, last: int) -> Problem:
    first = batch[0].source.line
    return Problem(f"lines {first}-{last} are a batch of records whose write did not finish; "
                   "they are not part of the session", path, first)


class JsonlStore:
    """Sessions as JSONL files in one directory."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        if os.path.exists(directory) and not os.path.isdir(directory):
            raise NotASessionStore(f"{directory}: is a file, not a directory of sessions")
        try:
            make_dirs(directory)
        except OSError as exc:
            raise StoreError(f"{directory}: cannot create: {exc.strerror or exc}") from None
        self._known: dict[str, _Known] = {}

    def _file(self, session: str) -> str:
        return os.path.join(self.directory, quote(check_session(session), safe="") + SUFFIX)

    # -- reading -------------------------------------------------------------------------

    def _load(self, path: str) -> bytes | None:
        """The bytes of a session file; None when there is none."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"{path}: cannot be read: {_why(exc)}") from None
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                error = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
                raise OSError(error, "not a regular file")
            with os.fdopen(os.dup(fd), "rb") as f:
                return f.read()
        except OSError as exc:
            raise StoreError(f"{path}: cannot be read: {_why(exc)}") from None
        finally:
            os.close(fd)

    def _scan(self, path: str, raw: bytes | None) -> _Scan:
        if raw is None or not raw.strip():
            return _Scan([], [], None)
        result = read_bytes(raw, path)
        problems = [p for p in result.problems if p.line is not None]
        if result.fatal and not problems:  # a binary file, not a file of torn or bad lines
            raise NotASessionStore("; ".join(str(p) for p in result.problems))
        scan = _finished(result.records, raw, path)
        records = [Record(r.data, r.kind, Source(seq=i, path=path), r.problem)
                   for i, r in enumerate(scan.records, 1)]
        return _Scan(records, problems + scan.problems, scan.unfinished_at)

    def _read(self, path: str) -> tuple[list[Record], list[Problem]]:
        scan = self._scan(path, self._load(path))
        return scan.records, scan.problems

    def problems(self, session: str) -> list[Problem]:
        """What in the session's file could not be read (a torn line, with its line number)."""
        return self._read(self._file(session))[1]

    def records(self, session: str, after: int = 0) -> list[Record]:
        return self._read(self._file(session))[0][after:]

    def last_seq(self, session: str) -> int:
        return len(self._read(self._file(session))[0])

    def context_records(self, session: str) -> list[Record]:
        """The records context loading reads: from the latest valid checkpoint on."""
        records = self.records(session)
        start = 0
        for i in range(len(records) - 1, -1, -1):
            if kind_of(records[i].data)[1]:
                start = i
                break
        return records[start:]

    def context(self, session: str, options: BuildOptions | None = None) -> Context:
        return context_from(self.context_records(session), options)

    def sessions(self) -> list[SessionInfo]:
        try:
            names = sorted(os.listdir(self.directory))
        except OSError as exc:
            raise StoreError(f"{self.directory}: cannot be listed: {exc.strerror or exc}") from None
        out = []
        for name in names:
            if not name.endswith(SUFFIX):
                continue
            path = os.path.join(self.directory, name)
            session = unquote(name[: -len(SUFFIX)])
            try:
                count = len(self._read(path)[0])
                mtime = datetime.fromtimestamp(os.lstat(path).st_mtime, UTC).isoformat()
            except (StoreError, OSError) as exc:
                out.append(SessionInfo(session, 0, 0, None, None, problem=str(exc)))
                continue
            out.append(SessionInfo(session, count, count, None, mtime))
        return out

    def export(self, session: str, path: str) -> int:
        records = self.records(session)
        if not records:
            raise StoreError(f"{self.directory}: no session {session!r}")
        return write_jsonl(path, [encode(r.data) for r in records])

    # -- writing -------------------------------------------------------------------------

    @contextmanager
    def _locked(self, session: str) -> Iterator[tuple[int, str]]:
        path = self._file(session)
        try:
            fd = create_private(path, os.O_RDWR | os.O_APPEND)
        except PermissionError:
            raise ReadOnlyStore(f"{path}: store is read-only (permission denied)") from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot open: {_why(exc)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd, path
        finally:
            os.close(fd)  # releases the lock

    def _locked_scan(self, fd: int, path: str) -> tuple[int, bool]:
        """The session's last seq as this writer holds the file, and whether the file ends in
        a torn line; a batch a crash left unfinished at the end is removed first. The file is
        read only from where this store last left it, when it still starts the same way."""
        info = os.fstat(fd)
        known = self._known.pop(path, None)
        if known is not None and known.ino == info.st_ino and known.size <= info.st_size:
            if known.size == info.st_size and known.mtime_ns == info.st_mtime_ns:
                return known.last_seq, False
            grown = self._grown(fd, path, known, info.st_size)
            if grown is not None:
                return grown
        return self._scan_whole(fd, path, info.st_size)

    def _grown(self, fd: int, path: str, known: _Known, size: int) -> tuple[int, bool] | None:
        """The last seq and torn state from the bytes other writers appended after `known`
        (whole lines and batches of their own); None when they must be read with the rest."""
        tail = os.pread(fd, size - known.size, known.size)
        if tail.startswith(b"\n") or not tail.strip():
            return None  # it ends a line this store did not see torn, or is blank
        try:
            scan = self._scan(path, tail)
        except StoreError:
            return None
        if scan.unfinished_at is not None:
            return None  # the whole-file path removes it, with the same rules
        return known.last_seq + len(scan.records), not tail.endswith(b"\n")

    def _scan_whole(self, fd: int, path: str, size: int) -> tuple[int, bool]:
        raw = os.pread(fd, size, 0) if size else b""
        scan = self._scan(path, raw)
        if scan.unfinished_at is not None:
            try:
                os.ftruncate(fd, scan.unfinished_at)
                os.fsync(fd)
            except OSError as exc:
                raise StoreError(f"{path}: cannot remove an unfinished batch: "
                                 f"{exc.strerror or exc}") from None
            raw = raw[: scan.unfinished_at]
        return len(scan.records), bool(raw) and not raw.endswith(b"\n")

    def _write(self, fd: int, path: str, torn: bool, rows: list[bytes]) -> None:
        prefix = b"\n" if torn else b""  # end a torn line, whose bytes stay as they are
        body = b"".join(_CONTINUED + row + b"\n" for row in rows[:-1]) + rows[-1] + b"\n"
        try:
            append_whole(fd, prefix + body)
        except OSError as exc:
            raise StoreError(f"{path}: append failed: {exc.strerror or exc}; nothing was "
                             "written") from None

    def append(self, session: str, record: dict[str, Any]) -> int:
        return self.append_many(session, [record])[0]

    def append_many(self, session: str, records: list[dict[str, Any]]) -> list[int]:
        if not records:
            return []
        rows = [encode(r) for r in records]
        with self._locked(session) as (fd, path):
            last, torn = self._locked_scan(fd, path)
            self._write(fd, path, torn, rows)
            self._remember(fd, path, last + len(rows))
        return list(range(last + 1, last + 1 + len(rows)))

    def _remember(self, fd: int, path: str, last_seq: int) -> None:
        info = os.fstat(fd)
        self._known[path] = _Known(info.st_ino, info.st_size, info.st_mtime_ns, last_seq)

    def append_checkpoint(self, session: str, checkpoint: dict[str, Any], *,
                          expected_last_seq: int) -> int:
        require_checkpoint(checkpoint)
        row = encode(checkpoint)
        with self._locked(session) as (fd, path):
            last, torn = self._locked_scan(fd, path)
            if last != expected_last_seq:
                raise SessionChanged(
                    f"session {session!r} changed while the checkpoint was made: its last seq "
                    f"is {last}, the checkpoint was made from {expected_last_seq}; make it "
                    "again from the current records")
            self._write(fd, path, torn, [row])
            self._remember(fd, path, last + 1)
        return last + 1

    def import_records(self, session: str, records: list[Record]) -> list[int]:
        return self.append_many(session, [r.data for r in records])

    def close(self) -> None:
        """Nothing stays open between calls."""
