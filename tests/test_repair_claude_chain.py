"""Claude Code files repaired so that a reader walking the parentUuid chain finds them valid.

A reader that walks the chain from the leaf (Claude Code versions that do not repair on their
own, other tools) sees the chain's entries and the side children of chain entries that hold
the results of parallel calls (Claude Code's own layout). On every repaired file: every call
on that walk is answered, results come first in their user entry, and no entry was re-linked
while its old parent is still in the file. A second repair changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessionctx.writeback import repair
from tests.repair_helpers import objects, run

Entry = dict[str, Any]


def _blocks(entry: Entry) -> list[Entry]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def chain_walk(raw: bytes) -> list[Entry]:
    """The entries a chain-walking reader sees, in order: the chain from the newest user or
    assistant entry of the file's own agent to the root, each followed by its side children
    that hold tool results."""
    entries = [o for o in objects(raw) if isinstance(o.get("uuid"), str)]
    own_side = all(o.get("isSidechain") is True for o in entries
                   if o.get("type") in ("user", "assistant"))
    by_uuid: dict[str, Entry] = {}
    for e in entries:
        by_uuid.setdefault(e["uuid"], e)  # a record written twice is one record
    leaf = next((e for e in reversed(entries) if e.get("type") in ("user", "assistant")
                 and (own_side or not e.get("isSidechain"))), None)
    assert leaf is not None, "no leaf"
    chain: list[Entry] = []
    seen: set[str] = set()
    current: Entry | None = leaf
    while current is not None and current["uuid"] not in seen:
        seen.add(current["uuid"])
        chain.append(current)
        parent = current.get("parentUuid")
        current = by_uuid.get(parent) if isinstance(parent, str) else None  # an excerpt's
        # first entry may name a parent the file does not hold: the walk ends there
    chain.reverse()
    on_chain = {e["uuid"] for e in chain}
    sides: dict[str, list[Entry]] = {}
    for e in entries:
        parent = e.get("parentUuid")
        if isinstance(parent, str) and e["uuid"] not in on_chain and parent in on_chain and e.get(
                "type") == "user" and any(
                b.get("type") == "tool_result" for b in _blocks(e)):
            sides.setdefault(parent, []).append(e)
    out = []
    for e in chain:
        out.append(e)
        out.extend(sides.get(e["uuid"], []))
    return out


def assert_walk_valid(raw: bytes) -> None:
    """Every call on the walk answered by a later result, every result answering an earlier
    call, and a user entry's results before its other blocks."""
    open_calls: list[str] = []
    for entry in chain_walk(raw):
        other = False
        for block in _blocks(entry):
            if block.get("type") == "tool_use":
                open_calls.append(block["id"])
            elif block.get("type") == "tool_result":
                assert not other, f"a result after another block in {entry['uuid']}"
                assert block["tool_use_id"] in open_calls, block["tool_use_id"]
                open_calls.remove(block["tool_use_id"])
            else:
                other = True
    assert open_calls == [], open_calls


def assert_no_false_relink(before: bytes, fixes: list[dict[str, Any]]) -> None:
    """No entry re-linked while a record with its old parent's uuid is still in the file,
    and the change log never says a parent was taken out when it is there."""
    after_ids = {o.get("uuid") for o in objects(before)}
    for fix in fixes:
        if fix["kind"] == "relinked_child":
            old = fix["detail"]["from"]
            assert old not in after_ids or old in _removed_ids(before, fixes), fix


def _removed_ids(raw: bytes, fixes: list[dict[str, Any]]) -> set[str]:
    """The uuids that no longer have any line in the file once the repair's removals ran."""
    lines = raw.split(b"\n")
    gone = {f["line"] for f in fixes if f["action"] == "removed"}
    kept: set[str] = set()
    removed: set[str] = set()
    for n, line in enumerate(lines, 1):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        uid = obj.get("uuid") if isinstance(obj, dict) else None
        if isinstance(uid, str):
            (removed if n in gone else kept).add(uid)
    return removed - kept


def _entry(kind: str, uid: str, parent: str | None, content: Any, session: str = "s1",
           side: bool = False) -> Entry:
    message: Entry = {"role": kind, "content": content}
    if kind == "assistant":
        message.update({"id": f"msg_{uid}", "model": "claude-sonnet-4-5", "type": "message"})
    return {"parentUuid": parent, "isSidechain": side, "userType": "external", "cwd": "/w",
            "sessionId": session, "version": "2.1.3", "type": kind, "uuid": uid,
            "timestamp": "2026-01-01T00:00:00Z", "message": message}


def _call(cid: str) -> Entry:
    return {"type": "tool_use", "id": cid, "name": "Bash", "input": {"command": "ls"}}


def _result(cid: str) -> Entry:
    return {"type": "tool_result", "tool_use_id": cid, "content": "ok"}


def _jsonl(entries: list[Entry]) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in entries)


CASES: dict[str, bytes] = {
    "a record written twice by a resumed session": _jsonl([
        _entry("user", "u1", None, "hi"),
        _entry("assistant", "a1", "u1", [_call("t1")]),
        _entry("user", "r1", "a1", [_result("t1")]),
        _entry("assistant", "a2", "r1", [{"type": "text", "text": "done"}]),
        _entry("user", "r1", "a1", [_result("t1")], session="s2"),
        _entry("user", "u2", "a2", "again", session="s2"),
        _entry("assistant", "a3", "u2", [_call("t2")], session="s2"),
    ]),
    "a subagent transcript": _jsonl([
        _entry("user", "u1", None, "task", side=True),
        _entry("assistant", "a1", "u1", [_call("t1")], side=True),
        _entry("user", "r1", "a1", [_result("t1")], side=True),
        _entry("assistant", "a2", "r1", [_call("t2")], side=True),
    ]),
    "text before the tool results": _jsonl([
        _entry("user", "u1", None, "hi"),
        _entry("assistant", "a1", "u1", [_call("t1"), _call("t2")]),
        _entry("user", "r1", "a1", [{"type": "text", "text": "first"}, _result("t1"),
                                    _result("t2")]),
        _entry("assistant", "a2", "r1", [{"type": "text", "text": "done"}]),
    ]),
    "parallel results on side children": _jsonl([
        _entry("user", "u1", None, "hi"),
        _entry("assistant", "a1", "u1", [_call("t1")]),
        _entry("assistant", "a1b", "a1", [_call("t2")]),
        _entry("user", "r1", "a1", [_result("t1")]),
        _entry("user", "r2", "a1b", [_result("t2")]),
        _entry("assistant", "a2", "r2", [_call("t3")]),
    ]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_repaired_file_is_valid_for_a_chain_walker(tmp_path: Path, case: str) -> None:
    path = tmp_path / "session.jsonl"
    before = CASES[case]
    path.write_bytes(before)
    code, out = run("check", str(path))
    assert code == 1, out  # each case is broken as stored
    first = repair(str(path), backup=False)
    assert first.written and first.remaining == [], first.remaining
    after = path.read_bytes()
    assert_walk_valid(after)
    assert_no_false_relink(before, [f.to_json() for f in first.fixes])
    code, out = run("check", str(path))
    assert code == 0, out
    second = repair(str(path), backup=False)
    assert not second.written and second.fixes == [] and path.read_bytes() == after


def test_a_record_written_twice_is_read_once_and_keeps_its_children(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(CASES["a record written twice by a resumed session"])
    result = repair(str(path), backup=False)
    kinds = [f.kind for f in result.fixes]
    assert "relinked_child" not in kinds and "dropped_duplicate_result" not in kinds
    entries = objects(path.read_bytes())
    assert [e["uuid"] for e in entries].count("r1") == 2  # both copies stay as stored
    assert next(e for e in entries if e["uuid"] == "a2")["parentUuid"] == "r1"


def test_a_subagent_call_leaves_like_a_main_one(tmp_path: Path) -> None:
    path = tmp_path / "agent-a1.jsonl"
    path.write_bytes(CASES["a subagent transcript"])
    result = repair(str(path), backup=False)
    assert [f.kind for f in result.fixes] == ["dropped_unpaired_call", "removed_empty_entry"]
    assert "a2" not in {e["uuid"] for e in objects(path.read_bytes())}


def test_check_names_text_before_results_and_repair_puts_results_first(tmp_path: Path
                                                                      ) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(CASES["text before the tool results"])
    code, out = run("check", str(path), "--json")
    problems = json.loads(out)["problems"]
    assert code == 1 and [p["kind"] for p in problems] == ["tool_results_moved"]
    assert [p["record"]["line"] for p in problems] == [3]
    result = repair(str(path), backup=False)
    assert [(f.kind, f.line) for f in result.fixes] == [("tool_results_moved", 3)]
    entry = objects(path.read_bytes())[2]
    assert [b.get("tool_use_id", b.get("text")) for b in _blocks(entry)] == ["t1", "t2",
                                                                          "first"]


def test_every_repaired_fixture_is_valid_for_a_chain_walker(tmp_path: Path,
                                                            fixtures: Path) -> None:
    from tests.test_repair_formats import claude_variants

    for name, raw in claude_variants(fixtures).items():
        path = tmp_path / "variant.jsonl"
        path.write_bytes(raw)
        result = repair(str(path), backup=False)
        assert result.remaining == [], (name, result.remaining)
        assert_walk_valid(path.read_bytes())
        assert_no_false_relink(raw, [f.to_json() for f in result.fixes])
        again = repair(str(path), backup=False)
        assert again.fixes == [], name
    for fixture in sorted((fixtures / "claude-code").glob("*.jsonl")):
        path = tmp_path / fixture.name
        path.write_bytes(fixture.read_bytes())
        repair(str(path), backup=False)
        assert_walk_valid(path.read_bytes())
