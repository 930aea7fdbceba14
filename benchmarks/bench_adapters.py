"""Each framework adapter's cost per turn on a 10k-message history, as a ratio to the core build
of the same history (goal: <= 1.0), and the OpenAI Agents session's get_items after one more
turn on a 10k-message session compacted to its last 1k messages, as a ratio to a 1k-message
session (goal: <= 1.5).

Run: .venv/bin/python benchmarks/bench_adapters.py [messages]

The core build is what `sessionctx build` does: the session's JSONL file read and its records
folded. A turn is what an agent loop does between two model calls: the history grows by a
user message and the adapter is called on the whole list; the adapter keeps its fold between
calls. The two sides take turns in one loop and each side's least CPU time is kept.

A warm turn on a history the provider step changes (its second turn reuses the first turn's
call ids, so they are renamed on every request) is measured for the LangChain middleware too
(goal <= 1.0): the step's result is kept from turn to turn.

The cold turn is what a server does that loads the history from storage for each request: the
same adapter instance is handed a list of new objects (made outside the timing, as the
framework's own deserialization would), equal to those of the turn before plus the new user
message, and given no conversation id (goal: <= 1.0 of the core build too). The first sight is
a new adapter instance handed such a list (a conversation the process has not seen, after a
restart or once it fell out of the adapter's pool): the whole list is converted and folded.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch at import

from sessionctx.adapters import responses_items as ri
from sessionctx.context import build_context
from sessionctx.records import read_path
from sessionctx.store import open_store

REPEATS = 9
# the time every pydantic-ai message and part carries: a stored history reads back with the
# times it was stored with, so two loads of it are equal
STORED_AT = datetime(2026, 1, 1, tzinfo=UTC)


def plan(n: int) -> list[tuple[str, int, int]]:
    """The history as (kind, turn, k): a user ask, two parallel calls, their results, a reply."""
    out: list[tuple[str, int, int]] = []
    i = 0
    while len(out) < n:
        out += [("user", i, 0), ("calls", i, 0), ("result", i, 0), ("result", i, 1),
                ("reply", i, 0)]
        i += 1
    return out[:n]


def native(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for kind, i, k in plan(n):
        if kind == "user":
            out.append({"role": "user", "content": [{"type": "text", "text": f"step {i}"}]})
        elif kind == "calls":
            out.append({"role": "assistant", "content": [
                {"type": "toolCall", "id": f"call_{i}_{c}", "name": "bash",
                 "arguments": {"cmd": f"ls {i}"}} for c in range(2)]})
        elif kind == "result":
            out.append({"role": "toolResult", "toolCallId": f"call_{i}_{k}", "toolName": "bash",
                        "content": [{"type": "text", "text": "out " * 50}], "isError": False})
        else:
            out.append({"role": "assistant", "content": [{"type": "text", "text": f"done {i}"}]})
    return out


def chat(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for kind, i, k in plan(n):
        if kind == "user":
            out.append({"role": "user", "content": f"step {i}"})
        elif kind == "calls":
            out.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{i}_{c}", "type": "function",
                 "function": {"name": "bash", "arguments": json.dumps({"cmd": f"ls {i}"})}}
                for c in range(2)]})
        elif kind == "result":
            out.append({"role": "tool", "tool_call_id": f"call_{i}_{k}", "content": "out " * 50})
        else:
            out.append({"role": "assistant", "content": f"done {i}"})
    return out


def responses(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for kind, i, k in plan(n):
        if kind == "user":
            out.append({"role": "user", "content": f"step {i}"})
        elif kind == "calls":  # two items where the others have one message: n stays n
            out.append({"type": "function_call", "call_id": f"call_{i}_0", "name": "bash",
                        "arguments": json.dumps({"cmd": f"ls {i}"})})
            out.append({"type": "function_call", "call_id": f"call_{i}_1", "name": "bash",
                        "arguments": json.dumps({"cmd": f"ls {i}"})})
        elif kind == "result":
            out.append({"type": "function_call_output", "call_id": f"call_{i}_{k}",
                        "output": "out " * 50})
        else:
            out.append({"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": f"done {i}", "annotations": []}]})
    return out[:n]


def pydantic_ai(n: int) -> list[Any]:
    from pydantic_ai import messages as pm
    at = STORED_AT
    out: list[Any] = []
    for kind, i, k in plan(n):
        if kind == "user":
            out.append(pydantic_ai_prompt(f"step {i}"))
        elif kind == "calls":
            out.append(pm.ModelResponse(parts=[pm.ToolCallPart("bash", {"cmd": f"ls {i}"},
                                                               tool_call_id=f"call_{i}_{c}")
                                               for c in range(2)], timestamp=at))
        elif kind == "result":
            out.append(pm.ModelRequest(parts=[pm.ToolReturnPart(
                "bash", "out " * 50, tool_call_id=f"call_{i}_{k}", timestamp=at)], timestamp=at))
        else:
            out.append(pm.ModelResponse(parts=[pm.TextPart(f"done {i}")], timestamp=at))
    return out


def pydantic_ai_prompt(text: str) -> Any:
    from pydantic_ai import messages as pm
    return pm.ModelRequest(parts=[pm.UserPromptPart(text, timestamp=STORED_AT)],
                           timestamp=STORED_AT)


def langchain(n: int) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    out: list[Any] = []
    for kind, i, k in plan(n):
        if kind == "user":
            out.append(HumanMessage(f"step {i}"))
        elif kind == "calls":
            out.append(AIMessage("", tool_calls=[
                {"name": "bash", "args": {"cmd": f"ls {i}"}, "id": f"call_{i}_{c}"}
                for c in range(2)]))
        elif kind == "result":
            out.append(ToolMessage("out " * 50, tool_call_id=f"call_{i}_{k}"))
        else:
            out.append(AIMessage(f"done {i}"))
    return out


def adapters() -> list[tuple[str, Callable[[int], list[Any]], Callable[[], Callable[[Any], Any]],
                             Callable[[int], Any]]]:
    """(name, history maker, a fresh adapter's call, one more user message)."""
    from langchain_core.messages import HumanMessage

    from sessionctx.adapters.langchain import SessionctxMiddleware
    from sessionctx.adapters.litellm import SessionctxLogger
    from sessionctx.adapters.openai_agents import RepairModelInput
    from sessionctx.adapters.pydantic_ai import SessionctxHistory

    def agents_filter() -> Callable[[Any], Any]:
        from agents.run_config import CallModelData, ModelInputData
        repair = RepairModelInput()
        return lambda items: repair(CallModelData(ModelInputData(items, None), None, None))  # type: ignore[arg-type]

    return [
        ("pydantic-ai history processor", pydantic_ai, lambda: SessionctxHistory().process,
         lambda i: pydantic_ai_prompt(f"more {i}")),
        ("OpenAI Agents call_model_input_filter", responses, agents_filter,
         lambda i: {"role": "user", "content": f"more {i}"}),
        ("LangChain middleware", langchain, lambda: SessionctxMiddleware().repair,
         lambda i: HumanMessage(f"more {i}")),
        ("LiteLLM logger", chat, lambda: SessionctxLogger().repair,
         lambda i: {"role": "user", "content": f"more {i}"}),
    ]


def _get_items(loop: asyncio.AbstractEventLoop, session: Any) -> Any:
    return loop.run_until_complete(session.get_items())


def cpu(fn: Callable[[], Any]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def per_turn(n: int, path: str) -> None:
    def core() -> Any:
        return build_context(read_path(path).records)

    print(f"adapter per turn on a {n}-message history, as a ratio to the core build "
          f"(read + fold) of it (goal <= 1.0, warm and cold; first sight for reference):")
    for name, make, fresh, more in adapters():
        history = make(n)
        call = fresh()
        call(list(history))  # the first call folds everything; later ones only what is new
        turn, cold, first, base = [], [], [], []
        for r in range(REPEATS):
            history.append(more(r))
            snapshot = list(history)
            turn.append(cpu(partial(call, snapshot)))
            base.append(cpu(core))
            loaded = [*make(n), *(more(k) for k in range(r + 1))]  # new objects, untimed
            cold.append(cpu(partial(call, loaded)))
            alone, unseen = fresh(), [*make(n), *(more(k) for k in range(r + 1))]
            first.append(cpu(partial(alone, unseen)))
        b = min(base)
        print(f"  {name:40s} warm {min(turn) / b:6.3f}   cold {min(cold) / b:6.3f}   "
              f"first sight {min(first) / b:6.3f}   (core build {b * 1000:.1f} ms)")


def renamed_turn(n: int, path: str) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from sessionctx.adapters.langchain import SessionctxMiddleware

    history = langchain(n)
    history[6] = AIMessage("", tool_calls=[{"name": "bash", "args": {}, "id": f"call_0_{c}"}
                                           for c in range(2)])
    history[7:9] = [ToolMessage("out", tool_call_id=f"call_0_{k}") for k in range(2)]
    call = SessionctxMiddleware().repair
    call(list(history))
    turn, base = [], []
    for r in range(REPEATS):
        history.append(HumanMessage(f"more {r}"))
        snapshot = list(history)
        turn.append(cpu(partial(call, snapshot)))
        base.append(cpu(lambda: build_context(read_path(path).records)))
    print(f"  {'LangChain, a call id renamed early':40s} warm {min(turn) / min(base):6.3f}")


def agents_session(n: int, kept: int, tmp: str) -> None:
    from sessionctx.adapters.openai_agents import SessionctxSession

    store = open_store(f"sqlite:///{os.path.join(tmp, 'agents.db')}")
    big, small = responses(n), responses(kept)
    store.append_many("big", [ri.record_of(item) for item in big])
    tail = big[-kept:]
    while tail and ri.item_type(tail[0]) in ri.OUTPUTS:
        tail = tail[1:]
    checkpoint = {"type": "compaction", "at": "", "baseSeq": n, "plannerVersion": 1,
                  "summaryModelRef": "bench", "qualityAudit": "ok", "summary": "so far",
                  "messages": [ri.to_message(item) for item in tail], "firstKeptIndex": 0,
                  "tokensBefore": 0, "tokensAfter": 0, "items": tail}
    store.append_checkpoint("big", checkpoint, expected_last_seq=n)
    store.append_many("small", [ri.record_of(item) for item in small])
    loop = asyncio.new_event_loop()
    sessions = {name: SessionctxSession(name, store) for name in ("big", "small")}
    times: dict[str, list[float]] = {"big": [], "small": []}
    for r in range(REPEATS):
        for name, session in sessions.items():
            turn: list[Any] = [
                {"role": "user", "content": f"more {r}"},
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "ok", "annotations": []}]}]
            loop.run_until_complete(session.add_items(turn))
            times[name].append(cpu(partial(_get_items, loop, session)))
    loop.close()
    ratio = min(times["big"]) / min(times["small"])
    print(f"OpenAI Agents session get_items after one more turn: {n}-message session "
          f"compacted to its last {kept} vs a {kept}-message one: {ratio:.3f} (goal <= 1.5; "
          f"{min(times['small']) * 1000:.1f} ms for the {kept}-message one)")
    store.close()


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "session.jsonl")
        with open(path, "w") as f:
            for message in native(n):
                f.write(json.dumps(message) + "\n")
        per_turn(n, path)
        renamed_turn(n, path)
        agents_session(n, n // 10, tmp)


if __name__ == "__main__":
    main()
