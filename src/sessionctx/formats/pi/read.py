"""pi sessions: the JSONL tree the core reads, with pi's own compaction and branch summaries.

The core reads pi entries as they are; two entry types need converting to mean what they mean
to pi. A `compaction` entry (summary, `firstKeptEntryId`) becomes a full checkpoint holding the
summary and the messages kept from `firstKeptEntryId` up to it on its branch; a
`branch_summary` entry becomes a custom message, since pi gives it to the model. Both keep
their `id`/`parentId`, so a branch is chosen as before, and the original entry under `raw`.
Version 1 files (no ids) name the first kept entry by its index in the file instead. A single
pi message stored as one JSON object is read too.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sessionctx.changes import Source
from sessionctx.formats.common import Obj, as_int, checkpoint_tokens, text_block
from sessionctx.records import (
    CHECKPOINT,
    INVALID,
    MESSAGE,
    Problem,
    Progress,
    ReadResult,
    Record,
    id_index,
    make_record,
    read_bytes,
)

FORMAT = "pi"
COMPACTION_PREFIX = ("The conversation history before this point was compacted into the "
                     "following summary:\n\n<summary>\n")
BRANCH_PREFIX = ("The following is a summary of a branch that this conversation came back "
                 "from:\n\n<summary>\n")
SUFFIX = "\n</summary>"


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    if isinstance(document, dict) and "role" in document:
        record = make_record(document, Source(index=0, path=path))
        problems = [] if record.kind != INVALID else [
            Problem(f"bad record: {record.problem}", path)]
        return ReadResult([record], problems)
    result = read_bytes(raw, path, progress=progress)
    if result.fatal:
        return result
    by_id: dict[str, Record] | None = None  # built only for a compaction that needs it
    out: list[Record] = []
    for position, record in enumerate(result.records):
        rtype = record.data.get("type")
        if rtype == "compaction" and record.kind == CHECKPOINT and record.problem is not None:
            if "firstKeptEntryId" in record.data:
                if by_id is None:
                    by_id = id_index(result.records)
                out.append(_checkpoint(record, _kept_path(record, by_id)))
            elif isinstance(record.data.get("firstKeptEntryIndex"), int):
                # v1 files: an index into the file's entries, the header included
                start = max(record.data["firstKeptEntryIndex"], 0)
                out.append(_checkpoint(record, result.records[start:position]))
            else:
                out.append(record)
        elif rtype == "branch_summary":
            out.append(_branch_summary(record))
        else:
            out.append(record)
    result.records = out
    return result


def _tree_fields(data: Obj) -> Obj:
    return {k: data[k] for k in ("id", "parentId", "timestamp") if k in data}


def _branch_summary(record: Record) -> Record:
    summary = str(record.data.get("summary", ""))
    return make_record({"type": "custom_message", "customType": "branch_summary",
                        "content": [text_block(BRANCH_PREFIX + summary + SUFFIX)],
                        "display": True, **_tree_fields(record.data), "importedFrom": FORMAT,
                        "raw": record.data}, record.source)


def _as_message(record: Record) -> Obj | None:
    """What an entry kept by a compaction gives the model, as a chat message."""
    view = record.view
    if record.kind == MESSAGE:
        return view
    if record.data.get("type") == "branch_summary":
        return {"role": "user", "content": [text_block(
            BRANCH_PREFIX + str(record.data.get("summary", "")) + SUFFIX)]}
    if view.get("role") == "custom" or view.get("type") == "custom_message":
        content = view.get("content")
        return {"role": "user", "content": [text_block(content)] if isinstance(
            content, str) else content or []}
    if view.get("role") == "bashExecution" and not view.get("excludeFromContext"):
        text = f"Ran `{view.get('command', '')}`\n```\n{view.get('output', '')}\n```"
        if view.get("exitCode") not in (None, 0):
            text += f"\n\nCommand exited with code {view.get('exitCode')}"
        return {"role": "user", "content": [text_block(text)]}
    return None


def _kept_path(record: Record, by_id: dict[str, Record]) -> list[Record]:
    """The entries from the compaction's first kept entry down to its parent; none when that
    entry is not on its branch. The walk stops at the first kept entry: a session compacted
    thousands of times is not walked to its root once per compaction."""
    first = record.data.get("firstKeptEntryId")
    path: list[Record] = []
    current = record.data.get("parentId")
    seen: set[str] = set()
    while isinstance(current, str) and current in by_id and current not in seen:
        seen.add(current)
        path.append(by_id[current])
        if current == first:
            path.reverse()
            return path
        current = by_id[current].data.get("parentId")
    return []


def _checkpoint(record: Record, kept_entries: list[Record]) -> Record:
    """pi's compaction as a checkpoint: its summary, then what the entries it kept say."""
    data = record.data
    pairs = [(m, r.source.line) for m, r in ((_as_message(r), r) for r in kept_entries)
             if m is not None]
    kept = [m for m, _ in pairs]
    summary = str(data.get("summary", ""))
    messages = [{"role": "user", "content": [text_block(COMPACTION_PREFIX + summary + SUFFIX)]},
                *kept]
    return make_record({
        "type": "compaction", "at": str(data.get("timestamp", "")), "baseSeq": 0,
        "plannerVersion": 0, "summaryModelRef": FORMAT, "qualityAudit": "imported",
        "summary": summary, "messages": messages, "firstKeptIndex": 1,
        "tokensBefore": as_int(data.get("tokensBefore")),
        "tokensAfter": checkpoint_tokens(messages),
        **_tree_fields(data), "importedFrom": FORMAT, "raw": data},
        msgspec.structs.replace(record.source, message_lines=(
            record.source.line, *(line for _, line in pairs))))
