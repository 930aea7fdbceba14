"""The proxy under faults and at its edges: upstream down, slow, reset mid-stream; a client gone
mid-stream; a 32 MB body; malformed JSON; an unknown path; 50 clients at once; the reactive
retry; WebSocket upgrades; tokens meant for one host; server-side state. No hang, no crash: the
client gets the upstream's own answer or a 502 that names the proxy."""

from __future__ import annotations

import concurrent.futures
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.proxy.server import STATE_NOTE, WEBSOCKET_LINE
from tests.proxy_thread import RunningProxy, post, running_proxy
from tests.strict_stub import StrictStub, serve

VALID = {"model": "claude-sonnet-4-5", "max_tokens": 8,
         "messages": [{"role": "user", "content": "hi é"}]}
DONE = {"text": "done é"}
# a call left without its result: what a repair takes out
BROKEN = {**VALID, "messages": [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls",
                                       "input": {}}]},
    {"role": "user", "content": "go"}],
    "tools": [{"name": "ls", "input_schema": {"type": "object"}}]}


@pytest.fixture
def wire(tmp_path: Path) -> Iterator[tuple[StrictStub, RunningProxy, str]]:
    store = f"sqlite:///{tmp_path / 'audit.db'}"
    with serve([DONE] * 60) as up, running_proxy(up.url, store) as proxy:
        yield up, proxy, store


def test_upstream_down_is_a_502_that_names_the_proxy():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    with running_proxy(dead) as proxy:
        status, headers, data = post(proxy.url, "/v1/messages", json.dumps(VALID).encode())
        assert status == 502 and headers["x-sessionctx-proxy-error"] == "1"
        assert "sessionctx proxy could not reach the upstream" in json.loads(data)[
            "error"]["message"]
        status, _, data = post(proxy.url, "/v1/chat/completions", b"{}")
        assert status == 502 and "sessionctx proxy" in json.loads(data)["error"]["message"]


def test_a_slow_upstream_is_waited_for(wire):
    up, proxy, _ = wire
    up.script[:0] = [{**DONE, "delay": 1.0}]
    started = time.monotonic()
    status, _, data = post(proxy.url, "/v1/messages", json.dumps(VALID).encode())
    assert status == 200 and json.loads(data)["content"][0]["text"] == "done é"
    assert time.monotonic() - started >= 1.0


def test_an_upstream_reset_mid_stream_ends_the_answer_early_and_the_proxy_goes_on(wire):
    up, proxy, _ = wire
    up.script[:0] = [{**DONE, "cut": True}]
    with pytest.raises((http.client.IncompleteRead, ConnectionError)):
        post(proxy.url, "/v1/messages", json.dumps({**VALID, "stream": True}).encode())
    status, _, data = post(proxy.url, "/v1/messages",
                           json.dumps({**VALID, "stream": True}).encode())
    assert status == 200 and data == up.answers[-1] and len(up.requests) == 2


def test_a_client_gone_mid_stream_cancels_the_upstream_and_the_proxy_goes_on(wire):
    up, proxy, _ = wire
    up.script[:0] = [{**DONE, "delay": 0.5}]
    host, port = proxy.url.removeprefix("http://").split(":")
    body = json.dumps({**VALID, "stream": True}).encode()
    with socket.create_connection((host, int(port))) as s:
        s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                  + f"content-length: {len(body)}\r\n\r\n".encode() + body)
        time.sleep(0.1)  # the proxy has sent it upstream; the client leaves
    time.sleep(1.0)
    assert len(up.requests) == 1 and up.gone == 1  # the upstream request was closed with it
    status, _, _ = post(proxy.url, "/v1/messages", json.dumps(VALID).encode())
    assert status == 200


def test_a_32_mb_body_passes_byte_for_byte(wire):
    up, proxy, _ = wire
    big = json.dumps({**VALID, "messages": [{"role": "user", "content": "é" * (16 << 20)}]},
                     ensure_ascii=False).encode()
    assert len(big) >= 32 << 20
    status, _, _ = post(proxy.url, "/v1/messages", big, timeout=120)
    assert status == 200 and up.raw() == big


def test_a_body_in_chunks_passes_byte_for_byte_and_one_over_the_limit_is_refused(wire,
                                                                                 monkeypatch):
    up, proxy, _ = wire
    data = json.dumps({**VALID, "messages": [{"role": "user", "content": "é" * 300_000}]},
                      ensure_ascii=False).encode()
    host, port = proxy.url.removeprefix("http://").split(":")

    def chunked(path: str) -> int:
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        try:  # Transfer-Encoding: chunked, in pieces of 64 KB
            conn.request("POST", path, body=iter([data[i:i + 65536]
                                                   for i in range(0, len(data), 65536)]),
                         headers={"content-type": "application/json", "x-api-key": "k"},
                         encode_chunked=True)
            response = conn.getresponse()
            response.read()
            return response.status
        finally:
            conn.close()

    assert chunked("/v1/messages") == 200 and up.raw() == data
    monkeypatch.setattr("sessionctx.proxy.server.MAX_BODY", len(data) - 1)
    sent = len(up.requests)
    assert chunked("/v1/messages") == 413 and len(up.requests) == sent  # nothing went upstream


def test_malformed_json_gets_the_upstreams_own_answer(wire):
    up, proxy, _ = wire
    status, _headers, data = post(proxy.url, "/v1/messages", b'{"messages": [')
    assert status == 400 and b"the request body is not a JSON object" in data
    assert up.raw() == b'{"messages": ['


def test_an_unknown_path_passes_through_untouched(wire):
    up, proxy, _ = wire
    status, _, data = post(proxy.url, "/v1/some/thing?x=1&y=%C3%A9", b"", method="GET")
    assert status == 404
    assert json.loads(data) == {"error": {"message": "no route GET /v1/some/thing?x=1&y=%C3%A9"}}
    assert (up.requests[-1]["method"], up.requests[-1]["path"]) == (
        "GET", "/v1/some/thing?x=1&y=%C3%A9")


def test_fifty_clients_at_once(wire):
    up, proxy, _ = wire

    def one(i: int) -> int:
        body = BROKEN if i % 2 else {**VALID, "stream": i % 3 == 0}
        return post(proxy.url, "/v1/messages", json.dumps(body).encode())[0]

    with concurrent.futures.ThreadPoolExecutor(50) as pool:
        codes = list(pool.map(one, range(50)))
    assert codes == [200] * 50
    assert proxy.totals.repaired == 25 and not up.refused()


def test_a_known_refusal_is_repaired_and_retried_once(wire):
    up, proxy, _store = wire
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "c2ln" * 30}
    body = {**VALID, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [thinking, {"type": "text", "text": "ok"}]},
        {"role": "user", "content": "go"}]}
    up.script[:0] = [{"status": 400, "message":
                      "messages.1.content.0: Invalid `signature` in `thinking` block"}]
    status, headers, data = post(proxy.url, "/v1/messages", json.dumps(body).encode())
    assert status == 200 and json.loads(data)["content"][0]["text"] == "done é"
    assert len(up.requests) == 2 and b"c2ln" in up.raw(0) and b"c2ln" not in up.raw(1)
    assert int(headers["x-sessionctx-changes"]) >= 1
    # an error that names no history rule goes back to the client, not retried
    up.script[:0] = [{"status": 400, "message": "max_tokens: too large"}]
    status, _, data = post(proxy.url, "/v1/messages", json.dumps(body).encode())
    assert status == 400 and b"max_tokens" in data and len(up.requests) == 3


def test_a_websocket_upgrade_is_answered_426_with_the_setting(wire):
    _, proxy, _ = wire
    status, _, data = post(proxy.url, "/v1/responses", b"", method="GET",
                           headers={"connection": "Upgrade", "upgrade": "websocket",
                                    "sec-websocket-key": "x", "sec-websocket-version": "13"})
    assert status == 426 and WEBSOCKET_LINE in data.decode()


def test_a_subscription_token_goes_to_api_anthropic_com_only(wire):
    up, proxy, _ = wire
    status, _, data = post(proxy.url, "/v1/messages", json.dumps(VALID).encode(),
                           headers={"authorization": "Bearer sk-ant-oat01-secret"})
    assert status == 403 and b"api.anthropic.com" in data and b"secret" not in data
    assert not up.requests


def test_previous_response_id_passes_with_a_note(wire):
    up, proxy, _ = wire
    body = json.dumps({"model": "gpt-5", "previous_response_id": "resp_0", "store": True,
                       "input": [{"type": "function_call_output", "call_id": "c0",
                                  "output": "x"}]}).encode()
    status, headers, _ = post(proxy.url, "/v1/responses", body)
    assert status == 200 and proxy.totals.repaired == 0
    assert [up.raw(i) for i in range(len(up.requests))] == [body]
    assert headers["x-sessionctx-note"] == STATE_NOTE


def test_a_refused_previous_response_id_request_is_not_rebuilt(wire):
    """Its calls live upstream: the refusal goes back to the client as the provider sent it."""
    up, proxy, _ = wire
    up.script[:0] = [{"status": 400, "message": "No tool call found for function call output "
                                                "with call_id c0."}]
    body = json.dumps({"model": "gpt-5", "previous_response_id": "resp_0", "store": True,
                       "input": [{"type": "function_call_output", "call_id": "c0",
                                  "output": "x"}]}).encode()
    status, headers, data = post(proxy.url, "/v1/responses", body)
    assert status == 400 and b"call_id c0" in data and headers["x-sessionctx-note"] == STATE_NOTE
    assert [up.raw(i) for i in range(len(up.requests))] == [body]
    assert proxy.totals.retried == 0 and proxy.totals.repaired == 0


def test_proxy_log_prints_what_was_repaired(wire):
    _, proxy, store = wire
    post(proxy.url, "/v1/messages", json.dumps(BROKEN).encode(),
         headers={"session-id": "codex-1"})
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        out = CliRunner().invoke(main, ["proxy", "log", "--store", store, "--json"])
        found: list[Any] = json.loads(out.output)["entries"]
        if found:
            break
        time.sleep(0.05)
    assert found[0]["session_id"] == "codex-1" and found[0]["pending_calls"][0]["id"] == "t1"
    text = CliRunner().invoke(main, ["proxy", "log", "--store", store]).output
    assert "dropped_unpaired_call" in text and "ls (t1)" in text and "codex-1" in text


def test_no_task_is_left_behind():
    before = set(threading.enumerate())  # other tests' libraries may keep threads of their own
    with serve() as up, running_proxy(up.url) as proxy:
        post(proxy.url, "/v1/messages", json.dumps(VALID).encode())
    left = [t.name for t in threading.enumerate() if not t.daemon and t not in before]
    assert left == []
