"""Where a checkpoint goes: a JSONL session file or a session in a store, behind one guard.

A file is read in its own format: an agent's file as that agent resumes it, after the agent's
own last compaction. A snapshot is taken when planning starts; appending succeeds only if the
session is exactly as the snapshot saw it, so a record written meanwhile makes the checkpoint
refused, not lost between. Existing bytes are never rewritten.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

from sessionctx.errors import SessionChanged, SessionctxError
from sessionctx.files import append_whole
from sessionctx.records import Problem, Record, has_tree, select_branch

__all__ = ["FileTarget", "SessionChanged", "Snapshot", "Target", "TargetError", "branch_of"]


class TargetError(SessionctxError):
    """The session cannot be read or written."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    records: list[Record]  # the selected branch, in order
    problems: list[Problem]
    base_seq: int  # the last record covered: a store seq, or a file's last record line
    leaf_id: str | None  # for tree-shaped files: the entry a new record hangs from
    guard: Any  # what must be unchanged when appending
    format: str = "native"  # the file's format: native records, or the agent's own
    raw: bytes = b""  # a file's bytes as planned on (an agent's own entry is made from them)


class Target(Protocol):
    @property
    def label(self) -> str: ...

    @property
    def unit(self) -> str:
        """What a position counts: 'line' of a file or 'seq' of a store."""
        ...

    def snapshot(self) -> Snapshot: ...

    def append(self, record: dict[str, Any], snapshot: Snapshot) -> int:
        """Append `record` if the session is as `snapshot` saw it; its line or seq."""
        ...


def branch_of(records: list[Record]) -> tuple[list[Record], str | None]:
    """The selected branch, and for tree-shaped sessions the leaf a new record hangs from."""
    selected, _ = select_branch(records)
    leaf = None
    if has_tree(records):
        leaf = next((r.data["id"] for r in reversed(records)
                     if isinstance(r.data.get("id"), str)), None)
    return selected, leaf


def _last_line(raw: bytes) -> bytes:
    body = raw.rstrip(b"\n")
    return body[body.rfind(b"\n") + 1:]


@dataclass(slots=True)
class FileTarget:
    path: str

    @property
    def label(self) -> str:
        return self.path

    @property
    def unit(self) -> str:
        return "line"

    def snapshot(self) -> Snapshot:
        try:
            with open(self.path, "rb") as f:
                raw = f.read()
        except OSError as exc:
            raise TargetError(f"{self.path}: cannot be read: {exc.strerror or exc}") from exc
        from sessionctx.inputs import read_raw

        result = read_raw(raw, self.path)
        if result.fatal:
            raise TargetError("; ".join(str(p) for p in result.problems))
        if raw.lstrip()[:1] == b"[" or not any(r.source.line for r in result.records):
            if result.format != "native":
                from sessionctx.compaction.own import NoOwnCompaction

                raise TargetError(str(NoOwnCompaction(self.path, result.format)))
            raise TargetError(f"{self.path}: only JSONL session files can take a checkpoint")
        records, leaf = branch_of(result.records)
        base = max((r.source.line or 0) for r in result.records)
        return Snapshot(records, result.problems, base, leaf,
                        (len(raw), raw.count(b"\n"), _last_line(raw)), result.format, raw)

    def append(self, record: dict[str, Any], snapshot: Snapshot) -> int:
        return self.append_lines([record], snapshot)

    def append_lines(self, records: list[dict[str, Any]], snapshot: Snapshot) -> int:
        """Append `records` in one write if the file is as `snapshot` saw it; the first's line."""
        size, lines, last = snapshot.guard
        line = b"".join(msgspec.json.encode(record) + b"\n" for record in records)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        except OSError as exc:
            raise TargetError(f"{self.path}: cannot be written: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            now = os.fstat(fd).st_size
            if now != size:
                raise SessionChanged(f"{self.path} changed since planning ({size} bytes then, "
                                     f"{now} now); checkpoint not written")
            start = max(0, size - len(last) - 2)
            tail = os.pread(fd, size - start, start)
            if _last_line(tail) != last:
                raise SessionChanged(f"{self.path}: last record changed since planning; "
                                     "checkpoint not written")
            prefix = b"" if tail.endswith(b"\n") or size == 0 else b"\n"
            append_whole(fd, prefix + line)
        except OSError as exc:
            raise TargetError(f"{self.path}: cannot be written: {exc.strerror or exc}; nothing "
                              "was written") from exc
        finally:
            os.close(fd)  # releases the lock
        return int(lines) + (2 if prefix else 1)
