"""Each provider rule the strict stub enforces on tool calls, through each framework adapter with
the framework's own client: a user message between a call and its result, one call id used
twice, an id outside the API's pattern or over its length, a tool name outside the pattern,
arguments that are not a JSON object. Each history is first sent without the adapter and
refused (so the case is real), then with it and accepted, with the provider step's change
reported."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from sessionctx.adapters.fold import Report
from sessionctx.changes import ChangeKind
from tests.strict_stub import StrictStub, serve

for module in ("pydantic_ai", "agents", "langchain", "langchain_anthropic", "langchain_openai"):
    pytest.importorskip(module)

LONG = "call_" + "x" * 70  # over Chat Completions' 40 characters and Responses' 64
# each shape: the steps of a history, and the change the provider step reports for it; a call
# is its id, or (id, tool name, arguments as the model streamed them)
SHAPES: dict[str, tuple[list[tuple[str, Any]], ChangeKind]] = {
    "between": ([("user", "look it up"), ("calls", ["call_1"]), ("user", "and hurry"),
                 ("result", "call_1")], ChangeKind.RESULTS_MOVED),
    "duplicate": ([("user", "look it up"), ("calls", ["call_1"]), ("result", "call_1"),
                   ("user", "again"), ("calls", ["call_1"]), ("result", "call_1")],
                  ChangeKind.DUPLICATE_ID_RENAMED),
    "pattern": ([("user", "look it up"), ("calls", ["functions.lookup:0"]),
                 ("result", "functions.lookup:0")], ChangeKind.ID_REWRITTEN),
    "long": ([("user", "look it up"), ("calls", [LONG]), ("result", LONG)],
             ChangeKind.ID_REWRITTEN),
    "name": ([("user", "look it up"), ("calls", [("call_1", "docs.lookup", '{"q": "x"}')]),
              ("result", "call_1")], ChangeKind.NAME_REWRITTEN),
    "arguments": ([("user", "look it up"), ("calls", [("call_1", "lookup", '["x"]')]),
                   ("result", "call_1")], ChangeKind.ARGUMENTS_REPAIRED),
}
# what each API of the stub refuses of them (the others it accepts as they are)
REFUSED = {"anthropic": ("between", "duplicate", "pattern", "name", "arguments"),
           "openai-chat": ("between", "long", "name", "arguments"),
           "openai-responses": ("long",)}
CASES = [(api, shape) for api, shapes in REFUSED.items() for shape in shapes]
# what a framework's client already puts right itself: the stub accepts it without the adapter
# (pydantic-ai joins consecutive requests, tool returns first, before any processor runs, and
# sends arguments that are not an object as one; langchain-anthropic and LiteLLM rewrite an id
# outside Anthropic's pattern, and langchain-anthropic sends such arguments as an empty
# object), and with it too
CLIENT_DOES_IT = {("pydantic-ai", "anthropic", "between"),
                  ("pydantic-ai", "openai-chat", "between"), ("langchain", "anthropic", "pattern"),
                  ("pydantic-ai", "anthropic", "arguments"),
                  ("pydantic-ai", "openai-chat", "arguments"),
                  ("langchain", "anthropic", "arguments"), ("litellm", "anthropic", "pattern")}

Send = Callable[[StrictStub, list[tuple[str, Any]], list[Report] | None], None]


def _call(value: Any) -> tuple[str, str, str | None]:
    """A call step's id, tool name and arguments text (None: the framework's own object)."""
    return value if isinstance(value, tuple) else (value, "lookup", None)


# -- LangChain: create_agent with ChatAnthropic / ChatOpenAI --------------------------------------

def _langchain(api: str) -> Send:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool
    from pydantic import SecretStr

    from sessionctx.adapters.langchain import SessionctxMiddleware

    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return "found"

    def send(stub: StrictStub, steps: list[tuple[str, Any]],
             reports: list[Report] | None) -> None:
        history: list[BaseMessage] = []
        for kind, value in steps:
            if kind == "user":
                history.append(HumanMessage(value))
            elif kind == "calls":
                calls = [_call(c) for c in value]
                history.append(AIMessage(
                    "", tool_calls=[{"name": name, "args": {"q": "x"}, "id": cid,
                                     "type": "tool_call"} for cid, name, text in calls
                                    if text is None or isinstance(json.loads(text), dict)],
                    invalid_tool_calls=[{"name": name, "args": text, "id": cid, "error": None,
                                         "type": "invalid_tool_call"} for cid, name, text in calls
                                        if text is not None
                                        and not isinstance(json.loads(text), dict)]))
            else:
                history.append(ToolMessage("found", tool_call_id=value))
        model: Any
        if api == "anthropic":
            from langchain_anthropic import ChatAnthropic
            model = ChatAnthropic(model_name="claude-sonnet-4-5", base_url=stub.url,
                                  api_key=SecretStr("test"), max_retries=0, timeout=30,
                                  stop=None)
        else:
            from langchain_openai import ChatOpenAI
            model = ChatOpenAI(model="gpt-4o", base_url=f"{stub.url}/v1",
                               api_key=SecretStr("test"),
                               max_retries=0, use_responses_api=api == "openai-responses")
        middleware = [] if reports is None else [SessionctxMiddleware(on_report=reports.append)]
        agent = create_agent(model, [lookup], middleware=middleware)
        agent.invoke({"messages": history})  # type: ignore[call-overload]

    return send


# -- pydantic-ai: an Agent on AnthropicModel / OpenAIChatModel / OpenAIResponsesModel -------------

def _pydantic_ai(api: str) -> Send:
    from pydantic_ai import Agent
    from pydantic_ai import messages as pm

    from sessionctx.adapters.pydantic_ai import history_capability

    def send(stub: StrictStub, steps: list[tuple[str, Any]],
             reports: list[Report] | None) -> None:
        history: list[pm.ModelMessage] = []
        for kind, value in steps:
            if kind == "user":
                history.append(pm.ModelRequest(parts=[pm.UserPromptPart(value)]))
            elif kind == "calls":
                history.append(pm.ModelResponse(parts=[
                    pm.ToolCallPart(name, {"q": "x"} if text is None else text, tool_call_id=cid)
                    for cid, name, text in map(_call, value)]))
            else:
                history.append(pm.ModelRequest(parts=[
                    pm.ToolReturnPart("lookup", "found", tool_call_id=value)]))
        model: Any
        if api == "anthropic":
            from anthropic import AsyncAnthropic
            from pydantic_ai.models.anthropic import AnthropicModel
            from pydantic_ai.providers.anthropic import AnthropicProvider
            client = AsyncAnthropic(base_url=stub.url, api_key="test", max_retries=0)
            model = AnthropicModel("claude-sonnet-4-5",
                                   provider=AnthropicProvider(anthropic_client=client))
        else:
            from openai import AsyncOpenAI
            from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
            from pydantic_ai.providers.openai import OpenAIProvider
            provider = OpenAIProvider(openai_client=AsyncOpenAI(
                base_url=f"{stub.url}/v1", api_key="test", max_retries=0))
            kind_of = OpenAIResponsesModel if api == "openai-responses" else OpenAIChatModel
            model = kind_of("gpt-4o", provider=provider)
        capabilities = [] if reports is None else [history_capability(on_report=reports.append)]
        Agent(model, capabilities=capabilities).run_sync("go on", message_history=history)

    return send


# -- OpenAI Agents: Runner with OpenAIResponsesModel / OpenAIChatCompletionsModel ----------------

def _agents(api: str) -> Send:
    import openai
    from agents import Agent, RunConfig, Runner, set_tracing_disabled
    from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
    from agents.models.openai_responses import OpenAIResponsesModel

    from sessionctx.adapters.openai_agents import RepairModelInput

    set_tracing_disabled(True)

    def send(stub: StrictStub, steps: list[tuple[str, Any]],
             reports: list[Report] | None) -> None:
        items: list[Any] = []
        for kind, value in steps:
            if kind == "user":
                items.append({"role": "user", "content": value})
            elif kind == "calls":
                items += [{"type": "function_call", "call_id": cid, "name": name,
                           "arguments": text or '{"q": "x"}'}
                          for cid, name, text in map(_call, value)]
            else:
                items.append({"type": "function_call_output", "call_id": value,
                              "output": "found"})
        client = openai.AsyncOpenAI(base_url=f"{stub.url}/v1", api_key="test", max_retries=0)
        kind_of = OpenAIChatCompletionsModel if api == "openai-chat" else OpenAIResponsesModel
        agent: Agent[Any] = Agent(name="ops", model=kind_of(model="gpt-4o",
                                                            openai_client=client))
        config = RunConfig() if reports is None else RunConfig(
            call_model_input_filter=RepairModelInput(on_report=reports.append))
        asyncio.run(Runner.run(agent, items, run_config=config))

    return send


# -- LiteLLM: acompletion with chat messages, to an OpenAI model and to an Anthropic one ----------

def _litellm(api: str) -> Send:
    pytest.importorskip("litellm")
    import litellm

    from sessionctx.adapters.litellm import SessionctxLogger

    def send(stub: StrictStub, steps: list[tuple[str, Any]],
             reports: list[Report] | None) -> None:
        messages: list[dict[str, Any]] = []
        for kind, value in steps:
            if kind == "user":
                messages.append({"role": "user", "content": value})
            elif kind == "calls":
                messages.append({"role": "assistant", "content": None, "tool_calls": [
                    {"id": cid, "type": "function",
                     "function": {"name": name, "arguments": text or '{"q": "x"}'}}
                    for cid, name, text in map(_call, value)]})
            else:
                messages.append({"role": "tool", "tool_call_id": value, "content": "found"})
        tools = [{"type": "function", "function": {
            "name": "lookup", "description": "Look something up.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]
        where = {"model": "anthropic/claude-sonnet-4-5", "api_base": stub.url} \
            if api == "anthropic" else {"model": "openai/gpt-4o", "api_base": f"{stub.url}/v1"}
        saved = litellm.callbacks
        litellm.callbacks = [] if reports is None else [
            SessionctxLogger(on_report=reports.append)]
        try:
            asyncio.run(litellm.acompletion(messages=messages, tools=tools, api_key="test",
                                            num_retries=0, **where))
        finally:
            litellm.callbacks = saved

    return send


FRAMEWORKS: dict[str, Callable[[str], Send]] = {
    "langchain": _langchain, "pydantic-ai": _pydantic_ai, "openai-agents": _agents,
    "litellm": _litellm}
# the APIs each framework's client is tested on
CLIENTS = {"langchain": ("anthropic", "openai-chat", "openai-responses"),
           "pydantic-ai": ("anthropic", "openai-chat", "openai-responses"),
           "openai-agents": ("openai-chat", "openai-responses"),
           "litellm": ("anthropic", "openai-chat")}


@pytest.mark.parametrize(("framework", "api", "shape"), [
    (framework, api, shape) for framework, apis in CLIENTS.items()
    for api, shape in CASES if api in apis])
def test_the_stub_refuses_the_shape_and_the_adapter_sends_it_placed_and_named(
        framework: str, api: str, shape: str) -> None:
    steps, kind = SHAPES[shape]
    send = FRAMEWORKS[framework](api)
    with serve() as stub:
        if (framework, api, shape) in CLIENT_DOES_IT:
            send(stub, steps, None)
            assert not stub.refused()
        else:
            with pytest.raises(Exception):  # noqa: B017 - each client raises its own error
                send(stub, steps, None)
            assert stub.refused(), "the shape must be refused without the adapter"
        refused = len(stub.requests)
        reports: list[Report] = []
        send(stub, steps, reports)
        sent = stub.requests[refused:]
        assert sent and not [r["problem"] for r in sent if r["problem"]]
        assert all(r["kind"] == _kind(api) for r in sent)
    if (framework, api, shape) not in CLIENT_DOES_IT or framework == "langchain":
        assert kind in {c.kind for report in reports for c in report.changes}


def _kind(api: str) -> str:
    return {"anthropic": "anthropic", "openai-chat": "chat", "openai-responses": "responses"}[api]


def test_parallel_calls_kept_one_item_each_are_one_turn_for_the_agents_adapter() -> None:
    """The Agents SDK keeps each parallel call as an item of its own: they are one turn, so
    their outputs after the last of them are in place, and an id to rename is still found."""
    pytest.importorskip("agents")
    from sessionctx.adapters.openai_agents import RepairModelInput

    def items(first: str) -> list[Any]:
        return [{"role": "user", "content": "look both up"},
                {"type": "function_call", "call_id": first, "name": "lookup", "arguments": "{}"},
                {"type": "function_call", "call_id": "call_2", "name": "lookup",
                 "arguments": "{}"},
                {"type": "function_call_output", "call_id": first, "output": "a"},
                {"type": "function_call_output", "call_id": "call_2", "output": "b"},
                {"role": "user", "content": "thanks"}]

    plain = items("call_1")
    for api in ("openai-responses", "openai-chat"):
        assert RepairModelInput(provider=api).repair(plain) is plain
    long = items(LONG)
    reports: list[Report] = []
    out = RepairModelInput(on_report=reports.append).repair(long)
    assert [i.get("type") for i in out] == [i.get("type") for i in long]
    assert out[1]["call_id"] == out[3]["call_id"] != LONG and len(out[1]["call_id"]) <= 64
    assert out[2] is long[2] and out[4] is long[4]
    assert [c.kind for c in reports[0].changes] == [ChangeKind.ID_REWRITTEN]


def test_the_api_named_or_told_by_the_model_decides_which_id_rule_applies() -> None:
    """A 50-character id is over Chat Completions' 40 but within Anthropic's 64: renamed for
    the one, left for the other; an unknown API is refused when the adapter is made."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from sessionctx.adapters.langchain import SessionctxMiddleware
    from sessionctx.adapters.openai_agents import RepairModelInput
    from sessionctx.adapters.pydantic_ai import SessionctxHistory
    from sessionctx.errors import BadArgument

    cid = "call_" + "y" * 45
    history = [HumanMessage("look it up"),
               AIMessage("", tool_calls=[{"name": "lookup", "args": {}, "id": cid,
                                          "type": "tool_call"}]),
               ToolMessage("found", tool_call_id=cid)]
    assert SessionctxMiddleware(provider="anthropic").repair(history) is history
    out = SessionctxMiddleware().repair(history)  # no model: Chat Completions' rules
    assert isinstance(out[1], AIMessage) and isinstance(out[2], ToolMessage)
    assert out[1].tool_calls[0]["id"] == out[2].tool_call_id != cid
    assert len(out[2].tool_call_id) <= 40 and out[0] is history[0]
    for make in (SessionctxMiddleware, SessionctxHistory, RepairModelInput):
        with pytest.raises(BadArgument, match="unknown provider"):
            make(provider="anthropc")


def test_a_turn_after_the_step_keeps_its_result_and_equals_a_fresh_fold() -> None:
    """A history the step changed early: each later turn reuses that result for the messages
    it was run on, and sends exactly what a fresh adapter sends for the same list, a new call
    under an id the step gave included."""
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

    from sessionctx.adapters import provider_step
    from sessionctx.adapters.langchain import SessionctxMiddleware

    def turn(cid: str) -> list[BaseMessage]:
        return [HumanMessage("look it up"),
                AIMessage("", tool_calls=[{"name": "lookup", "args": {}, "id": cid,
                                           "type": "tool_call"}]),
                ToolMessage("found", tool_call_id=cid)]

    runs = 0
    real = provider_step.run_step

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal runs
        runs += 1
        return real(*args, **kwargs)

    shared = SessionctxMiddleware()
    history: list[BaseMessage] = [*turn("call_1"), *turn("call_1")]  # one id used twice
    plan = ["call_2", "call_3", "call_1_2", "call_4", "call_1", "call_5"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sessionctx.adapters.fold.run_step", counted)
        for k, cid in enumerate(["", *plan]):
            if cid:
                history += turn(cid)
            sent = list(shared.repair(list(history), "t"))
            assert sent == list(SessionctxMiddleware().repair(list(history)))
            ids = [c["id"] for m in sent if isinstance(m, AIMessage) for c in m.tool_calls]
            assert len(ids) == len(set(ids)), k
    # the shared adapter ran the step on the first list, then again only for the turns that
    # brought a reason of their own (an id the step gave, an id used before); a fresh adapter
    # runs it on every list
    assert runs == 3 + 7
