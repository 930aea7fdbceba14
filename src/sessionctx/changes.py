"""The change log: every step that alters what reaches the model says what, where and why.

A change names the record it concerns by where that record came from (a file line, an array
index or a store seq), so a person can find it in the stored history.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection
from enum import StrEnum
from typing import Any

import msgspec


class Source(msgspec.Struct, frozen=True, gc=False):
    """Where a record came from: a line of a file, an element of a JSON array, or a store seq.
    Not tracked by the cycle collector (it holds only numbers and text): one is kept for every
    record, so the collector's header would cost a sixth of it.

    `part` is set for a message that lives inside a record (a checkpoint's messages). A record
    an importer gathered from several lines keeps the line of each piece, so what concerns one
    piece names its own line: `block_lines` for the content blocks of a message (the streamed
    lines of one Claude Code message, the items of one Codex turn), `message_lines` for the
    messages of a checkpoint (the entries a pi compaction kept).
    """

    line: int | None = None
    index: int | None = None
    seq: int | None = None
    path: str | None = None
    part: int | None = None
    block_lines: tuple[int, ...] | None = None
    message_lines: tuple[int | None, ...] | None = None

    def key(self) -> tuple[int | None, int | None, int | None]:
        """What names the record: its line, array index or store seq."""
        return (self.line, self.index, self.seq)

    def position(self) -> int:
        """Where the record stands in its session: its store seq, file line or array index
        (0 when it has none)."""
        return self.order()[0]

    def order(self) -> tuple[int, int]:
        """The one order of sources: by position, then a record before the messages inside
        it (its parts, in order). The position is worked out here, not by calling `position`:
        this is the key a request's change log is sorted by, once for every change."""
        at = self.seq
        if at is None:
            at = self.line if self.line is not None else \
                self.index if self.index is not None else 0
        return (at, self.part if self.part is not None else -1)

    def of_block(self, i: int) -> Source:
        """Where content block `i` of this record's message came from."""
        lines = self.block_lines
        if lines is None or i >= len(lines) or lines[i] == self.line:
            return self
        return Source(line=lines[i], path=self.path)

    def without_blocks(self, removed: Collection[int]) -> Source:
        """Where the blocks of this record's message came from once the blocks at `removed`
        are taken out of it (so block `i` of what is left still names its own line)."""
        lines = self.block_lines
        if lines is None or not removed:
            return self
        kept = tuple(line for i, line in enumerate(lines) if i not in removed)
        return msgspec.structs.replace(self, block_lines=kept)

    def of_message(self, i: int) -> Source:
        """Where message `i` of this checkpoint came from: the record it was kept from, or the
        checkpoint itself (as its part `i`)."""
        lines = self.message_lines
        if lines is not None and i < len(lines) and lines[i] not in (None, self.line):
            return Source(line=lines[i], path=self.path)
        return Source(self.line, self.index, self.seq, self.path, i)

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

    def span_label(self) -> str:
        """The label of a whole record: one an importer gathered from several lines names its
        first and last (`lines 13–14`), so the line a change or a pending call in one of its
        pieces names (`line 14`, as check and repair name it) is inside the span."""
        lines = self.block_lines
        if self.line is not None and self.part is None and lines and max(lines) > self.line:
            return f"lines {self.line}–{max(lines)}"
        return self.label()

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


CORE = "core"  # records -> context: context.py, pairing.py, screenshots.py
PROVIDER = "provider"  # context -> one provider's request body: providers/policies/
FILE_REPAIR = "repair"  # `sessionctx repair` rewriting the stored file: writeback/
ADAPTER = "adapter"  # a framework's own objects read for the fold: adapters/
REPAIR = True


class ChangeKind(StrEnum):
    """Every kind of change: its name in the change log, the step that makes it, and whether
    it is a repair. A repair means the stored history could not be sent as it is (something in
    it is broken for every provider); the other kinds are the normal reading of a history, or
    what one provider's rules ask of a sound one; the repair command's own edits to a file are
    repairs by definition. Importers make no changes of their own: what of a source never
    reaches the model is kept as a context row, which the core skips as SKIPPED_CONTEXT_ROW.
    docs/changes.md's table of change kinds lists each of them."""

    step: str
    is_repair: bool

    def __new__(cls, value: str, step: str = CORE, repair: bool = False) -> ChangeKind:
        member = str.__new__(cls, value)
        member._value_ = value
        member.step = step
        member.is_repair = repair
        return member

    SKIPPED_CONTEXT_ROW = "skipped_context_row"
    SKIPPED_EXTENSION_STATE = "skipped_extension_state"
    SKIPPED_SUMMARY = "skipped_summary"
    SKIPPED_METADATA = "skipped_metadata"
    SKIPPED_UNKNOWN = "skipped_unknown_record", CORE, REPAIR
    SKIPPED_INVALID = "skipped_invalid_record", CORE, REPAIR
    OFF_BRANCH = "skipped_off_branch"
    CHECKPOINT_APPLIED = "checkpoint_applied"
    CHECKPOINT_INVALID = "checkpoint_invalid", CORE, REPAIR
    LOCAL_COMMAND_RENDERED = "local_command_rendered"
    LOCAL_COMMAND_EXCLUDED = "local_command_excluded"
    EXTENSION_MESSAGE_CONVERTED = "extension_message_converted"
    EXTENSION_MESSAGE_EMPTY = "extension_message_empty", CORE, REPAIR
    DROPPED_UNPAIRED_CALL = "dropped_unpaired_call", CORE, REPAIR
    DROPPED_ORPHAN_RESULT = "dropped_orphan_result", CORE, REPAIR
    DROPPED_DUPLICATE_RESULT = "dropped_duplicate_result", CORE, REPAIR
    DROPPED_EMPTY_MESSAGE = "dropped_empty_message", CORE, REPAIR
    SCREENSHOT_OMITTED = "screenshot_omitted"
    INTERRUPTED_NOTE_ADDED = "interrupted_note_added"
    RESULT_WRITTEN_BY_AGENT = "result_written_by_agent"

    EMPTY_TEXT_REMOVED = "empty_text_removed", PROVIDER, REPAIR
    UNSUPPORTED_BLOCK = "unsupported_block_dropped", PROVIDER
    EMPTY_TURN_DROPPED = "empty_turn_dropped", PROVIDER, REPAIR
    ARGUMENTS_REPAIRED = "arguments_repaired", PROVIDER, REPAIR
    DUPLICATE_ID_RENAMED = "duplicate_call_id_renamed", PROVIDER, REPAIR
    ID_REWRITTEN = "tool_id_rewritten", PROVIDER
    NAME_REWRITTEN = "tool_name_rewritten", PROVIDER
    RESULTS_MOVED = "tool_results_moved", PROVIDER, REPAIR
    CALL_WITHOUT_RESULT = "dropped_call_without_result", PROVIDER, REPAIR
    RESULT_WITHOUT_CALL = "dropped_result_without_call", PROVIDER, REPAIR
    EMPTY_OUTPUT_MARKED = "empty_tool_output_marked", PROVIDER
    ERROR_AS_TEXT = "tool_error_as_text", PROVIDER
    TOOL_IMAGES_MOVED = "tool_result_images_moved", PROVIDER
    IMAGE_OVER_LIMIT = "image_over_count_limit", PROVIDER
    IMAGE_DOWNSCALED = "image_downscaled", PROVIDER
    IMAGE_OMITTED = "image_omitted", PROVIDER
    THINKING_DROPPED = "thinking_dropped", PROVIDER
    THINKING_AS_TEXT = "thinking_as_text", PROVIDER
    REASONING_ID_REMOVED = "reasoning_item_id_removed", PROVIDER
    CALL_SIGNATURE_ADDED = "call_signature_placeholder_added", PROVIDER
    SIGNATURE_CORRUPT = "corrupt_signature_dropped", PROVIDER, REPAIR
    SYSTEM_CONVERTED = "system_message_converted", PROVIDER
    SYSTEM_HOISTED = "system_message_hoisted", PROVIDER
    TURNS_MERGED = "same_role_turns_merged", PROVIDER
    FIRST_USER_ADDED = "first_user_turn_added", PROVIDER
    CALL_AS_TEXT = "tool_call_as_text", PROVIDER
    RESULT_AS_TEXT = "tool_result_as_text", PROVIDER
    PLACEHOLDER_ADDED = "placeholder_tool_defined", PROVIDER
    DEFINITION_RENAMED = "tool_definition_renamed", PROVIDER
    LOOP_AS_TEXT = "tool_loop_as_text", PROVIDER
    PREFILL_TRIMMED = "prefill_whitespace_trimmed", PROVIDER
    PREFILL_ADDED = "prefill_added", PROVIDER
    CALLS_SPLIT = "tool_calls_split", PROVIDER
    CACHE_REMOVED = "cache_breakpoint_removed", PROVIDER
    DOCUMENT_OMITTED = "document_omitted", PROVIDER
    DOCUMENT_NOTE_ADDED = "document_text_added", PROVIDER

    # what an adapter leaves out of a framework's history before the fold or after it
    DROPPED_INVENTED_RESULT = "dropped_invented_result", ADAPTER, REPAIR
    DROPPED_LONE_REASONING = "dropped_lone_reasoning", ADAPTER, REPAIR

    # the repair command's own edits to the file, besides the core's kinds it mirrors
    REMOVED_UNREADABLE = "removed_unreadable_line", FILE_REPAIR, REPAIR
    REMOVED_INVALID = "removed_invalid_record", FILE_REPAIR, REPAIR
    REMOVED_EMPTY = "removed_empty_entry", FILE_REPAIR, REPAIR
    RELINKED = "relinked_child", FILE_REPAIR, REPAIR


REPAIRS = frozenset(kind for kind in ChangeKind if kind.is_repair)


NO_DETAIL: dict[str, Any] = {}
"""The detail of every change that has none: one empty mapping shared, not one per change
(a file of skipped records makes a change per record). Nothing modifies a change's detail."""


NO_RECORD_ORDER = (-1, -1)  # where a change about no record stands: first


def change_order(change: Change) -> tuple[int, int]:
    """The one order of changes, used wherever changes are merged or sorted: by where their
    record is (`Source.order`); a change about no record first."""
    src = change.record
    return NO_RECORD_ORDER if src is None else src.order()


def in_order(logged: list[Change], assembled: list[Change]) -> list[Change]:
    """The two change lists as one, in `change_order` (`logged` first among equals):
    merged in one pass when each is in order already, as a session read from start to end
    gives them, so no list of sort keys as long as the log is built."""
    if not assembled:
        out = logged
    elif is_ordered(logged) and is_ordered(assembled):
        out = list(heapq.merge(logged, assembled, key=change_order))
        logged.clear()
        return out
    else:
        out = logged
        out.extend(assembled)
    if not is_ordered(out):
        out.sort(key=change_order)
    return out


def is_ordered(changes: list[Change]) -> bool:
    """Whether the changes are in `change_order` already."""
    previous = (-1, -1)
    for change in changes:
        key = change_order(change)
        if key < previous:
            return False
        previous = key
    return True


class Change(msgspec.Struct, frozen=True, gc=False):
    """One change to what reaches the model. A struct, not a dataclass: a repair-heavy history
    makes them by the thousand, and a struct costs half as much to make and is never scanned by
    the cycle collector (a change holds no cycle). Nothing modifies one."""

    kind: ChangeKind
    reason: str
    record: Source | None = None
    message_index: int | None = None
    detail: dict[str, Any] = msgspec.field(default_factory=lambda: NO_DETAIL)

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
