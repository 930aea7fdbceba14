"""OpenHands LLM logs: the model's response is the last assistant message of the history."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.context import build_context
from sessionctx.inputs import read_raw
from sessionctx.records import MESSAGE
from tests.conftest import FIXTURES

OPENHANDS = FIXTURES / "openhands" / "fncall-llm-message.json"
Obj = dict[str, Any]


def _history() -> list[Obj]:
    """The real history up to the last assistant message, whose call is answered at the end."""
    items: list[Obj] = json.loads(OPENHANDS.read_text())
    return items[:-2]  # the last assistant turn and its result: the reply stands in for them


def _reply(message: Obj, **extra: Any) -> Obj:
    return {"id": "chatcmpl-1", "model": "claude-sonnet-4", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}, **extra}


def _log(history: list[Obj], response: Any, **extra: Any) -> bytes:
    return json.dumps({"messages": history, "response": response, "args": [], "kwargs": {},
                       "timestamp": 1.5, "cost": 0.01, **extra}).encode()


def test_the_response_becomes_the_last_message_with_its_call_pending() -> None:
    items: list[Obj] = json.loads(OPENHANDS.read_text())
    last = items[-2]  # the real final assistant message, with its finish call
    result = read_raw(_log(_history(), _reply(last)), "log.json")
    assert not result.problems
    messages = [r.view for r in result.records if r.kind == MESSAGE]
    assert len(messages) == len(items) - 1
    final = messages[-1]
    assert final["role"] == "assistant" and final["model"] == "claude-sonnet-4"
    call = next(b for b in final["content"] if b["type"] == "toolCall")
    assert call["id"] == last["tool_calls"][0]["id"]
    assert result.records[-1].source.index == len(items) - 2
    ctx = build_context(result.records)
    assert [p.id for p in ctx.pending_calls] == [call["id"]]
    assert ctx.pending_calls[0].record.index == len(items) - 2


def test_a_reply_without_calls_reads_as_text() -> None:
    reply = _reply({"role": "assistant", "content": "All done.", "tool_calls": None})
    result = read_raw(_log(_history(), reply), "log.json")
    final = result.records[-1].view
    assert final["content"] == [{"type": "text", "text": "All done."}]
    assert not result.problems


def test_an_unreadable_response_is_a_reported_problem() -> None:
    cases: list[tuple[Any, str]] = [
        (None, "it is not an object"), ({"choices": []}, "it has no choices"),
        ({"choices": [{"message": "hi"}]}, "choices[0] has no message object"),
        (_reply({"role": "user", "content": "x"}), "choices[0].message has role 'user'")]
    for response, why in cases:
        result = read_raw(_log(_history(), response), "log.json")
        assert len([r for r in result.records if r.kind == MESSAGE]) == len(_history())
        assert [p.message for p in result.problems] == [
            f"the response could not be read: {why}"]


def test_emulated_function_calling_reads_the_calling_pair() -> None:
    items: list[Obj] = json.loads(OPENHANDS.read_text())
    text_form = [{"role": m["role"], "content": str(m.get("content"))} for m in _history()
                 if m["role"] in ("system", "user")]
    raw = _log(text_form, _reply({"role": "assistant", "content": "<function=finish>"}),
               fncall_messages=_history(), fncall_response=_reply(items[-2]))
    result = read_raw(raw, "log.json")
    final = result.records[-1].view
    assert any(b["type"] == "toolCall" for b in final["content"])
    assert len([r for r in result.records if r.kind == MESSAGE]) == len(items) - 1


def test_check_names_the_pending_call_of_the_response(tmp_path: Any) -> None:
    items: list[Obj] = json.loads(OPENHANDS.read_text())
    path = tmp_path / "log.json"
    path.write_bytes(_log(_history(), _reply(items[-2])))
    outcome = CliRunner().invoke(main, ["check", str(path), "--json"])
    assert outcome.exit_code == 1
    report = json.loads(outcome.output)
    assert [p["id"] for p in report["pending_calls"]] == [items[-2]["tool_calls"][0]["id"]]
