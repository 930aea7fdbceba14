"""A reused call id in a session stored as one JSON document (OpenAI chat and Anthropic
message lists, Gemini CLI sessions), a Gemini CLI JSONL chat or a Copilot CLI events.jsonl:
`check` names it, `repair`
renames the later call and the result answering it to `<id>_2`, nothing else of the file
changes, and a second repair changes nothing. Each session is a real one with one of its
pairs repeated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessionctx.context import build_context
from sessionctx.inputs import read_raw
from sessionctx.messages import call_ids, result_id
from sessionctx.writeback import repair
from tests.conftest import FIXTURES
from tests.format_counts import accepted_bodies
from tests.repair_helpers import check_ok, repair_json, run
from tests.test_repair_reused_ids import native_pair_repeated

Doc = Any


def _openhands() -> tuple[Doc, str, str]:
    """OpenHands' OpenAI chat list with its second call and result asked and answered again."""
    items = json.loads((FIXTURES / "openhands/fncall-llm-message.json").read_bytes())
    call, answer = json.loads(json.dumps(items[4:6]))
    answer["content"] = "listed again"
    return [*items[:6], call, answer, *items[6:]], call["tool_calls"][0]["id"], "listed again"


def _cline() -> tuple[Doc, str, str]:
    """Cline's Anthropic message list with its tool_use and tool_result repeated."""
    doc = json.loads((FIXTURES / "anthropic/success.messages.json").read_bytes())
    call, answer = json.loads(json.dumps(doc["messages"][1:3]))
    answer["content"][0]["content"] = "read again"
    doc["messages"][3:3] = [call, answer]
    use = next(b for b in call["content"] if b["type"] == "tool_use")
    return doc, use["id"], "read again"


def _gemini() -> tuple[Doc, str, str]:
    """A Gemini CLI session whose recorded call (with its response) is made a second time."""
    first = json.loads((FIXTURES / "gemini-cli/tool-result-cancelled.json").read_bytes())
    again = json.loads(json.dumps(first))
    again["id"] = "0d7f3c1e-5a9b-4c2d-8e6f-1a2b3c4d5e6f"
    again["toolCalls"][0]["result"][0]["functionResponse"]["response"] = {"output": "ran"}
    stamp = first["timestamp"]
    doc = {"sessionId": "5f0c", "projectHash": "ab12", "startTime": stamp, "lastUpdated": stamp,
           "messages": [{"id": "u1", "timestamp": stamp, "type": "user", "content": "start"},
                        first, {"id": "u2", "timestamp": stamp, "type": "user",
                                "content": "once more"}, again]}
    return doc, first["toolCalls"][0]["id"], "ran"


def _gemini_rows() -> tuple[bytes, str, str]:
    """A recorded Gemini CLI JSONL chat (before its resume) where the model reads the missing
    file a second time, its call under the id of the first read."""
    rows = (FIXTURES / "gemini-cli-jsonl/recorded-0.61.0-tools.jsonl").read_bytes().split(
        b"\n")[:16]
    user, again = json.loads(rows[12]), json.loads(rows[11])
    user["id"], user["content"] = "0b9e6a52-3c1d-4f7a-9e2b-5d8c7a6f4e31", [{"text": "again"}]
    again["id"] = "7c2d9f14-8b3a-4e6d-a5c1-2f9e8d7b6a40"
    call = again["toolCalls"][0]
    call["result"][0]["functionResponse"]["response"] = {"output": "found now"}
    added = [json.dumps(o, separators=(",", ":")).encode() for o in (user, again)]
    return b"\n".join([*rows, *added]) + b"\n", call["id"], "found now"


def _copilot() -> tuple[bytes, str, str]:
    """A recorded Copilot CLI session whose call after the resume reuses the id of a call
    before it (the numbering started again)."""
    raw = (FIXTURES / "copilot-cli/recorded-1.0.102-tools.jsonl").read_bytes()
    return raw.replace(b'"call_04"', b'"call_03"'), "call_03", "./opencode.json"


def _native() -> tuple[Doc, str, str]:
    """sessionctx's own records as one JSON array."""
    return native_pair_repeated(), "c1", "second"


# format -> (the session, where its changes are: (key, line or item) of each)
CASES = {"openai-chat": (_openhands, [("index", 6), ("index", 7)]),
         "anthropic": (_cline, [("index", 3), ("index", 4)]),
         "native": (_native, [("index", 3), ("index", 4)]),
         "gemini-cli": (_gemini, [("index", 3), ("index", 3)]),
         "gemini-cli-jsonl": (_gemini_rows, [("line", 18), ("line", 18)]),
         # the call, the event that started it, its result
         "copilot-cli": (_copilot, [("line", 27), ("line", 28), ("line", 29)])}


def _context(raw: bytes, fmt: str) -> Any:
    return build_context(read_raw(raw, None, fmt).records)


def _pairs(raw: bytes, fmt: str) -> list[tuple[str, str]]:
    """(call id, the text of the result that answers it), in order."""
    ctx = _context(raw, fmt)
    out = []
    for m in ctx.messages:
        rid = result_id(m)
        if rid is not None:
            content = m["content"]
            out.append((rid, content if isinstance(content, str) else json.dumps(content)))
    return out


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_repair_renames_the_later_pair(tmp_path: Path, fmt: str) -> None:
    make, where = CASES[fmt]
    doc, old, text = make()
    original = doc if isinstance(doc, bytes) else json.dumps(
        doc, indent=2, ensure_ascii=False).encode() + b"\n"
    path = tmp_path / "session.json"
    path.write_bytes(original)
    code, out = run("check", str(path), "--from", fmt)
    assert code == 1 and "duplicate_call_id" in out and old in out

    code, report = repair_json(path, "--from", fmt)
    assert code == 0 and report["written"], report
    new = f"{old}_2"
    assert [(c["kind"], c[key], c["detail"]["new"]) for c in report["changes"]
            for key, _ in where[:1]] == [("duplicate_call_id_renamed", at, new)
                                         for _, at in where]
    assert report["remaining"] == []
    check_ok(path, fmt)
    after = path.read_bytes()
    # only the two id strings changed: everything else keeps its bytes
    assert after.count(json.dumps(new).encode()) == len(where)
    assert after.replace(json.dumps(new).encode(), json.dumps(old).encode()) == original

    ctx = _context(after, fmt)
    calls = [i for m in ctx.messages for i in call_ids(m)]
    assert calls.count(old) == 1 and calls.count(new) == 1
    pairs = _pairs(after, fmt)
    assert [r for r, _ in pairs].count(new) == 1
    assert text in next(t for r, t in pairs if r == new)  # the second result answers it
    assert text not in next(t for r, t in pairs if r == old)
    assert ctx.repairs == []

    again = repair(str(path), fmt)
    assert not again.written and again.fixes == [] and again.remaining == []
    assert path.read_bytes() == after

    accepted_bodies(ctx)


def test_new_id_is_unique_in_the_document(tmp_path: Path) -> None:
    # `<id>_2` is taken by a third pair: the renamed call gets `<id>_3`
    doc, old, _ = _openhands()
    taken = json.loads(json.dumps(doc[4:6]))
    taken[0]["tool_calls"][0]["id"] = taken[1]["tool_call_id"] = f"{old}_2"
    doc[4:4] = taken
    path = tmp_path / "messages.json"
    path.write_bytes(json.dumps(doc, indent=1).encode())
    code, report = repair_json(path, "--from", "openai-chat")
    assert code == 0 and {c["detail"]["new"] for c in report["changes"]} == {f"{old}_3"}
    check_ok(path, "openai-chat")
    assert [r for r, _ in _pairs(path.read_bytes(), "openai-chat") if r.startswith(old)] == [
        f"{old}_2", old, f"{old}_3"]


def test_two_blocks_with_one_id_in_one_message(tmp_path: Path) -> None:
    # both calls in one assistant message: the second call and the second result are renamed
    def use(text: str) -> dict[str, Any]:
        return {"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": {"command": text}}

    def res(text: str) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": "toolu_9", "content": text}

    doc = [{"role": "user", "content": "go"},
           {"role": "assistant", "content": [use("ls"), use("pwd")]},
           {"role": "user", "content": [res("a.txt"), res("/tmp")]},
           {"role": "assistant", "content": "done"}]
    path = tmp_path / "messages.json"
    path.write_bytes(json.dumps(doc).encode())
    code, report = repair_json(path, "--from", "anthropic")
    assert code == 0 and len(report["changes"]) == 2, report
    after = json.loads(path.read_bytes())
    assert [b["id"] for b in after[1]["content"]] == ["toolu_9", "toolu_9_2"]
    assert [(b["tool_use_id"], b["content"]) for b in after[2]["content"]] == [
        ("toolu_9", "a.txt"), ("toolu_9_2", "/tmp")]
    assert repair(str(path), "anthropic").fixes == []
