"""The factual note after a message that lost its unanswered calls, in the agent's own shape.

The note says the call was interrupted and its outcome is unknown; it is a user message, never
a tool result, so nothing pretends the call ran. In a tree-shaped session the note hangs from
the message it follows and that message's children hang from the note.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sessionctx.changes import Change, ChangeKind
from sessionctx.context import interrupted_note
from sessionctx.writeback import spans
from sessionctx.writeback.edits import Fix, Lines
from sessionctx.writeback.links import LinkKeys, Links, ids_of

# (the line the note follows, its parent id or None, the note's text) -> (note, its own id)
Builder = Callable[[dict[str, Any], "str | None", str], "tuple[dict[str, Any], str | None]"]

_CLAUDE_CARRIED = ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch")


def claude_code_note(anchor: dict[str, Any], parent: str | None, text: str
                     ) -> tuple[dict[str, Any], str | None]:
    own = str(uuid.uuid4())
    note: dict[str, Any] = {"parentUuid": parent}
    note.update({k: anchor[k] for k in _CLAUDE_CARRIED if k in anchor})
    note.update({"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": text}]}, "uuid": own,
        "timestamp": anchor.get("timestamp", _now())})
    return note, own


def pi_note(anchor: dict[str, Any], parent: str | None, text: str
            ) -> tuple[dict[str, Any], str | None]:
    inner = anchor.get("message") if anchor.get("type") == "message" else anchor
    stamp = inner.get("timestamp") if isinstance(inner, dict) else None
    message = {"role": "user", "content": [{"type": "text", "text": text}],
               "timestamp": stamp if isinstance(stamp, int) and not isinstance(stamp, bool)
               else int(datetime.now(UTC).timestamp() * 1000)}
    if anchor.get("type") != "message":  # sessionctx's own records: a bare message
        return message, None
    if "id" not in anchor:  # a version 1 pi file: entries in file order, no ids
        return {"type": "message", "timestamp": anchor.get("timestamp", _now()),
                "message": message}, None
    own = secrets.token_hex(4)
    return {"type": "message", "id": own, "parentId": parent,
            "timestamp": anchor.get("timestamp", _now()), "message": message}, own


def codex_note(anchor: dict[str, Any], parent: str | None, text: str
               ) -> tuple[dict[str, Any], str | None]:
    item = {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": text}]}
    if "payload" not in anchor:  # the early rollout format: bare items
        return item, None
    return {"timestamp": anchor.get("timestamp", _now()), "type": "response_item",
            "payload": item}, None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(slots=True)
class NoteMaker:
    build: Builder
    anchors: dict[int, list[Change]] = field(default_factory=dict)

    def after(self, line: int, lost: list[Change]) -> None:
        self.anchors.setdefault(line, []).extend(lost)

    def write(self, lines: Lines, keys: LinkKeys | None) -> list[Fix]:
        """Insert a note after each anchor line; in a tree, re-hang the anchor's children."""
        links = Links(lines, lines.removed, keys) if keys is not None else None
        # a child moves only to a note, which is no anchor: the index stays true for the loop
        children = links.children() if links is not None and self.anchors else {}
        fixes = []
        for n, lost in sorted(self.anchors.items()):
            anchor = lines.obj(n) or {}
            own_anchor = ids_of(lines, n, keys)[0] if keys is not None else None
            parent = own_anchor
            if links is not None and n in lines.removed:
                parent = links.surviving(own_anchor)
            text = interrupted_note([(c.detail.get("name"), c.detail.get("tool_call_id"))
                                     for c in lost])
            note, own = self.build(anchor, parent, text)
            if links is not None and own_anchor is not None:
                for child in children.get(own_anchor, ()):
                    if child > n:
                        fixes.append(links.point(child, links.keys.parent, own,
                                                 "now follows the note on the interrupted "
                                                 "call"))
            lines.insert_after(n, spans.encode(note))
            fixes.append(Fix(ChangeKind.INTERRUPTED_NOTE_ADDED, "told the model the call was "
                             "interrupted, outcome unknown", line=n, action="inserted",
                             detail={"tool_call_ids": [c.detail.get("tool_call_id")
                                                       for c in lost]}))
        return fixes
