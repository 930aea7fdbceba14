"""The built context: what it holds (`Context`, `PendingCall`) and how the fold's slots are
assembled into it (`Assembly`): unanswered calls removed and reported as pending, old
screenshots replaced by notes, the interrupted notes added. The fold itself is context.py.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sessionctx.changes import Change, ChangeKind, Source
from sessionctx.messages import Message, has_substance, is_result, user_text, without_calls
from sessionctx.pairing import OpenCall, interrupted_note
from sessionctx.screenshots import without_images


class PendingCall(msgspec.Struct, frozen=True):
    """A call with no result: the runtime must check the real world before retrying it."""

    id: str | None
    name: str | None
    arguments: Any
    record: Source
    written_by: str | None = None  # the agent that wrote the call's result itself

    def to_json(self) -> dict[str, Any]:
        out = {"id": self.id, "name": self.name, "arguments": self.arguments,
               "record": self.record.to_json()}
        if self.written_by is not None:
            out["result_written_by"] = self.written_by
        return out


class Context(msgspec.Struct):
    """The messages of the next request, where each came from, and what was changed."""

    messages: list[Message]
    sources: list[Source]
    changes: list[Change]
    pending_calls: list[PendingCall]

    @property
    def repairs(self) -> list[Change]:
        return [c for c in self.changes if c.is_repair]

    def to_json(self) -> dict[str, Any]:
        return {"messages": self.messages,
                "changes": [c.to_json() for c in self.changes],
                "pending_calls": [p.to_json() for p in self.pending_calls]}


class Assembly:
    """The context being assembled from the slots, in order: unchanged runs of slots are
    copied as they are, and only the few slots that change are looked at one by one."""

    def __init__(self, slots: list[Message], slot_sources: list[Source],
                 note_unpaired: bool) -> None:
        self.slots, self.slot_sources, self.note_unpaired = slots, slot_sources, note_unpaired
        self.messages: list[Message] = []
        self.sources: list[Source] = []
        self.index_of: list[int | None] = []  # slot -> its message's index, None if dropped
        self.changes: list[Change] = []
        self.pending: list[PendingCall] = []
        self.notes: list[tuple[Source, list[OpenCall]]] = []

    def take_unchanged(self, start: int, stop: int) -> None:
        if self.notes:  # pending notes go before the first message that is not a result
            first = next((i for i in range(start, stop) if not is_result(self.slots[i])), stop)
            self._copy(start, first)
            if first < stop:
                self.flush_notes()
            start = first
        self._copy(start, stop)

    def _copy(self, start: int, stop: int) -> None:
        at = len(self.messages)
        self.index_of.extend(range(at, at + stop - start))
        self.messages.extend(self.slots[start:stop])
        self.sources.extend(self.slot_sources[start:stop])

    def take_changed(self, slot: int, lost: list[OpenCall], images_omitted: bool) -> None:
        message, source = self.slots[slot], self.slot_sources[slot]
        messages, changes = self.messages, self.changes
        if self.notes and not is_result(message):
            self.flush_notes()
        if lost:
            places = {c.call.where for c in lost}
            message = without_calls(message, places)
            kept_source = source.without_blocks({j for at, j in places if at == "content"})
        else:
            kept_source = source
        if images_omitted:
            message, count = without_images(message)
            changes.append(Change(
                ChangeKind.SCREENSHOT_OMITTED,
                f"{count} screenshot(s) of an earlier browser result replaced by a note",
                source, len(messages), {"images": count}))
        kept = message.get("role") != "assistant" or has_substance(message)
        for c in lost:
            held = source.of_block(c.call.where[1]) if c.call.where[0] == "content" else source
            self.pending.append(PendingCall(c.call.id, c.call.name, c.call.arguments, held))
            why = "it has no id" if c.call.id is None else "no result follows it"
            changes.append(Change(
                ChangeKind.DROPPED_UNPAIRED_CALL,
                f"call {c.call.name or '?'} ({c.call.id or 'no id'}) removed: {why}",
                held, len(messages) if kept else None,
                {"tool_call_id": c.call.id, "name": c.call.name}))
        if not kept:
            why = ("nothing is left after removing its unpaired calls" if lost
                   else "it has no content")
            changes.append(Change(ChangeKind.DROPPED_EMPTY_MESSAGE,
                                  f"{message.get('role')} message dropped: {why}", source))
            self.index_of.append(None)
        else:
            self.index_of.append(len(messages))
            messages.append(message)
            self.sources.append(kept_source)
        if lost and self.note_unpaired:
            self.notes.append((source, lost))

    def flush_notes(self) -> None:
        for src, lost in self.notes:
            note = interrupted_note([(c.call.name, c.call.id) for c in lost])
            self.messages.append(user_text(note))
            self.sources.append(src)
            self.changes.append(Change(ChangeKind.INTERRUPTED_NOTE_ADDED,
                                       "told the model the call was interrupted, outcome "
                                       "unknown", src, len(self.messages) - 1,
                                       {"tool_call_ids": [c.call.id for c in lost]}))
        self.notes.clear()
