"""The proxy's memory of valid bodies on the wire: a body sent again and one with a turn more
go upstream as their own bytes, matched against the memory rather than checked whole; an
extension that breaks a rule is repaired exactly as `repair_request` repairs it."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from sessionctx.providers.wire import repair_request
from sessionctx.providers.wire_tail import extends
from tests.proxy_thread import post, running_proxy
from tests.strict_stub import serve


def _turns(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        out += [{"role": "user", "content": f"step {i} é"},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": f"toolu_{i}", "name": "ls", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}",
                                              "content": "a  b"}]},
                {"role": "assistant", "content": "done"}]
    return out


def test_repeats_and_new_turns_pass_as_their_bytes_and_breaks_are_repaired(monkeypatch):
    tails: list[bool] = []
    real = extends

    def counted(*args: Any) -> Any:
        found = real(*args)
        tails.append(found is not None)
        return found

    monkeypatch.setattr("sessionctx.proxy.known.extends", counted)
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 8, "stream": False,
                            "tools": [{"name": "ls", "input_schema": {"type": "object"}}],
                            "messages": [*_turns(3), {"role": "user", "content": "go on"}]}
    sent = [json.dumps(body, ensure_ascii=False).encode()]
    sent.append(sent[0])  # the same body again
    for i in range(3, 5):  # a turn more each time
        body["messages"] = [*body["messages"][:-1], *_turns(i + 1)[-4:],
                            {"role": "user", "content": f"go on {i}"}]
        sent.append(json.dumps(body, ensure_ascii=False).encode())
    broken = {**body, "messages": [*body["messages"][:-1], {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_x", "name": "ls", "input": {}}]},
        {"role": "user", "content": "go on, once more"}]}
    with serve() as up, running_proxy(up.url) as proxy:
        for data in sent:
            status, headers, _ = post(proxy.url, "/v1/messages", data)
            assert status == 200 and "x-sessionctx-changes" not in headers
        status, headers, _ = post(proxy.url, "/v1/messages",
                                  json.dumps(broken, ensure_ascii=False).encode())
        assert status == 200 and headers["x-sessionctx-changes"] != "0"
    assert [up.raw(i) for i in range(len(sent))] == sent  # byte for byte
    assert up.raw(-1) == msgspec.json.encode(repair_request("anthropic", broken).body)
    assert tails == [True, True, False]  # two new turns by their tail; the break found there


@pytest.mark.parametrize("spacing", [None, 1])
def test_a_body_spelt_otherwise_is_checked_whole(spacing, monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr("sessionctx.proxy.known.extends", lambda *a: calls.append(1))
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 8,
                            "tools": [{"name": "ls", "input_schema": {"type": "object"}}],
                            "messages": [*_turns(2), {"role": "user", "content": "go"}]}
    with serve() as up, running_proxy(up.url) as proxy:
        first = json.dumps(body).encode()
        post(proxy.url, "/v1/messages", first)
        body["messages"] += [{"role": "assistant", "content": "ok"},
                             {"role": "user", "content": "more"}]
        again = json.dumps(body, indent=spacing).encode()
        post(proxy.url, "/v1/messages", again)
    assert [up.raw(i) for i in range(len(up.requests))] == [first, again]
    assert calls == ([1] if spacing is None else [])  # other spacing: other bytes, no match


def test_a_body_checked_whole_is_split_once(monkeypatch):
    """The split `valid` made of a body it could not vouch for is the one `remember` keeps
    for the same bytes; other bytes are split anew."""
    from sessionctx.proxy import known as module
    splits: list[bytes] = []
    real = module._split

    def counted(raw: bytes, key: str) -> Any:
        splits.append(raw)
        return real(raw, key)

    monkeypatch.setattr(module, "_split", counted)
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 8,
                            "messages": [*_turns(2), {"role": "user", "content": "go"}]}
    known = module.Known()
    raw = json.dumps(body).encode()
    assert not known.valid("anthropic", None, raw)
    known.remember("anthropic", None, raw, body)
    assert splits == [raw]
    assert known.valid("anthropic", None, bytes(bytearray(raw)))  # remembered: the same bytes
    other = json.dumps(body, indent=1).encode()
    known.remember("anthropic", None, other, body)  # not the body `valid` last split
    assert splits == [raw, other]
    assert known.valid("anthropic", None, bytes(bytearray(other)))


def test_a_valid_body_is_remembered_after_it_went_upstream(monkeypatch):
    """The client waits for the check, not for the memory of its verdict."""
    from sessionctx.proxy.known import Known
    upstream_had: list[int] = []
    real = Known.remember
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 8,
                            "tools": [{"name": "ls", "input_schema": {"type": "object"}}],
                            "messages": [*_turns(2), {"role": "user", "content": "go"}]}
    raw = json.dumps(body).encode()
    with serve() as up, running_proxy(up.url) as proxy:
        def remember(self: Known, *args: Any) -> None:
            upstream_had.append(len(up.requests))
            real(self, *args)

        monkeypatch.setattr(Known, "remember", remember)
        for _ in range(2):
            assert post(proxy.url, "/v1/messages", raw)[0] == 200
    assert upstream_had == [1]  # once, after the first went upstream; the second was known
    assert [up.raw(i) for i in range(2)] == [raw, raw]
