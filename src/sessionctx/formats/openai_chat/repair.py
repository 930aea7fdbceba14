"""OpenAI chat lists written back repaired: a call with no result leaves `tool_calls`, a
`tool` message that answers nothing leaves the list, so does a message left with nothing."""

from __future__ import annotations

from typing import Any

from sessionctx.writeback.documents import DocumentFormat, Item, cut_members, has_id
from sessionctx.writeback.documents import plan as plan_items
from sessionctx.writeback.edits import Fix
from sessionctx.writeback.wanted import Wanted


def _cut(item: dict[str, Any], edits: Item, call_id: str | None,
         count: int) -> list[dict[str, Any]]:
    return cut_members(item, edits, "tool_calls", count, has_id(call_id),
                       named=(call_id, "id"))


def _left(item: dict[str, Any], edits: Item) -> bool:
    kept = len(item.get("tool_calls") or []) - len(edits.cut.get("tool_calls", ()))
    content = item.get("content")
    return kept > 0 or (bool(content.strip()) if isinstance(content, str) else bool(content))


def _note(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


DOCUMENT = DocumentFormat(_cut, _left, _note)


def plan_document(raw: bytes, document: Any, wanted: Wanted, note_unpaired: bool
                  ) -> tuple[bytes, list[Fix]]:
    return plan_items(raw, document, DOCUMENT, wanted, note_unpaired)
