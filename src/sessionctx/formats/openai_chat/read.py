"""OpenAI chat message lists: a plain `messages` array, SWE-agent `.traj` histories,
OpenHands message lists and OpenHands LLM logs, read as native messages.

`tool_calls` become toolCall blocks (a list stored as its Python text, as OpenHands does, is
read too, without evaluating it), `tool` messages become toolResult messages (SWE-agent's
`tool_call_ids` included), and `image_url` parts with data URLs become image blocks. An
OpenHands LLM log
(`{"messages", "response", ...}`) also holds the model's reply: `response.choices[0].message`
is read as the last assistant message, numbered as the item after the last of `messages` (its
calls are then pending). Where function calling was emulated, the log keeps the calling form
under `fncall_messages`/`fncall_response`, and that pair is read.
"""

from __future__ import annotations

import json
from typing import Any

from sessionctx.changes import Source
from sessionctx.decoding import Malformed, parse_text
from sessionctx.formats.common import (
    Obj,
    data_url_image,
    decode_document,
    finish,
    is_in,
    message_record,
    not_a_file,
    parse_arguments,
    text_block,
)
from sessionctx.formats.pyliteral import read_literal
from sessionctx.formats.registry import BY_NAME
from sessionctx.records import Problem, Progress, ReadResult

FORMAT = "openai-chat"
ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})

EXPECTED = BY_NAME[FORMAT].expected


def messages_of(document: Any) -> list[Any] | None:
    """The message list of a document in one of the known shapes, or None."""
    if isinstance(document, dict):
        for key in ("messages", "history"):
            if isinstance(document.get(key), list):
                return document[key]  # type: ignore[no-any-return]
        return None
    return document if isinstance(document, list) else None


def is_chat_list(items: list[Any]) -> bool:
    dicts = [m for m in items if isinstance(m, dict)]
    return bool(dicts) and all(is_in(m.get("role"), ROLES) for m in dicts) and any(
        isinstance(m.get("content"), str) or "tool_calls" in m or "tool_call_id" in m
        or _has_parts(m) for m in dicts)


def _has_parts(m: Obj) -> bool:
    content = m.get("content")
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") in ("text", "image_url") for p in content)


def _tool_calls(value: Any) -> list[Any]:
    if isinstance(value, str):
        try:
            parsed = parse_text(value)
        except Malformed:
            parsed = read_literal(value)
        return parsed if isinstance(parsed, list) else []
    return value if isinstance(value, list) else []


def _content(content: Any, lost: list[str]) -> list[Obj]:
    if content is None:
        return []
    if isinstance(content, str):
        return [text_block(content)] if content else []
    out: list[Obj] = []
    for part in content if isinstance(content, list) else [content]:
        ptype = part.get("type") if isinstance(part, dict) else None
        if ptype == "text":
            out.append(text_block(str(part.get("text", ""))))
        elif ptype == "image_url":
            url = part.get("image_url")
            image = data_url_image(url.get("url") if isinstance(url, dict) else url)
            if image is None:
                lost.append("image_url part that is not a data URL")
            else:
                out.append(image)
        else:
            lost.append(f"content part {json.dumps(part)[:60]}")
    return out


NO_REPLY = object()


def read_messages(items: list[Any], path: str | None, reply: Any = NO_REPLY) -> ReadResult:
    """`items` as records; `reply`, when given, is the response the model gave to them."""
    result = ReadResult()
    if reply is not NO_REPLY:
        answer, why = _reply_message(reply)
        if answer is None:
            result.problems.append(Problem(f"the response could not be read: {why}", path))
        else:
            items = [*items, answer]
    names: dict[str, str] = {}
    last_legacy: str | None = None
    for i, item in enumerate(items):
        src = Source(index=i, path=path)
        if not isinstance(item, dict) or not is_in(item.get("role"), ROLES):
            result.problems.append(Problem(f"item {i}: not a chat message", path))
            continue
        lost: list[str] = []
        role = item["role"]
        if role in ("system", "developer"):
            content = item.get("content")
            text = content if isinstance(content, str) else "".join(
                b.get("text", "") for b in _content(content, lost))
            message: Obj = {"role": "system", "content": text}
            result.records.append(message_record(message, src, item, FORMAT))
        elif role == "user":
            result.records.append(message_record(
                {"role": "user", "content": _content(item.get("content"), lost)}, src, item,
                FORMAT))
        elif role == "assistant":
            blocks = _content(item.get("content"), lost)
            raw_calls = _tool_calls(item.get("tool_calls"))
            if item.get("tool_calls") and not raw_calls:
                lost.append("tool_calls that could not be parsed")
            legacy = item.get("function_call")
            if isinstance(legacy, dict):
                # the legacy single call has no id: it is named by its position, and the
                # next `function` message answers it
                raw_calls = [*raw_calls, {"id": f"function_call_{i}", "function": legacy}]
                last_legacy = f"function_call_{i}"
            for call in raw_calls:
                fn = call.get("function") if isinstance(call, dict) else None
                if not isinstance(fn, dict):
                    lost.append("a tool call without a function")
                    continue
                cid, name = str(call.get("id", "")), str(fn.get("name", ""))
                names[cid] = name
                blocks.append({"type": "toolCall", "id": cid, "name": name,
                               "arguments": parse_arguments(fn.get("arguments"))})
            has_call = any(b["type"] == "toolCall" for b in blocks)
            result.records.append(message_record(
                {"role": "assistant", "content": blocks, "api": "openai-completions",
                 "provider": "openai", "model": str(item.get("model", "")),
                 "stopReason": "toolUse" if has_call else "stop"}, src, item, FORMAT))
        else:
            ids = item.get("tool_call_ids")
            if isinstance(ids, list) and ids:
                cids = [str(c) for c in ids]
            elif role == "function" and "tool_call_id" not in item and last_legacy:
                cids, last_legacy = [last_legacy], None
            else:
                cids = [str(item.get("tool_call_id", ""))]
            content = _content(item.get("content"), lost)
            for cid in cids:
                result.records.append(message_record(
                    {"role": "toolResult", "toolCallId": cid,
                     "toolName": str(item.get("name") or names.get(cid, "")),
                     "content": content, "isError": False}, src, item, FORMAT))
        for what in lost:
            result.problems.append(Problem(f"item {i}: {what} could not be imported", path))
    return finish(result, path, FORMAT)


def _reply_message(response: Any) -> tuple[Obj | None, str]:
    """The assistant message of a chat completion response, or None and why there is none."""
    if not isinstance(response, dict):
        return None, "it is not an object"
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices:
        return None, "it has no choices"
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return None, "choices[0] has no message object"
    if message.get("role", "assistant") != "assistant":
        return None, f"choices[0].message has role {message.get('role')!r}"
    out = {**message, "role": "assistant"}
    if "model" not in out and isinstance(response.get("model"), str):
        out["model"] = response["model"]
    return out, ""


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    """The progress of a JSON document is not reported: it is decoded in one step."""
    try:
        doc = document if document is not None else decode_document(raw)
    except Malformed as exc:
        return not_a_file(path, FORMAT, EXPECTED, exc.reason)
    if isinstance(doc, dict) and isinstance(doc.get("fncall_messages"), list):
        return read_messages(doc["fncall_messages"], path, doc.get("fncall_response", NO_REPLY))
    items = messages_of(doc)
    if items is None:
        return not_a_file(path, FORMAT, EXPECTED)
    reply = doc.get("response", NO_REPLY) if isinstance(doc, dict) else NO_REPLY
    return read_messages(items, path, reply)
