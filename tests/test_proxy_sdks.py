"""The official SDKs through `sessionctx proxy` against a strict upstream: a broken session
fails direct and goes on through the proxy, the upstream never receives an invented result,
and a valid request arrives as the bytes the SDK sent."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types as gtypes

from sessionctx.proxy.audit import entries
from tests.proxy_thread import RunningProxy, running_proxy
from tests.strict_stub import StrictStub, serve

CALL = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"cmd": "ls"}}
TOOLS: Any = [{"name": "bash", "description": "run", "input_schema": {"type": "object"}}]
# Claude Code's stored shape: the person's text before the result it sends with it
BROKEN: Any = [
    {"role": "user", "content": "list the files"},
    {"role": "assistant", "content": [CALL]},
    {"role": "user", "content": [{"type": "text", "text": "and then?"},
                                 {"type": "tool_result", "tool_use_id": "toolu_1",
                                  "content": "a.txt"}]}]
UNANSWERED: Any = [
    {"role": "user", "content": "list the files"},
    {"role": "assistant", "content": [{"type": "text", "text": "let me look"}, CALL]},
    {"role": "user", "content": "go on"}]


@pytest.fixture
def wire(tmp_path: Path) -> Iterator[tuple[StrictStub, RunningProxy, str]]:
    store = f"sqlite:///{tmp_path / 'audit.db'}"
    with serve([{"text": "done é"}] * 20) as up, running_proxy(up.url, store) as proxy:
        yield up, proxy, store


def _logged(store: str) -> list[dict[str, Any]]:
    """The audit log once its latest write landed (it is written after the answer)."""
    deadline = time.monotonic() + 10
    while True:
        found = list(entries(store))
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def _invented(body: dict[str, Any]) -> list[Any]:
    """Results in a body that answer a call the session never got a result for."""
    return [b for m in body.get("messages", []) if isinstance(m.get("content"), list)
            for b in m["content"] if b.get("type") == "tool_result"
            and b.get("tool_use_id") == "toolu_1" and b.get("content") != "a.txt"
            and b.get("content") != [{"type": "text", "text": "a.txt"}]]


def assert_same_request(up: StrictStub, proxy: RunningProxy) -> None:
    """The last two requests the stub got (one direct, one through the proxy) are the same
    bytes with the same headers but the hop-by-hop ones, and both were accepted."""
    assert up.raw(-1) == up.raw(-2)
    assert proxy.totals.repaired == 0 and not up.refused()
    hop = {"host", "connection", "keep-alive"}
    first, second = (up.requests[i]["headers"] for i in (-2, -1))
    assert {k: v for k, v in second.items() if k not in hop} == {
        k: v for k, v in first.items() if k not in hop}


def accepted_after_one_refusal(up: StrictStub) -> None:
    """The direct request was refused, the one through the proxy accepted."""
    assert [r["status"] for r in up.requests] == [400, 200]


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_sdk_a_broken_session_fails_direct_and_goes_on_through_the_proxy(
        wire, stream):
    up, proxy, store = wire
    direct = anthropic.Anthropic(base_url=up.url, api_key="k", max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="tool_result"):
        direct.messages.create(model="claude-sonnet-4-5", max_tokens=32, messages=BROKEN,
                               tools=TOOLS)
    client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
    if stream:
        with client.messages.stream(model="claude-sonnet-4-5", max_tokens=32,
                                    messages=BROKEN, tools=TOOLS) as s:
            text = "".join(s.text_stream)
    else:
        raw = client.messages.with_raw_response.create(
            model="claude-sonnet-4-5", max_tokens=32, messages=BROKEN, tools=TOOLS)
        assert int(raw.headers["x-sessionctx-changes"]) >= 1
        assert float(raw.headers["x-sessionctx-overhead-ms"]) >= 0
        text = raw.parse().content[0].text  # type: ignore[union-attr]
    assert text == "done é"
    accepted_after_one_refusal(up)
    sent = up.requests[-1]["body"]
    assert sent["messages"][-1]["content"][0]["type"] == "tool_result"
    assert not _invented(sent) and sent["tools"] == TOOLS
    logged = _logged(store)
    assert logged and logged[-1]["api"] == "anthropic" and logged[-1]["status"] == 200


def test_an_unanswered_call_is_removed_never_answered_and_listed(wire):
    up, proxy, store = wire
    client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0,
                                 default_headers={"X-Claude-Code-Session-Id": "sess-9"})
    reply = client.messages.create(model="claude-sonnet-4-5", max_tokens=32,
                                   messages=UNANSWERED, tools=TOOLS)
    assert reply.content[0].text == "done é"  # type: ignore[union-attr]
    sent = up.requests[-1]["body"]
    assert "toolu_1" not in json.dumps(sent["messages"])
    last = _logged(store)[-1]
    assert last["session_id"] == "sess-9"
    assert [p["id"] for p in last["pending_calls"]] == ["toolu_1"]
    assert "k" not in json.dumps(last).split('"')  # no credential in the log
    assert "x-api-key" not in json.dumps(last)


@pytest.mark.parametrize("stream", [False, True])
def test_a_valid_request_arrives_as_the_bytes_the_sdk_sent(wire, stream):
    up, proxy, _ = wire
    valid = [*BROKEN[:2], {"role": "user", "content": [BROKEN[2]["content"][1],
                                                       BROKEN[2]["content"][0]]}]
    direct = anthropic.Anthropic(base_url=up.url, api_key="k", max_retries=0)
    client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
    for c in (direct, client):
        if stream:
            with c.messages.stream(model="claude-sonnet-4-5", max_tokens=32, messages=valid,
                                   tools=TOOLS, metadata={"user_id": "é"}) as s:
                assert "".join(s.text_stream) == "done é"
        else:
            c.messages.create(model="claude-sonnet-4-5", max_tokens=32, messages=valid,
                              tools=TOOLS, metadata={"user_id": "é"})
    assert_same_request(up, proxy)


@pytest.mark.parametrize("stream", [False, True])
def test_openai_chat_sdk_through_the_proxy(wire, stream):
    up, proxy, _ = wire
    messages: Any = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "ls",
                                                              "arguments": "{}"}}]},
        {"role": "user", "content": "go on"}]
    direct = openai.OpenAI(base_url=up.url + "/v1", api_key="k", max_retries=0)
    with pytest.raises(openai.BadRequestError, match="tool_call"):
        direct.chat.completions.create(model="gpt-4o", messages=messages)
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0)
    if stream:
        chunks = client.chat.completions.create(model="gpt-4o", messages=messages,
                                                stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    else:
        text = client.chat.completions.create(model="gpt-4o", messages=messages
                                              ).choices[0].message.content or ""
    assert text == "done é"
    accepted_after_one_refusal(up)
    assert "call_1" not in json.dumps(up.requests[-1]["body"])


@pytest.mark.parametrize("stream", [False, True])
def test_openai_responses_sdk_through_the_proxy(wire, stream):
    up, proxy, _ = wire
    items: Any = [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}"},
        {"role": "user", "content": "go on"}]
    direct = openai.OpenAI(base_url=up.url + "/v1", api_key="k", max_retries=0)
    with pytest.raises(openai.BadRequestError, match="No tool output"):
        direct.responses.create(model="gpt-5", input=items)
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0)
    if stream:
        events = list(client.responses.create(model="gpt-5", input=items, stream=True))
        assert events[-1].type == "response.completed"
        text = events[-1].response.output_text
    else:
        text = client.responses.create(model="gpt-5", input=items).output_text
    assert text == "done é"
    accepted_after_one_refusal(up)
    sent = up.requests[-1]["body"]["input"]
    assert not any(i.get("type") == "function_call_output" for i in sent)
    assert "call_1" not in json.dumps(sent)  # the unanswered call out, never answered


@pytest.mark.parametrize("stream", [False, True])
def test_google_genai_sdk_through_the_proxy(wire, stream):
    up, proxy, _ = wire
    contents = [
        gtypes.Content(role="user", parts=[gtypes.Part(text="hi")]),
        gtypes.Content(role="model", parts=[gtypes.Part(function_call=gtypes.FunctionCall(
            name="ls", args={}))]),
        gtypes.Content(role="user", parts=[gtypes.Part(text="go on")])]

    def client(url: str) -> genai.Client:
        return genai.Client(api_key="k", http_options=gtypes.HttpOptions(
            base_url=url, retry_options=gtypes.HttpRetryOptions(attempts=1)))

    direct = client(up.url)  # kept: a client closes its connections when collected
    with pytest.raises(genai.errors.ClientError, match="function"):
        direct.models.generate_content(model="gemini-2.5-flash", contents=contents)
    through = client(proxy.url)
    if stream:
        text = "".join(c.text or "" for c in through.models.generate_content_stream(
            model="gemini-2.5-flash", contents=contents))
    else:
        text = through.models.generate_content(model="gemini-2.5-flash",
                                               contents=contents).text or ""
    assert text == "done é"
    accepted_after_one_refusal(up)
    sent = json.dumps(up.requests[-1]["body"])
    assert "functionCall" not in sent and "functionResponse" not in sent
    assert proxy.totals.repaired == 1


def _valid_call(sdk: str, client: Any, stream: bool) -> str:
    """One valid request with an answered call through `sdk`'s client; the answer's text."""
    if sdk == "openai-chat":
        messages: Any = [
            {"role": "user", "content": "hi é"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "ls",
                                                                  "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
            {"role": "user", "content": "go on"}]
        if stream:
            return "".join(c.choices[0].delta.content or "" for c in client.chat.completions
                           .create(model="gpt-4o", messages=messages, stream=True) if c.choices)
        return str(client.chat.completions.create(model="gpt-4o", messages=messages)
                   .choices[0].message.content)
    if sdk == "openai-responses":
        items: Any = [
            {"role": "user", "content": "hi é"},
            {"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
            {"role": "user", "content": "go on"}]
        if stream:
            events = list(client.responses.create(model="gpt-5", input=items, stream=True))
            return str(events[-1].response.output_text)
        return str(client.responses.create(model="gpt-5", input=items).output_text)
    contents = [
        gtypes.Content(role="user", parts=[gtypes.Part(text="hi é")]),
        gtypes.Content(role="model", parts=[gtypes.Part(function_call=gtypes.FunctionCall(
            name="ls", args={}))]),
        gtypes.Content(role="user", parts=[gtypes.Part(function_response=gtypes
                                                       .FunctionResponse(
                                                           name="ls",
                                                           response={"output": "a.txt"}))]),
        gtypes.Content(role="user", parts=[gtypes.Part(text="go on")])]
    if stream:
        return "".join(c.text or "" for c in client.models.generate_content_stream(
            model="gemini-2.5-flash", contents=contents))
    return str(client.models.generate_content(model="gemini-2.5-flash", contents=contents).text)


def _client(sdk: str, url: str) -> Any:
    if sdk.startswith("openai"):
        return openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
    return genai.Client(api_key="k", http_options=gtypes.HttpOptions(
        base_url=url, retry_options=gtypes.HttpRetryOptions(attempts=1)))


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("sdk", ["openai-chat", "openai-responses", "google-genai"])
def test_a_valid_request_of_each_sdk_arrives_as_the_bytes_it_sent(wire, sdk, stream):
    up, proxy, _ = wire
    clients = [_client(sdk, up.url), _client(sdk, proxy.url)]  # kept until both have run
    for client in clients:
        assert _valid_call(sdk, client, stream) == "done é"
    assert_same_request(up, proxy)
