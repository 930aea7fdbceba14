"""Property: for random histories every provider body passes our validator and the SDK types,
and no text goes missing unless the change log says why."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionctx.changes import ChangeKind
from sessionctx.context import build_context
from sessionctx.providers import (
    PROVIDERS,
    BuildRequestOptions,
    build_from_messages,
    build_request,
    naive_request,
    policies,
    validate,
)
from sessionctx.providers.capabilities import capability
from sessionctx.providers.policies import placement
from sessionctx.providers.policies.ids import WireIds
from tests.conftest import recs
from tests.sdk_types import sdk_check

Msg = dict[str, Any]
PLACEHOLDERS = BuildRequestOptions(placeholder_tools=True)

IDS = st.sampled_from(["call_1", "call_2", "toolu_A", "fs.read:3", "call_9|fc_9", "x" * 70,
                       "a_b", "a.b", "dup"])
TEXT = st.sampled_from(["hello", "  ", "", "done", "ünïcode ✓", "line\nbreak"])
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJ"
       "RU5ErkJggg==")
MODELS = st.sampled_from([("anthropic-messages", "claude-opus-4-8"),
                          ("anthropic-messages", "claude-sonnet-4-5"),
                          ("openai-responses", "gpt-5.1"),
                          ("google-generative-ai", "gemini-3-pro"),
                          ("bedrock-converse-stream", "anthropic.claude-opus-4-8")])
ARGS = st.one_of(st.just({"path": "a"}), st.just('{"cmd": "ls"}'), st.just('{"cmd": "ls'),
                 st.just("[1, 2]"), st.none())


def image() -> Msg:
    return {"type": "image", "data": PNG, "mimeType": "image/png"}


@st.composite
def assistant(draw: st.DrawFn) -> tuple[Msg, list[str]]:
    api, model = draw(MODELS)
    blocks: list[Msg] = []
    for _ in range(draw(st.integers(0, 2))):  # signed or not: some replayable, some not
        sig = json.dumps({"type": "reasoning", "id": "rs_1", "summary": [],
                          "encrypted_content": "e"}) if api == "openai-responses" else "sig"
        blocks.append({"type": "thinking", "thinking": draw(TEXT),
                       "thinkingSignature": draw(st.sampled_from([sig, sig, None]))})
    if draw(st.booleans()):
        blocks.append({"type": "text", "text": draw(TEXT)})
    if draw(st.integers(0, 5)) == 0:
        blocks.append(image())
    ids = draw(st.lists(IDS, max_size=3))
    blocks.extend({"type": "toolCall", "id": i, "name": draw(st.sampled_from(["bash", "mcp.x"])),
                   "arguments": draw(ARGS)} for i in ids)
    return {"role": "assistant", "content": blocks, "api": api, "model": model}, ids


@st.composite
def history(draw: st.DrawFn) -> list[Msg]:
    out: list[Msg] = []
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["user", "user_image", "assistant", "system"]))
        if kind == "user":
            out.append({"role": "user", "content": [{"type": "text", "text": draw(TEXT)}]})
        elif kind == "user_image":
            out.append({"role": "user", "content": [{"type": "text", "text": "see"}, image()]})
        elif kind == "system":
            out.append({"role": "system", "content": draw(TEXT)})
        else:
            message, ids = draw(assistant())
            out.append(message)
            answered = draw(st.lists(st.sampled_from(ids), unique=True)) if ids else []
            if draw(st.booleans()):
                out.append({"role": "user", "content": "interjection"})
            for cid in answered:
                content: list[Msg] = []
                if draw(st.booleans()):
                    content.append({"type": "text", "text": draw(TEXT)})
                if draw(st.booleans()):
                    content.append(image())
                out.append({"role": "toolResult", "toolCallId": cid, "toolName": "bash",
                            "content": content, "isError": draw(st.booleans())})
    return out


def _texts(messages: list[Msg]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for i, m in enumerate(messages):
        if m.get("role") in ("user", "assistant") and isinstance(m.get("content"), list):
            out.extend((i, b["text"]) for b in m["content"]
                       if b.get("type") == "text" and b["text"].strip())
    return out


def _violations(body: dict[str, Any], provider: str) -> list[Any]:
    """The body's violations, less the one every body that holds no message has (a history
    with nothing to send gives such a body, and the validator is right to name it)."""
    found = validate(body, provider)
    held = body.get("contents", body.get("input", body.get("messages")))
    if not held:
        assert found and found[0].message.endswith("at least one message is required")
        return found[1:]
    return found


def _check(messages: list[Msg], provider: str, req_body: dict[str, Any]) -> None:
    assert _violations(req_body, provider) == [], (provider, messages)
    sdk_check(provider, req_body)
    dumped = json.dumps(req_body, ensure_ascii=False)
    for _, t in _texts(messages):
        assert json.dumps(t, ensure_ascii=False)[1:-1] in dumped, (provider, t)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history(), st.booleans())
def test_every_provider_body_is_valid_after_the_core_build(messages: list[Msg],
                                                          as_text: bool) -> None:
    ctx = build_context(recs(*messages))
    for provider in PROVIDERS:
        req = build_request(ctx, provider, options=BuildRequestOptions(
            thinking_as_text=as_text, placeholder_tools=True))
        _check(ctx.messages, provider, req.body)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history())
def test_every_provider_body_is_valid_from_raw_messages(messages: list[Msg]) -> None:
    # without the core's pairing: interrupted calls and orphan results reach the provider step
    for provider in PROVIDERS:
        req = build_from_messages(messages, None, provider, options=PLACEHOLDERS)
        _check(messages, provider, req.body)
        dropped_calls = sum(1 for c in req.changes if c.kind == ChangeKind.CALL_WITHOUT_RESULT)
        stored = sum(1 for m in messages if m["role"] == "assistant" for b in m["content"]
                     if b["type"] == "toolCall")
        sent = json.dumps(req.body).count('"toolUse"') + json.dumps(req.body).count(
            '"tool_use"') + json.dumps(req.body).count('"function_call"') + json.dumps(
            req.body).count('"functionCall"') + sum(
            len(m.get("tool_calls", [])) for m in req.body.get("messages", [])
            if provider == "openai-chat")
        assert sent == stored - dropped_calls


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history())
def test_building_a_body_never_modifies_the_messages(messages: list[Msg]) -> None:
    before = copy.deepcopy(messages)
    for provider in PROVIDERS:
        build_from_messages(messages, None, provider, system="s")
        naive_request(messages, provider)
        assert messages == before, provider


def _built(messages: list[Msg], provider: str) -> tuple[str, list[str]]:
    req = build_from_messages(copy.deepcopy(messages), None, provider, system="s")
    return json.dumps(req.body), sorted(json.dumps(c.to_json()) for c in req.changes)


def _never_in_place(*_: Any) -> bool:
    return False


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history())
def test_the_short_path_for_results_in_place_agrees_with_full_placement(
        messages: list[Msg]) -> None:
    # histories whose results already follow their calls skip the placement pass; forcing
    # that pass must give the same body and the same changes
    for provider in PROVIDERS:
        short = _built(messages, provider)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(placement, "in_place", _never_in_place)
            full = _built(messages, provider)
        assert short == full, provider


def test_a_history_with_results_in_place_takes_the_short_path() -> None:
    messages: list[Msg] = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "t", "thinkingSignature": "s"},
                    {"type": "toolCall", "id": "a", "name": "bash", "arguments": {}}],
                 "api": "anthropic-messages", "model": "claude-opus-4-8"},
                {"role": "toolResult", "toolCallId": "a", "content": []}]
    cap, model = capability("anthropic")
    for target, settle in ((model, [1]), ("claude-opus-5", [])):
        # reasoning another model wrote is dropped as it is read: nothing left to settle
        prep = policies.Prepared([], [])
        reader = policies.Reader(prep, cap, True, target)
        reader.read(messages)
        ids = WireIds(prep, cap)
        ids.run(reader.sites)
        assert placement.in_place(ids)
        assert reader.settle == settle
    body = json.loads(_built(messages, "anthropic")[0])
    assert body["messages"][1]["content"][0]["type"] == "thinking"  # same model: replayed
    assert body["messages"][2]["content"][0]["content"][0]["text"] == policies.EMPTY_OUTPUT


@st.composite
def tolerated(draw: st.DrawFn, message: Msg) -> Msg:
    """`message` in one of the other shapes stored histories use for the same thing."""
    message = copy.deepcopy(message)
    content = message.get("content")
    role = message["role"]
    if role == "assistant" and isinstance(content, list):
        calls = [b for b in content if b.get("type") == "toolCall"]
        how = draw(st.sampled_from(["as stored", "tool_use", "tool_call", "tool_calls",
                                    "signed"]))
        if calls and how == "tool_calls":
            message["content"] = [b for b in content if b.get("type") != "toolCall"]
            message["tool_calls"] = [{"id": b["id"], "type": "function", "function": {
                "name": b["name"], "arguments": b["arguments"]}} for b in calls]
        for b in calls:
            if how == "tool_use":
                b["type"] = "tool_use"
                b["input"] = b.pop("arguments")
            elif how == "tool_call":
                b["type"] = "tool_call"
            elif how == "signed":
                b["thoughtSignature"] = "gsig"
    elif role == "toolResult" and isinstance(content, list):
        if draw(st.booleans()):
            message["role"] = "tool"
            message["tool_call_id"] = message.pop("toolCallId")
        if draw(st.booleans()):
            texts = [b["text"] for b in content if b.get("type") == "text"]
            if len(texts) == len(content):
                message["content"] = "".join(texts)
    if isinstance(message.get("content"), list):
        for b in message["content"]:
            if b.get("type") == "image" and draw(st.booleans()):
                b["mime_type"] = b.pop("mimeType")
    return message


@st.composite
def tolerant_history(draw: st.DrawFn) -> list[Msg]:
    out = [draw(tolerated(m)) for m in draw(history())]
    if out and draw(st.integers(0, 4)) == 0:  # a result stored twice, or one with no call
        results = [m for m in out if m["role"] in ("toolResult", "tool")]
        out.append(copy.deepcopy(draw(st.sampled_from(results))) if results else
                   {"role": "toolResult", "toolCallId": "nobody", "content": "late"})
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tolerant_history())
def test_tolerated_shapes_give_valid_bodies_by_either_path(messages: list[Msg]) -> None:
    # the other shapes of calls, results and images: valid for every provider and its SDK,
    # the stored messages untouched, the short path in agreement with full placement
    before = copy.deepcopy(messages)
    ctx = build_context(recs(*messages))
    for provider in PROVIDERS:
        for body in (build_request(ctx, provider, options=PLACEHOLDERS).body,
                     build_from_messages(messages, None, provider,
                                         options=PLACEHOLDERS).body):
            assert _violations(body, provider) == [], (provider, messages)
            sdk_check(provider, body)
        short = _built(messages, provider)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(placement, "in_place", _never_in_place)
            assert _built(messages, provider) == short, provider
    assert messages == before
