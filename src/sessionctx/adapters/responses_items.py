"""OpenAI Responses input items, one item to one native message and back.

The OpenAI Agents SDK keeps a session as Responses input items. Each item becomes one native
message (calls of every kind as toolCall blocks keyed by `call_id`, their outputs as
toolResult messages, reasoning as a thinking block, the rest kept as a short text) so the fold
can pair, drop and replace; what goes back out is the original item itself, or, for a tool
output whose older screenshots were replaced, a copy with a note in their place. One item per
message keeps that mapping exact, which is why the items are not grouped into turns here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sessionctx.changes import Change, ChangeKind, Source
from sessionctx.context import Context
from sessionctx.importers.common import data_url_image, parse_arguments, text_block
from sessionctx.messages import Message
from sessionctx.screenshots import OMITTED_NOTE

Item = dict[str, Any]
FORMAT = "openai-responses"

# Each kind of call the API pairs with an output, as the Agents SDK lists them.
CALL_OUTPUT = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
    "tool_search_call": "tool_search_output",
    "program": "program_output",
}
OUTPUTS = frozenset(CALL_OUTPUT.values())
_INPUT_ROLES = frozenset({"user", "system", "developer"})
_ITEM = "_item"  # a native image block's index in its output's parts


def item_type(item: Item) -> str:
    kind = item.get("type")
    if isinstance(kind, str):
        return kind
    return "message" if "role" in item else ""


def as_item(item: Any) -> Item:
    """An item as a plain dict: the SDK's pydantic items are dumped as the API would see them."""
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        dumped = dump(mode="json", exclude_unset=True)
        if isinstance(dumped, dict):
            return dumped
    raise TypeError(f"not a Responses input item: {type(item).__name__}")


def to_message(item: Item) -> Message:
    """The native message an item becomes."""
    kind = item_type(item)
    call_id = item.get("call_id")
    if kind == "message":
        role = item.get("role")
        content = _content(item.get("content"))
        if role == "assistant":
            return {"role": "assistant", "content": content}
        if role in ("system", "developer"):
            return {"role": "system", "content": "".join(b.get("text", "") for b in content)}
        return {"role": "user", "content": content}
    if kind in CALL_OUTPUT and isinstance(call_id, str):
        return {"role": "assistant", "content": [
            {"type": "toolCall", "id": call_id, "name": _call_name(item, kind),
             "arguments": _call_arguments(item, kind)}]}
    if kind in OUTPUTS:
        return {"role": "toolResult", "toolCallId": call_id if isinstance(call_id, str) else "",
                "toolName": "", "content": _output(item.get("output")),
                "isError": item.get("status") == "incomplete"}
    if kind == "reasoning":
        texts = [s.get("text", "") for s in _list(item.get("summary")) if isinstance(s, dict)]
        return {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "\n\n".join(t for t in texts if isinstance(t, str))}]}
    return {"role": "assistant", "content": [text_block(f"[{kind or 'untyped'} item]")]}


def record_of(item: Item) -> dict[str, Any]:
    """The record an item is stored as: its native message, and the item itself under `raw`."""
    return {"type": "message", "message": to_message(item), "importedFrom": FORMAT, "raw": item}


def _content(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [text_block(content)]
    out: list[dict[str, Any]] = []
    for part in _list(content):
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            out.append(text_block(str(part.get("text", ""))))
        elif kind == "refusal":
            out.append(text_block(str(part.get("refusal", ""))))
        elif kind == "input_image":
            out.append(data_url_image(part.get("image_url"))
                       or text_block(f"[image {part.get('image_url') or part.get('file_id')}]"))
        else:
            name = part.get("filename") or part.get("file_id") or kind
            out.append(text_block(f"[{name}]"))
    return out


def _output(output: Any) -> list[dict[str, Any]]:
    if isinstance(output, str):
        return [text_block(output)]
    if isinstance(output, dict):  # a computer screenshot: the API takes nothing else there
        return [text_block(f"[{output.get('type', 'output')}]")]
    out: list[dict[str, Any]] = []
    for k, part in enumerate(_list(output)):
        if not isinstance(part, dict):
            continue
        if part.get("type") == "input_image":
            image = data_url_image(part.get("image_url"))
            if image is not None:
                out.append({**image, _ITEM: k})
                continue
        out.extend(_content([part]))
    return out


def _call_name(item: Item, kind: str) -> str:
    name = item.get("name")
    return name if isinstance(name, str) else kind


def _call_arguments(item: Item, kind: str) -> Any:
    if kind == "function_call":
        return parse_arguments(item.get("arguments"))
    if kind == "custom_tool_call":
        return {"input": item.get("input", "")}
    for key in ("action", "operation", "arguments"):
        if key in item:
            return item[key]
    return {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


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
                items.extend(stored)
            else:
                items.extend(_changed(item, message) for item in stored)
            sources.extend(source for _ in stored)
            continue
        sources.append(source)
    return _without_lone_reasoning(items, sources)


def _changed(item: Item, message: Message) -> Item:
    """An output whose screenshots the fold replaced: the kept parts, a note for the others."""
    output = item.get("output")
    if not isinstance(output, list):
        return item
    kept = {b[_ITEM] for b in message.get("content", []) if isinstance(b, dict) and _ITEM in b}
    parts = [part if not (isinstance(part, dict) and part.get("type") == "input_image")
             or k in kept else {"type": "input_text", "text": OMITTED_NOTE}
             for k, part in enumerate(output)]
    return {**item, "output": parts}


def is_model_output(item: Item) -> bool:
    """Whether the model wrote this item (what may follow reasoning in one response)."""
    kind = item_type(item)
    if kind == "message":
        return item.get("role") not in _INPUT_ROLES
    return kind not in OUTPUTS and kind not in ("mcp_approval_response", "item_reference")


def _without_lone_reasoning(items: list[Item], sources: list[Source]
                            ) -> tuple[list[Item], list[Source], list[Change]]:
    changes: list[Change] = []
    keep = [True] * len(items)
    for i in range(len(items) - 1, -1, -1):
        if item_type(items[i]) != "reasoning":
            continue
        j = i + 1
        while j < len(items) and not keep[j]:
            j += 1
        if j < len(items) and is_model_output(items[j]):
            continue
        keep[i] = False
        changes.append(Change(
            ChangeKind.DROPPED_LONE_REASONING,
            f"reasoning {items[i].get('id') or ''} dropped: the item it came before is gone, "
            "and the API refuses reasoning without its following item", sources[i]))
    if not changes:
        return items, sources, []
    changes.reverse()
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
