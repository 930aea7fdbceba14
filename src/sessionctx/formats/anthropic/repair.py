"""Anthropic Messages lists written back repaired. A message holds calls and results as
content blocks: a `tool_use` or `tool_result` block leaves its `content`, and the message goes
only when nothing else is left in it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sessionctx.messages import has_substance, user_text
from sessionctx.writeback.documents import DocumentFormat, Item, cut_members, has_id
from sessionctx.writeback.documents import plan as plan_items
from sessionctx.writeback.edits import Fix
from sessionctx.writeback.wanted import Wanted


def _block(btype: str, call_id: str | None, key: str) -> Callable[[dict[str, Any]], bool]:
    return lambda b: b.get("type") == btype and has_id(call_id, key)(b)


def _cut(item: dict[str, Any], edits: Item, call_id: str | None,
         count: int) -> list[dict[str, Any]]:
    return cut_members(item, edits, "content", count, _block("tool_use", call_id, "id"),
                       keep_key=True, named=(call_id, "id"))


def _cut_result(item: dict[str, Any], edits: Item, call_id: str | None,
                count: int) -> list[dict[str, Any]]:
    return cut_members(item, edits, "content", count,
                       _block("tool_result", call_id, "tool_use_id"), keep_key=True,
                       named=(call_id, "tool_use_id"))


def _cut_empty(item: dict[str, Any], edits: Item) -> None:
    """The blocks of a message that gave nothing to send (blank text), its results kept."""
    content = item.get("content")
    if not isinstance(content, list):
        return
    cut_members(item, edits, "content", len(content), lambda b: b.get("type") != "tool_result",
                keep_key=True)
    # a block that is no object says nothing either
    edits.cut.setdefault("content", set()).update(
        i for i, b in enumerate(content) if not isinstance(b, dict))


def _left(item: dict[str, Any], edits: Item) -> bool:
    content = item.get("content")
    if not isinstance(content, list):
        return isinstance(content, str) and bool(content.strip())
    gone = edits.cut.get("content", set())
    return has_substance({"content": [b for i, b in enumerate(content) if i not in gone]})


DOCUMENT = DocumentFormat(_cut, _left, user_text, _cut_result, _cut_empty)


def plan_document(raw: bytes, document: Any, wanted: Wanted, note_unpaired: bool
                  ) -> tuple[bytes, list[Fix]]:
    return plan_items(raw, document, DOCUMENT, wanted, note_unpaired)
