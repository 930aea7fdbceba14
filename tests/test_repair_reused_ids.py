"""A tool call that reuses an earlier call's id: `check` names it, `repair` renames it.

The Anthropic API refuses a second tool_use with one id. A Claude Code session where a
tool_use/tool_result pair is repeated with the id of an earlier pair keeps both pairs after a
repair: the later call and the result answering it get the old id with `_2` (as `build`
names it), and a second repair changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessionctx.context import build_context
from sessionctx.inputs import read_input
from sessionctx.pairing import repeated_calls
from sessionctx.providers import build_request
from sessionctx.writeback import repair
from tests.repair_helpers import assert_repaired, jsonl, objects, run

Entry = dict[str, Any]


def use(cid: str) -> Entry:
    return {"type": "tool_use", "id": cid, "name": "Bash", "input": {"command": "ls"}}


def res(cid: str, text: str = "a.txt") -> Entry:
    return {"type": "tool_result", "tool_use_id": cid, "content": text}


def chain(*steps: tuple[str, Any]) -> list[Entry]:
    out: list[Entry] = []
    parent = None
    for k, (role, content) in enumerate(steps):
        uid = f"00000000-0000-4000-8000-{k:012d}"
        message: Entry = {"role": role, "content": content}
        if role == "assistant":
            message.update(id=f"msg_{k}", model="claude-sonnet-4-5", type="message")
        out.append({"parentUuid": parent, "isSidechain": False, "type": role,
                    "message": message, "uuid": uid, "timestamp": "2026-01-01T00:00:00.000Z"})
        parent = uid
    return out


def pair_repeated() -> list[Entry]:
    return chain(("user", "list files"), ("assistant", [use("toolu_01")]),
                 ("user", [res("toolu_01", "first")]), ("assistant", [use("toolu_01")]),
                 ("user", [res("toolu_01", "second")]), ("assistant", [{"type": "text",
                                                                        "text": "done"}]))


def calls_and_results(raw: bytes) -> tuple[list[str], list[tuple[str, Any]]]:
    calls, results = [], []
    for entry in objects(raw):
        content = entry["message"]["content"]
        for block in content if isinstance(content, list) else []:
            if block["type"] == "tool_use":
                calls.append(block["id"])
            elif block["type"] == "tool_result":
                results.append((block["tool_use_id"], block["content"]))
    return calls, results


def assert_answered(raw: bytes) -> None:
    """Every call is answered by a later result, and every result answers an earlier call."""
    open_calls: list[str] = []
    for entry in objects(raw):
        content = entry["message"]["content"]
        for block in content if isinstance(content, list) else []:
            if block["type"] == "tool_use":
                open_calls.append(block["id"])
            elif block["type"] == "tool_result":
                open_calls.remove(block["tool_use_id"])
    assert open_calls == []


def test_check_names_the_reused_id(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(pair_repeated()))
    code, out = run("check", str(path))
    assert code == 1
    assert "duplicate_call_id" in out and "line 4" in out and "toolu_01" in out


def test_repair_renames_the_later_pair(tmp_path: Path) -> None:
    original = jsonl(pair_repeated())
    path = tmp_path / "s.jsonl"
    path.write_bytes(original)
    report = assert_repaired(path, original, "claude-code")
    assert [(c["kind"], c["line"], c["detail"]["new"]) for c in report["changes"]] == [
        ("duplicate_call_id_renamed", 4, "toolu_01_2"),
        ("duplicate_call_id_renamed", 5, "toolu_01_2")]
    assert all("unique" in c["reason"] or "renamed" in c["reason"] for c in report["changes"])
    after = path.read_bytes()
    calls, results = calls_and_results(after)
    assert calls == ["toolu_01", "toolu_01_2"]  # both pairs kept, the ids distinct
    assert results == [("toolu_01", "first"), ("toolu_01_2", "second")]
    assert_answered(after)
    # only the id's bytes changed on the two lines
    assert after.replace(b'"toolu_01_2"', b'"toolu_01"') == original
    again = repair(str(path))
    assert not again.written and again.fixes == [] and again.remaining == []


def test_new_id_is_unique_in_the_session(tmp_path: Path) -> None:
    # `toolu_01_2` is already taken by another pair: the renamed call gets `toolu_01_3`
    stored = chain(("user", "go"), ("assistant", [use("toolu_01")]), ("user", [res("toolu_01")]),
                   ("assistant", [use("toolu_01_2")]), ("user", [res("toolu_01_2")]),
                   ("assistant", [use("toolu_01")]), ("user", [res("toolu_01")]),
                   ("assistant", [use("toolu_01")]), ("user", [res("toolu_01")]))
    original = jsonl(stored)
    path = tmp_path / "s.jsonl"
    path.write_bytes(original)
    assert_repaired(path, original, "claude-code")
    calls, results = calls_and_results(path.read_bytes())
    assert calls == ["toolu_01", "toolu_01_2", "toolu_01_3", "toolu_01_4"]
    assert [r for r, _ in results] == calls
    assert repair(str(path)).fixes == []


def test_two_calls_open_with_one_id_rename_the_second_and_its_result(tmp_path: Path) -> None:
    # both calls in one message: the first result answers the first call
    stored = chain(("user", "go"), ("assistant", [use("toolu_01"), use("toolu_01")]),
                   ("user", [res("toolu_01", "first"), res("toolu_01", "second")]))
    original = jsonl(stored)
    path = tmp_path / "s.jsonl"
    path.write_bytes(original)
    assert_repaired(path, original, "claude-code")
    calls, results = calls_and_results(path.read_bytes())
    assert calls == ["toolu_01", "toolu_01_2"]
    assert results == [("toolu_01", "first"), ("toolu_01_2", "second")]
    assert repair(str(path)).fixes == []


def test_repeated_calls_pairs_as_the_fold_does() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "assistant", "content": [{"type": "toolCall", "id": "a", "name": "x"}]},
        {"role": "toolResult", "toolCallId": "a"},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "a", "name": "x"},
                                          {"type": "toolCall", "id": "b", "name": "x"}]},
        {"role": "toolResult", "toolCallId": "b"},
        {"role": "toolResult", "toolCallId": "a"},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "b", "name": "x"}]},
    ]
    found = repeated_calls(messages)
    assert [(r.call_slot, r.call_id, r.call_nth, r.result_slot) for r in found] == [
        (2, "a", 0, 4), (5, "b", 0, None)]
    assert json.dumps(messages)  # untouched input


def native_pair_repeated() -> list[Entry]:
    def call(cid: str) -> Entry:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}

    def result(cid: str, text: str) -> Entry:
        return {"role": "toolResult", "toolCallId": cid, "content": [{"type": "text",
                                                                       "text": text}]}

    return [{"role": "user", "content": "hi"}, call("c1"), result("c1", "first"),
            call("c1"), result("c1", "second"), {"role": "assistant", "content": "done"}]


def pi_pair_repeated() -> list[Entry]:
    def entry(own: str, parent: str | None, message: Entry) -> Entry:
        return {"type": "message", "id": own, "parentId": parent,
                "timestamp": "2026-01-01T00:00:00.000Z", "message": message}

    def call(cid: str) -> Entry:
        return {"role": "assistant", "content": [{"type": "toolCall", "id": cid, "name": "bash",
                                                  "arguments": {"command": "ls"}}],
                "stopReason": "toolUse", "timestamp": 1}

    def result(cid: str, text: str) -> Entry:
        return {"role": "toolResult", "toolCallId": cid, "toolName": "bash",
                "content": [{"type": "text", "text": text}], "isError": False, "timestamp": 2}

    user = {"role": "user", "content": [{"type": "text", "text": "list"}], "timestamp": 0}
    return [{"type": "session", "version": 3, "id": "d1b6c7a0-0000-4000-8000-000000000001",
             "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp/project"},
            entry("a1", None, user), entry("a2", "a1", call("call_1")),
            entry("a3", "a2", result("call_1", "first")), entry("a4", "a3", call("call_1")),
            entry("a5", "a4", result("call_1", "second"))]


def codex_pair_repeated() -> list[Entry]:
    def item(payload: Entry) -> Entry:
        return {"timestamp": "2026-01-01T00:00:01.000Z", "type": "response_item",
                "payload": payload}

    def call(cid: str) -> Entry:
        return item({"type": "function_call", "name": "exec_command", "call_id": cid,
                     "arguments": json.dumps({"cmd": "ls"})})

    def output(cid: str, text: str) -> Entry:
        return item({"type": "function_call_output", "call_id": cid, "output": text})

    meta = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta", "payload": {
        "id": "01997ea4-a70d-7da3-8c20-c736db82a7c5", "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/tmp", "originator": "codex_cli_rs", "cli_version": "0.171.0"}}
    return [meta, item({"type": "message", "role": "user",
                        "content": [{"type": "input_text", "text": "list"}]}),
            call("call_1"), output("call_1", "first"), call("call_1"), output("call_1", "second"),
            item({"type": "message", "role": "assistant",
                  "content": [{"type": "output_text", "text": "done"}]})]


@pytest.mark.parametrize(("fmt", "stored", "old", "lines"), [
    ("native", native_pair_repeated(), "c1", (4, 5)),
    ("pi", pi_pair_repeated(), "call_1", (5, 6)),
    ("codex", codex_pair_repeated(), "call_1", (5, 6)),
])
def test_line_formats_rename_the_later_pair(tmp_path: Path, fmt: str, stored: list[Entry],
                                            old: str, lines: tuple[int, int]) -> None:
    original = jsonl(stored)
    path = tmp_path / "s.jsonl"
    path.write_bytes(original)
    code, out = run("check", str(path), "--from", fmt)
    assert code == 1 and "duplicate_call_id" in out
    report = assert_repaired(path, original, fmt)
    assert [(c["kind"], c["line"]) for c in report["changes"]] == [
        ("duplicate_call_id_renamed", lines[0]), ("duplicate_call_id_renamed", lines[1])]
    after = path.read_bytes()
    new = f'"{old}_2"'.encode()
    assert after.count(new) == 2 and after.replace(new, f'"{old}"'.encode()) == original
    assert repair(str(path), fmt).fixes == []



def test_new_id_avoids_the_ids_of_a_sidechain(tmp_path: Path) -> None:
    # a subagent's sidechain, which the main conversation leaves out, holds `toolu_01_2`
    stored = pair_repeated()[:5]
    side = chain(("user", "other"), ("assistant", [use("toolu_01_2")]),
                 ("user", [res("toolu_01_2")]))
    for k, entry in enumerate(side):
        entry["uuid"] = f"side-{k}"
        entry["isSidechain"] = True
        entry["parentUuid"] = stored[0]["uuid"] if k == 0 else f"side-{k - 1}"
    original = jsonl(side + stored)
    path = tmp_path / "s.jsonl"
    path.write_bytes(original)
    report = assert_repaired(path, original, "claude-code")
    assert {c["detail"]["new"] for c in report["changes"]} == {"toolu_01_3"}


@pytest.mark.parametrize("order", ["taken before", "taken after"])
def test_build_and_repair_give_a_reused_id_the_same_new_id(tmp_path: Path, order: str) -> None:
    # the file already holds `toolu_01_2` (before or after the reuse): both skip it, both
    # name the reused call `toolu_01_3`
    taken = [("assistant", [use("toolu_01_2")]), ("user", [res("toolu_01_2")])]
    reuse = [("assistant", [use("toolu_01")]), ("user", [res("toolu_01")])]
    steps = [("user", "go"), *reuse, *(taken + reuse if order == "taken before" else
                                       reuse + taken)]
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(chain(*steps)))
    body = build_request(build_context(read_input(str(path)).records), "anthropic").body
    built = [b["id"] for m in body["messages"] for b in m["content"]
             if isinstance(b, dict) and b.get("type") == "tool_use"]
    assert repair(str(path)).written
    repaired, _ = calls_and_results(path.read_bytes())
    assert built == repaired
    assert "toolu_01_3" in built and "toolu_01_2" in built
