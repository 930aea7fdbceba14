"""The history a provider body holds, read into the records of sessionctx's native messages:
what `repair_request` (wire.py) folds and rebuilds. Anthropic, Chat and Responses bodies are
read by the importers of those formats; a Gemini body's `contents` here, giving a call sent
without an id one that `forget_given_ids` takes out again of the repaired body.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sessionctx.changes import Source
from sessionctx.formats.common import message_record
from sessionctx.messages import Message
from sessionctx.providers.registry import provider as registered
from sessionctx.records import Problem, ReadResult, Record

# the registry's names of the APIs whose bodies are read
ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES, GEMINI = (
    "anthropic", "openai-chat", "openai-responses", "gemini")
APIS = (ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES, GEMINI)
_GEMINI_ID = "sessionctx-gemini-call-"  # an id given to a Gemini call sent without one


def body_model(body: dict[str, Any]) -> str | None:
    """The model a body names, if any."""
    model = body.get("model")
    return model if isinstance(model, str) and model else None


def rules_model(api: str, body: dict[str, Any]) -> str | None:
    """The body's model for its capability row. Another maker's model name on this API is a
    gateway's name for a model it serves here: the API's own rules (its default row) apply,
    as the API enforces them whatever the name."""
    model = body_model(body)
    return None if model is None or registered(api).maker_of(model) is not None else model


def _read_anthropic(body: dict[str, Any]) -> ReadResult:
    from sessionctx.formats.anthropic import read as anthropic
    return anthropic.read(b"", None, body)


def _read_chat(body: dict[str, Any]) -> ReadResult:
    from sessionctx.formats.openai_chat import read as openai_chat
    return openai_chat.read(b"", None, {k: v for k, v in body.items() if k != "history"})


def _read_responses(body: dict[str, Any]) -> ReadResult:
    from sessionctx.formats.openai_responses import read as openai_responses
    return openai_responses.read(b"", None, body)


def _read_gemini(body: dict[str, Any]) -> ReadResult:
    """Gemini `contents`: user and model turns of parts. A call sent without an id answers
    to the response of its name that follows it; the id it is given here is not sent back."""
    result = ReadResult()
    contents = body.get("contents")
    open_calls: dict[str, list[str]] = {}
    for i, content in enumerate(contents if isinstance(contents, list) else []):
        src = Source(index=i)
        if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
            result.problems.append(_problem(f"contents[{i}]: not a content with parts"))
            continue
        role = "assistant" if content.get("role") == "model" else "user"
        blocks: list[dict[str, Any]] = []
        results: list[Message] = []
        for j, part in enumerate(content["parts"]):
            native = _gemini_part(part, i, j, open_calls, result)
            if native is None:
                continue
            if native.get("role") == "toolResult":
                results.append(native)
            else:
                blocks.append(native)
        for message in results:
            result.records.append(message_record(message, src, content, GEMINI))
        if blocks or not results:
            message = {"role": role, "content": blocks}
            if role == "assistant":
                message.update(api="google-generative-ai", provider="google",
                               model=body_model(body) or "", stopReason="stop")
            result.records.append(message_record(message, src, content, GEMINI))
    return result


def _gemini_part(part: Any, i: int, j: int, open_calls: dict[str, list[str]],
                 result: ReadResult) -> dict[str, Any] | None:
    if not isinstance(part, dict):
        result.problems.append(_problem(f"contents[{i}].parts[{j}]: not an object"))
        return None
    known = {"text", "thought", "thoughtSignature", "inlineData", "functionCall",
             "functionResponse"}
    if set(part) - known:
        result.problems.append(_problem(f"contents[{i}].parts[{j}]: keys {sorted(part)}"))
        return None
    if "functionCall" in part:
        call = part["functionCall"]
        name = str(call.get("name", ""))
        cid = call.get("id") or f"{_GEMINI_ID}{i}-{j}"
        open_calls.setdefault(name, []).append(str(cid))
        block = {"type": "toolCall", "id": str(cid), "name": name,
                 "arguments": call.get("args", {})}
        if part.get("thoughtSignature"):
            block["thoughtSignature"] = part["thoughtSignature"]
        return block
    if "functionResponse" in part:
        response = part["functionResponse"]
        name = str(response.get("name", ""))
        waiting = open_calls.get(name) or []
        cid = response.get("id") or (waiting.pop(0) if waiting else f"{_GEMINI_ID}{i}-{j}")
        if response.get("id") and cid in waiting:
            waiting.remove(cid)
        payload = response.get("response")
        error = isinstance(payload, dict) and set(payload) == {"error"}
        text = payload.get("error" if error else "output") if isinstance(payload, dict) and \
            len(payload) == 1 else None
        if not isinstance(text, str):
            text = json.dumps(payload, ensure_ascii=False)
        return {"role": "toolResult", "toolCallId": str(cid), "toolName": name,
                "content": [{"type": "text", "text": text}], "isError": error}
    if "inlineData" in part:
        data = part["inlineData"]
        return {"type": "image", "data": data.get("data", ""),
                "mimeType": data.get("mimeType", data.get("mime_type", ""))}
    if part.get("thought") is True:
        return {"type": "thinking", "thinking": str(part.get("text", "")),
                "thinkingSignature": str(part.get("thoughtSignature", ""))}
    return {"type": "text", "text": str(part.get("text", ""))}


def forget_given_ids(contents: list[dict[str, Any]]) -> None:
    """Takes out the ids `_read_gemini` gave to calls and responses sent without one."""
    for content in contents:
        for part in content.get("parts", []):
            for key in ("functionCall", "functionResponse"):
                inner = part.get(key)
                if isinstance(inner, dict) and str(inner.get("id", "")).startswith(_GEMINI_ID):
                    del inner["id"]


def _problem(message: str) -> Problem:
    return Problem(message, None)


READERS: dict[str, Callable[[dict[str, Any]], ReadResult]] = {
    ANTHROPIC: _read_anthropic, OPENAI_CHAT: _read_chat, OPENAI_RESPONSES: _read_responses,
    GEMINI: _read_gemini}


def records_of(api: str, body: dict[str, Any]) -> list[Record]:
    """The records a body's history reads as (for a caller that builds its own context)."""
    return READERS[api](body).records
