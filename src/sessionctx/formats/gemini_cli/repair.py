"""Gemini CLI sessions written back repaired: a call with no response leaves its message's
`toolCalls` (a response sits in its call, never an item of its own); a message left with
nothing to say goes."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sessionctx.writeback.documents import DocumentFormat, Item, cut_members, has_id
from sessionctx.writeback.documents import plan as plan_items
from sessionctx.writeback.edits import Fix
from sessionctx.writeback.wanted import Wanted


def _cut(item: dict[str, Any], edits: Item, call_id: str | None,
         count: int) -> list[dict[str, Any]]:
    def unanswered(call: dict[str, Any]) -> bool:
        has_response = isinstance(call.get("result"), list) and bool(call["result"])
        return has_id(call_id)(call) and not has_response

    return cut_members(item, edits, "toolCalls", count, unanswered, named=(call_id, "id"))


def _left(item: dict[str, Any], edits: Item) -> bool:
    kept_calls = len(item.get("toolCalls") or []) - len(edits.cut.get("toolCalls", ()))
    content = item.get("content")
    return kept_calls > 0 or bool(item.get("thoughts")) or (
        bool(content) if not isinstance(content, str) else bool(content.strip()))


def _note(text: str) -> dict[str, Any]:
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {"id": str(uuid.uuid4()), "timestamp": stamp, "type": "user",
            "content": [{"text": text}]}


DOCUMENT = DocumentFormat(_cut, _left, _note, results_in_calls=True)


def plan_document(raw: bytes, document: Any, wanted: Wanted, note_unpaired: bool
                  ) -> tuple[bytes, list[Fix]]:
    return plan_items(raw, document, DOCUMENT, wanted, note_unpaired)
