"""LiteLLM end to end: litellm.completion and acompletion against a stub Chat Completions
endpoint on 127.0.0.1 that refuses, as the OpenAI API does, broken tool pairing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("litellm")

import litellm
from litellm.exceptions import BadRequestError

from sessionctx.adapters.litellm import SessionctxLogger
from sessionctx.changes import Change, ChangeKind
from sessionctx.screenshots import OMITTED_NOTE
from tests.stub_servers import Stub, serve

PNG_URL = "data:image/png;base64,iVBORw0KGgo="


def _broken() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are an ops agent."},
        {"role": "user", "content": "rotate the keys"},
        {"role": "assistant", "content": "Rotating now.",
         "tool_calls": [{"id": "call_LOST", "type": "function",
                         "function": {"name": "rotate", "arguments": '{"all": true}'}}]},
        # the process died before the tool answered
        {"role": "user", "content": "are they rotated?"},
    ]


@pytest.fixture
def stub() -> Iterator[Stub]:
    with serve("chat") as s:
        yield s


@pytest.fixture
def callbacks() -> Iterator[list[Any]]:
    saved = litellm.callbacks
    litellm.callbacks = []
    try:
        yield litellm.callbacks
    finally:
        litellm.callbacks = saved


def _complete(stub: Stub, messages: list[Any]) -> Any:
    return asyncio.run(litellm.acompletion(model="openai/gpt-stub", api_base=stub.url,
                                           api_key="test", messages=messages, num_retries=0))


def test_a_call_without_result_fails_alone_and_goes_out_repaired_with_the_logger(
        stub: Stub, callbacks: list[Any]) -> None:
    with pytest.raises(BadRequestError, match="tool_call_ids did not have response"):
        _complete(stub, _broken())
    got: list[Change] = []
    callbacks.append(SessionctxLogger(on_changes=got.extend))
    messages = _broken()
    response = _complete(stub, messages)
    assert response.choices[0].message.content.startswith("answer")
    sent = stub.bodies[-1]["messages"]
    assert sent[2] == {"role": "assistant", "content": "Rotating now."}
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert messages == _broken()  # the caller's list is never modified
    assert [c.kind for c in got] == [ChangeKind.DROPPED_UNPAIRED_CALL]
    assert got[0].detail["tool_call_id"] == "call_LOST"


def test_acompletion_repairs_an_orphan_tool_message(stub: Stub, callbacks: list[Any]) -> None:
    callbacks.append(SessionctxLogger())
    messages = [{"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "call_ORPHAN", "content": "ok"},
                {"role": "user", "content": "again"}]
    response = asyncio.run(litellm.acompletion(
        model="openai/gpt-stub", api_base=stub.url, api_key="test", messages=messages,
        num_retries=0))
    assert response.choices[0].message.content.startswith("answer")
    assert [m["content"] for m in stub.bodies[-1]["messages"]] == ["hi", "again"]


def test_an_agent_loop_keeps_its_pairs_and_older_screenshots_become_notes(
        stub: Stub, callbacks: list[Any]) -> None:
    logger = SessionctxLogger()
    callbacks.append(logger)
    messages: list[Any] = [{"role": "user", "content": "browse"}]
    for i in range(2):
        stub.scripted.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"b{i}", "type": "function",
             "function": {"name": "browser_use", "arguments": "{}"}}]})
        reply = _complete(stub, messages).choices[0].message
        messages.append(reply)  # LiteLLM's own Message object, as agent loops append it
        messages.append({"role": "tool", "tool_call_id": f"b{i}", "name": "browser_use",
                         "content": [{"type": "text", "text": f"page {i}"},
                                     {"type": "image_url", "image_url": {"url": PNG_URL}}]})
    _complete(stub, messages)
    sent = stub.bodies[-1]["messages"]
    # LiteLLM itself moves a tool message's images into a user message after it
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "tool", "user"]
    assert sent[2]["content"][1] == {"type": "text", "text": OMITTED_NOTE}
    images = [p for m in sent if isinstance(m.get("content"), list) for p in m["content"]
              if p["type"] == "image_url"]
    assert len(images) == 1 and messages[4]["content"][1]["type"] == "image_url"


def test_sync_completion_takes_the_repaired_list_from_repair(
        stub: Stub, callbacks: list[Any]) -> None:
    # litellm.completion (sync) runs no hook that may rewrite a request: repair() serves it
    logger = SessionctxLogger()
    response = litellm.completion(model="openai/gpt-stub", api_base=stub.url, api_key="test",
                                  messages=list(logger.repair(_broken())), num_retries=0)
    assert response.choices[0].message.content.startswith("answer")


def test_the_proxy_hook_rewrites_the_request_data() -> None:
    logger = SessionctxLogger()
    data = {"model": "gpt-x", "messages": _broken()}
    out = asyncio.run(logger.async_pre_call_hook(None, None, data, "completion"))
    assert out["messages"][2] == {"role": "assistant", "content": "Rotating now."}
    intact = {"model": "gpt-x", "messages": _broken()[:2]}
    assert asyncio.run(logger.async_pre_call_hook(None, None, intact, "completion")) is intact
