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


class _Reads:
    """The JSON text `Known` reads, by length: a decoder counting what it is given."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.sizes: list[int] = []

    def decode(self, data: bytes) -> Any:
        self.sizes.append(len(data))
        return self.real.decode(data)


def _body(messages: list[dict[str, Any]], **keys: Any) -> bytes:
    return json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": messages,
                       **keys}, ensure_ascii=False).encode()


def test_a_known_body_is_matched_by_its_bytes_reading_only_what_is_new(monkeypatch):
    """A repeat is not read at all, a body of another conversation neither, a body with a turn
    more only from its new items on; none of them is hashed whole."""
    from sessionctx.proxy import known as module
    reads = _Reads(module._TOP)
    monkeypatch.setattr(module, "_TOP", reads)
    messages = [*_turns(40), {"role": "user", "content": "go"}]
    raw = _body(messages, tools=[{"name": "ls", "input_schema": {"type": "object"}}])
    known = module.Known()
    known.remember("anthropic", None, raw, json.loads(raw))
    reads.sizes.clear()
    assert known.valid("anthropic", None, bytes(bytearray(raw)))  # the same bytes again
    assert not known.valid("anthropic", None, _body([{"role": "user", "content": "hi"}]))
    assert reads.sizes == []
    more = [*messages, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "on"}]
    longer = _body(more, tools=[{"name": "ls", "input_schema": {"type": "object"}}])
    assert known.valid("anthropic", None, longer)
    assert len(reads.sizes) == 1 and reads.sizes[0] < len(longer) // 10


@pytest.mark.parametrize("tail", [{"tools": []}, {"stream": True}, {"max_tokens": 9}])
def test_a_body_whose_other_keys_differ_after_its_history_is_checked_whole(tail):
    from sessionctx.proxy.known import Known
    messages = [*_turns(3), {"role": "user", "content": "go"}]
    raw = _body(messages, tools=[{"name": "ls", "input_schema": {"type": "object"}}])
    known = Known()
    known.remember("anthropic", None, raw, json.loads(raw))
    more = [*messages, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "on"}]
    assert known.valid("anthropic", None, _body(
        more, tools=[{"name": "ls", "input_schema": {"type": "object"}}]))
    changed = json.loads(_body(more, tools=[{"name": "ls", "input_schema": {"type": "object"}}]))
    changed.update(tail)
    assert not known.valid("anthropic", None, json.dumps(changed, ensure_ascii=False).encode())


def test_an_item_written_elsewhere_in_the_body_is_not_taken_for_the_history():
    """The first item's bytes found earlier in the body (under another key) do not mark
    where the history is: the history found is checked against the body's own keys."""
    from sessionctx.proxy.known import Known
    messages = [*_turns(2), {"role": "user", "content": "go"}]
    head = {"metadata": {"copy": [messages[0]]}}
    raw = json.dumps({**head, "model": "claude-sonnet-4-5", "max_tokens": 8,
                      "messages": messages}).encode()
    known = Known()
    known.remember("anthropic", None, raw, json.loads(raw))
    # a body that breaks a rule in its new turn is never vouched for
    broken = [*messages, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_x", "name": "ls", "input": {}}]},
        {"role": "user", "content": "on"}]
    assert not known.valid("anthropic", None, json.dumps(
        {**head, "model": "claude-sonnet-4-5", "max_tokens": 8, "messages": broken}).encode())
    assert known.valid("anthropic", None, raw)


def test_a_body_whose_items_are_written_apart_unevenly_is_not_remembered():
    from sessionctx.proxy.known import Known
    messages = [*_turns(2), {"role": "user", "content": "go"}]
    raw = _body(messages).replace(b"}, {", b"},  {", 1)
    known = Known()
    known.remember("anthropic", None, raw, json.loads(raw))
    assert not known.valid("anthropic", None, raw)
    even = _body(messages)
    known.remember("anthropic", None, even, json.loads(even))
    assert known.valid("anthropic", None, bytes(bytearray(even)))


def test_a_body_replaced_by_its_extension_is_no_longer_held():
    """The memory holds a body's bytes by its entry alone: once a turn more replaces it, the
    earlier body is not kept alive by what the new entry took from it."""
    import sys

    from sessionctx.proxy.known import Known
    messages = [*_turns(3), {"role": "user", "content": "go"}]
    raw = _body(messages, tools=[{"name": "ls", "input_schema": {"type": "object"}}])
    alone = sys.getrefcount(raw)
    known = Known()
    known.remember("anthropic", None, raw, json.loads(raw))
    more = [*messages, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "on"}]
    assert known.valid("anthropic", None, _body(
        more, tools=[{"name": "ls", "input_schema": {"type": "object"}}]))
    assert sys.getrefcount(raw) == alone


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
