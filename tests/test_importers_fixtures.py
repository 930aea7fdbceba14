"""Every real fixture imports, with counts checked against ones computed here from the raw JSON."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.inputs import read_input
from sessionctx.records import CHECKPOINT, MESSAGE, Record
from tests.conftest import FIXTURES

CLAUDE = FIXTURES / "claude-code" / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl"
CODEX = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
PI = FIXTURES / "pi" / "large-session.jsonl"
Counts = dict[str, int]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _counts(calls: list[str], results: list[str], messages: int, images: int) -> Counts:
    return {"messages": messages, "calls": len(calls), "results": len(results),
            "images": images, "unpaired": len(set(calls) - set(results))}


def imported_counts(records: list[Record]) -> Counts:
    messages: list[dict[str, Any]] = []
    for r in records:
        if r.kind == MESSAGE:
            messages.append(r.view)
        elif r.kind == CHECKPOINT:
            messages.extend(r.view["messages"])
    calls = [b["id"] for m in messages if m["role"] == "assistant"
             for b in m.get("content") or [] if b.get("type") == "toolCall"]
    results = [m["toolCallId"] for m in messages if m["role"] == "toolResult"]
    images = sum(1 for m in messages if isinstance(m.get("content"), list)
                 for b in m["content"] if b.get("type") == "image")
    return _counts(calls, results, len(messages), images)


def claude_counts(path: Path) -> Counts:
    ids: set[str] = set()
    calls: list[str] = []
    results: list[str] = []
    messages = images = 0
    for o in _lines(path):
        content: Any = (o.get("message") or {}).get("content")
        if o.get("type") == "assistant":
            if o["message"]["id"] not in ids:
                ids.add(o["message"]["id"])
                messages += 1
            calls += [b["id"] for b in content if b["type"] == "tool_use"]
        elif o.get("type") == "user":
            if isinstance(content, str):
                messages += 1
                continue
            own = [b for b in content if b["type"] != "tool_result"]
            messages += bool(own)
            images += sum(b["type"] == "image" for b in own)
            for b in content:
                if b["type"] == "tool_result":
                    messages += 1
                    results.append(b["tool_use_id"])
                    inner = b.get("content")
                    images += sum(isinstance(x, dict) and x.get("type") == "image"
                                  for x in (inner if isinstance(inner, list) else []))
    return _counts(calls, results, messages, images)


def codex_counts(path: Path) -> Counts:
    calls: list[str] = []
    results: list[str] = []
    messages = images = 0
    in_turn = False
    for o in _lines(path):
        p = o.get("payload") or {}
        if o["type"] == "turn_context":
            in_turn = False
        if o["type"] != "response_item":
            continue
        model_side = p["type"] in ("reasoning", "function_call") or (
            p["type"] == "message" and p["role"] == "assistant")
        if model_side:
            messages += not in_turn
            in_turn = True
        else:
            in_turn = False
            messages += 1
        if p["type"] == "function_call":
            calls.append(p["call_id"])
        if p["type"] == "function_call_output":
            results.append(p["call_id"])
        images += sum(c.get("type") == "input_image" for c in p.get("content") or [])
    return _counts(calls, results, messages, images)


def gemini_counts(path: Path) -> Counts:
    doc = json.loads(path.read_text())
    items = doc.get("messages", [doc])
    tool_calls = [c for m in items for c in m.get("toolCalls") or []]
    answered = [c["id"] for c in tool_calls if c.get("result")]
    return _counts([c["id"] for c in tool_calls], answered, len(items) + len(answered), 0)


def chat_counts(path: Path) -> Counts:
    doc = json.loads(path.read_text())
    items = doc["history"] if isinstance(doc, dict) else doc
    calls: list[str] = []
    results: list[str] = []
    messages = images = 0
    for m in items:
        tool_calls = m.get("tool_calls") or []
        if isinstance(tool_calls, str):
            tool_calls = ast.literal_eval(tool_calls)
        calls += [c["id"] for c in tool_calls]
        if m["role"] == "tool":
            ids = m.get("tool_call_ids") or [m["tool_call_id"]]
            results += ids
            messages += len(ids)
        else:
            messages += 1
        if isinstance(m.get("content"), list):
            images += sum(p.get("type") == "image_url" for p in m["content"])
    return _counts(calls, results, messages, images)


def pi_counts(path: Path) -> Counts:
    if path.suffix == ".json":
        m = json.loads(path.read_text())
        calls = [b["id"] for b in m["content"] if b["type"] == "toolCall"]
        return _counts(calls, [], 1, 0)
    entries = [o["message"] for o in _lines(path) if o.get("type") == "message"]
    calls = [b["id"] for m in entries if m["role"] == "assistant" for b in m["content"]
             if b["type"] == "toolCall"]
    results = [m["toolCallId"] for m in entries if m["role"] == "toolResult"]
    images = sum(1 for m in entries if isinstance(m.get("content"), list)
                 for b in m["content"] if b.get("type") == "image")
    return _counts(calls, results, len(entries), images)


def anthropic_counts(path: Path) -> Counts:
    items = json.loads(path.read_text())["messages"]
    calls = [b["id"] for m in items if m["role"] == "assistant" for b in m["content"]
             if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for m in items if m["role"] == "user" for b in m["content"]
               if b["type"] == "tool_result"]
    own = sum(1 for m in items if m["role"] == "assistant" or any(
        b["type"] != "tool_result" for b in m["content"]))
    images = sum(b["type"] == "image" for m in items for b in m["content"])
    return _counts(calls, results, own + len(results), images)


COUNTERS = {"anthropic": anthropic_counts, "claude-code": claude_counts, "codex": codex_counts,
            "gemini-cli": gemini_counts,
            "swe-agent": chat_counts, "openhands": chat_counts, "pi": pi_counts}
ALL = sorted(p for p in FIXTURES.glob("*/*") if p.suffix in (".jsonl", ".json", ".traj"))


def test_every_fixture_is_listed() -> None:
    assert len(ALL) == 14


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_fixture_imports_with_independent_counts(path: Path) -> None:
    result = read_input(str(path))
    assert not result.problems, [str(p) for p in result.problems]
    assert imported_counts(result.records) == COUNTERS[path.parent.name](path)


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_check_finishes_on_every_fixture(path: Path) -> None:
    outcome = CliRunner().invoke(main, ["check", "--json", str(path)])
    assert outcome.exit_code in (0, 1), outcome.output
    json.loads(outcome.output)


def _pending(path: Path) -> list[dict[str, Any]]:
    outcome = CliRunner().invoke(main, ["check", "--json", str(path)])
    assert outcome.exit_code == 1
    pending: list[dict[str, Any]] = json.loads(outcome.output)["pending_calls"]
    return pending


def test_check_names_the_dangling_exit_plan_mode_call() -> None:
    pending = _pending(CLAUDE)
    assert [p["name"] for p in pending] == ["ExitPlanMode"]
    outcome = CliRunner().invoke(main, ["check", str(CLAUDE)])
    assert "ExitPlanMode" in outcome.output


def test_check_names_the_interrupted_calls_of_the_pi_session() -> None:
    pending = _pending(PI)
    counts = pi_counts(PI)
    assert len(pending) == counts["unpaired"] == 18
    outcome = CliRunner().invoke(main, ["check", str(PI)])
    assert all(p["id"] in outcome.output for p in pending)


def test_codex_reasoning_becomes_signed_thinking() -> None:
    records = read_input(str(CODEX)).records
    assistants = [r.view for r in records if r.kind == MESSAGE and r.view["role"] == "assistant"]
    thinking = [b for m in assistants for b in m["content"] if b["type"] == "thinking"]
    assert len(thinking) == 17
    item = json.loads(thinking[0]["thinkingSignature"])
    assert item["type"] == "reasoning" and item["encrypted_content"]
    assert {m["api"] for m in assistants} == {"openai-responses"}
    assert {m["model"] for m in assistants} == {"gpt-5-codex"}


def test_claude_thinking_keeps_its_signature() -> None:
    lines = [x for x in CLAUDE.read_text().splitlines() if '"type":"assistant"' in x]
    entry = json.loads(lines[0])
    entry["message"]["content"].insert(0, {"type": "thinking", "thinking": "hm",
                                           "signature": "sig=="})
    from sessionctx.inputs import read_raw
    records = read_raw(json.dumps(entry).encode(), "x.jsonl", "claude-code").records
    message = records[0].view
    assert message["api"] == "anthropic-messages"
    assert message["content"][0] == {"type": "thinking", "thinking": "hm",
                                     "thinkingSignature": "sig=="}


def test_records_keep_source_line_and_raw_object() -> None:
    records = read_input(str(CLAUDE)).records
    lines = CLAUDE.read_text().splitlines()
    for r in records:
        assert r.source.line is not None and r.source.path == str(CLAUDE)
        raw = r.data["raw"]
        first = raw[0] if isinstance(raw, list) else raw
        assert json.loads(lines[r.source.line - 1]) == first


def test_codex_records_keep_their_whole_lines() -> None:
    lines = CODEX.read_text().splitlines()
    for r in read_input(str(CODEX)).records:
        assert r.source.line is not None
        raw = r.data["raw"]
        first = raw[0] if isinstance(raw, list) else raw
        assert json.loads(lines[r.source.line - 1]) == first
