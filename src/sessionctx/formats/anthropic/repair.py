"""Anthropic Messages lists written back repaired. A message holds calls and results as
content blocks: a `tool_use` or `tool_result` block leaves its `content`, and the message goes
only when nothing else is left in it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.formats.anthropic.order import results_after_other_blocks, results_first
from sessionctx.formats.detect import decode_document
from sessionctx.messages import has_substance, user_text
from sessionctx.writeback import spans
from sessionctx.writeback.documents import DocumentFormat, Item, cut_members, has_id, items_path
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
    """Results first in every user message that holds them after another block (as `build`
    sends them), then the repair of calls and results, on the reordered document."""
    reordered, fixes = _results_first(raw, document)
    if fixes:
        document = decode_document(reordered)
    after, more = plan_items(reordered, document, DOCUMENT, wanted, note_unpaired)
    return after, sorted(fixes + more, key=lambda f: (f.index or 0, f.action == "inserted"))


def _results_first(raw: bytes, document: Any) -> tuple[bytes, list[Fix]]:
    where = items_path(document)
    if where is None:
        return raw, []
    items = document
    for step in where:
        items = items[step]
    fixes = []
    for i, item in enumerate(items):
        if isinstance(item, dict) and item.get("role") == "user" and \
                results_after_other_blocks(item):
            raw = spans.reordered(raw, [*where, i, "content"], results_first(item["content"]))
            fixes.append(Fix(ChangeKind.RESULTS_MOVED, "tool results put before the other "
                             "blocks of their user message, as the API takes them", index=i))
    return raw, fixes
