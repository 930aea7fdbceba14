"""The benchmark's fast upstream (benchmarks/fast_upstream.py) answers as the strict stub does
for a valid request, reads bodies sent whole or chunked on one kept-alive connection, and keeps
the last body for a check of what arrived."""

from __future__ import annotations

import http.client
import json
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

import pytest

from benchmarks import fast_upstream
from tests.proxy_thread import post, running_proxy
from tests.strict_stub import in_thread, serve


@contextmanager
def fast() -> Iterator[str]:
    async def begin() -> tuple[str, Callable[[], Awaitable[None]]]:
        port, stop = await fast_upstream.start()
        return f"http://127.0.0.1:{port}", stop

    with in_thread(begin) as url:
        yield url


def anthropic_body(stream: bool, pad: int = 0) -> bytes:
    return json.dumps({"model": fast_upstream.ANTHROPIC_MODEL, "max_tokens": 16,
                       "messages": [{"role": "user", "content": "é " + "w" * pad}],
                       "stream": stream}, ensure_ascii=False).encode()


@pytest.mark.parametrize("stream", [False, True])
def test_an_anthropic_answer_is_the_strict_stubs_byte_for_byte(stream):
    data = anthropic_body(stream)
    with serve() as stub, fast() as url:
        want = post(stub.url, "/v1/messages", data)
        got = post(url, "/v1/messages?beta=true", data)
    assert got[0] == want[0] == 200
    assert got[1]["content-type"] == want[1]["content-type"]
    assert got[1].get("transfer-encoding") == want[1].get("transfer-encoding")
    assert got[2] == want[2]


@pytest.mark.parametrize("stream", [False, True])
def test_a_responses_answer_is_the_strict_stubs_but_for_its_time(stream):
    data = json.dumps({"model": fast_upstream.RESPONSES_MODEL, "input": "hi",
                       "stream": stream}).encode()
    with serve() as stub, fast() as url:
        want = post(stub.url, "/v1/responses", data)
        got = post(url, "/v1/responses", data)
    assert got[0] == want[0] == 200

    def timeless(answer: bytes) -> bytes:  # each "created_at" value left out
        first, *rest = answer.split(b'"created_at": ')
        return first + b"".join(part.split(b",", 1)[1] for part in rest)

    assert timeless(got[2]) == timeless(want[2])


def test_bodies_whole_and_chunked_on_one_connection_and_the_last_one_kept():
    with fast() as url:
        host, port = url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            for n, chunked in enumerate([False, True, True, False]):
                data = anthropic_body(n % 2 == 1, pad=70_000 * n)
                conn.request("POST", "/v1/messages", body=iter([data[:5000], data[5000:]])
                             if chunked else data, encode_chunked=chunked,
                             headers={"content-type": "application/json"})
                response = conn.getresponse()
                answer = response.read()
                assert response.status == 200 and b"answer 1" in answer
                conn.request("GET", fast_upstream.LAST)
                assert conn.getresponse().read() == data
            conn.request("POST", "/v1/nowhere", body=b"{}")
            response = conn.getresponse()
            assert response.status == 404 and b"no route" in response.read()
        finally:
            conn.close()


def test_through_the_proxy_a_1_mb_body_arrives_and_its_answer_returns_unchanged():
    turn = {"role": "user", "content": "é word " * 40}
    data = json.dumps({"model": fast_upstream.ANTHROPIC_MODEL, "max_tokens": 16,
                       "messages": [turn, {**turn, "role": "assistant"}] * 1600 + [turn]},
                      ensure_ascii=False).encode()
    assert len(data) > 1_000_000
    with fast() as url, running_proxy(url) as proxy:
        status, _, answer = post(proxy.url, "/v1/messages", data)
        arrived = post(url, fast_upstream.LAST, b"", method="GET")[2]
        assert status == 200 and answer == post(url, "/v1/messages", b"{}")[2]
        assert arrived == data
