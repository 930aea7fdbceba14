"""Repair writes each format back: real sessions and broken variants of them.

Every case holds the repair to its promises (see `assert_repaired`): the repaired file passes
`check`, exactly the lines the change list names differ, every other line is byte-identical,
and the backup is the original. The Claude Code and Codex cases also check the rules those
agents apply when they load a session to resume it.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.repair_helpers import assert_repaired, jsonl, lines_of, objects, run

CLAUDE = "claude-code/06381696-0074-49f8-863e-6ad4fac507f9.jsonl"
CODEX = "codex/rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl"
PI = "pi/large-session.jsonl"


def claude_chain(raw: bytes) -> list[dict[str, Any]]:
    """The conversation Claude Code resumes, by the rule its SDK's reader states
    (claude-agent-sdk, `_internal/sessions.py`, `_build_conversation_chain`: index entries by
    `uuid`, take the terminal entries no `parentUuid` names, prefer the main-chain
    (non-sidechain) user/assistant leaf latest in the file, walk `parentUuid` to the root).
    The chain must reach an entry whose `parentUuid` is null."""
    entries = [o for o in objects(raw) if isinstance(o.get("uuid"), str)]
    by_uuid = {e["uuid"]: e for e in entries}
    parents = {e.get("parentUuid") for e in entries}
    leaves = [e for e in entries if e["uuid"] not in parents and e.get("type") in (
        "user", "assistant") and not e.get("isSidechain")]
    assert leaves, "no main-chain leaf"
    chain = []
    current: dict[str, Any] | None = leaves[-1]
    while current is not None:
        chain.append(current)
        parent = current.get("parentUuid")
        if parent is None:
            break
        assert parent in by_uuid, f"the chain breaks at {current['uuid']}: no {parent}"
        current = by_uuid[parent]
    return chain[::-1]


def assert_claude_resumable(raw: bytes) -> None:
    """Every `tool_use` of the chain is answered by a `tool_result` in a later user entry of
    the chain, and every `tool_result` answers an earlier `tool_use` (the Messages API rule
    behind "tool_use ids were found without tool_result blocks immediately after", which
    Claude Code hits on resume: anthropics/claude-code#2105, #18880)."""
    open_calls: list[str] = []
    for entry in claude_chain(raw):
        content = entry.get("message", {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                open_calls.append(block["id"])
            elif block.get("type") == "tool_result":
                assert entry["type"] == "user"
                assert block["tool_use_id"] in open_calls, block["tool_use_id"]
                open_calls.remove(block["tool_use_id"])
    assert open_calls == []


def assert_codex_resumable(raw: bytes) -> None:
    """Every `function_call` has its `function_call_output` by `call_id` after it, and every
    output answers an earlier call: the invariant Codex restores before each request
    (openai/codex, codex-rs/core/src/context_manager/normalize.rs:
    `ensure_call_outputs_present` and `remove_orphan_outputs`), which a repaired rollout
    already holds, so Codex has nothing to make up."""
    open_calls: list[str] = []
    for entry in objects(raw):
        item = entry.get("payload") if entry.get("type") == "response_item" else None
        if not isinstance(item, dict):
            continue
        if item.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
            open_calls.append(item["call_id"])
        elif item.get("type") in ("function_call_output", "custom_tool_call_output"):
            assert item["call_id"] in open_calls, item["call_id"]
            open_calls.remove(item["call_id"])
    assert open_calls == []


def _write(tmp_path: Path, name: str, raw: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(raw)
    path.chmod(0o644)
    return path


# -- Claude Code ----------------------------------------------------------------------------


def _claude_lines(fixtures: Path) -> list[bytes]:
    return lines_of((fixtures / CLAUDE).read_bytes())


def _relinked(line: bytes, parent: str) -> bytes:
    obj = json.loads(line)
    obj["parentUuid"] = parent
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _claude_result(parent: str, tool_use_id: str) -> tuple[bytes, str]:
    own = str(uuid.uuid4())
    entry = {"parentUuid": parent, "isSidechain": False, "type": "user", "message": {
        "role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use_id,
                                     "content": "done"}]}, "uuid": own,
             "timestamp": "2025-10-01T00:00:00.000Z"}
    return json.dumps(entry, separators=(",", ":")).encode(), own


def claude_variants(fixtures: Path) -> dict[str, bytes]:
    lines = _claude_lines(fixtures)
    uuid_of = [json.loads(x).get("uuid") for x in lines]
    joined = b"\n".join
    out = {"as stored": (fixtures / CLAUDE).read_bytes()}
    out["torn last line"] = joined(lines) + b"\n" + lines[8][:40]
    # killed mid-call: the result of line 11's call never written, the session went on
    out["unanswered in the middle"] = joined(
        [*lines[:11], _relinked(lines[12], uuid_of[10]), *lines[13:]]) + b"\n"
    orphan, orphan_id = _claude_result(uuid_of[8], "toolu_never_called")
    out["orphan result"] = joined(
        [*lines[:9], orphan, _relinked(lines[9], orphan_id), *lines[10:]]) + b"\n"
    dup, dup_id = _claude_result(uuid_of[8], "toolu_012LMqPjwsTcRqSVumCkyiDJ")
    out["duplicate result"] = joined(
        [*lines[:9], dup, _relinked(lines[9], dup_id), *lines[10:]]) + b"\n"
    out["unreadable line"] = joined([*lines[:5], b'{"type":"user","uuid": broken', *lines[5:]]
                                    ) + b"\n"
    return out


@pytest.mark.parametrize("case", ["as stored", "torn last line", "unanswered in the middle",
                                  "orphan result", "duplicate result", "unreadable line"])
def test_claude_code_variants_are_repaired_and_resumable(tmp_path: Path, fixtures: Path,
                                                         case: str) -> None:
    original = claude_variants(fixtures)[case]
    path = _write(tmp_path, "session.jsonl", original)
    report = assert_repaired(path, original, "claude-code")
    assert report["format"] == "claude-code"
    assert_claude_resumable(path.read_bytes())


def test_claude_code_children_of_a_removed_line_hang_from_its_parent(tmp_path: Path,
                                                                      fixtures: Path) -> None:
    original = claude_variants(fixtures)["unanswered in the middle"]
    path = _write(tmp_path, "session.jsonl", original)
    report = assert_repaired(path, original)
    kinds = [(c["kind"], c["line"]) for c in report["changes"]]
    assert ("dropped_unpaired_call", 11) in kinds and ("removed_empty_entry", 11) in kinds
    assert ("relinked_child", 12) in kinds
    after = objects(path.read_bytes())
    before = objects(original)
    assert after[10]["parentUuid"] == before[9]["uuid"]  # old line 12 now follows line 10


def test_claude_code_note_is_a_user_entry_in_the_chain(tmp_path: Path, fixtures: Path) -> None:
    original = claude_variants(fixtures)["unanswered in the middle"]
    path = _write(tmp_path, "session.jsonl", original)
    report = assert_repaired(path, original, "claude-code", "--note-unpaired")
    # two calls went unanswered: the one in the middle and the last one
    assert [c["kind"] for c in report["changes"]].count("interrupted_note_added") == 2
    chain = claude_chain(path.read_bytes())
    notes = [e for e in chain if "outcome is unknown" in json.dumps(e)]
    assert len(notes) == 2 and {n["type"] for n in notes} == {"user"}
    assert notes[0]["sessionId"] == objects(original)[1]["sessionId"]
    assert_claude_resumable(path.read_bytes())


# -- Codex ----------------------------------------------------------------------------------


def codex_variants(fixtures: Path) -> dict[str, bytes]:
    raw = (fixtures / CODEX).read_bytes()
    lines = lines_of(raw)
    joined = b"\n".join
    orphan = json.dumps({"timestamp": "2025-09-25T03:13:00.000Z", "type": "response_item",
                         "payload": {"type": "function_call_output", "call_id": "call_nope",
                                     "output": "done"}}).encode()
    again = json.loads(lines[15])
    again["payload"]["output"] = "the same call answered a second time"
    second = json.dumps(again).encode()
    return {
        "killed before the output": joined([*lines[:9], *lines[10:]]) + b"\n",
        "duplicate output": joined([*lines[:16], second, *lines[16:]]) + b"\n",
        "orphan output": joined([*lines[:22], orphan, *lines[22:]]) + b"\n",
        "torn last line": raw + lines[8][:50],
    }


@pytest.mark.parametrize("case", ["killed before the output", "duplicate output",
                                  "orphan output", "torn last line"])
def test_codex_variants_are_repaired_and_resumable(tmp_path: Path, fixtures: Path,
                                                   case: str) -> None:
    original = codex_variants(fixtures)[case]
    path = _write(tmp_path, "rollout.jsonl", original)
    report = assert_repaired(path, original, "codex")
    assert report["format"] == "codex"
    assert report["changes"] and all(c["action"] == "removed" for c in report["changes"])
    assert_codex_resumable(path.read_bytes())


def test_codex_note_is_a_user_message_item(tmp_path: Path, fixtures: Path) -> None:
    original = codex_variants(fixtures)["killed before the output"]
    path = _write(tmp_path, "rollout.jsonl", original)
    assert_repaired(path, original, "codex", "--note-unpaired")
    notes = [o for o in objects(path.read_bytes()) if "outcome is unknown" in json.dumps(o)]
    assert [n["payload"]["role"] for n in notes] == ["user"]
    assert notes[0]["payload"]["content"][0]["type"] == "input_text"
    assert_codex_resumable(path.read_bytes())


def test_codex_call_and_note_stay_within_their_turn(tmp_path: Path) -> None:
    # two turns each call c1 and never get its output; each turn says more after the call,
    # and the first logs bookkeeping too: each call leaves its own turn, and each note ends
    # its turn (after its last item), not the line of the call
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2025-09-24T20:12:23.000Z", "type": "response_item",
                "payload": payload}

    def said(role: str, text: str) -> dict[str, Any]:
        kind = "input_text" if role == "user" else "output_text"
        return item({"type": "message", "role": role,
                     "content": [{"type": kind, "text": text}]})

    call = item({"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"})
    bookkeeping = {"timestamp": "2025-09-24T20:12:24.000Z", "type": "event_msg",
                   "payload": {"type": "token_count"}}
    stored = [
        {"timestamp": "2025-09-24T20:12:23.000Z", "type": "session_meta",
         "payload": {"id": "s", "cwd": "/tmp"}},
        said("user", "list the files"), call, said("assistant", "Waiting for it."),
        bookkeeping, said("user", "try again"), call, said("assistant", "Still waiting."),
    ]
    original = b"".join(json.dumps(o).encode() + b"\n" for o in stored)
    path = _write(tmp_path, "rollout.jsonl", original)
    report = assert_repaired(path, original, "codex", "--note-unpaired")
    assert [(c["kind"], c["line"]) for c in report["changes"]] == [
        ("dropped_unpaired_call", 3), ("interrupted_note_added", 4),
        ("dropped_unpaired_call", 7), ("interrupted_note_added", 8)]
    after = objects(path.read_bytes())
    notes = [k for k, o in enumerate(after) if "outcome is unknown" in json.dumps(o)]
    assert notes == [3, 7]
    assert [after[k] for k in (0, 1, 2, 4, 5, 6)] == [stored[k] for k in (0, 1, 3, 4, 5, 7)]
    assert_codex_resumable(path.read_bytes())


def test_a_clean_rollout_is_left_alone(tmp_path: Path, fixtures: Path) -> None:
    original = (fixtures / CODEX).read_bytes()
    path = _write(tmp_path, "rollout.jsonl", original)
    code, out = run("repair", str(path))
    assert code == 0 and "nothing to repair" in out
    assert path.read_bytes() == original
    assert list(tmp_path.iterdir()) == [path]  # no backup of an untouched file


# -- pi and native records ------------------------------------------------------------------


def pi_tree() -> bytes:
    """A current-version pi session (ids and parent ids), killed with a call open."""
    def entry(own: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
        return {"type": "message", "id": own, "parentId": parent,
                "timestamp": "2026-01-01T00:00:00.000Z", "message": message}

    def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": list(blocks), "api": "anthropic-messages",
                "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": {
                    "input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                             "total": 0}}, "stopReason": "toolUse", "timestamp": 1}

    def call(cid: str) -> dict[str, Any]:
        return {"type": "toolCall", "id": cid, "name": "bash", "arguments": {"command": "ls"}}

    def result(cid: str) -> dict[str, Any]:
        return {"role": "toolResult", "toolCallId": cid, "toolName": "bash",
                "content": [{"type": "text", "text": "a.txt"}], "isError": False,
                "timestamp": 2}

    user = {"role": "user", "content": [{"type": "text", "text": "list files"}],
            "timestamp": 0}
    objs = [
        {"type": "session", "version": 3, "id": "d1b6c7a0-0000-4000-8000-000000000001",
         "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp/project"},
        entry("aaaa0001", None, user),
        entry("aaaa0002", "aaaa0001", assistant({"type": "text", "text": "Listing."},
                                                call("call_1"), call("call_2"))),
        entry("aaaa0003", "aaaa0002", result("call_1")),
        entry("aaaa0004", "aaaa0003", result("call_9")),  # answers nothing
        entry("aaaa0005", "aaaa0004", assistant(call("call_3"))),  # killed mid-call
        entry("aaaa0006", "aaaa0005", {**user, "content": [{"type": "text",
                                                             "text": "go on"}]}),
        entry("aaaa0007", "aaaa0006", assistant({"type": "text", "text": "Done."})),
    ]
    return jsonl(objs) + b'{"type":"message","id":"aaaa0008","parentId":"aaaa0007","mess'


def test_pi_tree_is_repaired_with_its_links_whole(tmp_path: Path) -> None:
    original = pi_tree()
    path = _write(tmp_path, "session.jsonl", original)
    report = assert_repaired(path, original, "pi")
    kinds = sorted((c["line"], c["kind"]) for c in report["changes"])
    assert kinds == [(3, "dropped_unpaired_call"), (5, "dropped_orphan_result"),
                     (6, "dropped_unpaired_call"), (6, "removed_empty_entry"),
                     (7, "relinked_child"), (9, "removed_unreadable_line")]
    after = objects(path.read_bytes())
    by_id = {o["id"]: o for o in after}
    assert by_id["aaaa0006"]["parentId"] == "aaaa0003"  # over the two entries taken out
    assert [b.get("id") for b in by_id["aaaa0002"]["message"]["content"]] == [None, "call_1"]


def test_pi_note_hangs_between_the_message_and_its_child(tmp_path: Path) -> None:
    original = pi_tree()
    path = _write(tmp_path, "session.jsonl", original)
    assert_repaired(path, original, "pi", "--note-unpaired")
    after = objects(path.read_bytes())
    notes = [o for o in after if "outcome is unknown" in json.dumps(o)]
    assert len(notes) == 2
    by_id = {o["id"]: o for o in after}
    assert notes[0]["parentId"] == "aaaa0002" and by_id["aaaa0003"]["parentId"] == notes[0]["id"]
    assert notes[1]["parentId"] == "aaaa0003" and by_id["aaaa0006"]["parentId"] == notes[1]["id"]


def test_real_pi_session_is_repaired(tmp_path: Path, fixtures: Path) -> None:
    original = (fixtures / PI).read_bytes()
    path = _write(tmp_path, "session.jsonl", original)
    report = assert_repaired(path, original, "pi")
    assert sum(c["kind"] == "dropped_unpaired_call" for c in report["changes"]) == 18
    assert len(report["pending_calls"]) == 18


def test_native_jsonl_with_tool_calls_arrays(tmp_path: Path) -> None:
    objs: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "hm"}], "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "toolResult", "toolCallId": "c2", "content": [{"type": "text", "text": "x"}]},
        {"role": "toolResult", "toolCallId": "c2", "content": [{"type": "text", "text": "y"}]},
        {"role": 5, "content": "not a record anyone can use"},
    ]
    original = jsonl(objs)
    path = _write(tmp_path, "native.jsonl", original)
    report = assert_repaired(path, original, "native")
    kinds = sorted((c["line"], c["kind"]) for c in report["changes"])
    assert kinds == [(2, "dropped_unpaired_call"), (2, "removed_empty_entry"),
                     (5, "dropped_duplicate_result"), (6, "removed_invalid_record")]


def test_the_bundled_example_is_repaired(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parent.parent / "examples" / "interrupted.jsonl"
    original = example.read_bytes()
    path = _write(tmp_path, "interrupted.jsonl", original)
    report = assert_repaired(path, original, "native", "--note-unpaired")
    assert [p["id"] for p in report["pending_calls"]] == ["patch-1"]
    note = next(o for o in objects(path.read_bytes()) if "outcome is unknown" in json.dumps(o))
    assert note["role"] == "user" and note["timestamp"] == objects(original)[3]["timestamp"]


def test_claude_code_call_leaves_its_own_streamed_line_only(tmp_path: Path) -> None:
    # message A streams two lines (text, then the call that never got a result); a subagent's
    # line after them carries the same message id and call id: only the main chain's line
    # loses the call
    def entry(uid: str, parent: str | None, etype: str, content: list[dict[str, Any]],
              mid: str | None = None, side: bool = False) -> dict[str, Any]:
        message: dict[str, Any] = {"role": etype, "content": content}
        if mid is not None:
            message.update(id=mid, model="claude-sonnet-4-5", type="message")
        return {"parentUuid": parent, "isSidechain": side, "type": etype, "message": message,
                "uuid": uid, "timestamp": "2025-10-01T00:00:00.000Z"}

    call = {"type": "tool_use", "id": "toolu_T", "name": "Bash", "input": {"command": "ls"}}
    stored = [
        entry("u1", None, "user", [{"type": "text", "text": "list the files"}]),
        entry("a1", "u1", "assistant", [{"type": "text", "text": "looking"}], "msg_A"),
        entry("a2", "a1", "assistant", [call], "msg_A"),
        entry("s1", "a1", "assistant", [call], "msg_A", side=True),
        entry("u2", "a2", "user", [{"type": "text", "text": "go on"}]),
    ]
    original = b"".join(json.dumps(e).encode() + b"\n" for e in stored)
    path = _write(tmp_path, "session.jsonl", original)
    report = assert_repaired(path, original, "claude-code")
    assert [(c["kind"], c["line"]) for c in report["changes"]] == [
        ("dropped_unpaired_call", 3), ("removed_empty_entry", 3), ("relinked_child", 5)]
    after = objects(path.read_bytes())
    assert after == [*stored[:2], stored[3], {**stored[4], "parentUuid": "a1"}]


def test_codex_repair_says_to_repair_before_resuming(tmp_path: Path, fixtures: Path) -> None:
    path = _write(tmp_path, "rollout.jsonl", codex_variants(fixtures)["killed before the output"])
    code, out = run("repair", str(path))
    assert code == 0 and "repair a rollout before Codex resumes it" in out
    code, again = run("repair", str(path), "--json")
    assert json.loads(again)["advice"] == ""  # nothing written: nothing to say


def test_a_removed_codex_call_takes_its_lone_reasoning_item(tmp_path: Path) -> None:
    def line(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payload": payload}
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    rows = [{"timestamp": "t", "type": "session_meta", "payload": {"id": "s", "cwd": "/w"}},
            line(user),
            line({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"}),
            line({"type": "function_call", "call_id": "c1", "name": "shell",
                  "arguments": "{}"}),
            line({**user, "content": [{"type": "input_text", "text": "again"}]})]
    path = _write(tmp_path, "rollout.jsonl", jsonl(rows))
    code, report = run("repair", str(path), "--json")
    named = {c["line"] for c in json.loads(report)["changes"] if c["action"] == "removed"}
    assert code == 0 and named == {3, 4}, report
    kept = [o["payload"].get("type") for o in objects(path.read_bytes()) if "payload" in o]
    assert "reasoning" not in kept and "function_call" not in kept
