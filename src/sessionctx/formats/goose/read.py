"""Goose sessions read as native records: its sessions.db, or a legacy session JSONL.

Goose (block/goose, crates/goose/src/session) keeps every session in one SQLite store,
`sessions.db`: a `sessions` row per session and a `messages` row per message, its content a
JSON list in `content_json` and its visibility in `metadata_json`. Before that store, a session
was a JSONL file: a header line (`working_dir`, `message_count`, …) and one message a line with
the same content list. A store holds many sessions: the one read is the latest updated
user session (Goose's own `session_type`), the others are named in a context row.

Content items (`type`, camelCase): `text`, `image`, `thinking`, `redactedThinking`,
`toolRequest` and `frontendToolRequest` (a call the desktop app runs; both go to the model as
calls; `toolCall` is `{status: success, value: {name, arguments}}`, or
`{status: error, error}` for a call it could not parse, which names no tool and is left out)
and `toolResponse` (`toolResult` is `{status: success, value}`, the value a CallToolResult
`{content, isError}` or, in older releases, a bare content list; or `{status: error, error}`).
As Goose loads a message (conversation/message.rs): an old `reasoning` item is thinking
without a signature, and Unicode tag characters are taken out of texts.
A message its metadata marks `agentVisible: false` never reaches the model,
nor do confirmation, action and notification items.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

from sessionctx.changes import Source
from sessionctx.formats.common import (
    context_record,
    finish,
    jsonl_objects,
    message_record,
    not_a_file,
    text_block,
)
from sessionctx.formats.goose import detect
from sessionctx.formats.sqlite_db import is_sqlite, opened, rows
from sessionctx.records import Progress, ReadResult

FORMAT = "goose"
EXPECTED = ("Goose's sessions.db (tables sessions and messages with content_json) or a Goose "
            "session JSONL (a working_dir header, then messages with role, created, content)")
API = PROVIDER = "goose"
Obj = dict[str, Any]
CALLS = ("toolRequest", "frontendToolRequest")
_TAGS = re.compile("[\U000E0000-\U000E007F]")  # Goose's sanitize_unicode_tags


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    if is_sqlite(raw):
        return _read_store(raw, path)
    result = ReadResult()
    lines = list(jsonl_objects(raw, path, result, progress))
    if not any(detect.line(obj) for _, obj in lines):
        return not_a_file(path, FORMAT, EXPECTED)
    reader = _Reader(result, path)
    for line, obj in lines:
        src = Source(line=line, path=path)
        if "role" in obj:
            reader.message(obj, obj.get("metadata"), src, obj)
        else:
            result.records.append(context_record(obj, src, FORMAT, "the session's header"))
    return finish(result, path, FORMAT)


def _read_store(raw: bytes, path: str | None) -> ReadResult:
    result = ReadResult()
    try:
        with opened(raw, path) as conn:
            sessions = rows(conn, "SELECT * FROM sessions ORDER BY updated_at, id")
            chosen = _chosen(sessions)
            messages = [] if chosen is None else rows(
                conn, "SELECT * FROM messages WHERE session_id = ? ORDER BY id",
                chosen["id"])
    except sqlite3.Error as exc:
        return not_a_file(path, FORMAT, EXPECTED, f"the store cannot be read: {exc}")
    if chosen is None:
        return not_a_file(path, FORMAT, EXPECTED, "it holds no session")
    others = [s["id"] for s in sessions if s is not chosen]
    header = {k: v for k, v in chosen.items() if k not in ("recipe_json", "extension_data")}
    note = "the session read" + (
        f"; the store's other sessions, not read: {', '.join(map(str, others))}"
        if others else "")
    result.records.append(context_record(header, Source(index=0, path=path), FORMAT, note))
    reader = _Reader(result, path, *_model(chosen))
    for k, row in enumerate(messages, start=1):
        src = Source(index=k, path=path)
        try:
            content = json.loads(row["content_json"])
            meta = json.loads(row["metadata_json"]) if row.get("metadata_json") else None
        except (TypeError, ValueError) as exc:
            result.records.append(context_record(row, src, FORMAT, f"unreadable row: {exc}"))
            continue
        message = {"role": row.get("role"), "created": row.get("created_timestamp"),
                   "content": content}
        reader.message(message, meta, src, {**row, "content_json": content})
    return finish(result, path, FORMAT)


def _model(session: Obj) -> tuple[str, str]:
    """The provider and model a session ran with (schema 6 on: `provider_name` and the
    `model_name` of `model_config_json`); Goose keeps no model per message."""
    try:
        config = json.loads(session.get("model_config_json") or "null")
    except (TypeError, ValueError):
        config = None
    name = config.get("model_name") if isinstance(config, dict) else None
    provider = session.get("provider_name")
    return (provider if isinstance(provider, str) and provider else PROVIDER,
            name if isinstance(name, str) else "")


def _chosen(sessions: list[Obj]) -> Obj | None:
    """The latest updated session a user had (not a sub-agent's or a hidden one)."""
    users = [s for s in sessions if s.get("session_type", "user") in ("user", "scheduled")]
    pool = users or sessions
    return pool[-1] if pool else None


class _Reader:
    def __init__(self, result: ReadResult, path: str | None, provider: str = PROVIDER,
                 model: str = "") -> None:
        self.result, self.path = result, path
        self.provider, self.model = provider, model
        self.names: dict[str, str] = {}

    def message(self, msg: Obj, meta: Any, src: Source, raw: Any) -> None:
        records = self.result.records
        if isinstance(meta, dict) and meta.get("agentVisible") is False:
            records.append(context_record(raw, src, FORMAT, "a message the model never sees "
                                          "(agentVisible false)"))
            return
        role, content = msg.get("role"), msg.get("content")
        items = [c for c in content if isinstance(c, dict)] if isinstance(content, list) else []
        if role == "assistant":
            blocks = [b for c in items if (b := self._assistant_block(c)) is not None]
            calls = any(b["type"] == "toolCall" for b in blocks)
            records.append(message_record(
                {"role": "assistant", "content": blocks, "api": API, "provider": self.provider,
                 "model": self.model, "stopReason": "toolUse" if calls else "stop"},
                src, raw, FORMAT))
            return
        if role != "user":
            records.append(context_record(raw, src, FORMAT, f"a message of role {role!r}"))
            return
        user: list[Obj] = []
        for item in items:
            if item.get("type") == "toolResponse":
                if user:
                    records.append(message_record({"role": "user", "content": user}, src, raw,
                                                  FORMAT))
                    user = []
                records.append(message_record(self._result(item), src, raw, FORMAT))
            elif (block := _user_block(item)) is not None:
                user.append(block)
        if user or not items:
            records.append(message_record({"role": "user", "content": user}, src, raw, FORMAT))

    def _assistant_block(self, item: Obj) -> Obj | None:
        kind = item.get("type")
        if kind == "text" and isinstance(item.get("text"), str):
            return text_block(_TAGS.sub("", item["text"]))
        if kind == "thinking" and isinstance(item.get("thinking"), str):
            block = {"type": "thinking", "thinking": item["thinking"]}
            if isinstance(item.get("signature"), str) and item["signature"]:
                block["thinkingSignature"] = item["signature"]
            return block
        if kind == "reasoning" and isinstance(item.get("text"), str):  # before thinking
            return {"type": "thinking", "thinking": item["text"]}
        if kind in CALLS:
            cid = _str(item.get("id"))
            call = item.get("toolCall")
            value = call.get("value") if isinstance(call, dict) else None
            if not isinstance(value, dict):  # a call Goose could not parse names no tool
                return None
            name, args = _str(value.get("name")), value.get("arguments")
            self.names[cid] = name
            return {"type": "toolCall", "id": cid, "name": name,
                    "arguments": args if isinstance(args, dict) else {}}
        return None

    def _result(self, item: Obj) -> Obj:
        cid = _str(item.get("id"))
        outcome = item.get("toolResult")
        status = outcome.get("status") if isinstance(outcome, dict) else None
        value = outcome.get("value") if isinstance(outcome, dict) else None
        error = status != "success"
        parts = value
        if isinstance(value, dict):
            parts = value.get("content")
            error = error or value.get("isError") is True
        blocks: list[Obj] = []
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict) and _for_model(part) and (
                    block := _user_block(part)) is not None:
                blocks.append(block)
        if status == "error" and isinstance(outcome, dict):
            blocks.append(text_block(str(outcome.get("error", ""))))
        return {"role": "toolResult", "toolCallId": cid, "toolName": self.names.get(cid, ""),
                "content": blocks or [text_block("(no output)")], "isError": error}


def _for_model(part: Obj) -> bool:
    """Not a part whose annotations give it to the user alone (Goose leaves those out)."""
    notes = part.get("annotations")
    audience = notes.get("audience") if isinstance(notes, dict) else None
    return not isinstance(audience, list) or "assistant" in audience


def _user_block(item: Obj) -> Obj | None:
    kind = item.get("type")
    if kind == "text" and isinstance(item.get("text"), str):
        return text_block(_TAGS.sub("", item["text"]))
    if kind == "image" and isinstance(item.get("data"), str):
        mime = _str(item.get("mimeType")) or "image/png"
        return {"type": "image", "data": item["data"], "mimeType": mime}
    if kind == "resource" and isinstance(item.get("resource"), dict):
        body = item["resource"].get("text")
        return text_block(body) if isinstance(body, str) else None
    return None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""
