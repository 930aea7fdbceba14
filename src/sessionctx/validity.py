"""Why a stored object cannot be used: a message or command whose shape would break reading,
a checkpoint missing a field. Only what would break reading is checked; a record with a
problem is kept and reported, never silently dropped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sessionctx.messages import CALL_BLOCK_TYPES, MODEL_ROLES

_CHECKPOINT_FIELDS: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("at", str),
    ("baseSeq", int),
    ("plannerVersion", int),
    ("summaryModelRef", str),
    ("qualityAudit", (str, dict)),
    ("summary", str),
    ("messages", list),
    ("firstKeptIndex", int),
    ("tokensBefore", int),
    ("tokensAfter", int),
)


def message_problem(message: Mapping[str, Any]) -> str | None:
    """Why a chat message cannot be used, or None. Only what would break reading is checked."""
    content = message.get("content")
    if not _plain_blocks(content):
        problem = content_problem(content, message.get("role") == "assistant", "content",
                                   True)
        if problem:
            return problem
    tool_calls = message.get("tool_calls")
    if tool_calls is not None:
        if not isinstance(tool_calls, list):
            return f"field 'tool_calls' must be an array, got {json_type(tool_calls)}"
        for i, item in enumerate(tool_calls):
            if not isinstance(item, dict):
                return f"tool_calls[{i}] must be an object, got {json_type(item)}"
    for key in ("toolCallId", "tool_call_id", "toolName"):
        value = message.get(key)
        if value is not None and not isinstance(value, str):
            return f"field '{key}' must be a string, got {json_type(value)}"
    return None


def _plain_blocks(content: Any) -> bool:
    """Whether `content` is a list of well-formed blocks, in one quick walk: the common case,
    which then needs no reasons; anything odd is left to `_content_problem` to describe."""
    if type(content) is not list:
        return False
    for block in content:
        if type(block) is not dict:
            return False
        btype = block.get("type")
        ok = True
        if btype == "text":
            ok = type(block.get("text")) is str
        elif type(btype) is not str:
            ok = False
        elif btype in CALL_BLOCK_TYPES:
            ok = type(block.get("id", "")) is str and type(block.get("name", "")) is str
        if not ok:
            return False
    return True


def checkpoint_problem(view: Mapping[str, Any]) -> str | None:
    """Why a `type: compaction` record is not a full checkpoint, or None when it is one."""
    missing = [name for name, _ in _CHECKPOINT_FIELDS if name not in view]
    if missing:
        return "checkpoint lacks " + ", ".join(repr(m) for m in missing)
    for name, expected in _CHECKPOINT_FIELDS:
        value = view[name]
        if isinstance(value, bool) or not isinstance(value, expected):
            return f"checkpoint field {name!r} has the wrong type ({json_type(value)})"
    restored = view.get("restoredFromCompactionId")
    if restored is not None and not isinstance(restored, str):
        return "checkpoint field 'restoredFromCompactionId' must be a string"
    for i, message in enumerate(view["messages"]):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str) or \
                message["role"] not in MODEL_ROLES:
            return f"checkpoint messages[{i}] is not a chat message"
        problem = message_problem(message)
        if problem:
            return f"checkpoint messages[{i}]: {problem}"
    return None


def local_command_problem(view: Mapping[str, Any]) -> str | None:
    command = view.get("command")
    if command is not None and not isinstance(command, str):
        return f"field 'command' must be a string, got {json_type(command)}"
    code = view.get("exitCode")
    if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
        return f"field 'exitCode' must be a number or null, got {json_type(code)}"
    return content_problem(view.get("output"), optional=True, name="output")


def content_problem(content: Any, optional: bool, name: str = "content",
                     calls: bool = False) -> str | None:
    """Why a content value is unusable, or None. With `calls`, call blocks need string ids
    and names, but a malformed block anywhere comes first: the one walk serves both."""
    if content is None:
        return None if optional else f"field '{name}' is missing"
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"field '{name}' must be a string or an array, got {json_type(content)}"
    call_problem = None
    for i, block in enumerate(content):
        if not isinstance(block, dict):
            return f"{name}[{i}] must be an object, got {json_type(block)}"
        btype = block.get("type")
        if btype == "text":
            if not isinstance(block.get("text"), str):
                return f"{name}[{i}] is a text block without a string 'text'"
        elif not isinstance(btype, str):
            return f"{name}[{i}] has no string 'type'"
        elif calls and call_problem is None and btype in CALL_BLOCK_TYPES:
            call_problem = _call_block_problem(block, name, i)
    return call_problem


def _call_block_problem(block: Mapping[str, Any], name: str, i: int) -> str | None:
    for key in ("id", "name"):
        if key in block and not isinstance(block[key], str):
            return f"{name}[{i}].{key} must be a string, got {json_type(block[key])}"
    return None


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
