"""LiteLLM's call types, each in its own shape, against the strict stub (tests/strict_stub.py):
an Anthropic Messages body (`litellm.anthropic.messages`, the proxy's /v1/messages route), a
Responses `input` (`litellm.aresponses`) and chat messages (`acompletion`). A valid request
reaches the stub byte for byte as it does without the logger; a broken one, refused without
it, is repaired by the provider's own rules, and the stub never receives a made-up result."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("litellm")

import litellm
from litellm.anthropic_interface import messages as anthropic_messages

from sessionctx.adapters.litellm import SessionctxLogger
from sessionctx.changes import ChangeKind
from tests.strict_stub import StrictStub, serve


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[StrictStub]:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setattr(litellm, "callbacks", [])
    with serve() as s:
        yield s


def _anthropic(stub: StrictStub, messages: list[dict[str, Any]], **extra: Any) -> Any:
    return asyncio.run(anthropic_messages.acreate(
        model="anthropic/claude-sonnet-4-5", messages=messages, max_tokens=64,
        api_base=stub.url, api_key="test", **extra))


def _responses(stub: StrictStub, items: list[dict[str, Any]]) -> Any:
    return asyncio.run(litellm.aresponses(model="openai/gpt-5.1", input=items,
                                          api_base=f"{stub.url}/v1", api_key="test"))


def _chat(stub: StrictStub, messages: list[dict[str, Any]]) -> Any:
    return asyncio.run(litellm.acompletion(model="openai/gpt-5.1", messages=messages,
                                           api_base=f"{stub.url}/v1", api_key="test",
                                           num_retries=0))


def _with_logger(send: Callable[[], Any]) -> tuple[Any, list[Any]]:
    reports: list[Any] = []
    litellm.callbacks = [SessionctxLogger(on_report=reports.append)]
    try:
        return send(), reports
    finally:
        litellm.callbacks = []


def _last(stub: StrictStub) -> dict[str, Any]:
    return stub.requests[-1]


TOOLS = [{"name": "deploy", "description": "Deploy.",
          "input_schema": {"type": "object", "properties": {}}}]


def _anthropic_valid() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "deploy it"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Deploying."},
            {"type": "tool_use", "id": "toolu_1", "name": "deploy", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "deployed"},
            {"type": "text", "text": "and now?"}]},
    ]


def test_a_valid_anthropic_messages_request_reaches_the_stub_byte_for_byte(
        stub: StrictStub) -> None:
    _anthropic(stub, _anthropic_valid(), tools=TOOLS)
    alone = _last(stub)
    _, reports = _with_logger(lambda: _anthropic(stub, _anthropic_valid(), tools=TOOLS))
    assert _last(stub)["status"] == alone["status"] == 200
    assert _last(stub)["raw"] == alone["raw"]
    assert reports == []


def test_an_anthropic_call_left_unanswered_is_taken_out_not_answered(
        stub: StrictStub) -> None:
    broken = [*_anthropic_valid()[:2], {"role": "user", "content": "well?"}]
    with pytest.raises(Exception, match="tool_use"):
        _anthropic(stub, broken, tools=TOOLS)
    _, reports = _with_logger(lambda: _anthropic(stub, broken, tools=TOOLS))
    sent = _last(stub)
    assert sent["status"] == 200, sent["problem"]
    assert "tool_result" not in sent["raw"]  # nothing made up for toolu_1
    (report,) = reports
    assert [p.id for p in report.pending_calls] == ["toolu_1"]


def test_anthropic_text_before_its_tool_results_is_put_after_them(stub: StrictStub) -> None:
    broken = _anthropic_valid()
    broken[2]["content"].reverse()  # the text first, as some agents store it
    with pytest.raises(Exception):  # noqa: B017 - LiteLLM's own error class for a 400
        _anthropic(stub, broken, tools=TOOLS)
    _with_logger(lambda: _anthropic(stub, broken, tools=TOOLS))
    sent = _last(stub)
    assert sent["status"] == 200, sent["problem"]
    last = sent["body"]["messages"][-1]["content"]
    assert next(b["type"] for b in last) == "tool_result"
    assert "and now?" in json.dumps(last)  # the user's own text is kept


def _responses_valid() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "deploy it"},
        {"type": "function_call", "call_id": "call_1", "name": "deploy", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "deployed"},
        {"role": "user", "content": "and now?"},
    ]


def test_a_valid_responses_request_reaches_the_stub_byte_for_byte(stub: StrictStub) -> None:
    _responses(stub, _responses_valid())
    alone = _last(stub)
    _, reports = _with_logger(lambda: _responses(stub, _responses_valid()))
    assert _last(stub)["status"] == alone["status"] == 200
    assert _last(stub)["raw"] == alone["raw"]
    assert reports == []


def test_a_responses_call_left_unanswered_is_taken_out_not_answered(stub: StrictStub) -> None:
    broken = [i for i in _responses_valid() if i.get("type") != "function_call_output"]
    with pytest.raises(Exception, match="No tool output found"):
        _responses(stub, broken)
    _, reports = _with_logger(lambda: _responses(stub, broken))
    sent = _last(stub)
    assert sent["status"] == 200, sent["problem"]
    assert "function_call_output" not in sent["raw"]
    (report,) = reports
    assert [p.id for p in report.pending_calls] == ["call_1"]


def _chat_valid() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "deploy it"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "deploy", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "deployed"},
        {"role": "user", "content": "and now?"},
    ]


def test_a_valid_chat_request_reaches_the_stub_byte_for_byte(stub: StrictStub) -> None:
    _chat(stub, _chat_valid())
    alone = _last(stub)
    _, reports = _with_logger(lambda: _chat(stub, _chat_valid()))
    assert _last(stub)["raw"] == alone["raw"]
    assert reports == []


def test_a_user_message_between_a_chat_call_and_its_result_is_moved_after_it(
        stub: StrictStub) -> None:
    valid = _chat_valid()
    broken = [valid[0], valid[1], {"role": "user", "content": "hurry"}, valid[2], valid[3]]
    with pytest.raises(Exception, match="tool_call"):
        _chat(stub, broken)
    _, reports = _with_logger(lambda: _chat(stub, broken))
    sent = _last(stub)
    assert sent["status"] == 200, sent["problem"]
    roles = [m["role"] for m in sent["body"]["messages"]]
    assert roles[:3] == ["user", "assistant", "tool"] and "hurry" in sent["raw"]
    kinds = {c.kind for r in reports for c in r.changes}
    assert ChangeKind.RESULTS_MOVED in kinds


def test_one_chat_call_id_used_twice_gets_a_unique_one(stub: StrictStub) -> None:
    valid = _chat_valid()
    again = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "deploy", "arguments": "{}"}}]}
    answer = {"role": "tool", "tool_call_id": "call_1", "content": "deployed again"}
    broken = [*valid[:3], again, answer, valid[3]]
    _, _reports = _with_logger(lambda: _chat(stub, broken))
    sent = _last(stub)
    assert sent["status"] == 200, sent["problem"]
    ids = [c["id"] for m in sent["body"]["messages"] for c in m.get("tool_calls") or []]
    assert len(ids) == 2 and len(set(ids)) == 2
    assert "deployed again" in sent["raw"]
