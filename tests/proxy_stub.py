"""A strict upstream for the proxy's tests, on 127.0.0.1: the four APIs, JSON and SSE, refusing
what the real APIs refuse in a history with their own messages, keeping the exact bytes and
headers of every request; with faults on demand (slow, reset mid-stream, a 400 it sets).

The proxy runs in a thread of its own (`running_proxy`), as `sessionctx run` runs it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from sessionctx.proxy.server import Settings, Totals, serve
from tests.stub_servers import chat_problem, responses_problem

Body = dict[str, Any]


def anthropic_problem(body: Body) -> str | None:
    """Anthropic's refusals of a history, checked apart from sessionctx's own validator."""
    expect: list[str] = []
    for i, m in enumerate(body.get("messages") or []):
        content = m.get("content")
        blocks = content if isinstance(content, list) else []
        leading = []
        for b in blocks:
            if b.get("type") != "tool_result":
                break
            leading.append(b.get("tool_use_id"))
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if expect and sorted(leading) != sorted(expect):
            return (f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(expect)}. Each `tool_use` block must have "
                    "a corresponding `tool_result` block in the next message.")
        if not expect and results:
            return (f"messages.{i}.content.0: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {results[0]}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message.")
        expect = [b["id"] for b in blocks if b.get("type") == "tool_use"] \
            if m.get("role") == "assistant" else []
    if expect:
        return (f"messages.{len(body['messages']) - 1}: `tool_use` ids were found without "
                f"`tool_result` blocks immediately after: {', '.join(expect)}.")
    return None


def gemini_problem(body: Body) -> str | None:
    prev = 0
    for content in body.get("contents") or []:
        parts = content.get("parts") or []
        calls = sum("functionCall" in p for p in parts)
        responses = sum("functionResponse" in p for p in parts)
        if prev and responses != prev:
            return ("Please ensure that the number of function response parts is equal to the "
                    "number of function call parts of the function call turn.")
        if responses and not prev:
            return ("Please ensure that function response turn comes immediately after a "
                    "function call turn.")
        prev = calls
    return None


def sse(events: list[tuple[str | None, Any]]) -> bytes:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out).encode()


def anthropic_answer(body: Body, stream: bool) -> bytes:
    model = body.get("model", "claude-stub")
    usage = {"input_tokens": 10, "output_tokens": 2}
    if not stream:
        return json.dumps({"id": "msg_1", "type": "message", "role": "assistant",
                           "model": model, "content": [{"type": "text", "text": "done é"}],
                           "stop_reason": "end_turn", "stop_sequence": None,
                           "usage": usage}).encode()
    return sse([
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "done "}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "é"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                              "stop_sequence": None},
                           "usage": {"output_tokens": 2}}),
        ("message_stop", {"type": "message_stop"})])


def chat_answer(body: Body, stream: bool) -> bytes:
    base = {"id": "chatcmpl-1", "created": 1_700_000_000, "model": body.get("model", "gpt")}
    if not stream:
        return json.dumps({**base, "object": "chat.completion", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "done é"},
             "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}).encode()
    chunk = {**base, "object": "chat.completion.chunk"}
    return sse([(None, {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant",
                                                                    "content": ""}}]}),
                (None, {**chunk, "choices": [{"index": 0, "delta": {"content": "done é"}}]}),
                (None, {**chunk, "choices": [{"index": 0, "delta": {},
                                              "finish_reason": "stop"}]}),
                (None, "[DONE]")])


def responses_answer(body: Body, stream: bool) -> bytes:
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "done é", "annotations": []}]}
    response = {"id": "resp_1", "object": "response", "created_at": 1_700_000_000,
                "model": body.get("model", "gpt"), "status": "completed", "output": [item],
                "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                "error": None, "incomplete_details": None,
                "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5,
                          "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 0}}}
    if not stream:
        return json.dumps(response).encode()
    created = {**response, "status": "in_progress", "output": []}
    return sse([
        ("response.created", {"type": "response.created", "sequence_number": 0,
                              "response": created}),
        ("response.output_item.added", {"type": "response.output_item.added",
                                        "sequence_number": 1, "output_index": 0,
                                        "item": {**item, "status": "in_progress",
                                                 "content": []}}),
        ("response.output_text.delta", {"type": "response.output_text.delta",
                                        "sequence_number": 2, "item_id": "msg_1",
                                        "output_index": 0, "content_index": 0,
                                        "delta": "done é", "logprobs": []}),
        ("response.output_item.done", {"type": "response.output_item.done",
                                       "sequence_number": 3, "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "sequence_number": 4,
                                "response": response})])


def gemini_answer(body: Body, stream: bool) -> bytes:
    answer = {"candidates": [{"content": {"role": "model", "parts": [{"text": "done é"}]},
                              "finishReason": "STOP", "index": 0}],
              "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2,
                                "totalTokenCount": 5}, "modelVersion": "gemini-2.5-flash"}
    return sse([(None, answer)]) if stream else json.dumps(answer).encode()


@dataclass
class Upstream:
    """What the stub got, and the faults it is to make."""

    url: str = ""
    raw: list[bytes] = field(default_factory=list)
    bodies: list[Body] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    delay: float = 0.0  # seconds before answering
    reset_mid_stream: bool = False
    refuse_next: str | None = None  # a 400 message for the next request, whatever it holds
    answers: list[bytes] = field(default_factory=list)  # the bytes of each answer sent
    gone: int = 0  # requests whose connection closed while the stub was still answering


def _app(up: Upstream) -> web.Application:
    async def handle(request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        up.raw.append(raw)
        up.headers.append({k.lower(): v for k, v in request.headers.items()})
        path = request.path
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            return web.json_response({"error": {"message": "stub: malformed JSON",
                                                "type": "invalid_request_error"}}, status=400)
        up.bodies.append(body)
        if up.delay:
            await asyncio.sleep(up.delay)
            if request.transport is None or request.transport.is_closing():
                up.gone += 1
        if path.startswith("/v1/messages"):
            kind, problem = anthropic_answer, anthropic_problem(body)
        elif path == "/v1/chat/completions":
            kind, problem = chat_answer, chat_problem(body)
        elif path == "/v1/responses":
            kind, problem = responses_answer, responses_problem(body)
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            kind, problem = gemini_answer, gemini_problem(body)
        else:
            return web.json_response({"path": path, "raw": request.raw_path,
                                      "method": request.method}, status=404)
        if up.refuse_next is not None:
            problem, up.refuse_next = up.refuse_next, None
        if problem is not None:
            up.refused.append(problem)
            error = {"type": "error", "error": {"type": "invalid_request_error",
                                                "message": problem}}
            return web.json_response(error, status=400)
        stream = body.get("stream") is True or ":streamGenerateContent" in path
        data = kind(body, stream)
        up.answers.append(data)
        if not stream:
            return web.Response(body=data, content_type="application/json")
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        half = len(data) // 2
        await response.write(data[:half])
        if up.reset_mid_stream:
            await asyncio.sleep(0.05)
            assert request.transport is not None
            request.transport.abort()
            return response
        await asyncio.sleep(0.01)
        await response.write(data[half:])
        await response.write_eof()
        return response

    app = web.Application(client_max_size=512 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


@contextmanager
def _in_thread(start: Any) -> Iterator[Any]:
    loop = asyncio.new_event_loop()
    result: dict[str, Any] = {}
    ready = threading.Event()

    def main() -> None:
        asyncio.set_event_loop(loop)
        result["value"], result["stop"] = loop.run_until_complete(start())
        ready.set()
        loop.run_forever()
        loop.run_until_complete(result["stop"]())
        loop.close()

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    assert ready.wait(30)
    try:
        yield result["value"]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


@contextmanager
def upstream() -> Iterator[Upstream]:
    up = Upstream()

    async def start() -> tuple[Upstream, Any]:
        runner = web.AppRunner(_app(up), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        up.url = f"http://127.0.0.1:{port}"
        return up, runner.cleanup

    with _in_thread(start) as value:
        yield value


@dataclass
class RunningProxy:
    url: str
    totals: Totals


@contextmanager
def running_proxy(base: str, store: str | None = None, *,
                  note_unpaired: bool = False) -> Iterator[RunningProxy]:
    """The proxy in a thread, every provider's upstream at `base`."""
    settings = Settings({"anthropic": base, "openai": base, "gemini": base}, store,
                        note_unpaired, quiet=True)

    async def start() -> tuple[RunningProxy, Any]:
        ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        task = asyncio.get_running_loop().create_task(
            serve(settings, "127.0.0.1", 0, ready))
        port = await ready

        async def stop() -> None:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task

        return RunningProxy(f"http://127.0.0.1:{port}", settings.totals), stop

    with _in_thread(start) as value:
        yield value
