"""The proxy's memory of valid bodies for OpenAI Chat, OpenAI Responses and Gemini, as
tests/test_proxy_known.py shows it for Anthropic: a body sent again and one with turns more
go upstream as their own bytes, the new ones checked at their tail; an extension that breaks
a rule is repaired exactly as `repair_request` repairs it; a Responses request that continues
a stored response (`previous_response_id`) is never taken for a known one."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from sessionctx.providers.wire import repair_request
from sessionctx.providers.wire_tail import HISTORY, extends
from sessionctx.proxy.server import STATE_NOTE
from tests.proxy_thread import post, running_proxy
from tests.strict_stub import serve

GEMINI_MODEL = "gemini-3-pro"
PATHS = {"openai-chat": "/v1/chat/completions", "openai-responses": "/v1/responses",
         "gemini": f"/v1beta/models/{GEMINI_MODEL}:generateContent"}


def _chat(i: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"step {i} é"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": "ls", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": "a  b"},
            {"role": "assistant", "content": "done"}]


def _responses_step(i: int) -> list[dict[str, Any]]:
    """One step of a Codex loop: reasoning, a call with its item id, its output."""
    return [{"type": "reasoning", "id": f"rs_{i}", "summary": [], "encrypted_content": "enc"},
            {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": "ls",
             "arguments": "{}"},
            {"type": "function_call_output", "call_id": f"call_{i}", "output": "a  b"}]


def _responses(i: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"step {i} é"}, *_responses_step(i),
            {"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": "done"}]}]


def _gemini(i: int) -> list[dict[str, Any]]:
    return [{"role": "user", "parts": [{"text": f"step {i} é"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {},
                                                          "id": f"c{i}"},
                                         "thoughtSignature": "c2ln"}]},
            {"role": "user", "parts": [{"functionResponse": {
                "name": "ls", "id": f"c{i}", "response": {"output": "a  b"}}}]},
            {"role": "model", "parts": [{"text": "done"}]}]


def _prompt(api: str, text: str) -> dict[str, Any]:
    if api == "gemini":
        return {"role": "user", "parts": [{"text": text}]}
    return {"role": "user", "content": text}


def _unanswered(api: str) -> list[dict[str, Any]]:
    """A call no result answers, then a prompt: what a broken session resends."""
    if api == "openai-chat":
        return [{"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_x", "type": "function",
             "function": {"name": "ls", "arguments": "{}"}}]}]
    if api == "openai-responses":
        return [{"type": "function_call", "call_id": "call_x", "name": "ls", "arguments": "{}"}]
    return [{"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}, "id": "cx"},
                                         "thoughtSignature": "c2ln"}]}]


def _body(api: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    if api == "gemini":
        return {"contents": history, "tools": [{"functionDeclarations": [
            {"name": "ls", "parametersJsonSchema": {"type": "object"}}]}]}
    if api == "openai-chat":
        return {"model": "gpt-5.1", "stream": False, "messages": history, "tools": [
            {"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}]}
    return {"model": "gpt-5.1", "stream": False, "store": False, "input": history,
            "instructions": "You are a coding agent.", "include": ["reasoning.encrypted_content"],
            "tools": [{"type": "function", "name": "ls", "parameters": {"type": "object"}}]}


TURNS: dict[str, Callable[[int], list[dict[str, Any]]]] = {
    "openai-chat": _chat, "openai-responses": _responses, "gemini": _gemini}


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    tails: list[bool] = []

    def counted(*args: Any) -> Any:
        found = extends(*args)
        tails.append(found is not None)
        return found

    monkeypatch.setattr("sessionctx.proxy.known.extends", counted)
    return tails


@pytest.mark.parametrize("api", sorted(TURNS))
def test_repeats_and_new_turns_pass_as_their_bytes_and_breaks_are_repaired(api, monkeypatch):
    tails = _counting(monkeypatch)
    turn, key = TURNS[api], HISTORY[api]
    history = [turn(i) for i in range(3)]
    body = _body(api, [m for t in history for m in t] + [_prompt(api, "go on")])
    sent = [json.dumps(body, ensure_ascii=False).encode()]
    sent.append(sent[0])  # the same body again
    for i in range(3, 5):  # a turn more each time
        body[key] = [*body[key][:-1], *turn(i), _prompt(api, f"go on {i}")]
        sent.append(json.dumps(body, ensure_ascii=False).encode())
    if api == "openai-responses":  # and a Codex loop going on: a step more, no new prompt
        for i in range(5, 7):
            body[key] = [*body[key], *_responses_step(i)]
            sent.append(json.dumps(body, ensure_ascii=False).encode())
    broken = {**body, key: [*body[key], *_unanswered(api), _prompt(api, "go on, once more")]}
    path = PATHS[api]
    with serve() as up, running_proxy(up.url) as proxy:
        for data in sent:
            status, headers, _ = post(proxy.url, path, data)
            assert status == 200 and "x-sessionctx-changes" not in headers
        status, headers, _ = post(proxy.url, path, json.dumps(broken, ensure_ascii=False).encode())
        assert status == 200 and headers["x-sessionctx-changes"] != "0"
    assert [up.raw(i) for i in range(len(sent))] == sent  # byte for byte
    model = GEMINI_MODEL if api == "gemini" else None
    assert up.raw(-1) == msgspec.json.encode(repair_request(api, broken, model=model).body)
    # each new body by its tail; the break found there
    assert tails == [True] * (len(sent) - 2) + [False]


def test_a_response_that_continues_a_stored_one_is_never_known(monkeypatch):
    """The same items with `previous_response_id` are not the known body's (its other keys
    differ): the request goes on unchecked, with the note that its history is upstream."""
    tails = _counting(monkeypatch)
    items = [*_responses(0), _prompt("openai-responses", "go on")]
    body = _body("openai-responses", items)
    first = json.dumps(body).encode()
    stored = {**body, "previous_response_id": "resp_1",
              "input": [*items, *_unanswered("openai-responses")]}
    with serve() as up, running_proxy(up.url) as proxy:
        assert post(proxy.url, PATHS["openai-responses"], first)[0] == 200
        _, headers, _ = post(proxy.url, PATHS["openai-responses"],
                           json.dumps(stored).encode())
        assert headers.get("x-sessionctx-note") == STATE_NOTE
        assert "x-sessionctx-changes" not in headers
    assert up.raw(-1) == json.dumps(stored).encode()  # neither checked nor repaired
    assert tails == []
