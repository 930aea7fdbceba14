"""A history loaded from storage for each request (as a server does): the adapter is handed new
objects equal to those it folded before. They are compared, not converted and folded again;
what goes out is the new objects themselves, and equals what a fresh adapter sends. A list
that differs from the one seen before is folded from the start."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from sessionctx.adapters.fold import Conversations
from sessionctx.changes import Change
from sessionctx.context import BuildOptions
from sessionctx.messages import Message


def _history(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k in range(turns):
        out += [{"role": "user", "content": [{"type": "text", "text": f"step {k}"}]},
                {"role": "assistant", "content": [{"type": "toolCall", "id": f"call_{k}",
                                                   "name": "lookup", "arguments": {}}]},
                {"role": "toolResult", "toolCallId": f"call_{k}", "toolName": "lookup",
                 "content": [{"type": "text", "text": "found"}]}]
    return out


class _Counted:
    def __init__(self) -> None:
        self.converted = 0

    def __call__(self, message: Any, index: int,
                 dropped: list[Change]) -> list[tuple[int, Message]]:
        self.converted += 1
        return [(0, message)]


@pytest.mark.parametrize("named", [True, False])
def test_a_reloaded_list_is_compared_not_folded_again(named: bool) -> None:
    counted = _Counted()
    pool = Conversations(counted, BuildOptions())
    name = "thread-1" if named else None
    first = _history(10)
    with pool.fold(first, name) as folded:
        assert folded.context.messages == first
    assert counted.converted == 30
    loaded = [*copy.deepcopy(first), {"role": "user", "content": [{"type": "text",
                                                                   "text": "more"}]}]
    with pool.fold(loaded, name) as folded:  # new objects, one message longer
        assert folded.context.messages == loaded
        assert folded.context.messages[-1] is loaded[-1]
    assert counted.converted == 31 and len(pool) == 1
    changed = copy.deepcopy(loaded)
    changed[4]["content"][0]["id"] = "call_other"  # an earlier message differs: from the start
    with pool.fold(changed, name) as folded:
        assert len(folded.context.messages) == 29  # call_1 has no result now, nor its result
    assert counted.converted == 31 + 31


def test_an_unnamed_list_with_another_first_message_is_another_conversation() -> None:
    counted = _Counted()
    pool = Conversations(counted, BuildOptions())
    one, other = _history(2), _history(3)
    other[0] = {"role": "user", "content": [{"type": "text", "text": "hello"}]}
    for history in (one, other, copy.deepcopy(one), copy.deepcopy(other)):
        with pool.fold(history):
            pass
    assert len(pool) == 2 and counted.converted == 6 + 9


def test_langchain_messages_loaded_anew_go_out_as_the_new_objects() -> None:
    pytest.importorskip("langchain")
    from langchain_core.messages import (
        AIMessage,
        HumanMessage,
        ToolMessage,
        message_to_dict,
        messages_from_dict,
    )

    from sessionctx.adapters import langchain_messages
    from sessionctx.adapters.langchain import SessionctxMiddleware

    history = [HumanMessage("deploy", id="h1"),
               AIMessage("", id="a1", tool_calls=[{"name": "deploy", "args": {}, "id": "c1",
                                                   "type": "tool_call"}]),
               ToolMessage("deployed", tool_call_id="c1", id="t1"),
               AIMessage("", id="a2", tool_calls=[{"name": "deploy", "args": {}, "id": "c2",
                                                   "type": "tool_call"}]),
               HumanMessage("well?", id="h2")]  # c2 was interrupted: it goes
    stored = json.dumps([message_to_dict(m) for m in history])
    middleware = SessionctxMiddleware()
    converted = 0
    real = langchain_messages.native

    def counted(message: Any) -> Message:
        nonlocal converted
        converted += 1
        return real(message)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(langchain_messages, "native", counted)
        sent = []
        for _ in range(3):
            loaded = messages_from_dict(json.loads(stored))
            out = middleware.repair(loaded, "thread-1")
            assert [m.id for m in out] == ["h1", "a1", "t1", "h2"]
            assert all(a is b for a, b in zip(out, [loaded[k] for k in (0, 1, 2, 4)],
                                              strict=True))
            sent.append(out)
    assert converted == len(history)  # the first request converted each; the others none
    fresh = SessionctxMiddleware().repair(messages_from_dict(json.loads(stored)))
    assert [message_to_dict(m) for m in sent[-1]] == [message_to_dict(m) for m in fresh]


def test_a_conversation_busy_now_is_not_taken_for_one_that_starts_alike() -> None:
    """Two conversations that start alike, served at once: the second gets a fold of its own
    instead of waiting for the first's."""
    import threading

    pool = Conversations(_Counted(), BuildOptions())
    one = _history(2)
    done = threading.Event()

    def other() -> None:
        with pool.fold(copy.deepcopy(one)):
            done.set()

    with pool.fold(one):
        thread = threading.Thread(target=other, daemon=True)
        thread.start()
        assert done.wait(10), "the second conversation waited for the first"
    thread.join(10)
    assert len(pool) == 2
