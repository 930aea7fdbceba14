"""The change log: every step that alters what reaches the model says what, where and why.

A change names the record it concerns by where that record came from (a file line, an array
index or a store seq), so a person can find it in the stored history.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec


@dataclass(slots=True)
class Source:
    """Where a record came from: a line of a file, an element of a JSON array, or a store seq.

    `part` is set for a message that lives inside a record (a checkpoint's messages).
    """

    line: int | None = None
    index: int | None = None
    seq: int | None = None
    path: str | None = None
    part: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.seq is not None:
            out["seq"] = self.seq
        if self.line is not None:
            out["line"] = self.line
        if self.index is not None:
            out["index"] = self.index
        if self.part is not None:
            out["part"] = self.part
        return out

    def label(self) -> str:
        if self.seq is not None:
            where = f"seq {self.seq}"
        elif self.line is not None:
            where = f"line {self.line}"
        elif self.index is not None:
            where = f"item {self.index}"
        else:
            where = "record"
        return where if self.part is None else f"{where} message {self.part}"


# Kinds of change. Repairs are changes that mean the history could not be sent as stored;
# the others are the normal reading of a history (metadata never reaches the model).
SKIPPED_CONTEXT_ROW = "skipped_context_row"
SKIPPED_EXTENSION_STATE = "skipped_extension_state"
SKIPPED_SUMMARY = "skipped_summary"
SKIPPED_METADATA = "skipped_metadata"
SKIPPED_UNKNOWN = "skipped_unknown_record"
SKIPPED_INVALID = "skipped_invalid_record"
OFF_BRANCH = "skipped_off_branch"
CHECKPOINT_APPLIED = "checkpoint_applied"
CHECKPOINT_INVALID = "checkpoint_invalid"
LOCAL_COMMAND_RENDERED = "local_command_rendered"
LOCAL_COMMAND_EXCLUDED = "local_command_excluded"
EXTENSION_MESSAGE_CONVERTED = "extension_message_converted"
EXTENSION_MESSAGE_EMPTY = "extension_message_empty"
DROPPED_UNPAIRED_CALL = "dropped_unpaired_call"
DROPPED_ORPHAN_RESULT = "dropped_orphan_result"
DROPPED_DUPLICATE_RESULT = "dropped_duplicate_result"
DROPPED_EMPTY_MESSAGE = "dropped_empty_message"
SCREENSHOT_OMITTED = "screenshot_omitted"
INTERRUPTED_NOTE_ADDED = "interrupted_note_added"
DROPPED_INVENTED_RESULT = "dropped_invented_result"  # a result a framework made up, not a tool
DROPPED_LONE_REASONING = "dropped_lone_reasoning"  # reasoning whose following item is gone

REPAIRS = frozenset({
    SKIPPED_UNKNOWN,
    SKIPPED_INVALID,
    CHECKPOINT_INVALID,
    EXTENSION_MESSAGE_EMPTY,
    DROPPED_UNPAIRED_CALL,
    DROPPED_ORPHAN_RESULT,
    DROPPED_DUPLICATE_RESULT,
    DROPPED_EMPTY_MESSAGE,
    DROPPED_INVENTED_RESULT,
    DROPPED_LONE_REASONING,
})


class Change(msgspec.Struct, gc=False):
    """One change to what reaches the model. A struct, not a dataclass: a repair-heavy history
    makes them by the thousand, and a struct costs half as much to make and is never scanned by
    the cycle collector (a change holds no cycle). Nothing modifies one."""

    kind: str
    reason: str
    record: Source | None = None
    message_index: int | None = None
    detail: dict[str, Any] = msgspec.field(default_factory=dict)

    @property
    def is_repair(self) -> bool:
        return self.kind in REPAIRS

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "reason": self.reason}
        out["record"] = self.record.to_json() if self.record is not None else None
        out["message_index"] = self.message_index
        if self.detail:
            out["detail"] = self.detail
        return out
