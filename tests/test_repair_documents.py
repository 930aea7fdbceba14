"""Repair writes back sessions stored as one JSON document: Gemini CLI sessions, SWE-agent
trajectories, OpenHands message lists and sessionctx's own arrays. An item of the message array
that no change names keeps its bytes, and so does everything around the array."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pytest

from sessionctx.writeback import repair, spans
from tests.repair_helpers import check_ok, repair_json, run

GEMINI = "gemini-cli/tool-result-cancelled.json"
TRAJ = "swe-agent/function_calling_simple.traj"
OPENHANDS = "openhands/fncall-llm-message.json"


def _items(raw: bytes, where: list[str | int]) -> tuple[list[bytes], bytes, bytes]:
    start, end = spans.span(raw, where)
    members = spans.members(raw, where)
    return [raw[s:e] for _, s, e in members], raw[:start], raw[end:]


def assert_items_repaired(path: Path, original: bytes, where: list[str | int], fmt: str,
                          *extra: str) -> dict[str, Any]:
    code, report = repair_json(path, "--from", fmt, *extra)
    assert code == 0, report
    assert report["written"]
    after = path.read_bytes()
    check_ok(path, fmt)
    json.loads(after)
    old, old_head, old_tail = _items(original, where)
    new, new_head, new_tail = _items(after, where)
    assert (old_head, old_tail) == (new_head, new_tail)
    kept: set[int] = set()
    for block in difflib.SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks():
        kept.update(range(block.a, block.a + block.size))
    named = {c["index"] for c in report["changes"] if c["action"] != "inserted"}
    assert set(range(len(old))) - kept == named
    assert Path(report["backup"]).read_bytes() == original
    return report


def _dump(document: Any) -> bytes:
    return json.dumps(document, indent=2, ensure_ascii=False).encode() + b"\n"


def test_gemini_cli_session_loses_the_call_with_no_response(tmp_path: Path,
                                                             fixtures: Path) -> None:
    gemini = json.loads((fixtures / GEMINI).read_bytes())
    answered = json.loads(json.dumps(gemini))
    del gemini["toolCalls"][0]["result"]  # killed before the response was recorded
    session = {"sessionId": "5f0c", "projectHash": "ab12", "startTime": gemini["timestamp"],
               "lastUpdated": gemini["timestamp"], "messages": [
                   {"id": "u1", "timestamp": gemini["timestamp"], "type": "user",
                    "content": "start python"}, answered, gemini,
                   {"id": "u2", "timestamp": gemini["timestamp"], "type": "user",
                    "content": "and now?"}]}
    original = _dump(session)
    path = tmp_path / "session-2025.json"
    path.write_bytes(original)
    report = assert_items_repaired(path, original, ["messages"], "gemini-cli",
                                   "--note-unpaired")
    assert [(c["kind"], c["index"]) for c in report["changes"]] == [
        ("dropped_unpaired_call", 2), ("interrupted_note_added", 2)]
    after = json.loads(path.read_bytes())
    assert "toolCalls" not in after["messages"][2]  # its content and thoughts stay
    assert after["messages"][2]["thoughts"] == gemini["thoughts"]
    assert "outcome is unknown" in json.dumps(after["messages"][3])
    assert after["messages"][3]["type"] == "user"


def test_a_gemini_message_that_holds_its_response_needs_nothing(tmp_path: Path,
                                                                 fixtures: Path) -> None:
    path = tmp_path / "message.json"
    path.write_bytes((fixtures / GEMINI).read_bytes())
    code, report = repair_json(path)
    assert code == 0 and not report["written"] and report["changes"] == []


def traj_variant(fixtures: Path) -> bytes:
    document = json.loads((fixtures / TRAJ).read_bytes())
    history = document["history"]
    del history[-1]  # the last observation never came back
    history.insert(3, {"role": "tool", "content": "stale", "tool_call_ids": ["call_gone"],
                       "agent": "main", "message_type": "observation"})
    return _dump(document)


def test_swe_agent_trajectory(tmp_path: Path, fixtures: Path) -> None:
    original = traj_variant(fixtures)
    path = tmp_path / "run.traj"
    path.write_bytes(original)
    report = assert_items_repaired(path, original, ["history"], "openai-chat")
    assert sorted((c["kind"], c["index"]) for c in report["changes"]) == [
        ("dropped_orphan_result", 3), ("dropped_unpaired_call", 11)]
    last = json.loads(path.read_bytes())["history"][-1]
    assert last["role"] == "assistant" and "tool_calls" not in last and last["content"]


@pytest.mark.parametrize("case", ["unanswered", "duplicate"])
def test_openhands_message_list(tmp_path: Path, fixtures: Path, case: str) -> None:
    messages = json.loads((fixtures / OPENHANDS).read_bytes())
    if case == "unanswered":
        del messages[5]
    else:
        messages.insert(6, {**messages[5], "content": [{"type": "text", "text": "again"}]})
    original = _dump(messages)
    path = tmp_path / "messages.json"
    path.write_bytes(original)
    report = assert_items_repaired(path, original, [], "openai-chat")
    kinds = [c["kind"] for c in report["changes"]]
    assert kinds == (["dropped_unpaired_call"] if case == "unanswered"
                     else ["dropped_duplicate_result"])


def test_native_array_of_records(tmp_path: Path) -> None:
    records = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "ls",
                                           "arguments": {}}]},
        {"role": "toolResult", "toolCallId": "c7", "content": [{"type": "text", "text": "x"}]},
        {"role": "user", "content": [{"type": "text", "text": "again"}]},
    ]
    original = json.dumps(records).encode()
    path = tmp_path / "records.json"
    path.write_bytes(original)
    report = assert_items_repaired(path, original, [], "native", "--note-unpaired")
    assert sorted((c["index"], c["kind"]) for c in report["changes"]) == [
        (1, "dropped_unpaired_call"), (1, "interrupted_note_added"),
        (1, "removed_empty_entry"), (2, "dropped_orphan_result")]
    after = json.loads(path.read_bytes())
    assert [m["role"] for m in after] == ["user", "user", "user"]
    assert "outcome is unknown" in after[1]["content"][0]["text"]


ANTHROPIC = "anthropic/session.messages.json"


def _cline_session(fixtures: Path) -> dict[str, Any]:
    session: dict[str, Any] = json.loads((fixtures / ANTHROPIC).read_bytes())
    return session


def test_anthropic_call_block_leaves_its_message(tmp_path: Path, fixtures: Path) -> None:
    session = _cline_session(fixtures)
    messages = session["messages"]
    last_result = max(i for i, m in enumerate(messages) if any(
        b["type"] == "tool_result" for b in m["content"]))
    call_id = messages[last_result]["content"][0]["tool_use_id"]
    del messages[last_result]  # the result was never written
    original = _dump(session)
    path = tmp_path / "1784094124598_rruoq.messages.json"
    path.write_bytes(original)
    report = assert_items_repaired(path, original, ["messages"], "anthropic", "--note-unpaired")
    assert [(c["kind"], c["index"]) for c in report["changes"]] == [
        ("dropped_unpaired_call", last_result - 1), ("interrupted_note_added", last_result - 1)]
    after = json.loads(path.read_bytes())
    kept = after["messages"][last_result - 1]
    assert [b["type"] for b in kept["content"]] == ["text"]  # its text and fields stay
    assert kept["metrics"] == messages[last_result - 1]["metrics"]
    note = after["messages"][last_result]
    assert note["role"] == "user" and call_id in note["content"][0]["text"]
    assert after["system_prompt"] == session["system_prompt"]


def test_anthropic_result_blocks_leave_and_the_rest_stays(tmp_path: Path) -> None:
    call = {"type": "tool_use", "id": "toolu_a", "name": "ls", "input": {}}
    other = {"type": "tool_use", "id": "toolu_b", "name": "pwd", "input": {}}
    history = [
        {"role": "user", "content": "list", "ts": 1},
        {"role": "assistant", "content": [{"type": "text", "text": "Two."}, call, other]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "a.txt"},
            {"type": "tool_result", "tool_use_id": "toolu_gone", "content": "stale"},
            {"type": "text", "text": "<environment_details>\n</environment_details>"}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "again"}]},
        {"role": "assistant", "content": "Done."}]
    original = json.dumps(history, indent="\t").encode()
    path = tmp_path / "api_conversation_history.json"
    path.write_bytes(original)
    report = assert_items_repaired(path, original, [], "anthropic", "--note-unpaired")
    assert sorted((c["index"], c["kind"]) for c in report["changes"]) == [
        (1, "dropped_unpaired_call"), (1, "interrupted_note_added"),
        (2, "dropped_orphan_result"), (3, "dropped_duplicate_result")]
    after = json.loads(path.read_bytes())
    assert after[1]["content"] == [{"type": "text", "text": "Two."}, call]
    assert [b.get("tool_use_id") for b in after[2]["content"]] == ["toolu_a", None]
    # the note follows the results of the message's other call, which stay right after it
    assert "toolu_b" in after[3]["content"][0]["text"]
    assert [m["role"] for m in after] == ["user", "assistant", "user", "user", "assistant"]


def test_anthropic_results_are_put_first_in_their_user_message(tmp_path: Path) -> None:
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps([
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}},
            {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "also this"},
                                     {"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": "ok"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]}], indent=1))
    code, out = run("check", str(path), "--json")
    kinds = [p["kind"] for p in json.loads(out)["problems"]]
    assert code == 1 and "tool_results_moved" in kinds
    result = repair(str(path), backup=False)
    assert [(f.kind, f.index) for f in result.fixes] == [
        ("dropped_unpaired_call", 1), ("tool_results_moved", 2)]
    stored = json.loads(path.read_text())
    assert [b["type"] for b in stored[2]["content"]] == ["tool_result", "text"]
    assert [b["id"] for b in stored[1]["content"]] == ["toolu_1"]
    code, out = run("check", str(path))
    assert code == 0, out
    assert repair(str(path), backup=False).fixes == []
