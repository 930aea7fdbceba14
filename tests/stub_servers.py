"""Local stand-ins for the OpenAI Responses and Chat Completions endpoints on 127.0.0.1.

Each rejects, with the real API's messages, what the real API rejects in a history: a call with
no output, an output with no call, reasoning without its following item (Responses), a tool
message that answers no call or a call left unanswered (Chat Completions). Otherwise it answers
with the next scripted reply, or a plain text one, and keeps every request body it got.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Body = dict[str, Any]

_CALLS = {
    "function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output", "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output", "apply_patch_call": "apply_patch_call_output",
}
_OUTPUTS = {v: k for k, v in _CALLS.items()}


class Stub:
    def __init__(self, reply: Callable[[Body, int], Body]) -> None:
        self.bodies: list[Body] = []
        self.rejected: list[str] = []
        self._reply = reply
        self.scripted: list[Any] = []
        self.url = ""

    def handle(self, body: Body, problem: str | None) -> tuple[int, Body]:
        self.bodies.append(body)
        if problem is not None:
            self.rejected.append(problem)
            return 400, {"error": {"message": problem, "type": "invalid_request_error",
                                   "param": "input", "code": None}}
        return 200, self._reply(body, len(self.bodies))


def responses_problem(body: Body) -> str | None:
    items = body.get("input")
    if isinstance(items, str):
        return None
    items = items or []
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for i, item in enumerate(items):
        kind = item.get("type")
        if kind in _CALLS:
            calls[item["call_id"]] = i
        elif kind in _OUTPUTS:
            cid = item.get("call_id")
            if cid not in calls:
                return f"No tool call found for function call output with call_id {cid}."
            answered.add(cid)
        elif kind == "reasoning":
            nxt = items[i + 1] if i + 1 < len(items) else None
            model_side = nxt is not None and (
                nxt.get("type") in (*_CALLS, "reasoning")
                or (nxt.get("type", "message") == "message" and nxt.get("role") == "assistant"))
            if not model_side:
                return (f"Item '{item.get('id')}' of type 'reasoning' was provided without its "
                        "required following item.")
    for cid in calls:
        if cid not in answered:
            return f"No tool output found for function call {cid}."
    return None


def chat_problem(body: Body) -> str | None:
    messages = body.get("messages") or []
    open_ids: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            cid = message.get("tool_call_id")
            if cid not in open_ids:
                return ("Invalid parameter: messages with role 'tool' must be a response to a "
                        f"preceeding message with 'tool_calls'. (messages.[{i}].role)")
            open_ids.remove(cid)
            continue
        if open_ids:
            return ("An assistant message with 'tool_calls' must be followed by tool messages "
                    "responding to each 'tool_call_id'. The following tool_call_ids did not "
                    f"have response messages: {', '.join(open_ids)}")
        if role == "assistant":
            open_ids = [c["id"] for c in message.get("tool_calls") or []]
    if open_ids:
        return ("An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(open_ids)}")
    return None


def responses_reply(stub: Stub) -> Callable[[Body, int], Body]:
    def reply(body: Body, n: int) -> Body:
        output = stub.scripted.pop(0) if stub.scripted else [
            {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": f"answer {n}", "annotations": []}]}]
        return {"id": f"resp_{n}", "object": "response", "created_at": 1_700_000_000,
                "model": body.get("model", "gpt-stub"), "status": "completed",
                "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
                "tools": [], "error": None, "incomplete_details": None,
                "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                          "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 0}}}
    return reply


def chat_reply(stub: Stub) -> Callable[[Body, int], Body]:
    def reply(body: Body, n: int) -> Body:
        message = stub.scripted.pop(0) if stub.scripted else {
            "role": "assistant", "content": f"answer {n}"}
        return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1_700_000_000,
                "model": body.get("model", "gpt-stub"),
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if message.get("tool_calls")
                             else "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
    return reply


@contextmanager
def json_server(answer: Callable[[str, Any], tuple[int, Any]],
                headers: list[dict[str, str]] | None = None) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 answering each JSON POST with `answer(path, body)`
    (a status and a JSON value); yields its base URL. Each request's headers, names in lower
    case, are appended to `headers` when given."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            if headers is not None:
                headers.append({k.lower(): v for k, v in self.headers.items()})
            status, out = answer(self.path, json.loads(self.rfile.read(length) or b"{}"))
            data = json.dumps(out).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serve(kind: str) -> Iterator[Stub]:
    """A stub for `kind` ("responses" or "chat"), its base URL (…/v1) in `stub.url`."""
    stub = Stub(lambda body, n: {})
    stub._reply = responses_reply(stub) if kind == "responses" else chat_reply(stub)
    check = responses_problem if kind == "responses" else chat_problem
    with json_server(lambda path, body: stub.handle(body, check(body))) as url:
        stub.url = f"{url}/v1"
        yield stub
