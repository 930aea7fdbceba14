"""The session store interface every backend implements, its errors, and the helpers the
backends share (`open_store` is in `store/open.py`, which alone imports the backends).

A store keeps each record as its exact JSON (unknown fields survive), numbers the records of a
session 1, 2, 3... without gaps, and loads a session's context from its latest valid checkpoint
on, so a long history costs no more to load than a short one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

from sessionctx.changes import Source
from sessionctx.context import BuildOptions, Context, build_context
from sessionctx.errors import SessionChanged, StoreError
from sessionctx.files import write_atomically
from sessionctx.records import CHECKPOINT, Record, classify, make_record

__all__ = ["NotASessionStore", "ReadOnlyStore", "SchemaTooNew", "SessionChanged", "SessionInfo",
           "Store", "StoreError", "StoreLocked"]

_encoder = msgspec.json.Encoder()


class NotASessionStore(StoreError):
    """The file or database exists but is not a sessionctx store (or is damaged)."""


class SchemaTooNew(StoreError):
    """The store was written by a newer sessionctx."""


class StoreLocked(StoreError):
    """Another process held the store's write lock past the timeout."""


class ReadOnlyStore(StoreError):
    """The store cannot be written (file permissions or a read-only database)."""


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    records: int
    last_seq: int
    first_append: str | None
    last_append: str | None
    problem: str | None = None  # why the session could not be read (its counts are then 0)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "records": self.records,
                               "last_seq": self.last_seq, "first_append": self.first_append,
                               "last_append": self.last_append}
        if self.problem is not None:
            out["problem"] = self.problem
        return out


class Store(Protocol):
    def append(self, session: str, record: dict[str, Any]) -> int: ...
    def append_many(self, session: str, records: list[dict[str, Any]]) -> list[int]: ...
    def records(self, session: str, after: int = 0) -> list[Record]: ...
    def last_seq(self, session: str) -> int: ...
    def context_records(self, session: str) -> list[Record]: ...
    def context(self, session: str, options: BuildOptions | None = None) -> Context: ...
    def sessions(self) -> list[SessionInfo]: ...
    def append_checkpoint(self, session: str, checkpoint: dict[str, Any], *,
                          expected_last_seq: int) -> int: ...
    def import_records(self, session: str, records: list[Record]) -> list[int]: ...
    def export(self, session: str, path: str) -> int: ...
    def close(self) -> None: ...


def encode(record: dict[str, Any]) -> bytes:
    """The exact JSON a record is stored as."""
    if not isinstance(record, dict):
        raise StoreError(f"a record must be a JSON object, got {type(record).__name__}")
    try:
        return _encoder.encode(record)
    except (TypeError, msgspec.EncodeError) as exc:
        raise StoreError(f"record cannot be stored as JSON: {exc}") from None


def kind_of(record: dict[str, Any]) -> tuple[str, bool]:
    """The record's kind and whether it is a valid checkpoint (the ones context loading uses)."""
    kind, problem = classify(record)
    return kind, kind == CHECKPOINT and problem is None


def check_session(session: str) -> str:
    if not isinstance(session, str) or not session or "\x00" in session:
        raise StoreError("a session id must be a non-empty string")
    return session


def stored_record(data: dict[str, Any], seq: int) -> Record:
    return make_record(data, Source(seq=seq))


def context_from(records: list[Record], options: BuildOptions | None) -> Context:
    return build_context(records, options)


def require_checkpoint(checkpoint: dict[str, Any]) -> None:
    kind, valid = kind_of(checkpoint)
    if not valid:
        from sessionctx.records import checkpoint_problem, message_view
        problem = (checkpoint_problem(message_view(checkpoint)) if kind == CHECKPOINT
                   else "not a checkpoint (type 'compaction')")
        raise StoreError(f"refusing to append an invalid checkpoint: {problem}")


def write_jsonl(path: str, rows: list[bytes]) -> int:
    """Write records to a JSONL file whole or not at all (owner-only unless it existed)."""
    try:
        write_atomically(path, [b"".join(row + b"\n" for row in rows)])
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}; nothing was "
                         "written") from None
    return len(rows)
