"""Gemini CLI sessions written back repaired: a call with no response leaves its message's
`toolCalls` (a response sits in its call, never an item of its own); a message left with
nothing to say goes."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sessionctx.writeback.documents import DocumentFormat, Item, Path, cut_members, has_id
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


def _with_id(item: dict[str, Any], call_id: str) -> list[tuple[int, dict[str, Any]]]:
    calls = item.get("toolCalls")
    return [(k, c) for k, c in enumerate(calls) if isinstance(c, dict) and c.get(
        "id") == call_id] if isinstance(calls, list) else []


def _call_ids(item: dict[str, Any], call_id: str, nth: int) -> list[Path]:
    held = _with_id(item, call_id)
    return [["toolCalls", held[nth][0], "id"]] if nth < len(held) else []


def _result_ids(item: dict[str, Any], call_id: str, nth: int) -> list[Path]:
    """The ids of the responses the `nth` answered call with `call_id` holds (a response
    stored without an id answers its call all the same, and keeps having none)."""
    answered = [(k, c) for k, c in _with_id(item, call_id)
                if isinstance(c.get("result"), list) and c["result"]]
    if nth >= len(answered):
        return []
    k, call = answered[nth]
    return [["toolCalls", k, "result", j, "functionResponse", "id"]
            for j, part in enumerate(call["result"]) if isinstance(part, dict)
            and isinstance(fr := part.get("functionResponse"), dict) and fr.get("id") == call_id]


DOCUMENT = DocumentFormat(_cut, _left, _note, results_in_calls=True, call_ids=_call_ids,
                          result_ids=_result_ids)


def plan_document(raw: bytes, document: Any, wanted: Wanted, note_unpaired: bool
                  ) -> tuple[bytes, list[Fix]]:
    return plan_items(raw, document, DOCUMENT, wanted, note_unpaired)
