"""Which rows of a Gemini CLI JSONL chat make its conversation, applied in order as Gemini
CLI's own loader (`loadConversationRecord`) applies them.

Rows, each one JSON object:
- the header `{sessionId, projectHash, startTime, lastUpdated, kind, ...}` (a file migrated
  from the JSON format may carry `messages` in it);
- a message `{id, timestamp, type, content, ...}`: a row with an id seen before replaces that
  message where it stood (a gemini message is written again as its tool calls get results);
- `{"$set": {...}}`: metadata, or with `messages` the whole conversation again (what was
  built before is cleared);
- `{"$rewindTo": id}`: that message and every one after it go (all of them when the id is
  unknown).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]


def is_header(obj: Obj) -> bool:
    return isinstance(obj.get("sessionId"), str) and isinstance(obj.get("projectHash"), str)


def is_update(obj: Obj) -> bool:
    return isinstance(obj.get("$rewindTo"), str) or isinstance(obj.get("$set"), dict)


def is_message(obj: Obj) -> bool:
    return isinstance(obj.get("id"), str)


@dataclass(frozen=True, slots=True)
class Place:
    """Where a message of the conversation is stored: its row, and its index in that row's
    `messages` (a `$set` or a header holding the whole conversation), else None."""

    line: int
    index: int | None = None


@dataclass(slots=True)
class Conversation:
    """The messages as Gemini CLI loads them (by id, in order) and why each other row is
    not one of them."""

    messages: dict[str, tuple[Place, Obj]] = field(default_factory=dict)
    dropped: dict[Place, str] = field(default_factory=dict)
    metadata: Obj = field(default_factory=dict)

    def add(self, place: Place, message: Obj) -> None:
        earlier = self.messages.get(message["id"])
        if earlier is not None:
            self.dropped[earlier[0]] = "replaced by a later row of the same message"
        self.messages[message["id"]] = (place, message)  # keeps its first place

    def clear(self, why: str, start: str | None = None) -> None:
        ids = list(self.messages)
        cut = ids.index(start) if start in self.messages else 0
        for mid in ids[cut:]:
            self.dropped[self.messages.pop(mid)[0]] = why


def conversation(rows: list[tuple[int, Obj]]) -> tuple[Conversation, dict[int, str]]:
    """The conversation of the rows (line, object), and the note of each row that holds no
    message of it (header, metadata, rewinds, rows of no known kind)."""
    conv = Conversation()
    notes: dict[int, str] = {}
    for line, obj in rows:
        if isinstance(obj.get("$rewindTo"), str):
            conv.clear(f"rewound by Gemini CLI (to message {obj['$rewindTo']})",
                       obj["$rewindTo"])
            notes[line] = "a rewind: the message named and every one after it are not sent"
        elif is_message(obj):
            conv.add(Place(line), obj)
        elif isinstance(obj.get("$set"), dict):
            update = obj["$set"]
            if isinstance(update.get("messages"), list):
                conv.clear("replaced by the whole conversation a later $set row wrote")
                _add_all(conv, line, update["messages"])
            conv.metadata.update({k: v for k, v in update.items() if k != "messages"})
            notes[line] = "a metadata update" + (
                " holding the whole conversation" if "messages" in update else "")
        elif is_header(obj):
            conv.metadata.update({k: v for k, v in obj.items() if k != "messages"})
            if isinstance(obj.get("messages"), list):
                _add_all(conv, line, obj["messages"])
            notes[line] = "the session header"
        else:
            notes[line] = "a row of no kind Gemini CLI loads: not sent"
    return conv, notes


def _add_all(conv: Conversation, line: int, messages: list[Any]) -> None:
    for i, msg in enumerate(messages):
        if isinstance(msg, dict) and is_message(msg):
            conv.add(Place(line, i), msg)
