"""Tool turns written as plain text, for a request that defines no tools.

Anthropic and Bedrock refuse tool blocks in a request without tool definitions; a summary or
compaction request rarely has them. Rather than invent a schema, each call becomes a line of
text in its assistant message and each result a user message saying what the tool returned,
so nothing the history says is lost and nothing new is claimed. Runs on the context's messages
before the provider step, one message for one message, and logs every block it rewrites.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sessionctx.changes import Change, ChangeKind, Source
from sessionctx.messages import (
    CALL_BLOCK_TYPES,
    Message,
    block_call,
    first_string,
    is_result,
    result_id,
)

CALL_AS_TEXT = ChangeKind.CALL_AS_TEXT
RESULT_AS_TEXT = ChangeKind.RESULT_AS_TEXT
_REASON = "the request defines no tools, so tool blocks are refused; sent as text"


def tools_as_text(messages: list[Message], sources: list[Source] | None
                  ) -> tuple[list[Message], list[Change]]:
    """The messages with every call and result as text, and one change per rewritten block."""
    out: list[Message] = []
    changes: list[Change] = []

    def log(kind: ChangeKind, i: int, **detail: Any) -> None:
        source = sources[i] if sources is not None and i < len(sources) else None
        changes.append(Change(kind, _REASON, source, i, detail))

    for i, m in enumerate(messages):
        if m.get("role") == "assistant":
            out.append(_assistant(m, i, log))
        elif is_result(m):
            out.append(_result(m))
            log(RESULT_AS_TEXT, i, id=result_id(m))
        else:
            out.append(m)
    return out, changes


def call_text(name: str | None, call_id: str | None, arguments: Any) -> str:
    args = arguments if isinstance(arguments, str) else \
        msgspec.json.encode(arguments if arguments is not None else {}).decode()
    return f"[called tool {name or '?'} (call {call_id or '?'}) with arguments {args}]"


def result_head(name: str | None, call_id: str | None, is_error: bool) -> str:
    """The line a result written as text starts with."""
    if is_error:
        return f"[tool {name or '?'} (call {call_id or '?'}) reported an error]"
    return f"[result of tool {name or '?'} (call {call_id or '?'})]"


def _assistant(message: Message, i: int, log: Any) -> Message:
    content = message.get("content")
    tool_calls = message.get("tool_calls")
    has_blocks = isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") in CALL_BLOCK_TYPES for b in content)
    if not has_blocks and not isinstance(tool_calls, list):
        return message
    blocks: list[Any] = []
    if isinstance(content, str):
        blocks.append({"type": "text", "text": content})
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") in CALL_BLOCK_TYPES:
                cid, name, args = block_call(block)
                blocks.append({"type": "text", "text": call_text(name, cid, args)})
                log(CALL_AS_TEXT, i, id=cid, name=name)
            else:
                blocks.append(block)
    for item in tool_calls if isinstance(tool_calls, list) else []:
        if isinstance(item, dict):
            fn = item.get("function")
            fn = fn if isinstance(fn, dict) else {}
            name = fn.get("name", item.get("name"))
            cid = first_string(item, ("id", "call_id"))
            blocks.append({"type": "text", "text": call_text(
                name if isinstance(name, str) else None, cid,
                fn.get("arguments", item.get("arguments")))})
            log(CALL_AS_TEXT, i, id=cid, name=name if isinstance(name, str) else None)
    out = {k: v for k, v in message.items() if k != "tool_calls"}
    out["content"] = blocks
    return out


def _result(message: Message) -> Message:
    name = message.get("toolName", message.get("name"))
    head = result_head(name if isinstance(name, str) else None, result_id(message),
                       bool(message.get("isError")))
    content = message.get("content")
    blocks: list[Any] = [{"type": "text", "text": head}]
    if isinstance(content, str):
        if content.strip():
            blocks.append({"type": "text", "text": content})
    elif isinstance(content, list):
        blocks.extend(content)
    return {"role": "user", "content": blocks}
