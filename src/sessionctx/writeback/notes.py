"""The factual note after a message that lost its unanswered calls, in the agent's own shape.

The note says the call was interrupted and its outcome is unknown; it is a user message, never
a tool result, so nothing pretends the call ran. In a tree-shaped session the note hangs from
the message it follows and that message's children hang from the note.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sessionctx.changes import Change, ChangeKind
from sessionctx.pairing import interrupted_note
from sessionctx.writeback import spans
from sessionctx.writeback.edits import Fix, Lines
from sessionctx.writeback.links import LinkKeys, Links, ids_of

# (the line the note follows, its parent id or None, the note's text) -> (note, its own id):
# each line format's `repair.py` `note`
Builder = Callable[[dict[str, Any], "str | None", str], "tuple[dict[str, Any], str | None]"]


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
