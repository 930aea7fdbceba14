"""The JSONL store: one `<session>.jsonl` file per session in a directory, for exchange.

Writers take an exclusive `flock` on the file, append whole lines and fsync before returning.
Existing bytes are never rewritten: a torn last line left by a crash stays in the file and is
reported with its line number, and the next append starts on a new line so it is never glued
to it. A record's seq is its position among the readable records of the file.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, unquote

from sessionctx.changes import Source
from sessionctx.context import BuildOptions, Context
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


class JsonlStore:
    """Sessions as JSONL files in one directory."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        if os.path.exists(directory) and not os.path.isdir(directory):
            raise NotASessionStore(f"{directory}: is a file, not a directory of sessions")
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{directory}: cannot create: {exc.strerror or exc}") from None

    def _file(self, session: str) -> str:
        return os.path.join(self.directory, quote(check_session(session), safe="") + SUFFIX)

    # -- reading -------------------------------------------------------------------------

    def _read(self, path: str) -> tuple[list[Record], list[Problem]]:
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return [], []
        except OSError as exc:
            raise StoreError(f"{path}: cannot be read: {exc.strerror or exc}") from None
        if not raw.strip():
            return [], []
        result = read_bytes(raw, path)
        if result.fatal and not result.records:
            raise NotASessionStore("; ".join(str(p) for p in result.problems))
        records = [Record(r.data, r.kind, Source(seq=i, path=path), r.problem)
                   for i, r in enumerate(result.records, 1)]
        return records, result.problems

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
        out = []
        for name in sorted(os.listdir(self.directory)):
            if not name.endswith(SUFFIX):
                continue
            path = os.path.join(self.directory, name)
            count = len(self._read(path)[0])
            mtime = datetime.fromtimestamp(os.path.getmtime(path), UTC).isoformat()
            out.append(SessionInfo(unquote(name[: -len(SUFFIX)]), count, count, None, mtime))
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
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        except PermissionError:
            raise ReadOnlyStore(f"{path}: store is read-only (permission denied)") from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot open: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd, path
        finally:
            os.close(fd)  # releases the lock

    def _write(self, fd: int, path: str, rows: list[bytes]) -> None:
        size = os.fstat(fd).st_size
        prefix = b""
        if size:
            os.lseek(fd, size - 1, os.SEEK_SET)
            if os.read(fd, 1) != b"\n":
                prefix = b"\n"  # end the torn line; its bytes stay as they are
        try:
            os.write(fd, prefix + b"".join(row + b"\n" for row in rows))
            os.fsync(fd)
        except OSError as exc:
            raise StoreError(f"{path}: append failed: {exc.strerror or exc}") from None

    def append(self, session: str, record: dict[str, Any]) -> int:
        return self.append_many(session, [record])[0]

    def append_many(self, session: str, records: list[dict[str, Any]]) -> list[int]:
        if not records:
            return []
        rows = [encode(r) for r in records]
        with self._locked(session) as (fd, path):
            last = len(self._read(path)[0])
            self._write(fd, path, rows)
        return list(range(last + 1, last + 1 + len(rows)))

    def append_checkpoint(self, session: str, checkpoint: dict[str, Any], *,
                          expected_last_seq: int) -> int:
        require_checkpoint(checkpoint)
        row = encode(checkpoint)
        with self._locked(session) as (fd, path):
            last = len(self._read(path)[0])
            if last != expected_last_seq:
                raise SessionChanged(
                    f"session {session!r} changed while the checkpoint was made: its last seq "
                    f"is {last}, the checkpoint was made from {expected_last_seq}; make it "
                    "again from the current records")
            self._write(fd, path, [row])
        return last + 1

    def import_records(self, session: str, records: list[Record]) -> list[int]:
        return self.append_many(session, [r.data for r in records])

    def close(self) -> None:
        """Nothing stays open between calls."""
