"""A Gemini CLI JSONL chat read as native records: the conversation its rows make (rows.py),
each message converted as the JSON format's messages are (formats/gemini_cli/read.py), keeping
the row it was read from; every other row is a context row saying why it is not sent.

A conversation Gemini CLI rebuilt from its model history (a `$set` of `messages`) may hold
the calls and responses as parts (`functionCall` in a gemini message, `functionResponse` in
the user message after it) instead of in `toolCalls`: a part whose call `toolCalls` already
holds is that call; any other becomes a call, answered by the response part with its id.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sessionctx.changes import Source
from sessionctx.formats.common import (
    context_record,
    finish,
    is_in,
    jsonl_objects,
    not_a_file,
)
from sessionctx.formats.gemini_cli import read as gemini_cli
from sessionctx.formats.gemini_cli_jsonl.rows import Place, conversation, is_header, is_update
from sessionctx.records import Progress, ReadResult, Record

FORMAT = "gemini-cli-jsonl"
EXPECTED = ("Gemini CLI chat JSONL: a header row (sessionId, projectHash), message rows (id, "
            "type user or gemini, content) and $set or $rewindTo update rows")
Obj = dict[str, Any]


def is_chat_row(obj: Obj) -> bool:
    """A row only Gemini CLI's chat files hold: the header or an update."""
    return (is_header(obj) and "type" not in obj and "role" not in obj) or is_update(obj)


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    result = ReadResult()
    rows = list(jsonl_objects(raw, path, result, progress))
    if not any(is_chat_row(obj) for _, obj in rows):
        return not_a_file(path, FORMAT, EXPECTED)
    conv, notes = conversation(rows)
    objects = dict(rows)
    places: list[Place] = []
    items: list[Obj] = []
    for place, message in conv.messages.values():
        if is_in(message.get("type"), gemini_cli.TYPES):
            places.append(place)
            items.append(message)
        else:
            conv.dropped[place] = f"a message of type {message.get('type')!r}: not sent"
    late: list[Record] = []
    if items:
        moved = _with_part_calls(items)
        converted = gemini_cli.read(b"", path, moved)
        # a message's results share its Source: each shared one is placed once, and the
        # records that shared it share the placed one
        placed: dict[int, tuple[int, Source]] = {}
        for record in converted.records:
            src = record.source
            if id(src) not in placed:
                i = src.index or 0
                placed[id(src)] = (i, msgspec.structs.replace(
                    src, line=places[i].line, index=places[i].index))
            i, record.source = placed[id(src)]
            if record.data.get("raw") is moved[i]:
                record.data["raw"] = items[i]  # the message as stored
            if record.view.get("role") == "user" and not record.view.get("content"):
                record = context_record(items[i], record.source, FORMAT, "responses to the "
                                        "calls before it, read as their results")
            late.append(record)
        result.problems.extend(p for p in converted.problems if not p.fatal)
    early = [(line, context_record(objects[line], Source(line=line, path=path), FORMAT, note))
             for line, note in notes.items()]
    early += [(p.line, context_record(_message_at(objects, p), Source(
        line=p.line, index=p.index, path=path), FORMAT, why)) for p, why in conv.dropped.items()]
    result.records = _in_order(early, late)
    return finish(result, path, FORMAT)


def _message_at(objects: dict[int, Obj], place: Place) -> Any:
    obj = objects[place.line]
    if place.index is None:
        return obj
    update = obj.get("$set")
    holder: Obj = update if isinstance(update, dict) else obj
    return holder["messages"][place.index]


def _in_order(early: list[tuple[int, Record]], late: list[Record]) -> list[Record]:
    """The conversation's records in its own order, each other row placed before the first
    message read from a later row."""
    early.sort(key=lambda pair: pair[0])
    out: list[Record] = []
    k = 0
    for record in late:
        line = record.source.line or 0
        while k < len(early) and early[k][0] <= line:
            out.append(early[k][1])
            k += 1
        out.append(record)
    out.extend(r for _, r in early[k:])
    return out


def _with_part_calls(items: list[Obj]) -> list[Obj]:
    """The messages with calls and responses held as parts moved into `toolCalls`, on copies
    (the records keep the stored message)."""
    out: list[Obj] = []
    copied: set[int] = set()  # positions in `out` holding a copy
    open_calls: dict[str, tuple[int, int]] = {}  # call id -> (message, index in toolCalls)

    def own(pos: int) -> Obj:
        if pos not in copied:
            out[pos] = {**out[pos], "toolCalls": [
                dict(c) if isinstance(c, dict) else c for c in _calls(out[pos])]}
            copied.add(pos)
        return out[pos]

    for message in items:
        pos = len(out)
        out.append(message)
        parts = message.get("content")
        if isinstance(parts, list) and any(isinstance(p, dict) and (
                "functionCall" in p or "functionResponse" in p) for p in parts):
            kept = [p for p in parts if not (isinstance(p, dict) and (
                "functionCall" in p or "functionResponse" in p))]
            mine = own(pos)
            mine["content"] = kept
            if message.get("type") == "gemini":
                known = {c["id"] for c in mine["toolCalls"] if isinstance(c, dict)
                         and isinstance(c.get("id"), str)}
                mine["toolCalls"] += [
                    {"id": str(fc.get("id") or ""), "name": fc.get("name"),
                     "args": fc.get("args") or {}, "status": "success"}
                    for p in parts if isinstance(p, dict)
                    and isinstance(fc := p.get("functionCall"), dict)
                    and not (isinstance(fc.get("id"), str) and fc["id"] in known)]
            else:
                for p in parts:
                    fr = p.get("functionResponse") if isinstance(p, dict) else None
                    at = open_calls.get(fr["id"]) if isinstance(fr, dict) and isinstance(
                        fr.get("id"), str) else None
                    if at is None and isinstance(fr, dict):
                        kept.append(p)  # answers no call: reported as a part not imported
                    elif at is not None:
                        call = own(at[0])["toolCalls"][at[1]]
                        if not call.get("result"):
                            call["result"] = [p]
        if message.get("type") == "gemini":
            open_calls.update({c["id"]: (pos, i) for i, c in enumerate(
                _calls(out[pos])) if isinstance(c, dict)
                and isinstance(c.get("id"), str)})
    return out


def _calls(message: Obj) -> list[Any]:
    calls = message.get("toolCalls")
    return calls if isinstance(calls, list) else []
