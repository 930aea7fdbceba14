"""opencode sessions: its storage folder (session, message and part files), its opencode.db
store and the `opencode export` document, read, checked and built for every provider. The
fixture is the export document; the storage folder and the store are laid out from it here as
opencode writes them, and counts are worked out from the raw message and part objects."""

from __future__ import annotations

import base64
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sessionctx.context import build_context
from sessionctx.formats.detect import decode_document, detect
from sessionctx.inputs import read_input, read_raw
from sessionctx.providers import BuildRequestOptions, build_request, validate
from sessionctx.writeback import plan_repair
from sessionctx.writeback.plan import RepairError
from tests.conftest import FIXTURES
from tests.format_counts import accepted_bodies, context_counts, read_context

EXPORT = FIXTURES / "opencode" / "export.json"
Obj = dict[str, Any]

# The tables opencode 1.2 keeps sessions in (packages/opencode/src/session/*.sql.ts): each
# object in `data`, its ids in columns.
SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT,
    slug TEXT NOT NULL, directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
"""


def stored() -> tuple[Obj, list[tuple[Obj, list[Obj]]]]:
    """The session's info and its messages with their parts."""
    doc = json.loads(EXPORT.read_text())
    return doc["info"], [(m["info"], m["parts"]) for m in doc["messages"]]


def storage(tmp_path: Path) -> Path:
    """The storage folder opencode before 1.2 writes: one file per session, message, part."""
    info, msgs = stored()
    root = tmp_path / "storage"

    def put(path: Path, obj: Obj) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(obj, indent=2))

    put(root / "session" / info["projectID"] / f"{info['id']}.json", info)
    for msg, parts in msgs:
        put(root / "message" / info["id"] / f"{msg['id']}.json", msg)
        for part in parts:
            put(root / "part" / msg["id"] / f"{part['id']}.json", part)
    return root


def session_file(tmp_path: Path) -> Path:
    return next((storage(tmp_path) / "session").glob("*/*.json"))


def counts(msgs: list[tuple[Obj, list[Obj]]]) -> dict[str, int]:
    sent = [(m, ps) for m, ps in msgs if not m.get("error")]  # the fixture's failed reply
    tools = [p["state"]["status"] for m, ps in sent for p in ps if p["type"] == "tool"]
    return {"calls": len(tools), "results": sum(s in ("completed", "error") for s in tools),
            "pending": sum(s in ("pending", "running") for s in tools),
            "texts": sum(p["type"] == "text" and not p.get("ignored")
                         for _, ps in sent for p in ps)}


def read_counts(path: Path | str) -> dict[str, int]:
    return context_counts(read_context(path, "opencode"))


def store(tmp_path: Path) -> Path:
    """An opencode.db holding the fixture's session, an older one and a later sub-agent's."""
    info, msgs = stored()
    path = tmp_path / "opencode.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    t = info["time"]["updated"]
    for sid, parent, updated in (("ses_old", None, t - 1), (info["id"], None, t),
                                 ("ses_child", info["id"], t + 1)):
        conn.execute("INSERT INTO session VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (sid, info["projectID"], parent, "s", info["directory"], "t", "1.2.0",
                      updated, updated))
    for msg, parts in msgs:
        data = {k: v for k, v in msg.items() if k not in ("id", "sessionID")}
        conn.execute("INSERT INTO message VALUES (?, ?, 0, 0, ?)",
                     (msg["id"], info["id"], json.dumps(data)))
        for p in parts:
            body = {k: v for k, v in p.items() if k not in ("id", "sessionID", "messageID")}
            conn.execute("INSERT INTO part VALUES (?, ?, ?, 0, 0, ?)",
                         (p["id"], msg["id"], info["id"], json.dumps(body)))
    conn.execute("INSERT INTO message VALUES ('msg_child', 'ses_child', 0, 0, ?)",
                 (json.dumps({"role": "user", "time": {"created": 0}}),))
    conn.execute("INSERT INTO part VALUES ('prt_child', 'msg_child', 'ses_child', 0, 0, ?)",
                 (json.dumps({"type": "text", "text": "a sub-agent's prompt"}),))
    conn.commit()
    conn.close()
    return path


def test_the_storage_folder_reads_with_independent_counts(tmp_path: Path) -> None:
    want = counts(stored()[1])
    assert want == {"calls": 4, "results": 3, "pending": 1, "texts": 7}
    session = session_file(tmp_path)
    assert read_counts(session) == want
    assert detect(session.read_bytes(), decode_document(session.read_bytes())) == "opencode"


@pytest.mark.parametrize("kind", ["store", "export"])
def test_the_store_and_the_export_read_the_same(tmp_path: Path, kind: str) -> None:
    path = store(tmp_path) if kind == "store" else EXPORT
    before = path.read_bytes()
    assert read_counts(path) == counts(stored()[1])
    assert path.read_bytes() == before
    if kind == "store":
        note = json.dumps(read_input(str(path)).records[0].data)
        assert "ses_old" in note and "ses_child" in note
        assert "sub-agent's prompt" not in json.dumps(build_context(
            read_input(str(path)).records).messages)


def test_steps_split_replies_and_the_interrupted_call_is_pending() -> None:
    ctx = build_context(read_input(str(EXPORT)).records)
    assert [c.name for c in ctx.pending_calls] == ["edit"]
    roles = [m["role"] for m in ctx.messages]
    assert roles[:7] == ["user", "assistant", "toolResult", "assistant", "toolResult",
                         "toolResult", "assistant"]
    failed = next(m for m in ctx.messages if m.get("toolCallId") == "toolu_03Grep")
    assert failed["isError"] and "ripgrep" in failed["content"][0]["text"]
    text = json.dumps(ctx.messages)
    assert "hidden note" not in text and "Overloaded" not in text


@pytest.mark.parametrize("kind", ["folder", "store"])
def test_every_provider_takes_the_body(tmp_path: Path, kind: str) -> None:
    path = session_file(tmp_path) if kind == "folder" else store(tmp_path)
    ctx = build_context(read_input(str(path)).records)
    accepted_bodies(ctx)


def test_check_auto_reads_the_storage_folder_and_the_store(tmp_path: Path) -> None:
    for target in (storage(tmp_path), store(tmp_path)):
        out = subprocess.run([sys.executable, "-m", "sessionctx", "check", str(target),
                              "--from", "auto", "--json"], capture_output=True, text=True)
        assert out.returncode == 1, out.stderr  # the pending call
        assert "opencode" in out.stdout and "toolu_04Edit" in out.stdout


def test_repair_says_it_does_not_write_opencode(tmp_path: Path) -> None:
    for path in (session_file(tmp_path), EXPORT, store(tmp_path)):
        with pytest.raises(RepairError, match="repair does not write opencode"):
            plan_repair(path.read_bytes(), str(path))


def test_a_session_file_without_its_folder_says_so(tmp_path: Path) -> None:
    result = read_raw(session_file(tmp_path).read_bytes(), None)
    assert result.fatal and "no storage folder" in json.dumps(
        [p.message for p in result.problems])


def test_after_a_compaction_only_what_follows_it_is_sent(tmp_path: Path) -> None:
    """opencode's compaction: a user message with a `compaction` part, the summary reply
    (`summary: true`) answering it, then the conversation goes on from there."""
    info, msgs = stored()
    sid = info["id"]

    def part(mid: str, k: int, body: Obj) -> Obj:
        return {"id": f"prt_zz{mid[-4:]}{k:02d}", "sessionID": sid, "messageID": mid, **body}

    ask = {"id": "msg_zz0001", "sessionID": sid, "role": "user", "time": {"created": 1}}
    summary = {"id": "msg_zz0002", "sessionID": sid, "role": "assistant", "parentID": "msg_zz0001",
               "summary": True, "finish": "stop", "modelID": "m", "providerID": "anthropic",
               "time": {"created": 2, "completed": 3}}
    after = {"id": "msg_zz0003", "sessionID": sid, "role": "user", "time": {"created": 4}}
    added = [(ask, [part("msg_zz0001", 0, {"type": "compaction", "auto": True})]),
             (summary, [part("msg_zz0002", 0, {"type": "text", "text": "We fixed the parser."})]),
             (after, [part("msg_zz0003", 0, {"type": "text", "text": "Now the docs."})])]
    path = tmp_path / "compacted.json"
    path.write_text(json.dumps({"info": info, "messages": [
        {"info": m, "parts": ps} for m, ps in msgs + added]}))
    ctx = build_context(read_input(str(path)).records)
    texts = [b["text"] for m in ctx.messages for b in m["content"] if b["type"] == "text"]
    assert texts == ["What did we do so far?", "We fixed the parser.", "Now the docs."]
    assert ctx.pending_calls == []  # the interrupted call was before the compaction


@pytest.mark.parametrize("kept", ["first", "unknown"])
def test_a_compaction_that_kept_a_tail_sends_it_after_the_summary(tmp_path: Path,
                                                                  kept: str) -> None:
    """opencode 1.18's `filterCompacted`: a compaction part naming `tail_start_id` keeps the
    messages from that one on, sent after the summary reply; a tail it cannot find keeps
    the whole session in order."""
    info, msgs = stored()
    sid = info["id"]
    tail = msgs[0][0]["id"] if kept == "first" else "msg_gone"
    ask = {"id": "msg_zz0001", "sessionID": sid, "role": "user", "time": {"created": 1}}
    summary = {"id": "msg_zz0002", "sessionID": sid, "role": "assistant", "parentID": "msg_zz0001",
               "summary": True, "finish": "stop", "modelID": "m", "providerID": "anthropic",
               "time": {"created": 2, "completed": 3}}
    after = {"id": "msg_zz0003", "sessionID": sid, "role": "user", "time": {"created": 4}}
    added = [(ask, [{"id": "prt_zz1", "type": "compaction", "auto": True,
                     "tail_start_id": tail}]),
             (summary, [{"id": "prt_zz2", "type": "text", "text": "We fixed the parser."}]),
             (after, [{"id": "prt_zz3", "type": "text", "text": "Now the docs."}])]
    path = tmp_path / "compacted.json"
    path.write_text(json.dumps({"info": info, "messages": [
        {"info": m, "parts": ps} for m, ps in msgs + added]}))
    ctx = build_context(read_input(str(path)).records)
    texts = [b["text"] for m in ctx.messages for b in m["content"] if b["type"] == "text"]
    first = next(p["text"] for p in msgs[0][1] if p["type"] == "text")
    if kept == "first":
        assert texts[:2] == ["What did we do so far?", "We fixed the parser."]
        assert texts[2] == first
    else:
        assert texts[0] == first and texts[-3:] == [
            "What did we do so far?", "We fixed the parser.", "Now the docs."]
    assert texts[-1] == "Now the docs." and [c.name for c in ctx.pending_calls] == ["edit"]


def test_build_reads_a_storage_folder_of_one_session(tmp_path: Path) -> None:
    root = storage(tmp_path)
    assert read_counts(root) == counts(stored()[1])
    built = subprocess.run([sys.executable, "-m", "sessionctx", "build", str(root),
                            "--provider", "anthropic", "--placeholder-tools", "--quiet"],
                           capture_output=True,
                           text=True)
    assert built.returncode == 0, built.stderr
    assert validate(json.loads(built.stdout), "anthropic") == []
    info = stored()[0]
    other = root / "session" / info["projectID"] / "ses_other.json"
    other.write_text(json.dumps({**info, "id": "ses_other"}))
    result = read_input(str(root))
    assert result.fatal and "of 2 sessions: name one" in result.problems[0].message


def test_a_session_file_with_no_messages_beside_it_says_where_it_looked(tmp_path: Path) -> None:
    info = stored()[0]
    lone = tmp_path / "storage" / "session" / "p" / "ses_1.json"
    lone.parent.mkdir(parents=True)
    lone.write_text(json.dumps(info))
    result = read_input(str(lone))
    assert result.fatal and "no message of this session in" in json.dumps(
        [p.message for p in result.problems])


def _pdf() -> str:
    raw = ("%PDF-1.4\n2 0 obj << /Type /Pages /Count 1 >> endobj\n"
           "3 0 obj << /Type /Page /Parent 2 0 R >> endobj\n%%EOF\n")
    return base64.b64encode(raw.encode()).decode()


def with_pdfs() -> Obj:
    """The export with a PDF in each place opencode stores one (session/prompt.ts,
    tool/read.ts): a user message naming `spec.pdf` (its synthetic Read line, then the file
    read into a `data:` URL), a text file named the same way (sent as its synthetic text
    only), and a reply whose `read` call's result has the PDF attached."""
    doc: Obj = json.loads(EXPORT.read_text())
    sid = doc["info"]["id"]
    url = f"data:application/pdf;base64,{_pdf()}"

    def part(mid: str, k: int, body: Obj) -> Obj:
        return {"id": f"prt_{mid[4:]}{k:02d}", "sessionID": sid, "messageID": mid, **body}

    ask, reply = "msg_b1e6f2a30001Zr7q1YpL0cVb", "msg_b1e6f2a30002Zr7q1YpL0cVb"
    t = doc["messages"][-1]["info"]["time"]["created"] + 1000
    user_info = {**doc["messages"][0]["info"], "id": ask, "time": {"created": t}}
    reply_info = {**doc["messages"][1]["info"], "id": reply, "parentID": ask,
                  "time": {"created": t + 1, "completed": t + 2}}
    source = {"type": "file", "path": "spec.pdf",
              "text": {"value": "@spec.pdf", "start": 10, "end": 19}}
    doc["messages"] += [
        {"info": user_info, "parts": [
            part(ask, 0, {"type": "text", "text": "summarize @spec.pdf and @notes.txt"}),
            part(ask, 1, {"type": "text", "synthetic": True, "text": "Called the Read tool "
                          "with the following input: {\"filePath\":\"/home/user/spec.pdf\"}"}),
            part(ask, 2, {"type": "file", "url": url, "mime": "application/pdf",
                          "filename": "spec.pdf", "source": source}),
            part(ask, 3, {"type": "file", "url": "file:///home/user/notes.txt",
                          "mime": "text/plain", "filename": "notes.txt"})]},
        {"info": reply_info, "parts": [
            part(reply, 0, {"type": "step-start"}),
            part(reply, 1, {"type": "tool", "callID": "toolu_05ReadPdf", "tool": "read",
                            "state": {"status": "completed",
                                      "input": {"filePath": "/home/user/spec.pdf"},
                                      "output": "PDF read successfully", "title": "spec.pdf",
                                      "metadata": {"preview": "PDF read successfully",
                                                   "truncated": False},
                                      "time": {"start": t + 1, "end": t + 2},
                                      "attachments": [part(reply, 9, {
                                          "type": "file", "mime": "application/pdf",
                                          "url": url})]}}),
            part(reply, 2, {"type": "step-finish", "reason": "tool-calls", "cost": 0,
                            "tokens": {"input": 1, "output": 1, "reasoning": 0,
                                       "cache": {"read": 0, "write": 0}}}),
            part(reply, 3, {"type": "step-start"}),
            part(reply, 4, {"type": "text", "text": "The spec has one page."})]}]
    return doc


def test_pdf_files_and_attachments_reach_every_provider(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(with_pdfs(), indent=2))
    raw = json.loads(path.read_text())
    # raw counts: the PDF files stored as data: URLs, in user parts and tool attachments
    stored_pdfs = [p for m in raw["messages"] for p in m["parts"]
                   if p["type"] == "file" and p["mime"] == "application/pdf"]
    attached = [a for m in raw["messages"] for p in m["parts"] if p["type"] == "tool"
                for a in p["state"].get("attachments", []) if a["mime"] == "application/pdf"]
    assert len(stored_pdfs) == len(attached) == 1
    ctx = read_context(path, "opencode")
    docs = [(m["role"], b) for m in ctx.messages if isinstance(m["content"], list)
            for b in m["content"] if b["type"] == "document"]
    assert docs == [("user", {"type": "document", "data": _pdf(),
                              "mimeType": "application/pdf", "name": "spec.pdf"}),
                    ("toolResult", {"type": "document", "data": _pdf(),
                                    "mimeType": "application/pdf"})]
    asked = next(m for m in ctx.messages if any(b["type"] == "document" for b in m["content"]))
    assert [b["type"] for b in asked["content"]] == ["text", "text", "document"]  # not notes.txt
    bodies = accepted_bodies(ctx)
    marks = {"anthropic": '"type": "document"', "openai-chat": '"type": "file"',
             "openai-responses": '"type": "input_file"',
             "gemini": '"mimeType": "application/pdf"', "bedrock": '"format": "pdf"'}
    for provider, body in bodies.items():
        text = json.dumps(body)
        assert marks[provider] in text and text.count(_pdf()) == 2, provider


def test_anthropic_reasoning_goes_back_with_its_signature(tmp_path: Path) -> None:
    # opencode keeps the provider's metadata of a reasoning part (session/processor.ts): for
    # Anthropic, the thinking's signature, or a redacted block's data
    doc = json.loads(EXPORT.read_text())
    parts = doc["messages"][1]["parts"]
    thought = next(p for p in parts if p["type"] == "reasoning")
    thought["metadata"] = {"anthropic": {"signature": "EqQBCkgIBxABGAIiQL"}}
    parts.insert(parts.index(thought) + 1, {**thought, "id": thought["id"] + "r", "text": "",
                                            "metadata": {"anthropic": {
                                                "redactedData": "EmwKAhgBEgy3va3pzix"}}})
    path = tmp_path / "export.json"
    path.write_text(json.dumps(doc))
    ctx = read_context(path, "opencode")
    accepted_bodies(ctx)
    body = build_request(ctx, "anthropic", "claude-sonnet-4-5", options=BuildRequestOptions(
        placeholder_tools=True)).body
    assert validate(body, "anthropic") == []
    sent = body["messages"]
    blocks = [b for m in sent if m["role"] == "assistant" and isinstance(m["content"], list)
              for b in m["content"] if b["type"] in ("thinking", "redacted_thinking")]
    assert blocks == [{"type": "thinking", "thinking": thought["text"],
                       "signature": "EqQBCkgIBxABGAIiQL"},
                      {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}]
