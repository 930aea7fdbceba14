"""What a Codex rollout line is: a typed line whose `payload` holds a Responses item (or the
session's meta, a turn's context, an event, a compaction); early rollouts hold bare items
after an `{id, timestamp, instructions}` header."""

from __future__ import annotations

from typing import Any

TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg", "compacted"})


def item_of(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    """The Responses item a line holds: a rollout's `response_item` payload, or the line
    itself (an early rollout's bare items, a Responses JSONL)."""
    from sessionctx.formats.openai_responses.read import is_item  # only when writing

    if obj is None:
        return None
    if obj.get("type") == "response_item" and isinstance(obj.get("payload"), dict):
        payload: dict[str, Any] = obj["payload"]
        return payload
    if "payload" not in obj and is_item(obj):
        return obj
    return None


def wrap(item: dict[str, Any], anchor: dict[str, Any], stamp: str) -> dict[str, Any]:
    """A new item as a line beside `anchor`: wrapped as a `response_item` in a rollout, bare in
    an early rollout or a Responses JSONL."""
    if "payload" not in anchor:
        return item
    return {"timestamp": anchor.get("timestamp", stamp), "type": "response_item",
            "payload": item}
