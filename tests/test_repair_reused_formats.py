"""A reused call id in a session stored as one JSON document (OpenAI chat, Anthropic and
Responses lists, Gemini CLI sessions), a Gemini CLI JSONL chat or a Copilot CLI events.jsonl:
`check` names it, `repair` renames the later call and the result answering it to `<id>_2`
wherever the file names them (every row that writes a Gemini CLI message, the events that
point at a Copilot CLI call), nothing else of the file changes, and a second repair changes
nothing. Each session is a real one with one of its pairs repeated."""

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
from tests.repair_helpers import assert_repaired, check_ok, repair_json, run
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


# -- copies and pointers: every place a format names the renamed call ---------------------------

def _renamed_file(tmp_path: Path, raw: bytes, fmt: str, old: str) -> tuple[bytes, str]:
    """`raw` repaired as a file: the report holds, the original is kept as the backup (the
    file replaced as a whole), only the id strings changed, a second repair changes
    nothing. The repaired bytes and the new id."""
    path = tmp_path / "session"
    path.write_bytes(raw)
    inode = path.stat().st_ino
    report = assert_repaired(path, raw, fmt) if not raw.lstrip().startswith(b"[") else \
        repair_json(path, "--from", fmt)[1]
    assert report["written"] and report["remaining"] == [], report
    # the original file itself is the backup; the repaired file replaced it whole
    assert Path(report["backup"]).read_bytes() == raw
    assert Path(report["backup"]).stat().st_ino == inode != path.stat().st_ino
    new = f"{old}_2"
    after = path.read_bytes()
    assert {c["detail"]["new"] for c in report["changes"]} == {new}
    assert after.replace(json.dumps(new).encode(), json.dumps(old).encode()) == raw
    assert repair(str(path), fmt).fixes == [] and path.read_bytes() == after
    return after, new


def _answered(after: bytes, fmt: str, old: str, new: str, text: str) -> None:
    """Read back: one call of each id, both answered, the later one by `text`."""
    ctx = _context(after, fmt)
    calls = [i for m in ctx.messages for i in call_ids(m)]
    assert calls.count(old) == 1 and calls.count(new) == 1
    assert ctx.pending_calls == [] and ctx.repairs == []
    pairs = dict(_pairs(after, fmt))
    assert text in pairs[new] and text not in pairs[old]
    accepted_bodies(ctx)


def _gemini_ids(obj: Any, out: dict[tuple[str, str], int]) -> None:
    """(call or response, id) -> how often the JSON value names it, at any depth."""
    if isinstance(obj, list):
        for v in obj:
            _gemini_ids(v, out)
    elif isinstance(obj, dict):
        for entry in obj.get("toolCalls") or [] if isinstance(obj.get("toolCalls"), list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                out[("call", entry["id"])] = out.get(("call", entry["id"]), 0) + 1
        for key, kind in (("functionCall", "call"), ("functionResponse", "response")):
            if isinstance(obj.get(key), dict) and isinstance(obj[key].get("id"), str):
                out[(kind, obj[key]["id"])] = out.get((kind, obj[key]["id"]), 0) + 1
        for v in obj.values():
            _gemini_ids(v, out)


def _gemini_counts(raw: bytes) -> list[dict[tuple[str, str], int]]:
    out = []
    for row in raw.split(b"\n"):
        counts: dict[tuple[str, str], int] = {}
        if row.strip():
            _gemini_ids(json.loads(row), counts)
        out.append(counts)
    return out


def test_gemini_rows_and_set_get_the_same_new_id(tmp_path: Path) -> None:
    # the recorded chat's first run, a turn that reads the missing file again under the id of
    # the first read (its message row, then the responses again as a user row, as Gemini CLI
    # writes them), then a resume: a new header and a `$set` of the conversation as Gemini
    # CLI rebuilds it from its history (calls and responses as parts), the one it loads
    rows = (FIXTURES / "gemini-cli-jsonl/recorded-0.61.0-tools.jsonl").read_bytes().split(b"\n")
    user = json.loads(rows[12])
    asked = {**user, "id": "0b9e6a52-3c1d-4f7a-9e2b-5d8c7a6f4e31", "content": [{"text": "again"}]}
    again = json.loads(rows[11])
    again["id"] = "7c2d9f14-8b3a-4e6d-a5c1-2f9e8d7b6a40"
    call = again["toolCalls"][0]
    old = call["id"]
    call["x_kept"] = {"by": "a newer Gemini CLI"}  # a field sessionctx does not know
    response = call["result"][0]["functionResponse"]
    response["response"] = {"output": "found now"}
    answer = {**user, "id": "4e1f8a37-2b6c-4d9e-8f0a-1c3b5d7e9f20",
              "content": [{"functionResponse": dict(response)}]}
    resumed = json.loads(rows[22])
    history = resumed["$set"]["messages"]
    history += [asked, {**{k: v for k, v in again.items() if k != "toolCalls"}, "content": [
        {"functionCall": {"id": old, "name": call["name"], "args": call["args"]}}]},
        {**answer, "id": f"{again['id']}_response"}, answer]
    added = [asked, again, answer, json.loads(rows[16]), resumed]
    raw = b"\n".join([*rows[:16], *(json.dumps(o, separators=(",", ":")).encode()
                                    for o in added)]) + b"\n"
    before = _gemini_counts(raw)
    after, new = _renamed_file(tmp_path, raw, "gemini-cli-jsonl", old)

    counts = _gemini_counts(after)
    # raw counts, from the written file: the row of the repeated call, the row of its
    # responses and the `$set` now name the new id, each as often as they named the old one
    # for it; the first read's rows keep the old id
    changed = {n + 1: c for n, c in enumerate(counts) if c != before[n]}
    assert changed == {18: {("call", new): 1, ("response", new): 1},
                       19: {("response", new): 1},
                       21: {**{k: v for k, v in before[20].items()},
                            ("call", old): 1, ("call", new): 1,
                            ("response", old): 2, ("response", new): 2}}
    assert sum(c.get(("call", old), 0) for c in counts) == 2  # the first read, as row and in $set
    stored = json.loads(after.split(b"\n")[17])
    assert stored["toolCalls"][0]["x_kept"] == {"by": "a newer Gemini CLI"}
    _answered(after, "gemini-cli-jsonl", old, new, "found now")


def _responses_calls(raw: bytes) -> dict[tuple[str, str], int]:
    """(item type, call_id) -> how many items of the JSON list have it."""
    out: dict[tuple[str, str], int] = {}
    for item in json.loads(raw):
        if isinstance(item.get("call_id"), str):
            key = (item["type"], item["call_id"])
            out[key] = out.get(key, 0) + 1
    return out


def test_responses_list_renames_the_later_call_and_output(tmp_path: Path) -> None:
    # the Responses items of a real Codex rollout as the JSON list it sent them in, with its
    # first call and output made again under the same call_id
    rollout = (FIXTURES / "codex/rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-"
               "c736db82a7c5.jsonl").read_bytes()
    items = [o["payload"] for o in (json.loads(line) for line in rollout.splitlines())
             if o.get("type") == "response_item"][:12]
    first = next(k for k, i in enumerate(items) if i["type"] == "function_call")
    call, output = json.loads(json.dumps(items[first:first + 2]))
    old = call["call_id"]
    call["x_kept"] = {"by": "the Agents SDK"}  # a field sessionctx does not know
    output["output"] = "listed again"
    items += [{"type": "message", "role": "user",
               "content": [{"type": "input_text", "text": "once more"}]}, call, output]
    raw = json.dumps(items, indent=2).encode() + b"\n"
    before = _responses_calls(raw)
    after, new = _renamed_file(tmp_path, raw, "openai-responses", old)

    # raw counts, from the written file: the later call and its output hold the new id
    counts = _responses_calls(after)
    assert counts[("function_call", new)] == counts[("function_call_output", new)] == 1
    assert counts[("function_call", old)] == before[("function_call", old)] - 1 == 1
    assert counts[("function_call_output", old)] == 1
    stored = json.loads(after)
    assert stored[-2]["call_id"] == new and stored[-2]["x_kept"] == {"by": "the Agents SDK"}
    _answered(after, "openai-responses", old, new, "listed again")


def _copilot_pointers(raw: bytes) -> dict[int, dict[str, str]]:
    """Line -> the call ids an event names (its request ids, `toolCallId`,
    `parentToolCallId`)."""
    out = {}
    for n, line in enumerate(raw.splitlines(), 1):
        data = json.loads(line)["data"]
        named = {k: data[k] for k in ("toolCallId", "parentToolCallId") if k in data}
        named.update({f"request {k}": q["toolCallId"]
                      for k, q in enumerate(data.get("toolRequests") or [])})
        out[n] = named
    return out


def test_copilot_sub_agent_events_point_at_the_renamed_call(tmp_path: Path) -> None:
    # the task call whose sub-agent runs under it reuses the id of the first turn's call
    raw = (FIXTURES / "copilot-cli/events.jsonl").read_bytes().replace(
        b'"toolu_vrtx_01Bash"', b'"call_Task01"')
    before = _copilot_pointers(raw)
    after, new = _renamed_file(tmp_path, raw, "copilot-cli", "call_Task01")

    # raw counts, from the written file: the request (line 17), its start and result, the
    # sub-agent's start and end and every event of the sub-agent point at the new id; the
    # sub-agent's own call keeps its id; the first turn's call keeps the old one
    now = _copilot_pointers(after)
    changed = {n: {k: v for k, v in named.items() if v != before[n][k]}
               for n, named in now.items() if named != before[n]}
    assert changed == {17: {"request 1": new}, 20: {"toolCallId": new},
                       21: {"toolCallId": new}, 22: {"parentToolCallId": new},
                       23: {"parentToolCallId": new}, 24: {"parentToolCallId": new},
                       25: {"parentToolCallId": new}, 26: {"toolCallId": new},
                       27: {"toolCallId": new}}
    assert now[23]["toolCallId"] == "toolu_vrtx_01Sub"
    started = json.loads(after.splitlines()[20])  # fields sessionctx does not read survive
    assert started["data"]["agentDisplayName"] == "Explore"
    assert [n for n, named in now.items() if "call_Task01" in named.values()] == [5, 6, 9]
    _answered(after, "copilot-cli", "call_Task01", new, "one target")
    ctx = _context(after, "copilot-cli")
    assert "toolu_vrtx_01Sub" not in [i for m in ctx.messages for i in call_ids(m)]
