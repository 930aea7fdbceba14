"""Copilot CLI's events.jsonl: read, checked, built for every provider and repaired event by
event with the event chain kept whole. Counts are worked out here from the events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessionctx.context import build_context
from sessionctx.formats.detect import detect
from sessionctx.inputs import read_input
from sessionctx.writeback import plan_repair, repair
from tests.conftest import FIXTURES
from tests.format_counts import accepted_bodies, context_counts, read_context

EVENTS = FIXTURES / "copilot-cli" / "events.jsonl"
Obj = dict[str, Any]


def events(path: Path) -> list[Obj]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main_agent(e: Obj) -> bool:
    return "agentId" not in e and "parentToolCallId" not in e["data"]


def counts(evs: list[Obj]) -> dict[str, int]:
    calls = [r["toolCallId"] for e in evs if e["type"] == "assistant.message" and main_agent(e)
             for r in e["data"].get("toolRequests", [])]
    done = [e["data"]["toolCallId"] for e in evs
            if e["type"] == "tool.execution_complete" and main_agent(e)]
    texts = sum(1 for e in evs if main_agent(e) and (
        e["type"] == "user.message" or (e["type"] == "assistant.message"
                                        and e["data"]["content"])))
    return {"calls": len(calls), "results": len(set(done) & set(calls)),
            "pending": len(set(calls) - set(done)), "orphans": len(set(done) - set(calls)),
            "texts": texts}


def read_counts(path: Path) -> dict[str, int]:
    ctx = read_context(path, "copilot-cli")
    orphans = sum(c.kind == "dropped_orphan_result" for c in ctx.changes)
    return {**context_counts(ctx), "orphans": orphans}


def write(tmp_path: Path, evs: list[Obj]) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in evs))
    return path


def chain_whole(path: Path) -> bool:
    seen: set[str] = set()
    for e in events(path):
        if e["parentId"] is not None and e["parentId"] not in seen:
            return False
        seen.add(e["id"])
    return True


def test_the_events_read_with_independent_counts() -> None:
    want = counts(events(EVENTS))
    assert want == {"calls": 4, "results": 4, "pending": 0, "orphans": 0, "texts": 5}
    assert read_counts(EVENTS) == want
    assert detect(EVENTS.read_bytes()) == "copilot-cli"


def test_what_the_model_saw() -> None:
    ctx = build_context(read_input(str(EVENTS)).records)
    first = ctx.messages[0]["content"][0]["text"]
    assert first.startswith("<current_datetime>")  # the transformed text, as sent
    models = [m["model"] for m in ctx.messages if m["role"] == "assistant"]
    assert models == ["claude-sonnet-4.5", "claude-sonnet-4.5", "gpt-5.1", "gpt-5.1"]
    rejected = next(m for m in ctx.messages if m.get("toolCallId") == "call_Inst01")
    assert rejected["isError"] and "rejected" in rejected["content"][0]["text"]
    assert not any("toolu_vrtx_01Sub" in json.dumps(m) for m in ctx.messages)


def test_every_provider_takes_the_body() -> None:
    ctx = build_context(read_input(str(EVENTS)).records)
    accepted_bodies(ctx)


def test_repair_leaves_an_answered_session_byte_identical() -> None:
    plan = plan_repair(EVENTS.read_bytes(), str(EVENTS))
    assert plan.fixes == [] and plan.after == plan.before


def _ended_in_the_subagent() -> list[Obj]:
    evs = events(EVENTS)
    return evs[:next(i for i, e in enumerate(evs) if e["type"] == "subagent.started") + 1]


def test_repair_takes_out_the_unanswered_request_and_keeps_the_chain(tmp_path: Path) -> None:
    evs = _ended_in_the_subagent()
    path = write(tmp_path, evs)
    assert counts(evs)["pending"] == 1 and read_counts(path) == counts(evs)
    before_lines = path.read_text().splitlines()
    done = repair(str(path), backup=False, note_unpaired=True)
    assert done.written and [p.name for p in done.pending_calls] == ["task"]
    after = events(path)
    assert counts(after)["pending"] == 0 and read_counts(path)["pending"] == 0
    assert chain_whole(path)
    note = next(i for i, e in enumerate(after) if "interrupted" in json.dumps(e))
    assert after[note - 1]["data"].get("toolCallId") == "call_Inst01"  # after the results
    assert sum(line in before_lines for line in path.read_text().splitlines()) == len(
        evs) - 2  # the message lost a request, the event after the note names the note


@pytest.mark.parametrize("drop", ["call", "result"])
def test_an_orphan_or_a_message_left_empty_goes_with_the_chain_relinked(
        tmp_path: Path, drop: str) -> None:
    evs = events(EVENTS)
    if drop == "result":  # a result whose request is gone: it answers nothing
        evs = [e for e in evs if not (e["type"] == "assistant.message"
                                      and e["data"]["messageId"] == "m-3")]
        evs = [dict(e, parentId=evs[i - 1]["id"] if i else None) for i, e in enumerate(evs)]
    else:  # the first message's requests never answered: it is left with its text only
        evs = [e for e in evs if e["type"] != "tool.execution_complete"
               or e["data"]["toolCallId"] not in ("toolu_vrtx_01Bash", "toolu_vrtx_01View")]
        evs = [dict(e, parentId=evs[i - 1]["id"] if i else None) for i, e in enumerate(evs)]
    path = write(tmp_path, evs)
    want = counts(evs)
    assert read_counts(path) == want and (want["orphans"] or want["pending"])
    repair(str(path), backup=False)
    assert chain_whole(path)
    after = counts(events(path))
    assert after["pending"] == after["orphans"] == 0 and read_counts(path) == after
