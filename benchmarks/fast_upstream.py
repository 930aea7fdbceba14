"""A provider stand-in that costs less than any proxy in front of it: the upstream with which
benchmarks/bench_proxy.py measures a proxy's throughput.

The strict stub (tests/strict_stub.py) decodes and checks every body in Python, about as much
work per 1 MB request as a proxy does, so with it upstream the proxies' throughput is bounded
by the stub's own. This server reads each request whole (Content-Length or chunked, kept
alive) and answers with the bytes the strict stub renders for a valid request
(tests/strict_replies.py: the same JSON or event stream, an event stream sent chunked in two
pieces 10 ms apart, as the stub sends one), rendered once at start. It reads no JSON: a
request streams when its body holds `"stream": true`. It checks nothing either; the last body
it received is answered to `GET /_last`, so that a client can check what arrived.

  python fast_upstream.py --port N     (uvloop where installed; prints "ready")
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections.abc import Awaitable, Callable
from contextlib import suppress
from pathlib import Path
from typing import cast

if __package__ in (None, ""):  # run as a program: make `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.strict_replies import anthropic_reply, json_reply, responses_reply, route_kind

ANTHROPIC_MODEL = "claude-sonnet-4-5"
RESPONSES_MODEL = "gpt-5.1"
LAST = "/_last"
_STREAM = re.compile(rb'"stream"\s*:\s*true')
_REASONS = {200: "OK", 404: "Not Found"}


def _head(status: int, content_type: str, length: int | None) -> bytes:
    size = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    return (f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: {content_type}\r\n"
            f"{size}\r\n\r\n").encode()


def _whole(reply: tuple[int, str, bytes]) -> bytes:
    status, content_type, data = reply
    return _head(status, content_type, len(data)) + data


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _stream(reply: tuple[int, str, bytes]) -> tuple[bytes, bytes]:
    """An event stream as two writes: the head and its first half, then the rest and the end."""
    status, content_type, data = reply
    half = len(data) // 2
    return (_head(status, content_type, None) + _chunk(data[:half]),
            _chunk(data[half:]) + b"0\r\n\r\n")


_ANSWERS = {
    "anthropic": _whole(anthropic_reply({}, {"model": ANTHROPIC_MODEL}, 1)),
    "responses": _whole(responses_reply({}, {"model": RESPONSES_MODEL}, 1)),
}
_STREAMS = {
    "anthropic": _stream(anthropic_reply({}, {"model": ANTHROPIC_MODEL, "stream": True}, 1)),
    "responses": _stream(responses_reply({}, {"model": RESPONSES_MODEL, "stream": True}, 1)),
}
_OK = _whole(json_reply(200, {"status": "ok"}))


def _not_found(method: str, target: str) -> bytes:
    return _whole(json_reply(404, {"error": {"message": f"no route {method} {target}"}}))


class _Request:
    """One request as it is read: its line and headers, then its body."""

    def __init__(self, method: str, target: str, headers: dict[str, str]) -> None:
        self.method, self.target = method, target
        self.chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        self.length = int(headers.get("content-length") or 0)
        self.close = headers.get("connection", "").lower() == "close"
        self.body = bytearray()


class Upstream(asyncio.Protocol):
    """One connection: requests read one after the other, each answered once it is whole."""

    last = bytearray()  # the last POST body received, on any connection

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.request: _Request | None = None
        self.transport: asyncio.Transport | None = None
        self.streaming = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._advance()

    def _advance(self) -> None:
        while not self.streaming and self.transport is not None:
            if self.request is None and not self._read_head():
                return
            request = self.request
            assert request is not None
            if not (self._read_chunks(request) if request.chunked else self._read_body(request)):
                return
            self.request = None
            self._answer(request)

    def _read_head(self) -> bool:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return False
        lines = self.buffer[:end].decode("latin-1").split("\r\n")
        del self.buffer[:end + 4]
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        self.request = _Request(method, target, headers)
        if headers.get("expect", "").lower() == "100-continue" and self.transport is not None:
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        return True

    def _read_body(self, request: _Request) -> bool:
        if len(self.buffer) < request.length:
            return False
        request.body = self.buffer[:request.length]
        del self.buffer[:request.length]
        return True

    def _read_chunks(self, request: _Request) -> bool:
        """Takes whole chunks off the buffer; True once the last (empty) one is read."""
        while True:
            end = self.buffer.find(b"\r\n")
            if end < 0:
                return False
            size = int(bytes(self.buffer[:end]).split(b";")[0], 16)
            if size == 0:  # the last chunk, then trailers up to an empty line
                rest = end + 2
                if self.buffer[rest:rest + 2] == b"\r\n":
                    stop = rest + 2
                else:
                    found = self.buffer.find(b"\r\n\r\n", rest)
                    if found < 0:
                        return False
                    stop = found + 4
                del self.buffer[:stop]
                return True
            if len(self.buffer) < end + 2 + size + 2:
                return False
            request.body += self.buffer[end + 2:end + 2 + size]
            del self.buffer[:end + 2 + size + 2]

    def _answer(self, request: _Request) -> None:
        transport = self.transport
        assert transport is not None
        kind = route_kind(request.target) if request.method == "POST" else None
        if kind not in _ANSWERS:  # a route this upstream does not answer
            kind = None
        if request.method == "POST":
            Upstream.last = request.body
        if kind is not None and _STREAM.search(request.body):
            first, rest = _STREAMS[kind]
            transport.write(first)
            self.streaming = True
            asyncio.get_running_loop().call_later(0.01, self._finish, rest, request.close)
            return
        if kind is not None:
            transport.write(_ANSWERS[kind])
        elif request.method == "GET" and request.target == LAST:
            transport.write(_head(200, "application/octet-stream", len(Upstream.last))
                            + Upstream.last)
        elif request.method == "GET" and request.target == "/health":
            transport.write(_OK)
        else:
            transport.write(_not_found(request.method, request.target))
        if request.close:
            transport.close()

    def _finish(self, rest: bytes, close: bool) -> None:
        self.streaming = False
        if self.transport is None:
            return
        self.transport.write(rest)
        if close:
            self.transport.close()
            return
        self._advance()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


async def start(port: int = 0) -> tuple[int, Callable[[], Awaitable[None]]]:
    """Serves on 127.0.0.1:`port` (0: a free one); returns the port and the server's stop."""
    server = await asyncio.get_running_loop().create_server(Upstream, "127.0.0.1", port)

    async def stop() -> None:
        server.close()
        await server.wait_closed()

    return int(server.sockets[0].getsockname()[1]), stop


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args(argv)

    async def run() -> None:
        await start(args.port)
        print("ready", flush=True)
        await asyncio.Event().wait()

    try:
        import uvloop
        new_loop: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    except ImportError:
        new_loop = asyncio.new_event_loop
    with suppress(KeyboardInterrupt), asyncio.Runner(loop_factory=new_loop) as runner:
        runner.run(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
