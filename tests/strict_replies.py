"""The strict stub's answers (tests/strict_stub.py), one renderer per protocol: a script entry
(text, tool calls) rendered as the API's own JSON body or event stream."""

from __future__ import annotations

import json
import time
from typing import Any

Body = dict[str, Any]
Entry = dict[str, Any]
Reply = tuple[int, str, bytes]  # status, content type, bytes


def _sse(events: list[tuple[str | None, Body | str]]) -> bytes:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode()


# Each API route's ending and the protocol it speaks
_ROUTES = (("/messages/count_tokens", "count_tokens"), ("/messages", "anthropic"),
           ("/responses", "responses"), ("/chat/completions", "chat"),
           (":generateContent", "gemini"), (":streamGenerateContent", "gemini_stream"))


def route_kind(path: str) -> str | None:
    """Which protocol a POST to `path` speaks (its query left out); None for no API route."""
    route = path.split("?", 1)[0]
    return next((kind for ending, kind in _ROUTES if route.endswith(ending)), None)


def json_reply(status: int, value: Any) -> Reply:
    return status, "application/json", json.dumps(value).encode()


def _calls(entry: Entry, n: int) -> list[Entry]:
    return [{"id": c.get("id") or f"call_{n}_{k}", "name": c["name"], "input": c.get("input", {}),
             "no_id": "id" in c and c["id"] is None}
            for k, c in enumerate(entry.get("calls") or [])]


def anthropic_reply(entry: Entry, body: Body, n: int) -> Reply:
    blocks: list[Body] = []
    if entry.get("text") or not entry.get("calls"):
        blocks.append({"type": "text", "text": entry.get("text") or f"answer {n}"})
    for c in _calls(entry, n):
        cid = c["id"] if c["id"].startswith("toolu_") else f"toolu_{c['id']}"
        blocks.append({"type": "tool_use", "id": cid, "name": c["name"], "input": c["input"]})
    stop = "tool_use" if entry.get("calls") else "end_turn"
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    message = {"id": f"msg_stub{n}", "type": "message", "role": "assistant",
               "model": body.get("model", "claude-stub"), "content": blocks,
               "stop_reason": stop, "stop_sequence": None, "usage": usage}
    if not body.get("stream"):
        return json_reply(200, message)
    events: list[tuple[str | None, Body | str]] = [
        ("message_start", {"type": "message_start",
                           "message": {**message, "content": [], "stop_reason": None}})]
    for i, block in enumerate(blocks):
        start: Body
        delta: Body
        if block["type"] == "text":
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta",
                                                          "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [("content_block_start", {"type": "content_block_start", "index": i,
                                            "content_block": start}),
                   ("content_block_delta", {"type": "content_block_delta", "index": i,
                                            "delta": delta}),
                   ("content_block_stop", {"type": "content_block_stop", "index": i})]
    events += [("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 5}}),
               ("message_stop", {"type": "message_stop"})]
    return 200, "text/event-stream", _sse(events)


def response_object(rid: str, model: str, output: list[Body], created_at: int) -> Body:
    """A completed Responses API response holding `output`, as the API returns one."""
    return {"id": rid, "object": "response", "created_at": created_at, "model": model,
            "status": "completed", "output": output, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [], "error": None, "incomplete_details": None,
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


def responses_reply(entry: Entry, body: Body, n: int) -> Reply:
    output: list[Body] = []
    if entry.get("text") or not entry.get("calls"):
        output.append({"type": "message", "id": f"msg_stub{n}", "role": "assistant",
                       "status": "completed",
                       "content": [{"type": "output_text", "annotations": [],
                                    "text": entry.get("text") or f"answer {n}"}]})
    for c in _calls(entry, n):
        output.append({"type": "function_call", "id": f"fc_stub{n}_{len(output)}",
                       "call_id": c["id"], "name": c["name"], "status": "completed",
                       "arguments": json.dumps(c["input"])})
    response = response_object(f"resp_stub{n}", body.get("model", "gpt-stub"), output,
                               int(time.time()))
    if not body.get("stream"):
        return json_reply(200, response)
    events: list[tuple[str | None, Body | str]] = [
        ("response.created", {"type": "response.created",
                              "response": {**response, "status": "in_progress", "output": []}})]
    for i, item in enumerate(output):
        events.append(("response.output_item.added", {"type": "response.output_item.added",
                                                      "output_index": i, "item": item}))
        if item["type"] == "message":
            events.append(("response.output_text.delta", {
                "type": "response.output_text.delta", "output_index": i, "content_index": 0,
                "item_id": item["id"], "delta": item["content"][0]["text"]}))
        events.append(("response.output_item.done", {"type": "response.output_item.done",
                                                     "output_index": i, "item": item}))
    events.append(("response.completed", {"type": "response.completed", "response": response}))
    return 200, "text/event-stream", _sse(events)


def chat_reply(entry: Entry, body: Body, n: int) -> Reply:
    message: Body = {"role": "assistant", "content": entry.get("text") or (
        None if entry.get("calls") else f"answer {n}")}
    calls = [{"id": c["id"], "type": "function",
              "function": {"name": c["name"], "arguments": json.dumps(c["input"])}}
             for c in _calls(entry, n)]
    if calls:
        message["tool_calls"] = calls
    finish = "tool_calls" if calls else "stop"
    base = {"id": f"chatcmpl-stub{n}", "created": int(time.time()),
            "model": body.get("model", "gpt-stub")}
    if not body.get("stream"):
        return json_reply(200, {**base, "object": "chat.completion",
                           "choices": [{"index": 0, "message": message,
                                        "finish_reason": finish}],
                           "usage": {"prompt_tokens": 10, "completion_tokens": 5,
                                     "total_tokens": 15}})
    chunk = {**base, "object": "chat.completion.chunk"}
    delta: Body = {"role": "assistant", "content": message["content"]}
    if calls:
        delta["tool_calls"] = [{"index": k, **c} for k, c in enumerate(calls)]
    events: list[tuple[str | None, Body | str]] = [
        (None, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
        (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
        (None, "[DONE]")]
    return 200, "text/event-stream", _sse(events)


def gemini_reply(entry: Entry, body: Body, n: int, stream: bool, sse: bool) -> Reply:
    parts: list[Body] = []
    if entry.get("text") or not entry.get("calls"):
        parts.append({"text": entry.get("text") or f"answer {n}"})
    parts += [{"functionCall": {**({} if c["no_id"] else {"id": c["id"]}), "name": c["name"],
                                "args": c["input"]}}
              for c in _calls(entry, n)]
    answer = {"candidates": [{"content": {"role": "model", "parts": parts},
                              "finishReason": "STOP", "index": 0}],
              "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                "totalTokenCount": 15}}
    if not stream:
        return json_reply(200, answer)
    if sse:
        return 200, "text/event-stream", _sse([(None, answer)])
    return json_reply(200, [answer])


