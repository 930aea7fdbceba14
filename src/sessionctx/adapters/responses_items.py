"""OpenAI Responses input items, one item to one native message and back.

The OpenAI Agents SDK keeps a session as Responses input items. Each item becomes the one
native message `formats/openai_responses/items.py` maps it to (the mapping every Responses reader
shares), so the fold can pair, drop and replace; what goes back out is the original item
itself, or, for a tool output whose older screenshots were replaced, a copy with a note in
their place. One item per message keeps that mapping exact, which is why the items are not
grouped into turns here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

from sessionctx.adapters.provider_step import REWRITTEN
from sessionctx.changes import Change, ChangeKind, Source
from sessionctx.context import Context
from sessionctx.errors import BadArgument
from sessionctx.formats.common import data_url_image, text_block
from sessionctx.formats.openai_responses.items import (
    OUTPUTS,
    item_message,
    item_type,
    lone_reasoning,
)
from sessionctx.messages import Message
from sessionctx.providers.policies import repair_arguments
from sessionctx.providers.policies.turns import json_text
from sessionctx.screenshots import OMITTED_NOTE

__all__ = ["OUTPUTS", "as_item", "item_type", "items_of", "record_of", "to_message", "window"]

Item = dict[str, Any]
FORMAT = "openai-responses"
_ITEM = "_item"  # a native image block's index in its output's parts


class NotAnItem(BadArgument, TypeError):
    """A value handed to an adapter that is neither an item nor an SDK item model."""


def as_item(item: Any) -> Item:
    """An item as a plain dict: the SDK's pydantic items are dumped as the API would see them."""
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        dumped = dump(mode="json", exclude_unset=True)
        if isinstance(dumped, dict):
            return dumped
    raise NotAnItem(f"not a Responses input item: {type(item).__name__}")


def to_message(item: Item) -> Message:
    """The native message an item becomes; an item with nothing a model reads, or with no
    part that converts, stays as a short text so it keeps its place."""
    message = item_message(item, [])
    if message is None:
        return {"role": "assistant", "content": _placeholder(item)}
    if not message["content"] and message["role"] != "toolResult":
        message["content"] = _placeholder(item)
    raw = item.get("arguments")
    if isinstance(raw, str) and item.get("type") == "function_call":
        # the mapping keeps text that is not a JSON object under "input": the call goes out
        # with the text itself, so the provider step is shown what is sent
        block = message["content"][0]
        args = block["arguments"]
        if isinstance(args, dict) and list(args) == ["input"] and repair_arguments(raw)[1]:
            block["arguments"] = raw
    output = item.get("output")
    if message["role"] == "toolResult" and isinstance(output, list):
        # each image block remembers its part, so a replaced screenshot is found again
        parts = iter(k for k, part in enumerate(output) if isinstance(part, dict)
                     and part.get("type") == "input_image"
                     and data_url_image(part.get("image_url")))
        message["content"] = [{**b, _ITEM: next(parts)} if b.get("type") == "image" else b
                              for b in message["content"]]
    return message


def _placeholder(item: Item) -> list[dict[str, Any]]:
    return [text_block(f"[{item_type(item) or 'untyped'} item]")]


def record_of(item: Item) -> dict[str, Any]:
    """The record an item is stored as: its native message, and the item itself under `raw`."""
    return {"type": "message", "message": to_message(item), "importedFrom": FORMAT, "raw": item}


# -- the context -> items -------------------------------------------------------------------------

def items_of(context: Context, original: Callable[[Source], tuple[list[Item], Message] | None]
             ) -> tuple[list[Item], list[Source], list[Change]]:
    """The context as items, with each item's source, and the changes this step made.

    `original(source)` gives the stored items (one, or several for a message a foreign
    checkpoint holds) and the native message for a context message's source; an unchanged
    message gives those very items back. Reasoning left without the item
    that followed it (a call that was cut) is dropped, as the API refuses it.
    """
    notes = {c.message_index for c in context.changes
             if c.kind == ChangeKind.INTERRUPTED_NOTE_ADDED}
    items: list[Item] = []
    sources: list[Source] = []
    for k, (message, source) in enumerate(zip(context.messages, context.sources, strict=True)):
        if k in notes:
            text = message["content"][0]["text"]
            items.append({"type": "message", "role": "user",
                          "content": [{"type": "input_text", "text": text}]})
        else:
            found = original(source)
            if found is None:
                continue
            stored, native = found
            if message is native:
                items += stored
            else:
                items += [_changed(item, message) for item in stored]
            sources += [source] * len(stored)
            continue
        sources.append(source)
    return _without_lone_reasoning(items, sources)


def _changed(item: Item, message: Message) -> Item:
    """A call or output under the id the provider step gave it, or an output whose screenshots
    the fold replaced: the kept parts, a note for the others."""
    if "call_id" in item:
        block = next((b for b in message.get("content", []) if isinstance(b, dict)
                      and b.get("type") == "toolCall"), {})
        new = message.get("toolCallId") if message.get("role") == "toolResult" else \
            block.get("id", item["call_id"])
        if new != item["call_id"]:
            item = {**item, "call_id": new}
        rewritten = block.get(REWRITTEN, ())
        if "name" in rewritten:
            item = {**item, "name": block["name"]}
        if "arguments" in rewritten:
            item = {**item, "arguments": json_text(block["arguments"])}
    output = item.get("output")
    if not isinstance(output, list):
        return item
    kept = {b[_ITEM] for b in message.get("content", []) if isinstance(b, dict) and _ITEM in b}
    parts = [part if not (isinstance(part, dict) and part.get("type") == "input_image")
             or k in kept else {"type": "input_text", "text": OMITTED_NOTE}
             for k, part in enumerate(output)]
    return {**item, "output": parts}


def _without_lone_reasoning(items: list[Item], sources: list[Source]
                            ) -> tuple[list[Item], list[Source], list[Change]]:
    if "reasoning" not in map(dict.get, items, repeat("type")):  # one pass in C: the common case
        return items, sources, []
    keep = [True] * len(items)
    lone = lone_reasoning(items, keep)
    if not lone:
        return items, sources, []
    changes = [Change(
        ChangeKind.DROPPED_LONE_REASONING,
        f"reasoning {items[i].get('id') or ''} dropped: the item it came before is gone, "
        "and the API refuses reasoning without its following item", sources[i]) for i in lone]
    return ([it for it, k in zip(items, keep, strict=True) if k],
            [s for s, k in zip(sources, keep, strict=True) if k], changes)


def window(items: Sequence[Item], limit: int | None) -> list[Item]:
    """The latest `limit` items, starting after any output whose call falls before them."""
    if limit is None:
        return list(items)
    if limit <= 0:
        return []
    out = list(items[-limit:])
    start = 0
    while start < len(out) and item_type(out[start]) in OUTPUTS:
        start += 1
    return out[start:]
