"""Results an agent wrote for itself: listed as pending calls with their own change kind, kept
in the context as sent unless asked to drop them, and nothing inferred from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessionctx.agent_results import MARKERS, written_by
from sessionctx.context import BuildOptions, build_context
from sessionctx.inputs import read_input
from sessionctx.records import select_branch
from tests.repair_helpers import run


def _claude(result: dict[str, Any]) -> bytes:
    def entry(kind: str, uid: str, parent: str | None, content: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message.update({"id": f"msg_{uid}", "model": "claude-sonnet-4-5"})
        return {"parentUuid": parent, "isSidechain": False, "sessionId": "s", "type": kind,
                "uuid": uid, "timestamp": "2026-01-01T00:00:00Z", "message": message}
    lines = [entry("user", "u1", None, "build it"),
             entry("assistant", "a1", "u1", [{"type": "tool_use", "id": "t1", "name": "Bash",
                                              "input": {"command": "make"}}]),
             entry("user", "r1", "a1", [result]),
             entry("assistant", "a2", "r1", [{"type": "text", "text": "No response requested."}])]
    return b"".join(json.dumps(x).encode() + b"\n" for x in lines)


def _codex(output: str) -> bytes:
    lines = [{"timestamp": "t", "type": "session_meta", "payload": {"id": "s", "cwd": "/w"}},
             {"timestamp": "t", "type": "response_item", "payload": {
                 "type": "message", "role": "user",
                 "content": [{"type": "input_text", "text": "build it"}]}},
             {"timestamp": "t", "type": "response_item", "payload": {
                 "type": "function_call", "name": "shell", "call_id": "c1",
                 "arguments": "{\"command\": [\"make\"]}"}},
             {"timestamp": "t", "type": "response_item", "payload": {
                 "type": "function_call_output", "call_id": "c1", "output": output}}]
    return b"".join(json.dumps(x).encode() + b"\n" for x in lines)


def _anthropic(text: str) -> bytes:
    return json.dumps([
        {"role": "user", "content": [{"type": "text", "text": "build it"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                                           "name": "execute_command",
                                           "input": {"command": "make"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": text}]},
    ]).encode()


def _native(text: str, is_error: bool = False) -> bytes:
    lines = [{"role": "user", "content": [{"type": "text", "text": "build it"}]},
             {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "bash",
                                                "arguments": {"command": "make"}}]},
             {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
              "content": [{"type": "text", "text": text}], "isError": is_error}]
    return b"".join(json.dumps(x).encode() + b"\n" for x in lines)


CLAUDE_ENDED = ("[Tool call interrupted: the session ended before this call's result was "
                "recorded. The command may or may not have run.]")
CASES: dict[str, tuple[str, bytes, str]] = {
    "claude-code session ended": ("claude-code", _claude(
        {"type": "tool_result", "tool_use_id": "t1", "is_error": True,
         "content": CLAUDE_ENDED}), "session.jsonl"),
    "claude-code tool use interrupted": ("claude-code", _claude(
        {"type": "tool_result", "tool_use_id": "t1",
         "content": [{"type": "text", "text": "[Tool use interrupted]"}]}), "session.jsonl"),
    "codex aborted": ("codex", _codex("aborted"), "rollout.jsonl"),
    "cline result missing": ("cline", _anthropic("result missing"),
                             "api_conversation_history.json"),
    "cline interrupted": ("cline", _anthropic(
        "Tool execution was interrupted before a result was produced. Tool: execute_command."),
        "api_conversation_history.json"),
    "cline sdk migration": ("cline", _anthropic(
        "[migration] Tool result missing in legacy conversation history."), "messages.json"),
    "roo-code resumed": ("roo-code", _anthropic(
        "Task was interrupted before this tool call could be completed."),
        "api_conversation_history.json"),
    "roo-code saved without a result": ("roo-code", _anthropic(
        "Tool execution was interrupted before completion."), "api_conversation_history.json"),
    "pydantic-ai interrupted": ("pydantic-ai", _native(
        "The tool call was interrupted before a result was produced."), "history.jsonl"),
    "pi no result": ("pi", _native("No result provided", is_error=True), "session.jsonl"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_check_lists_the_call_as_pending_with_its_own_kind(tmp_path: Path, case: str) -> None:
    agent, raw, name = CASES[case]
    path = tmp_path / name
    path.write_bytes(raw)
    code, out = run("check", str(path), "--json")
    verdict = json.loads(out)
    assert code == 0, out  # a valid history: nothing to repair
    assert [p["result_written_by"] for p in verdict["pending_calls"]] == [agent]
    named = [c for c in verdict["changes"] if c["kind"] == "result_written_by_agent"
             and c["detail"]["tool_call_id"] is not None]
    assert len(named) == 1 and named[0]["detail"]["agent"] == agent
    code, text = run("check", str(path))
    assert f"result written by {agent} itself" in text


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_text_stays_as_sent_unless_dropped(tmp_path: Path, case: str) -> None:
    agent, raw, name = CASES[case]
    path = tmp_path / name
    path.write_bytes(raw)
    records, _ = select_branch(read_input(str(path)).records)
    kept = build_context(records)
    assert [m for m in kept.messages if m.get("role") == "toolResult"], "the text is kept"
    dropped = build_context(records, BuildOptions(drop_agent_results=True))
    assert not [m for m in dropped.messages if m.get("role") == "toolResult"]
    assert [p.id for p in dropped.pending_calls] == [p.id for p in kept.pending_calls]
    assert dropped.pending_calls[0].written_by is None  # pending as an unanswered call
    change = next(c for c in dropped.changes if c.kind == "result_written_by_agent")
    assert change.detail["dropped"] is True and change.detail["agent"] == agent
    code, out = run("build", str(path), "--json", "--drop-agent-results")
    assert code == 0 and "toolResult" not in {m["role"] for m in json.loads(out)["messages"]}


def test_build_json_and_the_report_name_the_agent(tmp_path: Path) -> None:
    _, raw, name = CASES["claude-code session ended"]
    path = tmp_path / name
    path.write_bytes(raw)
    code, out = run("build", str(path), "--json")
    assert code == 0
    assert json.loads(out)["pending_calls"][0]["result_written_by"] == "claude-code"
    from sessionctx.report.model import page_model

    records, _ = select_branch(read_input(str(path)).records)
    model = page_model(records, build_context(records))
    assert [p["by"] for p in model.pending] == ["claude-code"]


@pytest.mark.parametrize("text", [
    "aborted: make returned 2",  # the tool's own output that starts like a marker
    "The build was aborted",
    "No result provided",  # pi's text on a result not marked as an error
    "",
])
def test_a_tool_s_own_result_is_never_taken_for_one(text: str) -> None:
    result = {"role": "toolResult", "toolCallId": "c1", "content": [{"type": "text",
                                                                     "text": text}]}
    assert written_by(result) is None


def test_a_marker_with_an_image_is_the_tool_s() -> None:
    result = {"role": "toolResult", "toolCallId": "c1", "isError": True, "content": [
        {"type": "text", "text": "aborted"}, {"type": "image", "data": "AA==",
                                              "mimeType": "image/png"}]}
    assert written_by(result) is None
    assert {m.agent for m in MARKERS} >= {"claude-code", "codex", "pydantic-ai", "cline",
                                          "roo-code"}


def test_claude_code_s_own_assistant_reply_is_named_and_can_be_dropped(tmp_path: Path) -> None:
    _, raw, name = CASES["claude-code session ended"]
    path = tmp_path / name
    path.write_bytes(raw)
    records, _ = select_branch(read_input(str(path)).records)
    kept = build_context(records)
    replies = [c for c in kept.changes if c.detail.get("agent") == "claude-code"
               and c.detail["tool_call_id"] is None]
    assert len(replies) == 1 and replies[0].message_index == len(kept.messages) - 1
    assert kept.messages[-1]["content"][0]["text"] == "No response requested."
    dropped = build_context(records, BuildOptions(drop_agent_results=True))
    assert all(m.get("role") != "assistant" or "No response requested." not in json.dumps(m)
               for m in dropped.messages)
