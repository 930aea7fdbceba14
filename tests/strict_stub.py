"""A strict stand-in for the Anthropic, OpenAI and Gemini APIs on 127.0.0.1, for real clients.

One server speaks:
  - Anthropic `POST /v1/messages` (`?beta=true` too), JSON or SSE when `"stream": true`
    (message_start, content_block_start/delta/stop, message_delta, message_stop), and
    `/v1/messages/count_tokens`;
  - OpenAI `POST /v1/responses` (JSON or SSE) and `/v1/chat/completions` (JSON or SSE);
  - Gemini `…:generateContent` (JSON) and `…:streamGenerateContent` (SSE with `alt=sse`,
    else a JSON array).
Each request's history is checked by the API's own rules (tests/stub_servers.py, the one home of
them); a refused one gets HTTP 400 with the API's error body. Every request is recorded: headers,
raw bytes, parsed body, the status sent and the refusal if any.

Replies come from a script, one entry a request (then plain text "answer N"); an entry is
  {"text": "…"}                                   a text answer
  {"calls": [{"name": "Bash", "input": {…}, "id": "…"?}], "text": "…"?}   tool calls
                                                  ("id": null: a Gemini call with no id, as
                                                  the Gemini API sends them)
  {"status": 500, "body": {…}}                    a raw error
and is rendered in the protocol of the request. An entry with `"match": "…"` answers only a
request whose path or body holds that text (an agent's side requests, such as a title or a
summary, then get the plain answer instead of using up the script).

In process: `with serve(script) as stub:` → `stub.url`, `stub.requests`, `stub.refused()`.
As a program (run inside a network namespace by tests/agent_clis.py):
  python strict_stub.py --port 8765 --log requests.jsonl [--script script.json]
appends each request as one JSON line to the log, and prints "ready" once listening.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a program: make `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.stub_servers import (
    anthropic_problem,
    chat_problem,
    gemini_problem,
    responses_problem,
)

Body = dict[str, Any]
Entry = dict[str, Any]


def _kind(path: str) -> str | None:
    route = path.split("?", 1)[0]
    if route.endswith("/messages/count_tokens"):
        return "count_tokens"
    if route.endswith("/messages"):
        return "anthropic"
    if route.endswith("/responses"):
        return "responses"
    if route.endswith("/chat/completions"):
        return "chat"
    if route.endswith(":generateContent"):
        return "gemini"
    if route.endswith(":streamGenerateContent"):
        return "gemini_stream"
    return None


_CHECKS: dict[str, Callable[[Body], str | None]] = {
    "anthropic": anthropic_problem, "count_tokens": anthropic_problem,
    "responses": responses_problem, "chat": chat_problem,
    "gemini": gemini_problem, "gemini_stream": gemini_problem,
}


def error_body(kind: str, message: str, status: int = 400) -> Body:
    """The API's own error body for a refused request."""
    if kind in ("anthropic", "count_tokens"):
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message},
                "request_id": "req_stub"}
    if kind.startswith("gemini"):
        return {"error": {"code": status, "message": message, "status": "INVALID_ARGUMENT"}}
    return {"error": {"message": message, "type": "invalid_request_error", "param": "input",
                      "code": None}}


# -- replies, one renderer per protocol: (status, content type, bytes) -------------------------

Reply = tuple[int, str, bytes]


def _sse(events: list[tuple[str | None, Body | str]]) -> bytes:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode()


def _json(status: int, value: Any) -> Reply:
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
        return _json(200, message)
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
    response = {"id": f"resp_stub{n}", "object": "response", "created_at": int(time.time()),
                "model": body.get("model", "gpt-stub"), "status": "completed",
                "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
                "tools": [], "error": None, "incomplete_details": None,
                "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                          "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 0}}}
    if not body.get("stream"):
        return _json(200, response)
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
        return _json(200, {**base, "object": "chat.completion",
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
        return _json(200, answer)
    if sse:
        return 200, "text/event-stream", _sse([(None, answer)])
    return _json(200, [answer])


# -- the server -------------------------------------------------------------------------------

@dataclass
class StrictStub:
    """The stub's state: its script, and every request it got."""

    script: list[Entry] = field(default_factory=list)
    requests: list[Body] = field(default_factory=list)
    log: Path | None = None
    url: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def refused(self) -> list[Body]:
        return [r for r in self.requests if r.get("problem")]

    def answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        kind = _kind(path) if method == "POST" else None
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        with self._lock:
            n = sum(1 for r in self.requests if r.get("kind") not in (None, "count_tokens")) + 1
            problem = None
            if kind is None:
                reply = _json(404, {"error": {"message": f"no route {method} {path}"}})
            elif not isinstance(body, dict):
                problem = "the request body is not a JSON object"
                reply = _json(400, error_body(kind, problem))
            else:
                problem = _CHECKS[kind](body)
                if problem is not None:
                    reply = _json(400, error_body(kind, problem))
                elif kind == "count_tokens":
                    reply = _json(200, {"input_tokens": len(raw) // 4})
                else:
                    reply = self._reply(kind, path, body, n)
            record = {"method": method, "path": path, "kind": kind, "headers": headers,
                      "raw": raw.decode("utf-8", "replace") if _utf8(raw) else None,
                      "raw_base64": None if _utf8(raw) else base64.b64encode(raw).decode(),
                      "body": body, "status": reply[0], "problem": problem}
            self.requests.append(record)
            if self.log is not None:
                with open(self.log, "a", encoding="utf-8") as out:
                    out.write(json.dumps(record) + "\n")
        return reply

    def _reply(self, kind: str, path: str, body: Body, n: int) -> Reply:
        entry = self._next(path, json.dumps(body))
        if "status" in entry:
            return _json(int(entry["status"]), entry.get("body") or error_body(
                kind, "scripted error", int(entry["status"])))
        if kind == "anthropic":
            return anthropic_reply(entry, body, n)
        if kind == "responses":
            return responses_reply(entry, body, n)
        if kind == "chat":
            return chat_reply(entry, body, n)
        return gemini_reply(entry, body, n, stream=kind == "gemini_stream",
                            sse=bool(re.search(r"[?&]alt=sse", path)))


    def _next(self, path: str, text: str) -> Entry:
        """The first script entry for this request, taken off the script ({} if none)."""
        for k, entry in enumerate(self.script):
            want = entry.get("match")
            if want is None or want in path or want in text:
                return self.script.pop(k)
        return {}


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _server(stub: StrictStub, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, kind, data = stub.answer(self.command, self.path, headers, raw)
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_POST = do_GET = _answer

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    return server


@contextmanager
def serve(script: list[Entry] | None = None, log: Path | None = None,
          port: int = 0) -> Iterator[StrictStub]:
    """A running stub on 127.0.0.1; its base URL (no /v1) is `stub.url`."""
    stub = StrictStub(script=list(script or []), log=log)
    server = _server(stub, port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stub.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--script", type=Path)
    args = parser.parse_args(argv)
    script = json.loads(args.script.read_text()) if args.script else []
    stub = StrictStub(script=script, log=args.log)
    server = _server(stub, args.port)
    print("ready", flush=True)
    with suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
