"""LangChain end to end: a real create_agent whose fake chat model refuses, as the OpenAI API
does, a history with a call and no result or a result with no call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
)
from langchain_core.tools import tool

from sessionctx.adapters.langchain import SessionctxChatHistory, SessionctxMiddleware
from sessionctx.changes import Change, ChangeKind
from sessionctx.screenshots import OMITTED_NOTE
from tests.stub_servers import chat_problem

PNG_URL = "data:image/png;base64,iVBORw0KGgo="


class ProviderError(Exception):
    pass


class StrictFakeModel(GenericFakeChatModel):
    """Answers from its script; refuses what the Chat Completions API refuses."""

    received: list[list[BaseMessage]]

    def bind_tools(self, tools: Any, **kwargs: Any) -> StrictFakeModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.received.append(list(messages))
        problem = chat_problem({"messages": convert_to_openai_messages(messages)})
        if problem:
            raise ProviderError(problem)
        return super()._generate(messages, *args, **kwargs)


def _model(*replies: AIMessage) -> StrictFakeModel:
    return StrictFakeModel(messages=iter(replies or [AIMessage("done")]), received=[])


@tool
def restart(service: str) -> str:
    """Restart a service."""
    return f"{service} restarted"


def _state(messages: list[BaseMessage]) -> Any:
    return {"messages": messages}


def _broken_history() -> list[BaseMessage]:
    return [
        HumanMessage("restart web", id="h1"),
        AIMessage("", id="a1", tool_calls=[{"name": "restart", "args": {"service": "web"},
                                            "id": "call_LOST", "type": "tool_call"}],
                  response_metadata={"model_name": "gpt-x"}),
        # the worker died before the tool answered; later an orphan result was written
        ToolMessage("db restarted", tool_call_id="call_ORPHAN", id="t0"),
        HumanMessage("did it work?", id="h2"),
    ]


def test_the_agent_fails_without_the_middleware_and_runs_with_it() -> None:
    with pytest.raises(ProviderError, match="tool_call"):
        create_agent(_model(), tools=[restart]).invoke(_state(_broken_history()))

    got: list[Change] = []
    model = _model(AIMessage("I cannot tell; let me check."))
    agent = create_agent(model, tools=[restart],
                         middleware=[SessionctxMiddleware(on_changes=got.extend)])
    result = agent.invoke(_state(_broken_history()))
    assert result["messages"][-1].content == "I cannot tell; let me check."
    sent = model.received[0]
    assert [m.id for m in sent] == ["h1", "h2"]  # the empty call message and the orphan went
    kinds = [c.kind for c in got]
    assert ChangeKind.DROPPED_UNPAIRED_CALL in kinds and ChangeKind.DROPPED_ORPHAN_RESULT in kinds


def test_a_real_tool_loop_passes_through_untouched_and_keeps_the_objects() -> None:
    model = _model(
        AIMessage("", tool_calls=[{"name": "restart", "args": {"service": "web"},
                                   "id": "call_1", "type": "tool_call"}]),
        AIMessage("web is back"))
    middleware = SessionctxMiddleware()
    agent = create_agent(model, tools=[restart], middleware=[middleware])
    result = agent.invoke(_state([HumanMessage("restart web")]))
    assert result["messages"][-1].content == "web is back"
    second = model.received[1]
    assert [type(m).__name__ for m in second] == ["HumanMessage", "AIMessage", "ToolMessage"]
    assert middleware.repair(result["messages"]) is result["messages"]


def test_a_call_kept_beside_a_lost_one_survives_with_its_metadata() -> None:
    message = AIMessage(
        [{"type": "text", "text": "two calls"},
         {"type": "tool_use", "id": "c_ok", "name": "restart", "input": {"service": "a"}},
         {"type": "tool_use", "id": "c_lost", "name": "restart", "input": {"service": "b"}}],
        id="a1", response_metadata={"stop_reason": "tool_use"},
        tool_calls=[{"name": "restart", "args": {"service": "a"}, "id": "c_ok",
                     "type": "tool_call"},
                    {"name": "restart", "args": {"service": "b"}, "id": "c_lost",
                     "type": "tool_call"}])
    history: list[BaseMessage] = [HumanMessage("go"), message,
                                  ToolMessage("a restarted", tool_call_id="c_ok")]
    out = SessionctxMiddleware().repair(history)
    kept = out[1]
    assert isinstance(kept, AIMessage)
    assert [c["id"] for c in kept.tool_calls] == ["c_ok"]
    assert [b["id"] for b in kept.content if isinstance(b, dict) and "id" in b] == ["c_ok"]
    assert kept.id == "a1" and kept.response_metadata == {"stop_reason": "tool_use"}
    assert out[0] is history[0] and out[2] is history[2]


def test_older_browser_screenshots_in_tool_messages_become_a_note() -> None:
    def shot(i: int) -> list[BaseMessage]:
        return [AIMessage("", tool_calls=[{"name": "browser_use", "args": {}, "id": f"b{i}",
                                           "type": "tool_call"}]),
                ToolMessage([{"type": "text", "text": f"page {i}"},
                             {"type": "image_url", "image_url": {"url": PNG_URL}}],
                            tool_call_id=f"b{i}", name="browser_use")]
    history: list[BaseMessage] = [HumanMessage("browse"), *shot(1), *shot(2)]
    out = SessionctxMiddleware().repair(history)
    assert out[2].content == [{"type": "text", "text": "page 1"},
                              {"type": "text", "text": OMITTED_NOTE}]
    assert out[4] is history[4]


@pytest.fixture
def store_url(tmp_path: Path) -> Iterator[str]:
    yield f"sqlite:///{tmp_path / 'lc.db'}"


def test_the_chat_history_stores_everything_and_reads_it_repaired(store_url: str) -> None:
    got: list[Change] = []
    history = SessionctxChatHistory("chat-1", store_url, on_changes=got.extend)
    history.add_messages([SystemMessage("be brief"), *_broken_history()])
    assert [m.id for m in history.messages] == [None, "h1", "h2"]
    assert isinstance(history.messages[0], SystemMessage)
    assert {c.kind for c in got} >= {ChangeKind.DROPPED_UNPAIRED_CALL,
                                     ChangeKind.DROPPED_ORPHAN_RESULT}
    stored = history.store.records("chat-1")
    assert len(stored) == 5
    history.add_ai_message("It is up.")
    assert history.messages[-1].content == "It is up."
    history.clear()
    assert history.messages == []
    assert len(history.store.records("chat-1")) == 7  # nothing was deleted
    history.add_user_message("fresh start")
    assert [m.content for m in history.messages] == ["fresh start"]


def test_the_reasoning_before_a_removed_call_goes_with_it_on_the_responses_api() -> None:
    """ChatOpenAI on the Responses API sends an AIMessage's reasoning block as an item that
    must be followed by the item it produced: with its call taken out, it goes too."""
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    from tests.stub_servers import serve

    history: list[BaseMessage] = [
        HumanMessage("deploy"),
        AIMessage(content=[
            {"type": "reasoning", "id": "rs_1",
             "summary": [{"type": "summary_text", "text": "deploy first"}]},
            {"type": "function_call", "call_id": "call_1", "name": "deploy",
             "arguments": "{}", "id": "fc_1"}],
            tool_calls=[{"name": "deploy", "args": {}, "id": "call_1", "type": "tool_call"}],
            response_metadata={"model_provider": "openai"}),
        HumanMessage("well?"),
    ]
    kept_call = [
        HumanMessage("deploy"),
        AIMessage(content=[
            {"type": "reasoning", "id": "rs_2", "summary": []},
            {"type": "function_call", "call_id": "call_2", "name": "deploy",
             "arguments": "{}", "id": "fc_2"}],
            tool_calls=[{"name": "deploy", "args": {}, "id": "call_2", "type": "tool_call"}],
            response_metadata={"model_provider": "openai"}),
        ToolMessage("deployed", tool_call_id="call_2"),
    ]
    with serve("responses") as stub:
        model = ChatOpenAI(model="gpt-5.1", use_responses_api=True, base_url=stub.url,
                           api_key=SecretStr("test"), max_retries=0)
        with pytest.raises(Exception, match="No tool output"):
            model.invoke(history)
        model.invoke(list(SessionctxMiddleware().repair(history)))
        assert [i.get("type") for i in stub.bodies[-1]["input"]] == ["message", "message"]
        model.invoke(list(SessionctxMiddleware().repair(kept_call)))  # a kept pair stays whole
        kinds = [i.get("type") for i in stub.bodies[-1]["input"]]
        assert kinds == ["message", "reasoning", "function_call", "function_call_output"]
    assert not stub.rejected[1:]
