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
  {"status": 400, "message": "…"}                 the API's error body with that message
and is rendered in the protocol of the request. Any entry may also carry a fault:
  "delay": 1.5   the answer waits that long (a slow upstream; a client that leaves meanwhile is
                 counted in `stub.gone`);
  "cut": true    the connection is reset halfway through the answer.
An entry with `"match": "…"` answers only a request whose path or body holds that text (an
agent's side requests, such as a title or a summary, then get the plain answer instead of using
up the script).

In process: `with serve(script) as stub:` → `stub.url`, `stub.requests`, `stub.refused()`,
`stub.raw(i)` (a request's exact bytes), `stub.answers` (the bytes of each answer).
As a program (run inside a network namespace by tests/agent_clis.py):
  python strict_stub.py --port 8765 [--log requests.jsonl] [--script script.json]
appends each request as one JSON line to the log, and prints "ready" once listening.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import re
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web

if __package__ in (None, ""):  # run as a program: make `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.strict_replies import (
    Entry,
    Reply,
    anthropic_reply,
    chat_reply,
    gemini_reply,
    json_reply,
    responses_reply,
    route_kind,
)
from tests.stub_servers import (
    anthropic_problem,
    chat_problem,
    gemini_problem,
    responses_problem,
)

Body = dict[str, Any]


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


# -- the stub's state and its answers --------------------------------------------------------

@dataclass
class Answer:
    """A reply and how it is sent: after `delay` seconds (a slow upstream), and with `cut` the
    connection is reset halfway through it (an upstream gone mid-stream)."""

    status: int
    content_type: str
    data: bytes
    delay: float = 0.0
    cut: bool = False


@dataclass
class StrictStub:
    """The stub's state: its script, and every request it got (kept in memory when `keep`,
    appended to `log` when given), the bytes of each answer, and how many clients left while
    a delayed answer was waited for (`gone`)."""

    script: list[Entry] = field(default_factory=list)
    requests: list[Body] = field(default_factory=list)
    answers: list[bytes] = field(default_factory=list)
    log: Path | None = None
    keep: bool = True
    url: str = ""
    gone: int = 0
    _count: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def refused(self) -> list[Body]:
        return [r for r in self.requests if r.get("problem")]

    def raw(self, index: int = -1) -> bytes:
        """The exact bytes of a request's body."""
        record = self.requests[index]
        if record["raw"] is not None:
            return str(record["raw"]).encode("utf-8")
        return base64.b64decode(record["raw_base64"])

    def answer(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Answer:
        kind = route_kind(path) if method == "POST" else None
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        with self._lock:
            entry: Entry = {}
            problem = None
            if kind is None:
                reply = json_reply(404, {"error": {"message": f"no route {method} {path}"}})
            elif not isinstance(body, dict):
                problem = "the request body is not a JSON object"
                reply = json_reply(400, error_body(kind, problem))
            else:
                problem = _CHECKS[kind](body)
                if problem is not None:
                    reply = json_reply(400, error_body(kind, problem))
                elif kind == "count_tokens":
                    reply = json_reply(200, {"input_tokens": len(raw) // 4})
                else:
                    self._count += 1
                    entry = self._next(path, json.dumps(body))
                    reply = self._reply(entry, kind, path, body, self._count)
            if self.keep or self.log is not None:
                self._record({"method": method, "path": path, "kind": kind,
                              "headers": headers, "body": body, "status": reply[0],
                              "problem": problem, **_raw(raw)}, reply[2])
        return Answer(*reply, delay=float(entry.get("delay") or 0), cut=bool(entry.get("cut")))

    def _record(self, record: Body, answer: bytes) -> None:
        if self.keep:
            self.requests.append(record)
            self.answers.append(answer)
        if self.log is not None:
            with open(self.log, "a", encoding="utf-8") as out:
                out.write(json.dumps(record) + "\n")

    def _next(self, path: str, text: str) -> Entry:
        """The first script entry for this request, taken off the script ({} if none)."""
        for k, entry in enumerate(self.script):
            want = entry.get("match")
            if want is None or want in path or want in text:
                return self.script.pop(k)
        return {}

    def _reply(self, entry: Entry, kind: str, path: str, body: Body, n: int) -> Reply:
        if "status" in entry:
            status = int(entry["status"])
            return json_reply(status, entry.get("body") or error_body(
                kind, entry.get("message") or "scripted error", status))
        if kind == "anthropic":
            return anthropic_reply(entry, body, n)
        if kind == "responses":
            return responses_reply(entry, body, n)
        if kind == "chat":
            return chat_reply(entry, body, n)
        return gemini_reply(entry, body, n, stream=kind == "gemini_stream",
                            sse=bool(re.search(r"[?&]alt=sse", path)))


def _raw(raw: bytes) -> Body:
    """A request's bytes as a record keeps them: text when they are UTF-8, else base64."""
    try:
        return {"raw": raw.decode("utf-8"), "raw_base64": None}
    except UnicodeDecodeError:
        return {"raw": None, "raw_base64": base64.b64encode(raw).decode()}


# -- the server (aiohttp) ------------------------------------------------------------------

def app(stub: StrictStub) -> web.Application:
    """The stub as an aiohttp application: every method and path goes to `stub.answer`; an
    event stream is sent in two pieces, as a provider streams it."""

    async def handle(request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        headers = {k.lower(): v for k, v in request.headers.items()}
        answer = stub.answer(request.method, request.raw_path, headers, raw)
        if answer.delay:
            await asyncio.sleep(answer.delay)
            if request.transport is None or request.transport.is_closing():
                stub.gone += 1
        head = {"content-type": answer.content_type}
        if answer.content_type != "text/event-stream" and not answer.cut:
            return web.Response(status=answer.status, body=answer.data, headers=head)
        response = web.StreamResponse(status=answer.status, headers=head)
        await response.prepare(request)
        half = len(answer.data) // 2
        await response.write(answer.data[:half])
        await asyncio.sleep(0.01 if not answer.cut else 0.05)
        if answer.cut:
            if request.transport is not None:
                request.transport.abort()
            return response
        await response.write(answer.data[half:])
        await response.write_eof()
        return response

    application = web.Application(client_max_size=512 * 1024 * 1024)
    application.router.add_route("*", "/{tail:.*}", handle)
    return application


async def start(stub: StrictStub, port: int = 0) -> Callable[[], Awaitable[None]]:
    """Serves `stub` on 127.0.0.1:`port` (0: a free one), sets `stub.url`; returns its stop."""
    runner = web.AppRunner(app(stub), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    server = site._server
    assert isinstance(server, asyncio.base_events.Server)
    stub.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    return runner.cleanup


T = TypeVar("T")


@contextmanager
def in_thread(begin: Callable[[], Awaitable[tuple[T, Callable[[], Awaitable[None]]]]],
              new_loop: Callable[[], asyncio.AbstractEventLoop] = asyncio.new_event_loop,
              ) -> Iterator[T]:
    """Runs `begin` on an event loop of its own (made by `new_loop`) in a daemon thread;
    yields what it returned, and afterwards runs the stop it returned and closes the loop."""
    loop = new_loop()
    result: list[Any] = []
    ready = threading.Event()

    def main() -> None:
        asyncio.set_event_loop(loop)
        result.extend(loop.run_until_complete(begin()))
        ready.set()
        loop.run_forever()
        loop.run_until_complete(result[1]())
        loop.close()

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    assert ready.wait(30), "the server did not start"
    try:
        yield result[0]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


@contextmanager
def serve(script: list[Entry] | None = None, log: Path | None = None,
          port: int = 0) -> Iterator[StrictStub]:
    """A running stub on 127.0.0.1; its base URL (no /v1) is `stub.url`."""
    stub = StrictStub(script=list(script or []), log=log)

    async def begin() -> tuple[StrictStub, Callable[[], Awaitable[None]]]:
        return stub, await start(stub, port)

    with in_thread(begin) as running:
        yield running


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--log", type=Path, help="append each request here as a JSON line")
    parser.add_argument("--script", type=Path)
    args = parser.parse_args(argv)
    script = json.loads(args.script.read_text()) if args.script else []
    stub = StrictStub(script=script, log=args.log, keep=False)

    async def run() -> None:
        await start(stub, args.port)
        print("ready", flush=True)
        await asyncio.Event().wait()

    with suppress(KeyboardInterrupt):
        asyncio.run(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
