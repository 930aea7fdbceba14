"""The reactive retry: a 400 whose message names a history error (the providers' own texts) is
answered by rebuilding the request once and sending it again; no other answer is retried (any
other status, another 400, a second refusal, an error inside a stream already under way)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from aiohttp import web

from sessionctx.proxy.audit import entries
from sessionctx.proxy.reactive import refusal
from tests.proxy_thread import post, running_proxy
from tests.strict_stub import error_body, serve
from tests.stub_servers import (
    anthropic_problem,
    chat_problem,
    gemini_problem,
    responses_problem,
)
from tests.test_proxy_stream import upstream

# a result an agent wrote for itself: valid as sent, taken out (its call pending) by a rebuild
WRITTEN = "[System: Tool execution skipped/interrupted by user. No result provided for tool 'ls']"
USE = {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}
CALL = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
BODIES: dict[str, dict[str, Any]] = {
    "anthropic": {"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": WRITTEN}]}],
        "tools": [{"name": "ls", "input_schema": {"type": "object"}}]},
    "openai-chat": {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": WRITTEN},
        {"role": "user", "content": "go"}]},
    "openai-responses": {"model": "gpt-5", "input": [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "aborted"},
        {"role": "user", "content": "go"}]},
    "gemini": {"contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "ls",
                                                         "response": {"output": WRITTEN}}}]},
        {"role": "user", "parts": [{"text": "go"}]}]},
}
PATHS = {"anthropic": "/v1/messages?beta=true", "openai-chat": "/v1/chat/completions",
         "openai-responses": "/v1/responses",
         "gemini": "/v1beta/models/gemini-2.5-flash:generateContent"}
KINDS = {"anthropic": "anthropic", "openai-chat": "chat", "openai-responses": "responses",
         "gemini": "gemini"}


def _refused(check: Any, body: dict[str, Any]) -> str:
    found = check(body)
    assert found, body
    return str(found)


# the providers' messages for each history error the issue lists (the stub's are the APIs' own)
LISTED = {
    "unanswered tool_use": ("anthropic", _refused(anthropic_problem, {"messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": [USE]},
        {"role": "user", "content": "go"}]})),
    "No tool output found": ("openai-responses", _refused(responses_problem, {"input": [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
        {"role": "user", "content": "go"}]})),
    "tool_calls must be followed by tool messages": ("openai-chat", _refused(
        chat_problem, {"messages": [{"role": "user", "content": "hi"},
                                    {"role": "assistant", "tool_calls": [CALL]},
                                    {"role": "user", "content": "go"}]})),
    "Gemini function-response turn": ("gemini", _refused(gemini_problem, {"contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "ls",
                                                         "response": {}}}]}]})),
    "invalid thinking signature": (
        "anthropic", "messages.1.content.0: Invalid `signature` in `thinking` block"),
    "image over a limit": (
        "anthropic", "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: "
                     "5316036 bytes > 5242880 bytes"),
    "image dimensions over a limit": (
        "anthropic", "messages.0.content.1.image.source.base64.data: At least one of the "
                     "image dimensions exceed max allowed size for many-image requests: 2000 "
                     "pixels"),
    "toolConfig required": (
        "anthropic", "The toolConfig field must be defined when using toolUse and toolResult "
                     "content blocks."),
}


# the other history errors of the providers' own (their messages: the stub's, the APIs')
RESULT = {"type": "tool_result", "tool_use_id": "t9", "content": "x"}
OTHERS = {
    "result without its call": ("anthropic", _refused(anthropic_problem, {"messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [RESULT]}]})),
    "output without its call": ("openai-responses", _refused(responses_problem, {"input": [
        {"role": "user", "content": "hi"},
        {"type": "function_call_output", "call_id": "c9", "output": "x"}]})),
    "tool message without its call": ("openai-chat", _refused(chat_problem, {"messages": [
        {"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c9",
                                            "content": "x"}]})),
    "Gemini call turn out of place": ("gemini", _refused(gemini_problem, {"contents": [
        {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]}]})),
    "Gemini response count": ("gemini", _refused(gemini_problem, {"contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}},
                                    {"functionCall": {"name": "ls", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "ls",
                                                         "response": {}}}]}]})),
}


@pytest.mark.parametrize("name", [*LISTED, *OTHERS])
def test_each_listed_history_error_is_known_and_nothing_else(name):
    api, message = LISTED.get(name) or OTHERS[name]
    answer = json.dumps(error_body(KINDS[api], message)).encode()
    found = refusal(400, answer)
    assert found is not None and found.signatures == (name == "invalid thinking signature")
    for status in (429, 500, 529):
        assert refusal(status, answer) is None


def test_other_refusals_are_not_known():
    for message in ("max_tokens: 100000 > 64000, the maximum allowed", "prompt is too long",
                    "Invalid API key", "model: claude-x not found", "overloaded"):
        assert refusal(400, json.dumps(error_body("anthropic", message)).encode()) is None
    big = json.dumps(error_body("anthropic", "tool_use ids were found without tool_result "
                                + "x" * 70000)).encode()
    assert refusal(400, big) is None  # an answer this large is no history error


def _logged(store: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 10
    while not (found := list(entries(store))) and time.monotonic() < deadline:
        time.sleep(0.02)
    return found


@pytest.mark.parametrize("name", list(LISTED))
def test_each_listed_refusal_is_repaired_and_sent_once_more(name, tmp_path):
    api, message = LISTED[name]
    body = json.dumps(BODIES[api]).encode()
    store = f"sqlite:///{tmp_path / 'audit.db'}"
    with serve([{"status": 400, "message": message}, {"text": "done"}]) as up, \
            running_proxy(up.url, store) as proxy:
        status, headers, data = post(proxy.url, PATHS[api], body)
        assert status == 200 and b"done" in data
        assert [r["status"] for r in up.requests] == [400, 200]
        assert up.raw(0) == body and WRITTEN.encode() not in up.raw(1)
        assert b'"aborted"' not in up.raw(1) and not up.refused()
        assert int(headers["x-sessionctx-changes"]) >= 1
        assert (proxy.totals.retried, proxy.totals.repaired) == (1, 1)
        [entry] = _logged(store)
    assert entry["reactive"] is True and entry["outcome"] == "upstream answered 200"
    assert len(entry["pending_calls"]) == 1


def test_a_second_refusal_goes_back_to_the_client():
    api, message = LISTED["unanswered tool_use"]
    refused = [{"status": 400, "message": message}] * 2
    with serve(refused) as up, running_proxy(up.url) as proxy:
        status, headers, data = post(proxy.url, PATHS[api], json.dumps(BODIES[api]).encode())
    assert status == 400 and b"tool_result" in data and len(up.requests) == 2
    assert int(headers["x-sessionctx-changes"]) >= 1  # the repair it sent is still told


@pytest.mark.parametrize("status", [429, 500, 529])
def test_another_status_naming_a_history_error_is_not_retried(status):
    api, message = LISTED["unanswered tool_use"]
    body = json.dumps(BODIES[api]).encode()
    with serve([{"status": status, "message": message}]) as up, \
            running_proxy(up.url) as proxy:
        got, _, data = post(proxy.url, PATHS[api], body)
    assert got == status and data == up.answers[0] and len(up.requests) == 1
    assert up.raw() == body and proxy.totals.retried == 0


def test_an_error_inside_a_stream_under_way_is_never_retried():
    """Once a byte of the answer reached the client, the proxy only passes the rest on."""
    api, message = LISTED["unanswered tool_use"]
    stream = (b'event: message_start\ndata: {"type": "message_start"}\n\n'
              b"event: error\ndata: " + json.dumps(error_body("anthropic", message)).encode()
              + b"\n\n")
    count: list[bytes] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        count.append(await request.read())
        return web.Response(body=stream, content_type="text/event-stream")

    body = json.dumps({**BODIES[api], "stream": True}).encode()
    with upstream(handle) as base, running_proxy(base) as proxy:
        status, _, data = post(proxy.url, PATHS[api], body)
    assert status == 200 and data == stream and count == [body]
    assert proxy.totals.retried == 0


def test_tool_blocks_without_tool_definitions_go_as_text_before_any_refusal():
    """Tool blocks with no tool definitions (a summary request, say), which Anthropic refuses
    ("must define tools"): the calls and results go as text, no definition is made up, and
    the request is accepted the first time."""
    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "a"}]}]}).encode()
    with serve([{"text": "done"}]) as up, running_proxy(up.url) as proxy:
        status, headers, _ = post(proxy.url, "/v1/messages", body)
        assert status == 200 and "x-sessionctx-changes" in headers
        [sent] = up.requests
        assert sent["status"] == 200 and "tools" not in sent["body"]
        assert "tool_use" not in json.dumps(sent["body"]) and "[called tool" in json.dumps(
            sent["body"])
        assert (proxy.totals.repaired, proxy.totals.retried) == (1, 0)
