"""Local stand-ins for provider endpoints on 127.0.0.1, and the one home of each API's rules.

`responses_problem`, `chat_problem`, `anthropic_problem` and `gemini_problem` say, with the real
API's message, what the real API refuses in a request's history: a call with no output, an
output with no call, reasoning without its following item, a `call_id` over 64 characters
(Responses); a tool message that answers no call or a call left unanswered, a call id over 40
characters, a function name outside `^[a-zA-Z0-9_-]+$`, arguments that are not the JSON text of
an object (Chat Completions; the last as OpenAI-compatible servers refuse it); a `tool_use` not
answered by `tool_result` blocks at the start of the next message, an orphan or repeated
result, an id used twice or outside the id pattern, a name outside the tool name pattern, an
`input` that is not an object, an image over the pixel limit (Anthropic Messages); a function
call or response turn out of place or miscounted (Gemini). They are written from the
providers' documented errors (docs/provider-rules.md), not from sessionctx's own validators.

`serve` is a small in-process Responses / Chat Completions stub; tests/strict_stub.py serves
every API with streaming, recording and scripted tool calls.
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.strict_replies import response_object

Body = dict[str, Any]

_CALLS = {
    "function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output", "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output", "apply_patch_call": "apply_patch_call_output",
}
_OUTPUTS = {v: k for k, v in _CALLS.items()}
_ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_CHAT_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
_ANTHROPIC_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _json_object_text(text: Any) -> bool:
    try:
        return isinstance(text, str) and isinstance(json.loads(text), dict)
    except ValueError:
        return False


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
    if isinstance(items, str) or body.get("previous_response_id"):
        return None  # text alone, or a history that continues one stored upstream, unseen here
    items = items or []
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for i, item in enumerate(items):
        kind = item.get("type")
        if kind in _CALLS:
            if len(str(item.get("call_id"))) > 64:
                return (f"Invalid 'input[{i}].call_id': string too long. Expected a string "
                        "with maximum length 64")
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
            for k, cid in enumerate(open_ids):
                if len(str(cid)) > 40:
                    return (f"Invalid 'messages[{i}].tool_calls[{k}].id': string too long. "
                            "Expected a string with maximum length 40")
            for k, call in enumerate(message.get("tool_calls") or []):
                function = call.get("function") or {}
                if not _CHAT_NAME.fullmatch(str(function.get("name"))):
                    return (f"Invalid 'messages[{i}].tool_calls[{k}].function.name': string "
                            "does not match pattern. Expected a string that matches the "
                            "pattern '^[a-zA-Z0-9_-]+$'.")
                if not _json_object_text(function.get("arguments")):
                    return (f"Invalid 'messages[{i}].tool_calls[{k}].function.arguments': "
                            "expected the JSON text of an object.")
    if open_ids:
        return ("An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(open_ids)}")
    return None


def anthropic_problem(body: Body) -> str | None:
    """The Messages API's refusal of `body`'s history, or None. Consecutive turns of one role
    are combined first, as the API does; mid-conversation `system` messages hold no blocks that
    pair, so they are passed over when finding the message after a `tool_use`."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    too_large = _anthropic_image_problem(messages)
    if too_large is not None:
        return too_large
    turns: list[tuple[int, str, list[Any]]] = []  # first index, role, blocks
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant", "system"):
            return f"messages.{i}.role: Input should be 'user', 'assistant' or 'system'"
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            return f"messages.{i}.content: Input should be a valid list"
        if role == "user" and not blocks:
            return f"messages.{i}: user messages must have non-empty content"
        for j, block in enumerate(blocks):
            kind = block.get("type")
            final_assistant = role == "assistant" and i == len(messages) - 1
            if kind == "text" and not str(block.get("text", "")).strip() and not final_assistant:
                return "messages: text content blocks must contain non-whitespace text"
            if kind == "thinking" and "signature" not in block:
                return f"messages.{i}.content.{j}.thinking.signature: Field required"
            if kind == "tool_use":
                if not _ANTHROPIC_ID.fullmatch(str(block.get("id"))):
                    return (f"messages.{i}.content.{j}.tool_use.id: String should match "
                            "pattern '^[a-zA-Z0-9_-]+$'")
                if block.get("id") in seen_ids:
                    return f"messages.{i}.content.{j}: `tool_use` ids must be unique"
                if not _ANTHROPIC_NAME.fullmatch(str(block.get("name"))):
                    return (f"messages.{i}.content.{j}.tool_use.name: String should match "
                            "pattern '^[a-zA-Z0-9_-]{1,64}$'")
                if not isinstance(block.get("input"), dict):
                    return (f"messages.{i}.content.{j}.tool_use.input: Input should be a "
                            "valid dictionary")
                seen_ids.add(block.get("id"))
            if kind == "tool_result" and role != "user":
                return (f"messages.{i}.content.{j}: `tool_result` blocks can only be in "
                        "`user` messages")
        if role == "system":
            continue
        if turns and turns[-1][1] == role:
            turns[-1][2].extend(blocks)
        else:
            turns.append((i, role, list(blocks)))
    for t, (i, role, blocks) in enumerate(turns):
        previous = turns[t - 1] if t else None
        asked = ([b.get("id") for b in previous[2] if b.get("type") == "tool_use"]
                 if previous is not None and previous[1] == "assistant" else [])
        if role == "user":
            answered: list[str] = []
            for j, block in enumerate(blocks):
                if block.get("type") != "tool_result":
                    continue
                cid = block.get("tool_use_id")
                if cid not in asked:
                    return (f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                            f"`tool_result` blocks: {cid}. Each `tool_result` block must have "
                            "a corresponding `tool_use` block in the previous message.")
                if cid in answered:
                    return (f"messages.{i}.content.{j}: each tool_use must have a single "
                            f"result. Found multiple `tool_result` blocks with id: {cid}")
                answered.append(cid)
        if role == "assistant":
            ids = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            nxt = turns[t + 1] if t + 1 < len(turns) else None
            leading: list[str] = []
            for block in (nxt[2] if nxt is not None and nxt[1] == "user" else []):
                if block.get("type") != "tool_result":
                    break
                leading.append(block.get("tool_use_id"))
            missing = [cid for cid in ids if cid not in leading]
            if missing:
                return (f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                        f"immediately after: {', '.join(missing)}. Each `tool_use` block must "
                        "have a corresponding `tool_result` block in the next message.")
    return None


def _anthropic_image_problem(messages: list[Any]) -> str | None:
    """An image with a side over 8000 px, or over 2000 px in a request of more than 20 images
    (docs/provider-rules.md §1.5; the messages as anthropics/claude-code#5147 and #13480 quote
    them). The size is read by Pillow, not by sessionctx's header parser."""
    found: list[tuple[str, Any]] = []
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            inner = block.get("content") if isinstance(block, dict) and block.get(
                "type") == "tool_result" else None
            nested = [(f"messages.{i}.content.{j}.content.{k}", b)
                      for k, b in enumerate(inner if isinstance(inner, list) else [])]
            for where, b in [(f"messages.{i}.content.{j}", block), *nested]:
                if isinstance(b, dict) and b.get("type") == "image":
                    found.append((where, b.get("source")))
    if not found:
        return None
    from PIL import Image

    many = len(found) > 20
    limit = 2000 if many else 8000
    for where, source in found:
        if not isinstance(source, dict) or source.get("type") != "base64":
            continue
        try:
            with Image.open(io.BytesIO(base64.b64decode(source.get("data", "")))) as img:
                size = img.size
        except Exception:  # not an image Pillow reads: another rule's business
            continue
        if max(size) > limit:
            return (f"{where}.image.source.base64.data: At least one of the image dimensions "
                    "exceed max allowed size" + (" for many-image requests" if many else "")
                    + f": {limit} pixels")
    return None


def gemini_problem(body: Body) -> str | None:
    """The Gemini API's refusal of `body`'s `contents`, or None."""
    contents = body.get("contents") or []
    previous_calls: int | None = None  # function calls of the turn before, when it had any
    previous_kind = ""
    for content in contents:
        role = content.get("role", "user")
        if role not in ("user", "model"):
            return "Please use a valid role: user, model."
        parts = content.get("parts") or []
        calls = sum(1 for p in parts if "functionCall" in p)
        responses = sum(1 for p in parts if "functionResponse" in p)
        if calls and (role != "model" or previous_kind not in ("user", "response")):
            return ("Please ensure that function call turn comes immediately after a user "
                    "turn or after a function response turn.")
        if responses:
            if previous_calls is None:
                return ("Please ensure that function response turn comes immediately after a "
                        "function call turn.")
            if responses != previous_calls:
                return ("Please ensure that the number of function response parts is equal to "
                        "the number of function call parts of the function call turn.")
        elif previous_calls is not None:
            return ("Please ensure that function response turn comes immediately after a "
                    "function call turn.")
        previous_calls = calls or None
        previous_kind = ("call" if calls else "response" if responses
                         else "user" if role == "user" else "model")
    return None


def responses_reply(stub: Stub) -> Callable[[Body, int], Body]:
    def reply(body: Body, n: int) -> Body:
        output = stub.scripted.pop(0) if stub.scripted else [
            {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": f"answer {n}", "annotations": []}]}]
        return response_object(f"resp_{n}", body.get("model", "gpt-stub"), output,
                               1_700_000_000)
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
