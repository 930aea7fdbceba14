"""The agents' recorded sessions (fixtures/SOURCES.md) and the variants the tests build from
them, each with the counts worked out from its raw file: calls, results, pending calls, texts.
Shared by tests/test_formats_recorded.py; the counters are each format's own test's."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sessionctx.context import Context, build_context
from sessionctx.inputs import read_input
from tests.conftest import FIXTURES
from tests.test_formats_copilot_cli import events
from tests.test_formats_gemini_cli_jsonl import rows

Obj = dict[str, Any]
GEMINI = FIXTURES / "gemini-cli-jsonl"
GEMINI_TOOLS = GEMINI / "recorded-0.61.0-tools.jsonl"
GEMINI_KILLED = GEMINI / "recorded-0.61.0-killed-call.jsonl"
GEMINI_RESUMED = GEMINI / "recorded-0.61.0-killed-then-resumed.jsonl"
OPENCODE = FIXTURES / "opencode"
OPENCODE_DB = OPENCODE / "recorded-1.18.33-tools.db"
OPENCODE_EXPORT = OPENCODE / "recorded-1.18.33-tools.export.json"
OPENCODE_KILLED = OPENCODE / "recorded-1.18.33-killed-call.db"
COPILOT = FIXTURES / "copilot-cli"
COPILOT_TOOLS = COPILOT / "recorded-1.0.102-tools.jsonl"
COPILOT_KILLED = COPILOT / "recorded-1.0.102-killed-call.jsonl"
COPILOT_RESUMED = COPILOT / "recorded-1.0.102-killed-then-resumed.jsonl"
CLINE = FIXTURES / "cline"
CLINE_TOOLS = CLINE / "recorded-3.0.65-tools.messages.json"
CLINE_KILLED = CLINE / "recorded-3.0.65-killed-call.messages.json"
CLINE_INTERRUPTED = CLINE / "recorded-3.0.65-interrupted-call.messages.json"
GOOSE = FIXTURES / "goose"
GOOSE_TOOLS = GOOSE / "recorded-1.52.0-tools.db"
GOOSE_KILLED = GOOSE / "recorded-1.52.0-killed-call.db"
GOOSE_RESUMED = GOOSE / "recorded-1.52.0-killed-then-resumed.db"


def write_jsonl(path: Path, objs: list[Obj]) -> Path:
    path.write_text("".join(json.dumps(o, separators=(",", ":")) + "\n" for o in objs))
    return path


# -- Gemini CLI --------------------------------------------------------------------------------

def _headers(objs: list[Obj]) -> list[int]:
    return [i for i, o in enumerate(objs) if "sessionId" in o and "projectHash" in o]


def gemini_before_resume(objs: list[Obj]) -> list[Obj]:
    """The chat as the first run left it: every row before the resume's header."""
    return objs[:_headers(objs)[1]]


def gemini_call_unanswered(objs: list[Obj]) -> list[Obj]:
    """The first run cut where its last call (the failed read) ran: its message's last row
    holds the call with no result yet, and nothing follows."""
    first = gemini_before_resume(objs)
    at = max(i for i, o in enumerate(first) if o.get("toolCalls"))
    last = json.loads(json.dumps(first[at]))
    for call in last["toolCalls"]:
        call.pop("result", None)
        call["status"] = "executing"
    return [*first[:at], last]


GEMINI_CASES: dict[str, tuple[Path, Callable[[list[Obj]], list[Obj]], dict[str, int]]] = {
    "tools, resumed": (GEMINI_TOOLS, list,
                       {"calls": 3, "results": 3, "pending": 0, "texts": 3}),
    "tools, before the resume": (GEMINI_TOOLS, gemini_before_resume,
                                 {"calls": 3, "results": 3, "pending": 0, "texts": 3}),
    "a call unanswered": (GEMINI_TOOLS, gemini_call_unanswered,
                          {"calls": 3, "results": 2, "pending": 1, "texts": 2}),
    "killed mid-call": (GEMINI_KILLED, list,
                        {"calls": 0, "results": 0, "pending": 0, "texts": 2}),
    "killed, then resumed": (GEMINI_RESUMED, list,
                             {"calls": 0, "results": 0, "pending": 0, "texts": 4}),
}


# -- opencode ----------------------------------------------------------------------------------

def opencode_stored(db: Path) -> list[tuple[Obj, list[Obj]]]:
    """The store's one session's messages with their parts, straight from its tables."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        [(sid,)] = conn.execute("SELECT id FROM session").fetchall()
        msgs = conn.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY id",
                            (sid,)).fetchall()
        parts = conn.execute("SELECT message_id, data FROM part WHERE session_id = ? "
                             "ORDER BY id", (sid,)).fetchall()
    finally:
        conn.close()
    return [({"id": mid, **json.loads(data)}, [json.loads(p) for m, p in parts if m == mid])
            for mid, data in msgs]


def opencode_edited(tmp_path: Path, edit: Callable[[Obj], Obj | None]) -> Path:
    """A copy of the recorded store with each tool part passed through `edit` (None: kept)."""
    path = tmp_path / "opencode.db"
    shutil.copyfile(OPENCODE_DB, path)
    conn = sqlite3.connect(path)
    for pid, data in conn.execute("SELECT id, data FROM part").fetchall():
        part = json.loads(data)
        if part.get("type") == "tool" and (new := edit(part)) is not None:
            conn.execute("UPDATE part SET data = ? WHERE id = ?", (json.dumps(new), pid))
    conn.commit()
    conn.close()
    return path


def _running(part: Obj) -> Obj | None:
    if part["callID"] != "call_02":
        return None
    state = part["state"]
    return {**part, "state": {"status": "running", "input": state["input"],
                              "time": {"start": state["time"]["start"]}}}


OPENCODE_CASES: dict[str, tuple[Callable[[Path], Path], dict[str, int]]] = {
    "tools store": (lambda _: OPENCODE_DB,
                    {"calls": 4, "results": 4, "pending": 0, "texts": 4}),
    "killed mid-call": (lambda _: OPENCODE_KILLED,
                        {"calls": 1, "results": 0, "pending": 1, "texts": 1}),
    "a call left running": (lambda tmp: opencode_edited(tmp, _running),
                            {"calls": 4, "results": 3, "pending": 1, "texts": 4}),
}


# -- Copilot CLI -------------------------------------------------------------------------------

def copilot_before_resume(evs: list[Obj]) -> list[Obj]:
    return evs[:next(i for i, e in enumerate(evs) if e["type"] == "session.resume")]


def copilot_result_lost(evs: list[Obj]) -> list[Obj]:
    """The shell call's completion event gone, as if the process died before writing it."""
    return [e for e in evs if not (e["type"] == "tool.execution_complete"
                                   and e["data"]["toolCallId"] == "call_02")]


COPILOT_CASES: dict[str, tuple[Path, Callable[[list[Obj]], list[Obj]], dict[str, int]]] = {
    "tools, resumed": (COPILOT_TOOLS, list, {"calls": 4, "results": 4, "pending": 0,
                                             "orphans": 0, "texts": 4}),
    "tools, before the resume": (COPILOT_TOOLS, copilot_before_resume,
                                 {"calls": 3, "results": 3, "pending": 0, "orphans": 0,
                                  "texts": 2}),
    "a result lost": (COPILOT_TOOLS, copilot_result_lost,
                      {"calls": 4, "results": 3, "pending": 1, "orphans": 0, "texts": 4}),
    "killed mid-call": (COPILOT_KILLED, list, {"calls": 1, "results": 0, "pending": 1,
                                               "orphans": 0, "texts": 1}),
}


# -- Cline -------------------------------------------------------------------------------------

def cline_counts(doc: Obj) -> dict[str, int]:
    """Calls, their results (wherever they stand after the call), pending calls and texts,
    from the raw messages: Cline 3 writes a user message per result."""
    calls: list[str] = []
    answered: set[str] = set()
    texts = 0
    for m in doc["messages"]:
        for b in m["content"]:
            if b["type"] == "tool_use":
                calls.append(b["id"])
            elif b["type"] == "tool_result" and b["tool_use_id"] in calls:
                answered.add(b["tool_use_id"])
            texts += b["type"] == "text"
    return {"calls": len(calls), "results": len(answered),
            "pending": len(set(calls) - answered), "texts": texts}


def cline_merged(doc: Obj) -> Obj:
    """The results Cline split over two user messages, in one (as the Messages API has them)."""
    out: list[Obj] = []
    for m in doc["messages"]:
        if out and m["role"] == out[-1]["role"] == "user":
            out[-1] = {**out[-1], "content": out[-1]["content"] + m["content"]}
        else:
            out.append(m)
    return {**doc, "messages": out}


def cline_result_lost(doc: Obj) -> Obj:
    """The second of the split results gone, as if the process died before writing it."""
    return {**doc, "messages": [m for m in doc["messages"] if not any(
        b.get("tool_use_id") == "call_02" for b in m["content"])]}


CLINE_CASES: dict[str, tuple[Path, Callable[[Obj], Obj], dict[str, int]]] = {
    "tools": (CLINE_TOOLS, dict, {"calls": 3, "results": 3, "pending": 0, "texts": 2}),
    "results merged": (CLINE_TOOLS, cline_merged,
                       {"calls": 3, "results": 3, "pending": 0, "texts": 2}),
    "a result lost": (CLINE_TOOLS, cline_result_lost,
                      {"calls": 3, "results": 2, "pending": 1, "texts": 2}),
    "killed mid-call": (CLINE_KILLED, dict, {"calls": 1, "results": 0, "pending": 1,
                                             "texts": 1}),
    "interrupted mid-call": (CLINE_INTERRUPTED, dict, {"calls": 1, "results": 1,
                                                       "pending": 0, "texts": 1}),
}


def cline_file(tmp_path: Path, case: str) -> Path:
    source, variant, _ = CLINE_CASES[case]
    path = tmp_path / f"{case.replace(' ', '-')}.messages.json"
    path.write_text(json.dumps(variant(json.loads(source.read_text())), indent=2))
    return path


# -- Goose -------------------------------------------------------------------------------------

def goose_stored(db: Path) -> list[Obj]:
    """The store's one session's messages, straight from its `messages` table, in the shape of
    Goose's messages (`role`, `content`, `metadata`)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        found = conn.execute("SELECT role, content_json, metadata_json FROM messages "
                             "ORDER BY id").fetchall()
    finally:
        conn.close()
    return [{"role": role, "content": json.loads(content),
             "metadata": json.loads(meta) if meta else {}} for role, content, meta in found]


def goose_edited(tmp_path: Path, edit: Callable[[list[tuple[int, Obj]]], dict[int, Obj | None]],
                 source: Path = GOOSE_TOOLS) -> Path:
    """A copy of a recorded store with the message rows `edit` names replaced (None: deleted);
    `edit` gets each row's id and content list."""
    path = tmp_path / "sessions.db"
    shutil.copyfile(source, path)
    conn = sqlite3.connect(path)
    found = [(i, {"content": json.loads(c)}) for i, c in
             conn.execute("SELECT id, content_json FROM messages ORDER BY id")]
    for row, new in edit(found).items():
        if new is None:
            conn.execute("DELETE FROM messages WHERE id = ?", (row,))
        else:
            conn.execute("UPDATE messages SET content_json = ? WHERE id = ?",
                         (json.dumps(new["content"]), row))
    conn.commit()
    conn.close()
    return path


def _response_of(rows: list[tuple[int, Obj]], call: str) -> int:
    return next(i for i, m in rows if any(c.get("type") == "toolResponse" and c["id"] == call
                                          for c in m["content"]))


def goose_result_lost(rows: list[tuple[int, Obj]]) -> dict[int, Obj | None]:
    """The shell call's response row gone, as if Goose died before writing it."""
    return {_response_of(rows, "call_02"): None}


def goose_cut_after_call(rows: list[tuple[int, Obj]]) -> dict[int, Obj | None]:
    """The first run cut right after the failed read's request row: its response and all
    after it gone."""
    at = _response_of(rows, "call_03")
    return {i: None for i, _ in rows if i >= at}


def goose_interrupted(rows: list[tuple[int, Obj]]) -> dict[int, Obj | None]:
    """The failed read's response replaced by the one Goose's CLI writes for a call it was
    interrupted in (goose-cli's session: an error "Interrupted by the user to make a
    correction")."""
    return {_response_of(rows, "call_03"): {"content": [
        {"type": "toolResponse", "id": "call_03", "toolResult": {
            "status": "error", "error": "Interrupted by the user to make a correction"}}]}}


def goose_frontend_call(rows: list[tuple[int, Obj]]) -> dict[int, Obj | None]:
    """The listing call as the desktop app stores a call it runs itself (a
    `frontendToolRequest`, which Goose sends to the model as a call all the same)."""
    at = next(i for i, m in rows if any(c.get("id") == "call_04" and c["type"] == "toolRequest"
                                        for c in m["content"]))
    [(_, message)] = [r for r in rows if r[0] == at]
    return {at: {"content": [{**c, "type": "frontendToolRequest"} for c in message["content"]]}}


GOOSE_CASES: dict[str, tuple[Callable[[Path], Path], dict[str, int]]] = {
    "tools store": (lambda _: GOOSE_TOOLS,
                    {"calls": 4, "results": 4, "pending": 0, "texts": 6}),
    "a frontend call": (lambda tmp: goose_edited(tmp, goose_frontend_call),
                        {"calls": 4, "results": 4, "pending": 0, "texts": 6}),
    "a result lost": (lambda tmp: goose_edited(tmp, goose_result_lost),
                      {"calls": 4, "results": 3, "pending": 1, "texts": 6}),
    "cut after a call": (lambda tmp: goose_edited(tmp, goose_cut_after_call),
                         {"calls": 3, "results": 2, "pending": 1, "texts": 2}),
    "killed mid-call": (lambda _: GOOSE_KILLED,
                        {"calls": 0, "results": 0, "pending": 0, "texts": 2}),
    "killed, then resumed": (lambda _: GOOSE_RESUMED,
                             {"calls": 0, "results": 0, "pending": 0, "texts": 5}),
}


# -- every recording and variant ---------------------------------------------------------------

def all_cases(tmp_path: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for name, (source, variant, _) in GEMINI_CASES.items():
        out[f"gemini {name}"] = write_jsonl(tmp_path / f"g{len(out)}.jsonl",
                                            variant(rows(source)))
    for name, (make, _) in OPENCODE_CASES.items():
        folder = tmp_path / f"o{len(out)}"
        folder.mkdir()
        out[f"opencode {name}"] = make(folder)
    out["opencode export"] = OPENCODE_EXPORT
    for name, (source, variant, _) in COPILOT_CASES.items():
        out[f"copilot {name}"] = write_jsonl(tmp_path / f"c{len(out)}.jsonl",
                                             variant(events(source)))
    for name in CLINE_CASES:
        out[f"cline {name}"] = cline_file(tmp_path, name)
    for name, (make_store, _) in GOOSE_CASES.items():
        folder = tmp_path / f"s{len(out)}"
        folder.mkdir()
        out[f"goose {name}"] = make_store(folder)
    return out


def clean_context(path: Path) -> Context:
    result = read_input(str(path))
    assert result.problems == []
    return build_context(result.records)


def goose_reused_id(rows: list[tuple[int, Obj]]) -> dict[int, Obj | None]:
    """The listing call of the second run and its response given the id of the first run's
    first call, as a model server that numbers its calls per reply ("call_01" each time)
    leaves them."""
    out: dict[int, Obj | None] = {}
    for i, message in rows:
        if any(c.get("id") == "call_04" for c in message["content"]):
            out[i] = {"content": [{**c, "id": "call_01"} if c.get("id") == "call_04" else c
                                  for c in message["content"]]}
    return out
