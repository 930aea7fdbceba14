"""Reading native messages: the one place that knows the tolerated shapes of calls and results.

Messages follow pi's agent messages, but stored histories also carry `tool_use`/`tool_call`
blocks, OpenAI-style `tool_calls` arrays and ids under other keys. Every step that asks "which
calls does this message hold" or "which call does this result answer" asks here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

Message = dict[str, Any]

MODEL_ROLES = frozenset({"user", "assistant", "toolResult", "tool", "system"})
RESULT_ROLES = frozenset({"toolResult", "tool"})
CALL_BLOCK_TYPES = frozenset({"toolCall", "tool_use", "tool_call"})
ID_KEYS = ("id", "toolCallId", "tool_call_id")
RESULT_ID_KEYS = ("toolCallId", "tool_call_id")


class Call(NamedTuple):
    """One tool call inside an assistant message, wherever the shape put it.

    A named tuple rather than a frozen dataclass: as immutable, and several times cheaper to
    make, which counts when every call of a long session is read.
    """

    id: str | None
    name: str | None
    arguments: Any
    where: tuple[str, int]  # ("content", block index) or ("tool_calls", index)


# A named tuple's own constructor is a Python function around this C one.
_new_call = tuple.__new__


def first_string(obj: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str):
            return value
    return None


def block_call_id(block: Mapping[str, Any]) -> str | None:
    """The id of a content block typed as a call."""
    cid = block.get("id")  # ID_KEYS[0], where nearly every call has its id
    return cid if isinstance(cid, str) else first_string(block, ID_KEYS)


def block_call(block: Mapping[str, Any]) -> tuple[str | None, str | None, Any]:
    """The id, name and arguments of a content block typed as a call.

    The one reading of that shape: `calls` uses it, and so can a walk over a message's
    content that meets call blocks among the others and would not walk it twice.
    """
    name = block.get("name")
    return (block_call_id(block), name if isinstance(name, str) else None,
            block.get("arguments", block.get("input")))


def calls(message: Mapping[str, Any]) -> Iterator[Call]:
    """Every call block of an assistant message, in order."""
    if message.get("role") != "assistant":
        return
    content = message.get("content")
    if isinstance(content, list):
        for i, block in enumerate(content):
            if isinstance(block, dict) and _is_call_type(block.get("type")):
                yield _new_call(Call, (*block_call(block), ("content", i)))
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list):
        for i, item in enumerate(tool_calls):
            if not isinstance(item, dict):
                continue
            function = item.get("function")
            fn = function if isinstance(function, dict) else {}
            name = _str(fn.get("name", item.get("name")))
            args = fn.get("arguments", item.get("arguments"))
            yield _new_call(Call, (first_string(item, ID_KEYS), name, args, ("tool_calls", i)))


def call_ids(message: Mapping[str, Any]) -> list[str]:
    """The ids of an assistant message's calls, in order, those without a string id left out.

    What pairing questions need, read from the same places as `calls` without making a Call
    for each: cheaper when every message of a long session is asked.
    """
    if message.get("role") != "assistant":
        return []
    ids: list[str] = []
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and _is_call_type(block.get("type")):
                cid = block_call_id(block)
                if cid is not None:
                    ids.append(cid)
    if "tool_calls" in message:  # rare: tested by membership, read only when there
        tool_calls = message["tool_calls"]
        if isinstance(tool_calls, list):
            for item in tool_calls:
                if isinstance(item, dict):
                    cid = first_string(item, ID_KEYS)
                    if cid is not None:
                        ids.append(cid)
    return ids


def result_id(message: Mapping[str, Any]) -> str | None:
    """The call id a tool result answers, or None for any other message."""
    role = message.get("role")
    if not isinstance(role, str) or role not in RESULT_ROLES:
        return None
    rid = message.get("toolCallId")  # RESULT_ID_KEYS[0], where nearly every result has it
    return rid if isinstance(rid, str) else first_string(message, RESULT_ID_KEYS)


def is_result(message: Mapping[str, Any]) -> bool:
    role = message.get("role")
    return isinstance(role, str) and role in RESULT_ROLES


def _is_call_type(btype: Any) -> bool:
    """`btype in CALL_BLOCK_TYPES` for a value read from a record, which may be unhashable."""
    return isinstance(btype, str) and btype in CALL_BLOCK_TYPES


def without_calls(message: Message, drop: set[tuple[str, int]]) -> Message:
    """A copy of `message` without the call blocks at the given places; the original is kept."""
    if not drop:
        return message
    out = dict(message)
    content = message.get("content")
    if isinstance(content, list):
        out["content"] = [b for i, b in enumerate(content) if ("content", i) not in drop]
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list):
        kept = [c for i, c in enumerate(tool_calls) if ("tool_calls", i) not in drop]
        if kept:
            out["tool_calls"] = kept
        else:
            out.pop("tool_calls", None)
    return out


def has_substance(message: Mapping[str, Any]) -> bool:
    """False for a message with nothing left to say: no non-blank content and no tool_calls."""
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list) and tool_calls:
        return True
    content = message.get("content")
    if isinstance(content, str):
        return not is_blank(content)
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                if block is not None:
                    return True
            elif block.get("type") != "text":
                return True
            else:
                text = block.get("text")
                if isinstance(text, str) and not is_blank(text):
                    return True
    return False


def is_blank(text: str) -> bool:
    """Whether `text.strip()` is empty, without copying a long text to find out."""
    return not text or text.isspace()


def text_of(content: Any) -> str:
    """The plain text of a content value (string or blocks), images and calls left out."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "".join(parts)
    return ""


def image_count(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if isinstance(b, dict) and b.get("type") == "image")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
