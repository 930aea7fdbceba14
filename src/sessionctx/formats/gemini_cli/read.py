"""Gemini CLI session JSON: `user` and `gemini` messages read as native messages.

A gemini message's thoughts (and `thought` parts of its content) become thinking blocks and
its tool calls toolCall blocks; each call's embedded result becomes a toolResult, an error for
the error and cancelled statuses: function responses, or text, or one part, as Gemini CLI's
`convertSessionToClientHistory` sends each (a text result as the response's `output`). A call
with no result stays unanswered. Content is a string, one part or a list of parts and strings.
info, error and warning messages are kept as context rows, and so is a user message Gemini CLI
leaves out when it resumes (a command: its text starts with "/" or "?").
"""

from __future__ import annotations

import json
from typing import Any

from sessionctx.changes import Source
from sessionctx.formats.common import (
    Obj,
    as_list,
    context_record,
    document_items,
    finish,
    is_in,
    message_record,
    text_block,
)
from sessionctx.formats.registry import BY_NAME
from sessionctx.records import Problem, Progress, ReadResult

FORMAT = "gemini-cli"
TYPES = frozenset({"user", "gemini", "info", "error", "warning"})

EXPECTED = BY_NAME[FORMAT].expected


def messages_of(document: Any) -> list[Any] | None:
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        items: list[Any] = document["messages"]
    elif isinstance(document, dict):
        items = [document]
    elif isinstance(document, list):
        items = document
    else:
        return None
    dicts = [m for m in items if isinstance(m, dict)]
    if dicts and all(is_in(m.get("type"), TYPES) and "role" not in m for m in dicts) and any(
            m.get("type") in ("user", "gemini") for m in dicts):
        return items
    return None


def _part_list(content: Any) -> list[Any]:
    """Content as Gemini CLI's `ensurePartArray` makes it: a string or a part is one part."""
    if isinstance(content, list):
        return content
    if isinstance(content, str):
        return [content] if content else []
    return [content] if isinstance(content, dict) else []


def _parts(content: Any, lost: list[str]) -> list[Obj]:
    out: list[Obj] = []
    for part in _part_list(content):
        if isinstance(part, str):
            out.append(text_block(part))
        elif isinstance(part, dict) and isinstance(part.get("text"), str) and part.get(
                "thought") is True:
            out.append({"type": "thinking", "thinking": part["text"]})
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(text_block(part["text"]))
        elif isinstance(part, dict) and isinstance(part.get("inlineData"), dict):
            data = part["inlineData"]
            out.append({"type": "image", "data": data.get("data", ""),
                        "mimeType": data.get("mimeType", "image/png")})
        else:
            lost.append(f"part {json.dumps(part)[:60]}")
    return out


def _response_content(call: Obj, lost: list[str]) -> list[Obj] | None:
    responses = call.get("result")
    if isinstance(responses, str):
        return [text_block(responses)] if responses else None
    responses = _part_list(responses)
    if not responses:
        return None
    out: list[Obj] = []
    for part in responses:
        fr = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(fr, dict) and isinstance(fr.get("id"), str) and fr["id"] != call.get(
                "id"):
            continue  # a response to another call of the same turn (Gemini CLI keeps them all)
        if isinstance(fr, dict):
            response = fr.get("response")
            if isinstance(response, dict) and len(response) == 1 and isinstance(
                    next(iter(response.values())), str):
                out.append(text_block(next(iter(response.values()))))
            else:
                out.append(text_block(json.dumps(response, ensure_ascii=False)))
        else:
            out.extend(_parts([part], lost))
    return out or None


def _command(content: Any) -> bool:
    """A user message Gemini CLI leaves out of the history it resumes with: a command, told by
    its text (every part as `partListUnionToString` shows it) starting with "/" or "?"."""
    head = ""
    for part in _part_list(content):
        text = part if isinstance(part, str) else part.get("text") if isinstance(
            part, dict) else None
        if not isinstance(text, str):
            return False  # a part shown as a [label] first: not a command
        head += text
        if head.strip():
            break
    return head.strip()[:1] in ("/", "?")


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    """The progress of a JSON document is not reported: it is decoded in one step."""
    found = document_items(raw, path, document, FORMAT, EXPECTED, messages_of)
    if isinstance(found, ReadResult):
        return found
    _, items = found
    result = ReadResult()
    for i, item in enumerate(items):
        src = Source(index=i, path=path)
        if not isinstance(item, dict):
            result.problems.append(Problem(f"item {i}: not a message object", path))
            continue
        lost: list[str] = []
        mtype = item.get("type")
        if mtype == "user" and _command(item.get("content")):
            result.records.append(context_record(item, src, FORMAT, "a command: Gemini CLI "
                                                 "does not send it when it resumes"))
        elif mtype == "user":
            result.records.append(message_record(
                {"role": "user", "content": _parts(item.get("content"), lost)}, src, item,
                FORMAT))
        elif mtype == "gemini":
            blocks: list[Obj] = []
            said = _parts(item.get("content"), lost)
            # thoughts kept beside the content only when the content holds none (Gemini CLI
            # sends a message's content alone once it holds its thoughts)
            for thought in [] if any(b["type"] == "thinking" for b in said) else as_list(
                    item.get("thoughts")):
                if isinstance(thought, dict):
                    text = "\n".join(str(thought[k]) for k in ("subject", "description")
                                     if thought.get(k))
                    blocks.append({"type": "thinking", "thinking": text})
            blocks.extend(said)
            calls = [c for c in as_list(item.get("toolCalls")) if isinstance(c, dict)]
            for call in calls:
                blocks.append({"type": "toolCall", "id": str(call.get("id", "")),
                               "name": str(call.get("name", "")),
                               "arguments": call.get("args") or {}})
            result.records.append(message_record(
                {"role": "assistant", "content": blocks, "api": "google-generative-ai",
                 "provider": "google", "model": str(item.get("model", "")),
                 "stopReason": "toolUse" if calls else "stop"}, src, item, FORMAT))
            for call in calls:
                content = _response_content(call, lost)
                if content is None:
                    continue  # no response stored: the call stays unanswered
                result.records.append(message_record(
                    {"role": "toolResult", "toolCallId": str(call.get("id", "")),
                     "toolName": str(call.get("name", "")), "content": content,
                     "isError": call.get("status") in ("error", "cancelled")},
                    src, call, FORMAT))
        else:
            result.records.append(context_record(item, src, FORMAT, f"{mtype} message"))
        for what in lost:
            result.problems.append(Problem(f"item {i}: {what} could not be imported", path))
    return finish(result, path, FORMAT)
