"""The proxy's wire, against upstreams written here byte by byte: an event stream reaches the
client as it arrives (its first event before the upstream has sent the next), a client that
leaves mid-stream closes the upstream request, hop-by-hop headers stop at the proxy both ways
while every other header passes, and a request that names a host in its target still goes to
the configured upstream."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import http.client
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from aiohttp import web

from tests.proxy_thread import post, running_proxy
from tests.strict_stub import in_thread, serve
from tests.test_proxy_faults import BROKEN

VALID = {"model": "claude-sonnet-4-5", "max_tokens": 8, "stream": True,
         "messages": [{"role": "user", "content": "hi"}]}


@contextmanager
def upstream(handle: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> Iterator[str]:
    """An aiohttp upstream on 127.0.0.1 answering every request with `handle`; its base URL."""

    async def begin() -> tuple[str, Callable[[], Awaitable[None]]]:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        runner = web.AppRunner(app, handler_cancellation=True)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return f"http://127.0.0.1:{port}", runner.cleanup

    with in_thread(begin) as url:
        yield url


@contextmanager
def raw_upstream(answer: bytes, heads: list[tuple[bytes, bytes]]) -> Iterator[str]:
    """An upstream that answers every request with the bytes `answer` and keeps each request
    it got in `heads`: its head (request line and headers) and its body, as sent."""

    async def begin() -> tuple[str, Callable[[], Awaitable[None]]]:
        async def serve_one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            heads.append((head, await reader.readexactly(length)))
            writer.write(answer)
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve_one, "127.0.0.1", 0)

        async def stop() -> None:
            server.close()
            await server.wait_closed()

        return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", stop

    with in_thread(begin) as url:
        yield url


def test_events_arrive_as_sent_and_a_client_gone_mid_stream_closes_the_upstream():
    sent_more = threading.Event()  # the client has the first event: the upstream goes on
    seen: dict[str, Any] = {}

    async def handle(request: web.Request) -> web.StreamResponse:
        await request.read()
        if request.path != "/v1/messages":
            return web.json_response({"ok": True})
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b'event: message_start\ndata: {"type": "message_start"}\n\n')
        seen["waited"] = await asyncio.to_thread(sent_more.wait, 10)
        try:
            for i in range(200):
                await response.write(f'event: ping\ndata: {{"n": {i}}}\n\n'.encode())
                await asyncio.sleep(0.02)
            seen["finished"] = True
        except (ConnectionError, asyncio.CancelledError) as exc:
            seen["gone"] = type(exc).__name__
            raise
        return response

    with upstream(handle) as base, running_proxy(base) as proxy:
        host, port = proxy.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("POST", "/v1/messages", body=json.dumps(VALID).encode(),
                     headers={"content-type": "application/json"})
        response = conn.getresponse()
        assert response.status == 200
        first = [response.readline() for _ in range(3)]  # before the upstream sends more
        assert first == [b"event: message_start\n", b'data: {"type": "message_start"}\n', b"\n"]
        assert "waited" not in seen
        sent_more.set()
        assert response.readline() == b"event: ping\n"
        conn.sock.close()  # the client leaves mid-stream
        conn.close()
        deadline = time.monotonic() + 10
        while "gone" not in seen and "finished" not in seen and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "gone" in seen and "finished" not in seen  # closed long before its 200 events
        assert post(proxy.url, "/v1/models", b"", method="GET")[0] == 200  # the proxy goes on


def test_hop_by_hop_headers_stop_at_the_proxy_both_ways_and_the_others_pass():
    heads: list[tuple[bytes, bytes]] = []
    answer = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n"
              b"x-request-id: req_1\r\nanthropic-ratelimit-requests-remaining: 9\r\n"
              b"connection: close, x-hop-answer\r\nx-hop-answer: 1\r\nkeep-alive: timeout=5\r\n"
              b"proxy-authenticate: Basic\r\ntrailer: x-later\r\n\r\n{}")
    body = json.dumps({**VALID, "stream": False}).encode()
    with raw_upstream(answer, heads) as base, running_proxy(base) as proxy:
        host, port = proxy.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as s:
            s.sendall(b"POST /v1/messages?beta=true HTTP/1.1\r\nHost: proxy.example\r\n"
                      b"Content-Type: application/json\r\nX-Api-Key: k\r\n"
                      b"anthropic-beta: b1\r\nX-Custom-Case: Value \xc3\xa9\r\n"
                      b"Connection: keep-alive, X-Hop-Request\r\nX-Hop-Request: 1\r\n"
                      b"Keep-Alive: timeout=5\r\nTE: trailers\r\nTrailer: x-later\r\n"
                      b"Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n"
                      + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            got = b""
            while not got.endswith(b"{}"):
                chunk = s.recv(65536)
                assert chunk, got
                got += chunk
    [(head, sent)] = heads
    assert sent == body
    lines = head.decode("utf-8").split("\r\n")
    assert lines[0] == "POST /v1/messages?beta=true HTTP/1.1"
    names = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip()
             for line in lines[1:] if line}
    assert names["x-api-key"] == "k" and names["anthropic-beta"] == "b1"
    assert names["x-custom-case"] == "Value é" and names["content-type"] == "application/json"
    assert names["host"] == base.removeprefix("http://")  # the upstream's, not the client's
    assert not {"x-hop-request", "keep-alive", "te", "trailer", "proxy-authorization",
                "proxy-connection"} & set(names)
    answered = got.decode().split("\r\n\r\n")[0].lower().split("\r\n")
    heard = {line.split(":", 1)[0] for line in answered[1:]}
    assert answered[0] == "http/1.1 200 ok"
    assert {"x-request-id", "anthropic-ratelimit-requests-remaining"} <= heard
    assert not {"x-hop-answer", "keep-alive", "proxy-authenticate", "trailer"} & heard


def test_a_target_that_names_a_host_goes_to_the_configured_upstream():
    body = json.dumps({**VALID, "stream": False}).encode()
    with serve() as up, running_proxy(up.url) as proxy:
        host, port = proxy.url.removeprefix("http://").split(":")
        for target in (b"http://evil.example/v1/messages?beta=true",
                       b"https://evil.example:8443/v1/messages?beta=true"):
            with socket.create_connection((host, int(port))) as s:
                s.sendall(b"POST " + target + b" HTTP/1.1\r\nHost: evil.example\r\n"
                          b"content-type: application/json\r\nconnection: close\r\n"
                          + f"content-length: {len(body)}\r\n\r\n".encode() + body)
                got = b""
                while chunk := s.recv(65536):
                    got += chunk
            assert got.startswith(b"HTTP/1.1 200 OK"), got[:300]
            assert up.requests[-1]["path"] == "/v1/messages?beta=true"
            assert up.requests[-1]["headers"]["host"] == up.url.removeprefix("http://")
        assert up.raw() == body


def test_count_tokens_is_repaired_like_the_request_and_a_valid_one_passes_as_sent():
    broken = {k: v for k, v in BROKEN.items() if k != "max_tokens"}
    valid = json.dumps({"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": "hi é"}]}, ensure_ascii=False).encode()
    with serve() as up, running_proxy(up.url) as proxy:
        direct, _, _ = post(up.url, "/v1/messages/count_tokens", json.dumps(broken).encode())
        assert direct == 400  # the stub counts only what the API would take
        status, headers, data = post(proxy.url, "/v1/messages/count_tokens?beta=true",
                                     json.dumps(broken).encode())
        assert status == 200 and "input_tokens" in json.loads(data)
        assert int(headers["x-sessionctx-changes"]) >= 1
        assert up.requests[-1]["path"] == "/v1/messages/count_tokens?beta=true"
        assert b'"t1"' not in up.raw() and not up.requests[-1]["problem"]
        status, headers, _ = post(proxy.url, "/v1/messages/count_tokens", valid)
        assert status == 200 and up.raw() == valid
        assert "x-sessionctx-changes" not in headers


def test_another_path_passes_untouched_whatever_its_body_holds():
    body = json.dumps(BROKEN, indent=1).encode()  # a history the proxy would repair elsewhere
    with serve() as up, running_proxy(up.url) as proxy:
        for path in ("/v1/messages/batches", "/v1/embeddings?x=%C3%A9",
                     "/v1beta/models/gemini-2.5-flash:countTokens"):
            status, headers, _ = post(proxy.url, path, body)
            assert status == 404 and "x-sessionctx-changes" not in headers  # the stub's answer
            assert up.requests[-1]["path"] == path and up.raw() == body
        assert proxy.totals.repaired == 0


def test_no_task_is_left_once_the_faults_are_over():
    """After a stream cut by the upstream, a client gone mid-answer and an upstream gone, the
    proxy's event loop holds only its own server task."""
    with serve([{"text": "x", "cut": True}, {"text": "y", "delay": 0.5}]) as up, \
            running_proxy(up.url) as proxy:
        host, port = proxy.url.removeprefix("http://").split(":")
        with contextlib.suppress(http.client.IncompleteRead, ConnectionError):
            post(proxy.url, "/v1/messages", json.dumps(VALID).encode())
        with socket.create_connection((host, int(port))) as s:
            body = json.dumps(VALID).encode()
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\n"
                      + f"content-length: {len(body)}\r\n\r\n".encode() + body)
            time.sleep(0.1)
        time.sleep(1.0)
        assert up.gone == 1

        async def others() -> list[str]:
            here = asyncio.current_task()
            return [repr(t.get_coro()) for t in asyncio.all_tasks() if t is not here]

        deadline = time.monotonic() + 10
        while True:
            left = asyncio.run_coroutine_threadsafe(others(), proxy.loop).result(10)
            if len(left) <= 1 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert len(left) == 1 and "serve" in left[0], left


def test_compressed_bodies_pass_as_their_bytes_both_ways():
    """A compressed request goes on unread, a compressed answer comes back undecompressed."""
    packed = gzip.compress(json.dumps(BROKEN).encode())
    answer_body = gzip.compress(b'{"content": [{"type": "text", "text": "ok"}]}')
    answer = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
              + f"content-length: {len(answer_body)}\r\n\r\n".encode() + answer_body)
    heads: list[tuple[bytes, bytes]] = []
    with raw_upstream(answer, heads) as base, running_proxy(base) as proxy:
        host, port = proxy.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("POST", "/v1/messages", body=packed,
                     headers={"content-type": "application/json", "content-encoding": "gzip"})
        response = conn.getresponse()
        got = response.read()
        conn.close()
        assert proxy.totals.repaired == 0
    assert response.status == 200 and got == answer_body
    assert response.getheader("content-encoding") == "gzip"
    head, sent = heads[0]
    assert sent == packed and b"content-encoding: gzip" in head.lower()
