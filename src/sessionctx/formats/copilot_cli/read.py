"""A Copilot CLI `events.jsonl` read as native records, one record per event line.

Every line is an event `{type, data, id, timestamp, parentId}` (shapes: the session event
schema of github/copilot-sdk). What reaches the model:
- `user.message`: the user's text as sent (`transformedContent`, with the context Copilot adds,
  else `content`);
- `assistant.message`: its reasoning text, its text and its `toolRequests` as calls (a long
  response is stored as several messages, one per reasoning boundary);
- `tool.execution_complete`: the result of the call its `toolCallId` names, an error when
  `success` is false.
A sub-agent's events (`agentId`, or `parentToolCallId` in the data) stay inside the tool call
that started it; `tool.execution_start` repeats a request already read; the model of each
reply is the latest `session.start`/`session.model_change` unless the message names one. Every
other event is a context row.
"""

from __future__ import annotations

from typing import Any

from sessionctx.changes import Source
from sessionctx.formats.common import (
    context_record,
    finish,
    is_in,
    jsonl_objects,
    message_record,
    not_a_file,
    parse_arguments,
    text_block,
)
from sessionctx.records import Progress, ReadResult

FORMAT = "copilot-cli"
EXPECTED = ("Copilot CLI events.jsonl: event lines {type, data, id, timestamp, parentId} such as "
            "session.start, user.message, assistant.message and tool.execution_complete")
API, PROVIDER = "github-copilot", "github-copilot"
Obj = dict[str, Any]
_OWN = frozenset({"session.start", "session.resume", "user.message", "assistant.message",
                  "tool.execution_start", "tool.execution_complete"})


def is_event(obj: Obj) -> bool:
    """A line shaped as a Copilot CLI event of a kind only its sessions hold."""
    return is_in(obj.get("type"), _OWN) and isinstance(obj.get("data"), dict)


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    result = ReadResult()
    rows = list(jsonl_objects(raw, path, result, progress))
    if not any(is_event(obj) for _, obj in rows):
        return not_a_file(path, FORMAT, EXPECTED)
    model = ""
    names: dict[str, str] = {}
    for line, event in rows:
        src = Source(line=line, path=path)
        kind, data = event.get("type"), event.get("data")
        if not isinstance(data, dict):
            data = {}
        if kind in ("session.start", "session.resume"):
            model = _str(data.get("selectedModel")) or model
        elif kind == "session.model_change":
            model = _str(data.get("newModel")) or model
        sub = "agentId" in event or "parentToolCallId" in data
        if kind == "user.message" and not sub:
            text = _str(data.get("transformedContent")) or _str(data.get("content"))
            result.records.append(message_record(
                {"role": "user", "content": [text_block(text)]}, src, event, FORMAT))
        elif kind == "assistant.message" and not sub:
            blocks: list[Obj] = []
            if _str(data.get("reasoningText")):
                blocks.append({"type": "thinking", "thinking": data["reasoningText"]})
            if _str(data.get("content")):
                blocks.append(text_block(data["content"]))
            requests = data.get("toolRequests")
            for req in requests if isinstance(requests, list) else []:
                if isinstance(req, dict):
                    cid, name = _str(req.get("toolCallId")), _str(req.get("name"))
                    names[cid] = name
                    blocks.append({"type": "toolCall", "id": cid, "name": name,
                                   "arguments": parse_arguments(req.get("arguments"))})
            calls = any(b["type"] == "toolCall" for b in blocks)
            result.records.append(message_record(
                {"role": "assistant", "content": blocks, "api": API, "provider": PROVIDER,
                 "model": _str(data.get("model")) or model,
                 "stopReason": "toolUse" if calls else "stop"}, src, event, FORMAT))
        elif kind == "tool.execution_complete" and not sub:
            cid = _str(data.get("toolCallId"))
            result.records.append(message_record(
                {"role": "toolResult", "toolCallId": cid, "toolName": names.get(cid, ""),
                 "content": [text_block(_result_text(data))],
                 "isError": data.get("success") is not True}, src, event, FORMAT))
        else:
            why = "a sub-agent's event, inside the call that started it" if sub and kind in (
                "user.message", "assistant.message", "tool.execution_complete") else (
                f"{kind} event" if isinstance(kind, str) else "an event of no type")
            result.records.append(context_record(event, src, FORMAT, why))
    return finish(result, path, FORMAT)


def _result_text(data: Obj) -> str:
    outcome, error = data.get("result"), data.get("error")
    if isinstance(outcome, dict) and isinstance(outcome.get("content"), str):
        return str(outcome["content"])
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return "(no output)" if data.get("success") is True else "(failed, no message)"


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""
