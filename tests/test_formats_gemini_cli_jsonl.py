"""Gemini CLI's JSONL chats: the rows applied in order as Gemini CLI loads them, checked,
built for every provider and repaired row by row. Counts are worked out here from the rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.context import build_context
from sessionctx.formats.detect import detect
from sessionctx.inputs import read_input
from sessionctx.writeback import plan_repair, repair
from tests.conftest import FIXTURES
from tests.format_counts import accepted_bodies, context_counts, read_context

DIR = FIXTURES / "gemini-cli-jsonl"
CHAT, HISTORY = DIR / "chat.jsonl", DIR / "history-set.jsonl"
Obj = dict[str, Any]


def rows(path: Path) -> list[Obj]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def loaded(objs: list[Obj]) -> list[Obj]:
    """The messages the rows leave, replayed here the way Gemini CLI's loader reads them."""
    by_id: dict[str, Obj] = {}
    for o in objs:
        if "$rewindTo" in o:
            ids = list(by_id)
            cut = ids.index(o["$rewindTo"]) if o["$rewindTo"] in by_id else 0
            for mid in ids[cut:]:
                del by_id[mid]
        elif "id" in o:
            by_id[o["id"]] = o
        elif "messages" in o.get("$set", {}):
            by_id = {m["id"]: m for m in o["$set"]["messages"]}
    return list(by_id.values())


def _parts(content: Any) -> list[Obj]:
    """Content as a list of parts (Gemini CLI stores a string, one part or a list)."""
    listed = content if isinstance(content, list) else [content] if content else []
    return [{"text": p} if isinstance(p, str) else p for p in listed]


def counts(objs: list[Obj]) -> dict[str, int]:
    calls: list[str] = []
    answered: set[str] = set()
    texts = 0
    for m in loaded(objs):
        parts = _parts(m["content"])
        if m["type"] == "gemini":
            listed = [c["id"] for c in m.get("toolCalls", [])]
            calls += listed + [p["functionCall"]["id"] for p in parts if "functionCall" in p
                               and p["functionCall"]["id"] not in listed]
            answered |= {c["id"] for c in m.get("toolCalls", []) if c.get("result")}
            texts += sum("text" in p and not p.get("thought") for p in parts)
        elif m["type"] == "user":
            said = "".join(p.get("text", "[part]") for p in parts).strip()
            if said[:1] in ("/", "?"):
                continue  # a command: not sent
            answered |= {p["functionResponse"]["id"] for p in parts if "functionResponse" in p}
            texts += sum("text" in p for p in parts)
    return {"calls": len(calls), "results": len(answered & set(calls)),
            "pending": len(set(calls) - answered), "texts": texts}


def sessionctx_counts(path: Path) -> dict[str, int]:
    return context_counts(read_context(path, "gemini-cli-jsonl"))


def write(tmp_path: Path, objs: list[Obj], name: str = "session-x.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(o, separators=(",", ":")) + "\n" for o in objs))
    return path


@pytest.mark.parametrize("path", [CHAT, HISTORY], ids=lambda p: p.name)
def test_the_rows_read_as_gemini_cli_loads_them(path: Path) -> None:
    want = counts(rows(path))
    assert want["pending"] == 0 and want["calls"] > 0
    assert sessionctx_counts(path) == want


def test_detected_beside_the_json_format(tmp_path: Path) -> None:
    assert detect(CHAT.read_bytes()) == "gemini-cli-jsonl"
    legacy = json.loads((FIXTURES / "gemini-cli" / "tool-result-cancelled.json").read_text())
    assert read_input(str(FIXTURES / "gemini-cli" / "tool-result-cancelled.json")).format == \
        "gemini-cli"
    assert legacy  # the JSON format still reads as before
    out = CliRunner().invoke(main, ["check", "--from", "gemini-cli-jsonl",
                                    str(FIXTURES / "pi" / "large-session.jsonl")])
    assert out.exit_code == 2 and "not a gemini-cli-jsonl file" in out.output


def test_a_rewind_drops_the_message_and_all_after_it() -> None:
    ctx = build_context(read_input(str(CHAT)).records)
    said = [b.get("text") for m in ctx.messages for b in m["content"] if b["type"] == "text"]
    assert "Now rewrite the README" not in said and "Here is a new README ..." not in said
    assert "Instead, count the lines of src/app.py" in said


def test_a_rewind_to_an_unknown_id_clears_everything(tmp_path: Path) -> None:
    objs = rows(CHAT)
    at = next(i for i, o in enumerate(objs) if "$rewindTo" in o)
    objs[at] = {"$rewindTo": "no-such-message"}
    path = write(tmp_path, objs)
    assert sessionctx_counts(path) == counts(objs)
    first = build_context(read_input(str(path)).records).messages[0]
    assert first["content"][0]["text"] == "Instead, count the lines of src/app.py"


def test_a_later_row_replaces_the_message_where_it_stood() -> None:
    ctx = build_context(read_input(str(CHAT)).records)
    first_calls = [b["id"] for b in ctx.messages[1]["content"] if b["type"] == "toolCall"]
    assert len(first_calls) == 2 and ctx.messages[2]["role"] == "toolResult"
    assert ctx.messages[1]["model"] == "gemini-2.5-pro"


def test_a_history_rewrite_holds_the_calls_once_with_their_own_responses() -> None:
    ctx = build_context(read_input(str(HISTORY)).records)
    results = {m["toolCallId"]: m["content"][0]["text"] for m in ctx.messages
               if m["role"] == "toolResult"}
    assert len(results) == 3
    assert results["read_file-1764496980001-1b2c3d4e5f6a7"] == "# app\nPrints a greeting.\n"
    assert "glob-1764497700000-4e5f6a7b8c9d0" in results


@pytest.mark.parametrize("path", [CHAT, HISTORY], ids=lambda p: p.name)
def test_every_provider_takes_the_body(path: Path) -> None:
    ctx = build_context(read_input(str(path)).records)
    accepted_bodies(ctx)


@pytest.mark.parametrize("path", [CHAT, HISTORY], ids=lambda p: p.name)
def test_repair_leaves_an_answered_chat_byte_identical(path: Path) -> None:
    plan = plan_repair(path.read_bytes(), str(path))
    assert plan.fixes == [] and plan.after == plan.before


def _ended_mid_call(objs: list[Obj]) -> list[Obj]:
    """The chat as it stands when Gemini CLI stopped while the last read_file ran: the
    message's last row holds the call with no result."""
    at = next(i for i, o in enumerate(objs) if o.get("id", "").startswith("d0a5"))
    last = json.loads(json.dumps(objs[at]))
    del last["toolCalls"][0]["result"], last["toolCalls"][0]["resultDisplay"]
    last["toolCalls"][0]["status"] = "executing"
    return [*objs[:at], last]


def test_repair_takes_out_the_unanswered_call_row_by_row(tmp_path: Path) -> None:
    objs = _ended_mid_call(rows(CHAT))
    path = write(tmp_path, objs)
    want = counts(objs)
    assert want["pending"] == 1 and sessionctx_counts(path) == want
    before = path.read_bytes().splitlines()
    done = repair(str(path), backup=False, note_unpaired=True)
    assert done.written and [p.name for p in done.pending_calls] == ["read_file"]
    after = path.read_bytes().splitlines()
    assert after[:-1] == before[:-1]  # every other row byte for byte; the emptied one goes
    assert json.loads(after[-1])["type"] == "user"  # the note, where the message was
    assert "interrupted" in json.loads(after[-1])["content"][0]["text"]
    assert counts([json.loads(x) for x in after])["pending"] == 0
    assert sessionctx_counts(path)["pending"] == 0


def test_repair_in_a_history_rewrite_edits_that_row(tmp_path: Path) -> None:
    objs = rows(HISTORY)
    at = next(i for i, o in enumerate(objs) if "messages" in o.get("$set", {}))
    answer = objs[at]["$set"]["messages"].pop()  # the glob call's response
    assert "functionResponse" in answer["content"][0]
    path = write(tmp_path, objs)
    assert counts(objs)["pending"] == 1 and sessionctx_counts(path) == counts(objs)
    done = repair(str(path), backup=False)
    assert done.written and sessionctx_counts(path)["pending"] == 0
    lines = path.read_bytes().splitlines()
    assert len(lines) == len(objs)
    repaired = json.loads(lines[at])["$set"]["messages"]
    assert all("functionCall" not in p for m in repaired for p in m["content"]
               if isinstance(m["content"], list) and m["type"] == "gemini"
               and m["id"].startswith("a3d8"))


RECORDED = DIR / "recorded-0.61.0-tools.jsonl"


def test_results_content_and_commands_in_every_shape_gemini_cli_stores(tmp_path: Path
                                                                      ) -> None:
    # the recorded first run, each row kept in a shape Gemini CLI's types allow and its
    # resume (`convertSessionToClientHistory`) reads: a call's result as text or as one
    # part, content as a string, thoughts as parts of the content, and a command the user
    # typed, which Gemini CLI does not send
    objs = rows(RECORDED)[:16]
    reply = objs[6]  # the first reply's final row: two calls, each with its response
    first, second = reply["toolCalls"]
    first["result"] = first["result"][0]["functionResponse"]["response"]["output"]
    second["result"] = second["result"][0]
    objs[11]["content"] = [{"text": "The file is missing.", "thought": True,
                            "thoughtSignature": "c2ln"}, {"text": "Reading it failed."}]
    objs[11]["thoughts"] = [{"subject": "Missing", "description": "The file is missing.",
                             "timestamp": objs[11]["timestamp"]}]
    objs.insert(3, {**objs[2], "id": "2f1e0d9c-8b7a-4c6d-9e5f-4a3b2c1d0e9f",
                    "content": "/stats"})
    want = counts(objs)
    assert want["pending"] == 0 and want["results"] == want["calls"] == 3
    path = write(tmp_path, objs)
    assert sessionctx_counts(path) == want
    ctx = build_context(read_input(str(path)).records)
    results = {m["toolCallId"]: m["content"][0]["text"] for m in ctx.messages
               if m["role"] == "toolResult"}
    assert results[first["id"]] == 'def main():\n    print("hi")\n'
    assert results[second["id"]].startswith("<untrusted_context>\nOutput: 2 app.py")
    said = json.dumps(ctx.messages)
    assert "/stats" not in said
    reply_blocks = next(m["content"] for m in ctx.messages if m["role"] == "assistant" and any(
        b.get("text") == "Reading it failed." for b in m["content"]))
    assert [b["type"] for b in reply_blocks] == ["thinking", "text", "toolCall"]
    accepted_bodies(ctx)
