"""A stored record: its exact object, its kind, where it came from; what a read gives.

Records keep the exact object that was stored, unknown fields included, so writing one back
gives the same record. `classify` names the kind of every stored object; `validity.py` says why
one cannot be used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from sys import intern
from typing import Any

import msgspec

from sessionctx.changes import Source
from sessionctx.messages import MODEL_ROLES
from sessionctx.validity import (
    checkpoint_problem,
    content_problem,
    json_type,
    local_command_problem,
    message_problem,
)


class RecordKind(StrEnum):
    """What a stored record is to the fold (`context.py`), one of a closed list."""

    MESSAGE = "message"  # a chat message the model saw or wrote
    CONTEXT = "context"  # kept for the record, never sent (an importer's context row)
    LOCAL_COMMAND = "local_command"  # a command the user ran locally (pi's bashExecution)
    EXTENSION_MESSAGE = "extension_message"  # an extension's message, sent as user text
    EXTENSION_STATE = "extension_state"  # an extension's own state, never sent
    SUMMARY = "summary"  # a branch or compaction summary shown to a person
    CHECKPOINT = "checkpoint"  # a compaction: replaces everything before it when valid
    METADATA = "metadata"  # labels, model changes, session headers
    UNKNOWN = "unknown"  # no kind sessionctx knows, reported
    INVALID = "invalid"  # a message or command that cannot be read, with its problem


MESSAGE = RecordKind.MESSAGE
CONTEXT = RecordKind.CONTEXT
LOCAL_COMMAND = RecordKind.LOCAL_COMMAND
EXTENSION_MESSAGE = RecordKind.EXTENSION_MESSAGE
EXTENSION_STATE = RecordKind.EXTENSION_STATE
SUMMARY = RecordKind.SUMMARY
CHECKPOINT = RecordKind.CHECKPOINT
METADATA = RecordKind.METADATA
UNKNOWN = RecordKind.UNKNOWN
INVALID = RecordKind.INVALID

METADATA_TYPES = frozenset({"label", "model_change", "thinking_level_change", "session_info",
                            "session"})
SUMMARY_ROLES = frozenset({"branchSummary", "compactionSummary"})
SUMMARY_TYPES = frozenset({"branch_summary"})


class Record(msgspec.Struct, gc=False):
    """One stored record: the object exactly as stored, its kind, and where it came from.
    Not tracked by the cycle collector: the stored object holds no reference back to its
    record, so no cycle runs through one, and a file of tiny records keeps one per line."""

    data: dict[str, Any]
    kind: RecordKind
    source: Source
    problem: str | None = None  # why an INVALID record or a malformed checkpoint was rejected

    @property
    def view(self) -> dict[str, Any]:
        """The record's own fields: the wrapped message of a pi `message` entry, else the data."""
        return message_view(self.data)


class Problem(msgspec.Struct, frozen=True):
    """Something in the input that could not be read as a record."""

    message: str
    path: str | None = None
    line: int | None = None
    fatal: bool = False  # nothing of the input could be read
    # what `check` calls it: a line not read, or a change kind a stored shape needs
    kind: str = "unreadable"

    def __str__(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "message": self.message,
                "fatal": self.fatal}


MAX_LISTED_PROBLEMS = 1000


def unlisted_note(count: int) -> str:
    """What stands for the `count` problems past the first MAX_LISTED_PROBLEMS."""
    return f"... and {count} more problem(s) like these, not listed"


class Problems(list[Problem]):
    """A read's problems: the first MAX_LISTED_PROBLEMS listed, the others counted in one
    entry after them (fatal ones are always listed), so a file of millions of bad lines takes
    the memory of a thousand problems and every good record in it is still read."""

    def __init__(self) -> None:
        super().__init__()
        self.unlisted = 0
        self._note = -1

    def append(self, problem: Problem) -> None:
        if problem.fatal or len(self) < MAX_LISTED_PROBLEMS:
            super().append(problem)
            return
        self.unlisted += 1
        note = Problem(unlisted_note(self.unlisted), problem.path)
        if self._note < 0:
            self._note = len(self)
            super().append(note)
        else:
            self[self._note] = note


class ReadResult(msgspec.Struct):
    records: list[Record] = msgspec.field(default_factory=list)
    problems: list[Problem] = msgspec.field(default_factory=Problems)
    format: str = "native"  # the format the input was read in (inputs.FORMATS)
    # JSONL read line by line by the core: each line's record as the line holds it, before
    # any importer converted one (a repair edits those objects instead of decoding them again)
    entries: list[Record] | None = None

    @property
    def fatal(self) -> bool:
        return any(p.fatal for p in self.problems)


def message_view(data: Mapping[str, Any]) -> dict[str, Any]:
    inner = data.get("message")
    if data.get("type") == "message" and isinstance(inner, dict):
        return inner
    return data  # type: ignore[return-value]


def classify(data: dict[str, Any]) -> tuple[RecordKind, str | None]:
    """The kind of a stored object, and for a rejected one the reason."""
    view = data
    if data.get("type") == "message":  # message_view, inline: it runs for every record
        inner = data.get("message")
        if isinstance(inner, dict):
            view = inner
    role = view.get("role")
    if not isinstance(role, str):
        if view is not data:
            return INVALID, "message entry without a string 'role' in its message"
        if role is not None:
            return INVALID, f"field 'role' must be a string, got {json_type(role)}"
    elif role in MODEL_ROLES and "kind" not in view and "type" not in view:
        return MESSAGE, message_problem(view)  # the common case, decided in three lookups
    if view.get("kind") == "context":
        return CONTEXT, None
    rtype = view.get("type")
    if not isinstance(rtype, str):
        rtype = None
    if role == "bashExecution":
        return LOCAL_COMMAND, local_command_problem(view)
    if role == "custom" or rtype == "custom_message":
        return EXTENSION_MESSAGE, content_problem(view.get("content"), optional=True)
    if rtype == "custom":
        return EXTENSION_STATE, None
    if role in SUMMARY_ROLES or rtype in SUMMARY_TYPES:
        return SUMMARY, None
    if rtype == "compaction":
        return CHECKPOINT, checkpoint_problem(view)
    if rtype in METADATA_TYPES:
        return METADATA, None
    if role in MODEL_ROLES:
        return MESSAGE, message_problem(view)
    return UNKNOWN, None


def make_record(data: dict[str, Any], source: Source) -> Record:
    kind, problem = classify(data)
    if problem is not None:
        problem = intern(problem)  # the same few texts repeat across a file's records
        if kind != CHECKPOINT:
            kind = INVALID
    return Record(data, kind, source, problem)


def records_from_objects(objects: Iterable[dict[str, Any]], *, first_seq: int | None = None
                         ) -> list[Record]:
    """Records from in-memory objects (a store's rows, a test's list)."""
    out = []
    for i, data in enumerate(objects):
        source = Source(seq=first_seq + i) if first_seq is not None else Source(index=i)
        out.append(make_record(data, source))
    return out


SourceKey = tuple[int | None, int | None, int | None]


def owner_keys(records: Iterable[Record]) -> dict[SourceKey, SourceKey]:
    """Every place a change or a call can name -> the key of the record that holds it: a
    record's own key, and each line of a record gathered from several lines."""
    out: dict[SourceKey, SourceKey] = {}
    for record in records:
        key = record.source.key()
        out.setdefault(key, key)
        for line in record.source.block_lines or ():
            out.setdefault((line, None, None), key)
    return out
