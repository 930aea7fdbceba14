"""Every change and pending call names the line of the record that holds what it is about."""

from __future__ import annotations

import copy
import json
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.context import build_context
from sessionctx.inputs import read_raw
from sessionctx.records import select_branch
from tests.conftest import FIXTURES

PI = FIXTURES / "pi" / "large-session.jsonl"
CLAUDE = FIXTURES / "claude-code" / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl"
CODEX = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
Obj = dict[str, Any]


def _lines(path: Any) -> list[Obj]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _jsonl(objs: list[Obj]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def _unpaired_lines(objs: list[Obj]) -> dict[str, int]:
    """call id -> the 1-based line of the pi entry holding a call no later entry answers."""
    answered = {o["message"].get("toolCallId") for o in objs if o.get("type") == "message"}
    out = {}
    for n, o in enumerate(objs, 1):
        if o.get("type") == "message" and o["message"]["role"] == "assistant":
            for b in o["message"]["content"]:
                if b.get("type") == "toolCall" and b["id"] not in answered:
                    out[b["id"]] = n
    return out


def _pending_and_dropped(ctx: Any) -> tuple[dict[str, int], dict[str, int]]:
    pending = {p.id: p.record.line for p in ctx.pending_calls}
    dropped = {c.detail["tool_call_id"]: c.record.line for c in ctx.changes
               if c.kind == ChangeKind.DROPPED_UNPAIRED_CALL}
    return pending, dropped


def test_pi_calls_kept_by_a_compaction_name_their_own_lines() -> None:
    objs = _lines(PI)
    for i, o in enumerate(objs[1:], 1):  # the id/parentId chain pi's migration adds
        o["id"] = f"e{i:07d}"
        o["parentId"] = f"e{i - 1:07d}" if i > 1 else None
    objs[0]["version"] = 3
    unpaired = _unpaired_lines(objs)
    line_843 = next(cid for cid, n in unpaired.items() if n == 843)
    compaction = {"type": "compaction", "id": "cmp00001", "parentId": objs[-1]["id"],
                  "timestamp": "2025-11-21T03:00:00Z", "summary": "S",
                  "firstKeptEntryId": objs[800]["id"], "tokensBefore": 9000}
    result = read_raw(_jsonl([*objs, compaction]), "pi.jsonl")
    records, _ = select_branch(result.records)
    ctx = build_context(records)
    pending, dropped = _pending_and_dropped(ctx)
    kept = {cid: n for cid, n in unpaired.items() if n > 801}
    assert line_843 in kept and pending == kept == dropped
    compaction_line = len(objs) + 1
    assert ctx.sources[0].line == compaction_line and ctx.sources[0].part == 0
    kept_lines = [s.line or 0 for s in ctx.sources[1:]]
    assert kept_lines == sorted(kept_lines) and kept_lines[0] == 802
    assert all(s.part is None and s.line is not None and objs[s.line - 1]["type"] == "message"
               for s in ctx.sources[1:])


def test_pi_v1_compaction_by_index_names_kept_lines_too() -> None:
    objs = _lines(PI)
    compaction = {"type": "compaction", "timestamp": "2025-11-21T03:00:00Z", "summary": "S",
                  "firstKeptEntryIndex": 830, "tokensBefore": 10}
    ctx = build_context(read_raw(_jsonl([*objs[:900], compaction]), "pi.jsonl").records)
    pending, dropped = _pending_and_dropped(ctx)
    assert 843 in pending.values() and pending == dropped
    assert all(831 <= n <= 900 for n in pending.values())


def test_claude_call_on_a_later_streamed_line_names_that_line() -> None:
    objs = _lines(CLAUDE)
    first = next(i for i, o in enumerate(objs) if o.get("type") == "assistant"
                 and o["message"]["content"][0]["type"] == "text")
    extra = copy.deepcopy(objs[first])
    extra["uuid"] = "streamed-call"
    extra["parentUuid"] = objs[first]["uuid"]
    extra["message"]["content"] = [{"type": "tool_use", "id": "toolu_streamed",
                                    "name": "Bash", "input": {"command": "ls"}}]
    follower = next(o for o in objs[first + 1:] if o.get("parentUuid") == objs[first]["uuid"])
    follower["parentUuid"] = "streamed-call"
    objs.insert(first + 1, extra)
    ctx = build_context(read_raw(_jsonl(objs), "c.jsonl").records)
    pending, dropped = _pending_and_dropped(ctx)
    assert pending["toolu_streamed"] == first + 2 == dropped["toolu_streamed"]
    held = next(s for m, s in zip(ctx.messages, ctx.sources, strict=True)
                if m["role"] == "assistant" and any(
                    b.get("text") == objs[first]["message"]["content"][0]["text"]
                    for b in m["content"]))
    assert held.line == first + 1  # the message itself is named by its first line


def test_codex_call_in_a_turn_names_its_own_item_line() -> None:
    objs = _lines(CODEX)
    reasoning = next(i for i, o in enumerate(objs) if o.get("type") == "response_item"
                     and o["payload"]["type"] == "reasoning")
    call = objs[reasoning + 1]
    assert call["payload"]["type"] == "function_call"
    output = reasoning + 2
    assert objs[output]["payload"]["type"] == "function_call_output"
    del objs[output]
    ctx = build_context(read_raw(_jsonl(objs), "r.jsonl").records)
    pending, dropped = _pending_and_dropped(ctx)
    cid = call["payload"]["call_id"]
    assert pending[cid] == reasoning + 2 == dropped[cid]


def _streamed_task_message() -> tuple[list[Obj], int]:
    """The real session with its first streamed message (text line, then a Task call line
    sharing its message.id) given a middle line: a call no result answers. The Task call's id
    is given a '.', which no provider's id pattern takes. Returns the lines and the 1-based
    line of the Task call."""
    objs = _lines(CLAUDE)
    text = next(i for i, o in enumerate(objs) if o.get("type") == "assistant")
    task = text + 1
    assert objs[task]["message"]["id"] == objs[text]["message"]["id"]
    assert objs[task]["message"]["content"][0]["name"] == "Task"
    middle = copy.deepcopy(objs[task])
    middle["uuid"] = "streamed-middle"
    middle["message"]["content"] = [{"type": "tool_use", "id": "toolu_unanswered",
                                     "name": "Bash", "input": {"command": "ls"}}]
    objs[task]["parentUuid"] = "streamed-middle"
    old = objs[task]["message"]["content"][0]["id"]
    objs[task]["message"]["content"][0]["id"] = old + ".v2"
    for o in objs:
        for b in (o.get("message") or {}).get("content") or []:
            if isinstance(b, dict) and b.get("tool_use_id") == old:
                b["tool_use_id"] = old + ".v2"
    objs.insert(task, middle)
    return objs, task + 2


def test_a_provider_change_about_a_later_streamed_block_names_that_blocks_line() -> None:
    from sessionctx.providers import build_request

    objs, task_line = _streamed_task_message()
    ctx = build_context(read_raw(_jsonl(objs), "c.jsonl").records)
    _, dropped = _pending_and_dropped(ctx)
    assert dropped["toolu_unanswered"] == task_line - 1  # the core took block 2 out
    joined = next(i for i, m in enumerate(ctx.messages) if m["role"] == "assistant")
    assert ctx.sources[joined].line == task_line - 2  # the message: its first line
    assert [b["type"] for b in ctx.messages[joined]["content"]] == ["text", "toolCall"]
    for provider in ("anthropic", "bedrock"):
        changes = build_request(ctx, provider).changes
        rewritten = [c for c in changes if c.kind == ChangeKind.ID_REWRITTEN]
        assert [c.record.line for c in rewritten if c.record] == [task_line], provider
        assert rewritten[0].message_index == joined


def test_a_provider_change_about_a_renamed_tool_names_its_streamed_line() -> None:
    from sessionctx.providers import PROVIDERS, build_request

    objs = _lines(CLAUDE)
    task = next(i for i, o in enumerate(objs) if o.get("type") == "assistant") + 1
    objs[task]["message"]["content"][0]["name"] = "Task tool"
    ctx = build_context(read_raw(_jsonl(objs), "c.jsonl").records)
    for provider in PROVIDERS:
        renamed = [c for c in build_request(ctx, provider).changes
                   if c.kind == ChangeKind.NAME_REWRITTEN]
        assert [c.record.line for c in renamed if c.record] == [task + 1], provider


def test_a_provider_change_about_an_omitted_image_names_the_images_line() -> None:
    """An image the provider step replaces by a note is named by the line it was streamed on,
    though the note takes the image's place before the change log is put in order."""
    from sessionctx.changes import Source
    from sessionctx.providers import PROVIDERS, build_from_messages

    messages: list[Obj] = [
        {"role": "user", "content": [{"type": "text", "text": "what is on screen?"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "this"},
            {"type": "image", "data": "Qk0=", "mimeType": "image/bmp"},
            {"type": "text", "text": "is it"}]},
        {"role": "user", "content": [{"type": "text", "text": "thanks"}]}]
    sources = [Source(line=3), Source(line=7, block_lines=(7, 8, 9)), Source(line=10)]
    for provider in PROVIDERS:
        changes = build_from_messages(messages, sources, provider).changes
        omitted = [c for c in changes if c.kind == ChangeKind.IMAGE_OMITTED]
        assert [c.record.line for c in omitted if c.record] == [8], provider
