"""One adapter shared by many conversations at once: 8 conversations, 20 rounds each, run from
threads and from asyncio tasks through one instance; every list it hands the model equals what
an adapter of that conversation alone hands it. The conversations break the way real ones do
(a call interrupted before its result, a note asked for), so the fold has work in each round.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from sessionctx.context import BuildOptions

CONVERSATIONS = 8
ROUNDS = 20
OPTIONS = BuildOptions(note_unpaired=True)
_T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _script(conv: int) -> list[list[tuple[str, str]]]:
    """Each round's events: ("user", text), ("call", id), ("result", id). Every third round of
    a conversation loses its call's result, as an interrupted run does."""
    rounds = []
    for r in range(ROUNDS):
        call = f"call_{conv}_{r}"
        events = [("user", f"conversation {conv}, round {r}"), ("call", call)]
        if (r + conv) % 3:
            events.append(("result", call))
        rounds.append(events)
    return rounds


Make = Callable[[str, str], Any]
Repair = Callable[[Any, list[Any], str], Sequence[Any]]
Dump = Callable[[Sequence[Any]], str]


def _threads(shared: Any, fresh: Callable[[], Any], make: Make, repair: Repair,
             dump: Dump) -> None:
    got: dict[int, list[str]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(CONVERSATIONS)

    def run(conv: int) -> None:
        try:
            messages: list[Any] = []
            out: list[str] = []
            start.wait()
            for events in _script(conv):
                messages.extend(make(kind, value) for kind, value in events)
                out.append(dump(repair(shared, messages, f"thread-{conv}")))
            got[conv] = out
        except BaseException as error:  # reported below, with the test
            errors.append(error)

    workers = [threading.Thread(target=run, args=(c,)) for c in range(CONVERSATIONS)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as they can: races show at once
    try:
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    _same_as_alone(got, fresh, make, repair, dump)


def _tasks(shared: Any, fresh: Callable[[], Any], make: Make, repair: Repair,
           dump: Dump) -> None:
    got: dict[int, list[str]] = {}

    async def run(conv: int) -> None:
        messages: list[Any] = []
        out: list[str] = []
        for events in _script(conv):
            messages.extend(make(kind, value) for kind, value in events)
            out.append(dump(repair(shared, messages, f"task-{conv}")))
            await asyncio.sleep(0)  # the other conversations' turns come in between
        got[conv] = out

    async def main() -> None:
        await asyncio.gather(*(run(c) for c in range(CONVERSATIONS)))

    asyncio.run(main())
    _same_as_alone(got, fresh, make, repair, dump)


def _same_as_alone(got: dict[int, list[str]], fresh: Callable[[], Any], make: Make,
                   repair: Repair, dump: Dump) -> None:
    assert sorted(got) == list(range(CONVERSATIONS))
    for conv in range(CONVERSATIONS):
        alone = fresh()
        messages: list[Any] = []
        expected = []
        for events in _script(conv):
            messages.extend(make(kind, value) for kind, value in events)
            expected.append(dump(repair(alone, messages, f"alone-{conv}")))
        assert got[conv] == expected, f"conversation {conv} differs from its own adapter's"
        assert any("interrupted" in text for text in expected), "the note was never needed"


def _both(shared: Callable[[], Any], make: Make, repair: Repair, dump: Dump) -> None:
    _threads(shared(), shared, make, repair, dump)
    _tasks(shared(), shared, make, repair, dump)


# -- LangChain -------------------------------------------------------------------------------

def test_one_langchain_middleware_serves_many_threads_at_once() -> None:
    pytest.importorskip("langchain")
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, message_to_dict

    from sessionctx.adapters.langchain import SessionctxMiddleware

    def make(kind: str, value: str) -> Any:
        if kind == "user":
            return HumanMessage(value)
        if kind == "call":
            return AIMessage("", tool_calls=[{"name": "deploy", "args": {"to": value},
                                              "id": value, "type": "tool_call"}])
        return ToolMessage("deployed", tool_call_id=value)

    _both(lambda: SessionctxMiddleware(OPTIONS), make,
          lambda adapter, messages, conv: adapter.repair(messages, conv),
          lambda out: json.dumps([message_to_dict(m) for m in out]))


def test_the_langchain_middleware_keys_its_folds_by_thread_when_given_none() -> None:
    """Without a thread id, the first message object tells conversations apart."""
    pytest.importorskip("langchain")
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, message_to_dict

    from sessionctx.adapters.langchain import SessionctxMiddleware

    def make(kind: str, value: str) -> Any:
        if kind == "user":
            return HumanMessage(value)
        if kind == "call":
            return AIMessage("", tool_calls=[{"name": "deploy", "args": {}, "id": value,
                                              "type": "tool_call"}])
        return ToolMessage("ok", tool_call_id=value)

    _threads(SessionctxMiddleware(OPTIONS), lambda: SessionctxMiddleware(OPTIONS), make,
             lambda adapter, messages, conv: adapter.repair(messages),
             lambda out: json.dumps([message_to_dict(m) for m in out]))


# -- pydantic-ai -----------------------------------------------------------------------------

def test_one_pydantic_ai_processor_serves_many_runs_at_once() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import messages as pm

    from sessionctx.adapters.pydantic_ai import SessionctxHistory

    def make(kind: str, value: str) -> Any:
        if kind == "user":
            return pm.ModelRequest(parts=[pm.UserPromptPart(value, timestamp=_T0)])
        if kind == "call":
            return pm.ModelResponse(parts=[pm.ToolCallPart("deploy", {"to": value}, value)],
                                    timestamp=_T0)
        return pm.ModelRequest(parts=[pm.ToolReturnPart("deploy", "deployed", value,
                                                        timestamp=_T0)])

    _both(lambda: SessionctxHistory(OPTIONS), make,
          lambda adapter, messages, conv: adapter.process(messages),
          lambda out: re.sub(r'"timestamp":"[^"]*"', "",  # a note is made at the time
                             pm.ModelMessagesTypeAdapter.dump_json(list(out)).decode()))


# -- OpenAI Agents ---------------------------------------------------------------------------

def _item(kind: str, value: str) -> dict[str, Any]:
    if kind == "user":
        return {"role": "user", "content": value}
    if kind == "call":
        return {"type": "function_call", "call_id": value, "name": "deploy",
                "arguments": json.dumps({"to": value})}
    return {"type": "function_call_output", "call_id": value, "output": "deployed"}


def test_one_agents_input_filter_serves_many_runs_at_once() -> None:
    pytest.importorskip("agents")
    from sessionctx.adapters.openai_agents import RepairModelInput

    _both(lambda: RepairModelInput(OPTIONS), _item,
          lambda adapter, items, conv: adapter.repair(items, conv),
          lambda out: json.dumps(list(out), default=str))


# -- LiteLLM ---------------------------------------------------------------------------------

def _chat(kind: str, value: str) -> dict[str, Any]:
    if kind == "user":
        return {"role": "user", "content": value}
    if kind == "call":
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": value, "type": "function",
             "function": {"name": "deploy", "arguments": json.dumps({"to": value})}}]}
    return {"role": "tool", "tool_call_id": value, "content": "deployed"}


def test_one_litellm_logger_serves_many_conversations_at_once() -> None:
    pytest.importorskip("litellm")
    from sessionctx.adapters.litellm import SessionctxLogger

    _both(lambda: SessionctxLogger(OPTIONS), _chat,
          lambda adapter, messages, conv: adapter.repair(messages, conv),
          lambda out: json.dumps(list(out)))


def test_the_pool_forgets_the_least_recent_conversation_past_its_bound() -> None:
    from sessionctx.adapters.fold import Conversations

    pool = Conversations(lambda message, index, dropped: [(0, message)], OPTIONS, limit=3)
    lists = [[{"role": "user", "content": [{"type": "text", "text": str(k)}]}]
             for k in range(5)]
    for k, messages in enumerate(lists):
        with pool.fold(messages, f"c{k}") as folded:
            assert folded.context.messages == messages
    assert len(pool) == 3
    with pool.fold(lists[0], "c0") as folded:  # forgotten: folded again, the same answer
        assert folded.context.messages == lists[0]


def test_a_report_names_its_conversation_and_its_pending_calls() -> None:
    from sessionctx.adapters.litellm import SessionctxLogger

    reports: list[Any] = []
    logger = SessionctxLogger(on_report=reports.append)
    messages = [_chat("user", "go"), _chat("call", "call_1"), _chat("user", "well?")]
    out = logger.repair(messages, "run-7")
    assert [m["role"] for m in out] == ["user", "user"]
    (report,) = reports
    assert report.conversation == "run-7"
    assert [p.id for p in report.pending_calls] == ["call_1"]
    assert logger.report("run-7") is report

