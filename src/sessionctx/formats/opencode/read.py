"""opencode sessions read as native records, from any of the places opencode keeps one.

opencode (sst/opencode, packages/opencode/src/session) stores a session as its info, its
messages (`MessageV2.Info`: role, model, error, times) and each message's parts
(`MessageV2.Part`, by `type`). Releases before 1.2 kept them as JSON files under
`storage/`: `session/<project>/<session>.json`, `message/<session>/<message>.json` and
`part/<message>/<part>.json`; 1.2 and later keep the same objects in `opencode.db` (tables
`session`, `message` and `part`, the object in a `data` column, its ids in columns).
`opencode export` writes one document `{info, messages: [{info, parts}]}`. Ids sort in the
order they were made, as opencode orders them.

A session file is read with the messages and parts beside it in its storage folder; a store
is read for its latest updated top-level session (a sub-agent's session has a parent), its
other sessions named in a context row.
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any

from sessionctx import limits
from sessionctx.changes import Source
from sessionctx.formats.common import finish, not_a_file
from sessionctx.formats.opencode import detect
from sessionctx.formats.opencode.convert import FORMAT, Message, convert
from sessionctx.formats.sqlite_db import is_sqlite, opened, rows
from sessionctx.records import Progress, ReadResult

EXPECTED = ("opencode's opencode.db, a session file of its storage folder "
            "(storage/session/<project>/<session>.json, beside message/ and part/) or an "
            "`opencode export` document")
Obj = dict[str, Any]


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    if is_sqlite(raw):
        return _read_store(raw, path)
    if not detect.document(document):
        return not_a_file(path, FORMAT, EXPECTED)
    if detect.session_info(document):
        return _read_storage(document, path)
    messages = [Message(_obj(m.get("info")), [p for p in _list(m.get("parts"))
                                                if isinstance(p, dict)],
                        Source(index=k, path=path), m)
                for k, m in enumerate(document["messages"]) if isinstance(m, dict)]
    return finish(convert(document["info"], messages, path), path, FORMAT)


def storage_root(session_file: str) -> str:
    """The storage folder a session file `<root>/session/<project>/<id>.json` lies in."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(session_file))))


def _read_storage(info: Obj, path: str | None) -> ReadResult:
    if path is None:
        return not_a_file(path, FORMAT, EXPECTED, "a session file read from stdin has no "
                          "storage folder beside it to read its messages from")
    root = storage_root(path)
    messages: list[Message] = []
    result = ReadResult()
    for mpath in _json_files(os.path.join(root, "message", info["id"])):
        minfo = _load(mpath, result)
        if minfo is None:
            continue
        parts = [p for ppath in _json_files(os.path.join(root, "part", str(minfo.get("id"))))
                 if (p := _load(ppath, result)) is not None]
        messages.append(Message(minfo, parts, Source(index=len(messages), path=mpath), minfo))
    if not messages:
        where = os.path.join(root, "message", info["id"])
        return not_a_file(path, FORMAT, EXPECTED, f"no message of this session in {where}")
    out = convert(info, messages, path)
    out.problems[:0] = result.problems
    return finish(out, path, FORMAT)


def _read_store(raw: bytes, path: str | None) -> ReadResult:
    try:
        with opened(raw, path) as conn:
            sessions = rows(conn, "SELECT * FROM session ORDER BY time_updated, id")
            top = [s for s in sessions if not s.get("parent_id")] or sessions
            chosen = top[-1] if top else None
            msgs = [] if chosen is None else rows(
                conn, "SELECT * FROM message WHERE session_id = ? ORDER BY id", chosen["id"])
            parts = [] if chosen is None else rows(
                conn, "SELECT * FROM part WHERE session_id = ? ORDER BY id", chosen["id"])
    except sqlite3.Error as exc:
        return not_a_file(path, FORMAT, EXPECTED, f"the store cannot be read: {exc}")
    if chosen is None:
        return not_a_file(path, FORMAT, EXPECTED, "it holds no session")
    by_message: dict[str, list[Obj]] = {}
    for row in parts:
        part = _row_object(row, {"id": row["id"], "messageID": row["message_id"],
                                 "sessionID": row["session_id"]})
        by_message.setdefault(row["message_id"], []).append(part)
    messages = [Message(info := _row_object(m, {"id": m["id"], "sessionID": m["session_id"]}),
                        by_message.get(m["id"], []), Source(index=k + 1, path=path), info)
                for k, m in enumerate(msgs)]
    info = {k: v for k, v in chosen.items()}
    others = [s["id"] for s in sessions if s is not chosen]
    out = convert(info, messages, path, others)
    return finish(out, path, FORMAT)


def _row_object(row: Obj, ids: Obj) -> Obj:
    """The object a row's `data` column holds, with the ids its columns keep."""
    try:
        data = json.loads(row["data"]) if isinstance(row.get("data"), str | bytes) else None
    except ValueError:
        data = None
    return {**ids, **data} if isinstance(data, dict) else {**ids, "unreadable": row["data"]}


def _json_files(folder: str) -> list[str]:
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names]


def _load(path: str, result: ReadResult) -> Obj | None:
    from sessionctx.records import Problem

    try:
        value = json.loads(limits.read_file(path)[0])
    except (OSError, ValueError, limits.Unreadable) as exc:
        result.problems.append(Problem(f"unreadable file ({exc})", path))
        return None
    if not isinstance(value, dict):
        result.problems.append(Problem("not a JSON object", path))
        return None
    return value


def _obj(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []



