"""Token figures never read as a made-up 0: an agent's compaction that records no size after
it gives the estimate of what its checkpoint holds (as a checkpoint sessionctx writes records
it), the report's header counts the messages a checkpoint holds as stored, and a figure the
source did not record is left out of the page, not shown as 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessionctx.compaction.tokens import total
from sessionctx.context import build_context
from sessionctx.inputs import read_input
from sessionctx.records import CHECKPOINT, select_branch
from sessionctx.report import page_model, report_page
from sessionctx.report.model import header
from tests.browser import browser, open_page

SID = "11111111-2222-3333-4444-555555555555"


def _claude(uuid: str, parent: str | None, kind: str, message: Any = None,
            **more: Any) -> dict[str, Any]:
    entry = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/w",
             "sessionId": SID, "version": "2.0.0", "type": kind, "uuid": uuid,
             "timestamp": "2026-01-01T00:00:00Z", **more}
    if message is not None:
        entry["message"] = message
    return entry


def _said(role: str, words: str, mid: str = "") -> dict[str, Any]:
    if role == "user":
        return {"role": "user", "content": words}
    return {"id": mid, "type": "message", "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": words}], "stop_reason": "end_turn"}


def claude_compacted(path: Path) -> Path:
    """A Claude Code session compacted by Claude Code: its boundary records the tokens before
    (`preTokens`) and nothing after, as Claude Code writes it."""
    entries = [
        _claude("u1", None, "user", _said("user", "hello " * 400)),
        _claude("a1", "u1", "assistant", _said("assistant", "hi", "m1")),
        _claude("b1", None, "system", subtype="compact_boundary",
                content="Conversation compacted", logicalParentUuid="a1", level="info",
                compactMetadata={"trigger": "auto", "preTokens": 185014}),
        _claude("s1", "b1", "user", _said("user", "This session is being continued from a "
                                                  "previous conversation. Summary: did things."),
                isCompactSummary=True),
        _claude("u2", "s1", "user", _said("user", "go on")),
        _claude("a2", "u2", "assistant", _said("assistant", "ok", "m2")),
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def codex_compacted(path: Path, fixtures: Path) -> Path:
    """A Codex rollout with Codex's `compacted` line, which records no token figure at all."""
    rollout = next((fixtures / "codex").glob("rollout-*.jsonl")).read_text()
    line = {"timestamp": "2025-09-25T03:00:00.000Z", "type": "compacted",
            "payload": {"message": "Summary of the work so far: the route was fixed."}}
    path.write_text(rollout + json.dumps(line) + "\n")
    return path


def pi_compacted(path: Path) -> Path:
    """A pi (version 3) session with pi's own compaction entry, which records `tokensBefore`."""
    def msg(i: str, parent: str | None, role: str, words: str) -> dict[str, Any]:
        content = [{"type": "text", "text": words}]
        return {"type": "message", "id": i, "parentId": parent,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "message": {"role": role, "content": content, "timestamp": 1}}
    entries = [{"type": "session", "version": 3, "id": SID, "timestamp": "2026-01-01T00:00:00Z",
                "cwd": "/w"},
               msg("e1", None, "user", "first ask " * 300), msg("e2", "e1", "assistant", "done"),
               msg("e3", "e2", "user", "second ask"), msg("e4", "e3", "assistant", "done too"),
               {"type": "compaction", "id": "c1", "parentId": "e4",
                "timestamp": "2026-01-01T00:01:00.000Z", "summary": "Asked twice, done twice.",
                "firstKeptEntryId": "e3", "tokensBefore": 5000}]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def _page(path: Path) -> tuple[list[Any], dict[str, Any], bytes]:
    read = read_input(str(path))
    records, off = select_branch(read.records)
    ctx = build_context(records)
    page = page_model(records, ctx, off_branch=off)
    head = header(records, ctx, page, label=path.name, fmt=read.format)
    html = report_page(records, ctx, label=path.name, fmt=read.format, off_branch=off)
    return records, head, html


@pytest.mark.parametrize(("agent", "before"), [("claude", 185014), ("codex", 0), ("pi", 5000)])
def test_an_agents_compaction_gives_its_size_after_never_0(
        tmp_path: Path, fixtures: Path, agent: str, before: int) -> None:
    path = {"claude": lambda: claude_compacted(tmp_path / "c.jsonl"),
            "codex": lambda: codex_compacted(tmp_path / "rollout.jsonl", fixtures),
            "pi": lambda: pi_compacted(tmp_path / "p.jsonl")}[agent]()
    records, head, _ = _page(path)
    [checkpoint] = [r for r in records if r.kind == CHECKPOINT]
    assert checkpoint.problem is None
    after = total(checkpoint.view["messages"])
    assert after > 0 and checkpoint.view["tokensAfter"] == after
    assert checkpoint.view["tokensBefore"] == before  # 0: not recorded, shown as unknown
    [shown] = head["compactions"]
    assert (shown["before"], shown["after"], shown["applied"]) == (before, after, True)


def test_a_session_held_by_its_checkpoint_alone_counts_what_it_holds(tmp_path: Path) -> None:
    # a native session whose only record is a checkpoint: what is stored is its messages
    path = tmp_path / "only.jsonl"
    messages = [{"role": "user", "content": [{"type": "text", "text": "summary " * 50}]},
                {"role": "user", "content": [{"type": "text", "text": "go on"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    record = {"type": "compaction", "id": "cp1", "at": "2026-01-01T00:00:00Z", "baseSeq": 0,
              "plannerVersion": 1, "summaryModelRef": "command:x", "qualityAudit": "passed",
              "summary": "the first message", "messages": messages, "firstKeptIndex": 1,
              "tokensBefore": 900, "tokensAfter": total(messages)}
    path.write_text(json.dumps(record) + "\n")
    _, head, _ = _page(path)
    assert head["messages"] == 3
    assert head["tokens_before"] == head["tokens_after"] == total(messages) > 0


@pytest.fixture(scope="module")
def chromium() -> Any:
    yield from browser()


def test_the_page_shows_no_made_up_0(chromium: Any, tmp_path: Path, fixtures: Path) -> None:
    for path, want in ((claude_compacted(tmp_path / "c.jsonl"), "tokens 185014 → "),
                       (codex_compacted(tmp_path / "rollout.jsonl", fixtures), " · gives ")):
        records, _, html = _page(path)
        [checkpoint] = [r for r in records if r.kind == CHECKPOINT]
        out = tmp_path / (path.name + ".html")
        out.write_bytes(html)
        page = open_page(chromium, out.as_uri()).page
        timeline = page.locator("#timeline").inner_text()
        assert want in timeline and "→ 0" not in timeline and " 0 message" not in timeline
        assert str(checkpoint.view["tokensAfter"]) in timeline
        figures = page.locator("#figures").inner_text()
        assert " 0 →" not in figures.replace("\n", " ")
