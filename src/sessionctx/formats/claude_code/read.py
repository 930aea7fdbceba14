"""Claude Code session JSONL: the active `parentUuid` chain read as native records.

Several assistant lines sharing one `message.id` (one per streamed block) become one message;
`tool_result` blocks in user entries become toolResult messages; a `compact_boundary` line and
the `isCompactSummary` entry after it become one checkpoint. Lines off the active chain,
sidechain lines of another agent, `isVisibleInTranscriptOnly` entries and bookkeeping lines
(summary, progress, file-history-snapshot, queue-operation, other system lines) are kept as
context rows. A subagent's own transcript (`<session>/subagents/agent-*.jsonl`), every entry
of which is a sidechain entry, reads as that agent's conversation by the same chain rules.
"""

from __future__ import annotations

import os
from typing import Any

from sessionctx.changes import ChangeKind, Source
from sessionctx.formats.anthropic.order import results_after_other_blocks
from sessionctx.formats.anthropic.read import STOP, assistant_block, image, result_content
from sessionctx.formats.claude_code.lines import own_side as lines_own_side
from sessionctx.formats.common import (
    Obj,
    as_int,
    checkpoint_record,
    context_record,
    finish,
    is_in,
    jsonl_objects,
    message_record,
    text_block,
)
from sessionctx.records import Problem, Progress, ReadResult

FORMAT = "claude-code"


def _active_chain(lines: list[tuple[int, Obj]], own_side: bool) -> set[str]:
    """The uuids on the path from the newest main-chain user/assistant entry to its root (in
    a subagent's own transcript, its sidechain is the main chain)."""
    by_uuid = {o["uuid"]: o for _, o in lines if isinstance(o.get("uuid"), str)}
    leaf = next((o["uuid"] for _, o in reversed(lines)
                 if o.get("type") in ("user", "assistant")
                 and (own_side or not o.get("isSidechain"))
                 and isinstance(o.get("uuid"), str)), None)
    chain: set[str] = set()
    current = leaf
    while isinstance(current, str) and current in by_uuid and current not in chain:
        chain.add(current)
        current = by_uuid[current].get("parentUuid")
    return _splice(lines, chain, own_side)


def _splice(lines: list[tuple[int, Obj]], chain: set[str], own_side: bool) -> set[str]:
    """Add the lines that belong to the chain's messages though the parent links miss them:
    other streamed lines of an on-chain message.id, and the results of on-chain calls (parallel
    calls can leave a block or its result on a sibling branch)."""
    ids: set[str] = set()
    calls: set[str] = set()
    for _, o in lines:
        if is_in(o.get("uuid"), chain) and o.get("type") == "assistant":
            message = o.get("message")
            mid = message.get("id") if isinstance(message, dict) else None
            if isinstance(mid, str):
                ids.add(mid)
    for _, o in lines:
        message = o["message"] if isinstance(o.get("message"), dict) else {}
        if o.get("type") == "assistant" and (own_side or not o.get("isSidechain")) and isinstance(
                o.get("uuid"), str) and is_in(message.get("id"), ids):
            chain.add(o["uuid"])
            calls.update(str(b.get("id")) for b in _blocks(message)
                         if b.get("type") == "tool_use")
    for _, o in lines:
        message = o["message"] if isinstance(o.get("message"), dict) else {}
        results = [b.get("tool_use_id") for b in _blocks(message)
                   if b.get("type") == "tool_result"]
        if o.get("type") == "user" and (own_side or not o.get("isSidechain")) and results and all(
                is_in(r, calls) for r in results) and isinstance(o.get("uuid"), str):
            chain.add(o["uuid"])
    return chain


def _blocks(message: Any) -> list[Obj]:
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _repeat_key(block: Any) -> tuple[Any, ...]:
    """What two equal blocks always share: their size and their type, id and text."""
    if not isinstance(block, dict):
        return (type(block).__name__,)
    return (len(block), *(v if isinstance(v := block.get(k), str) else None
                          for k in ("type", "id", "text")))


class _Assistant:
    """One assistant message gathered from every line that shares its message.id."""

    def __init__(self, lineno: int, entry: Obj) -> None:
        self.lineno = lineno
        self.entries: list[Obj] = []
        self.blocks: list[Obj] = []
        self.block_lines: list[int] = []  # the line each block came from
        # the source blocks held, to skip repeats: bucketed by a key equal blocks share, so a
        # message streamed over thousands of lines is not compared block against block
        self.seen: dict[tuple[Any, ...], list[Any]] = {}
        self.message: Obj = {}

    def add(self, entry: Obj, lost: list[str], lineno: int) -> None:
        self.entries.append(entry)
        message = entry.get("message") or {}
        self.message = message
        content = message.get("content")
        blocks = content if isinstance(content, list) else (
            [{"type": "text", "text": content}] if isinstance(content, str) else [])
        for block in blocks:
            bucket = self.seen.setdefault(_repeat_key(block), [])
            if len(self.entries) > 1 and block in bucket:
                continue  # a later streamed line repeating a block already held
            bucket.append(block)
            native = assistant_block(block, lost)
            if native is not None:
                self.blocks.append(native)
                self.block_lines.append(lineno)

    def native(self) -> Obj:
        has_call = any(b["type"] == "toolCall" for b in self.blocks)
        reason = self.message.get("stop_reason")
        stop = STOP.get(reason, "toolUse" if has_call else "stop") if isinstance(
            reason, str) else ("toolUse" if has_call else "stop")
        if self.entries[-1].get("isApiErrorMessage"):
            stop = "error"
        out: Obj = {"role": "assistant", "content": self.blocks, "api": "anthropic-messages",
                    "provider": "anthropic", "model": self.message.get("model", ""),
                    "stopReason": stop}
        if isinstance(self.message.get("usage"), dict):
            out["usage"] = self.message["usage"]
        return out


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    result = ReadResult()
    lines = list(jsonl_objects(raw, path, result, progress))
    own_side = lines_own_side(o for _, o in lines)
    chain = _active_chain(lines, own_side)
    pending: list[tuple[int, Any]] = []  # (line, record or _Assistant) in order
    by_id: dict[str, _Assistant] = {}
    boundary: tuple[int, Obj] | None = None
    names: dict[str, Any] = {}

    def report(lineno: int, lost: list[str]) -> None:
        for what in lost:
            result.problems.append(Problem(f"{what} could not be imported", path, lineno))

    read_ids: set[str] = set()  # the uuids of the entries read so far
    for lineno, entry in lines:
        src = Source(line=lineno, path=path)
        etype = entry.get("type")
        on_chain = isinstance(entry.get("uuid"), str) and entry["uuid"] in chain
        if on_chain and etype in ("user", "assistant") and entry["uuid"] in read_ids:
            pending.append((lineno, context_record(
                entry, src, FORMAT, f"entry {entry['uuid']} written again (a resumed session "
                "copies it): read once, where it was first written")))
            continue
        if etype == "system" and entry.get("subtype") == "compact_boundary" and on_chain:
            boundary = (lineno, entry)
            continue
        transcript_only = entry.get("isVisibleInTranscriptOnly") is True and not entry.get(
            "isCompactSummary")
        other_agent = entry.get("isSidechain") is True and not own_side
        if etype not in ("user", "assistant") or not on_chain or other_agent or transcript_only:
            why = ("sidechain entry of another agent (a subagent's turn, kept in its own "
                   "transcript)" if other_agent else
                   "entry off the active chain" if not on_chain and etype in (
                       "user", "assistant") else
                   "entry shown in the transcript only" if transcript_only else
                   f"{etype or 'untyped'} line")
            pending.append((lineno, context_record(entry, src, FORMAT, why)))
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            result.problems.append(Problem("entry has no message object", path, lineno))
            pending.append((lineno, context_record(entry, src, FORMAT, "entry without message")))
            continue
        lost: list[str] = []
        if etype == "assistant":
            mid = message.get("id")
            group = by_id.get(mid) if isinstance(mid, str) else None
            if group is None:
                group = _Assistant(lineno, entry)
                if isinstance(mid, str):
                    by_id[mid] = group
                pending.append((lineno, group))
            held = len(group.blocks)
            read_ids.add(entry["uuid"])
            group.add(entry, lost, lineno)
            names.update({b["id"]: b["name"] for b in group.blocks[held:]  # this line's
                          if b["type"] == "toolCall" and isinstance(b.get("id"), str)})
            report(lineno, lost)
            continue
        records = _user_records(entry, src, lost, names)
        report(lineno, lost)
        read_ids.add(entry["uuid"])
        if results_after_other_blocks(message):
            result.problems.append(Problem(
                "user entry holds other blocks before its tool results; the API takes results "
                "first (repair puts them first)", path, lineno, kind=ChangeKind.RESULTS_MOVED))
        if entry.get("isCompactSummary") and boundary is not None:
            bline, bentry = boundary
            boundary = None
            meta = bentry.get("compactMetadata")
            meta = meta if isinstance(meta, dict) else {}
            messages = [r.view for r in records]
            summary = "".join(b.get("text", "") for m in messages for b in m["content"]
                              if b.get("type") == "text")
            pending.append((bline, checkpoint_record(
                fmt=FORMAT, at=str(bentry.get("timestamp", "")), summary=summary,
                messages=messages, tokens_before=as_int(meta.get("preTokens")),
                tokens_after=as_int(meta.get("postTokens")) or None,
                source=Source(line=bline, path=path), raw=[bentry, entry])))
            continue
        pending.extend((lineno, r) for r in records)
    if boundary is not None:
        bline, bentry = boundary
        pending.append((bline, context_record(bentry, Source(line=bline, path=path), FORMAT,
                                              "compact boundary without a summary entry")))
        pending.sort(key=lambda p: p[0])
    for lineno, item in pending:
        if isinstance(item, _Assistant):
            several = len(item.entries) > 1
            item_src = Source(line=lineno, path=path,
                              block_lines=tuple(item.block_lines) if several else None)
            result.records.append(message_record(item.native(), item_src, item.entries, FORMAT))
        else:
            result.records.append(item)
    return finish(result, path, FORMAT)


def _user_records(entry: Obj, src: Source, lost: list[str], names: dict[str, Any]
                  ) -> list[Any]:
    """A user entry's tool results (one toolResult each) and its own text and images."""
    message = entry["message"]
    content = message.get("content")
    out = []
    own: list[Obj] = []
    if isinstance(content, str):
        own.append(text_block(content))
    elif isinstance(content, list):
        for block in content:
            btype = block.get("type") if isinstance(block, dict) else None
            if btype == "tool_result":
                result: Obj = {"role": "toolResult", "toolCallId": block.get("tool_use_id"),
                               "toolName": str(names.get(str(block.get("tool_use_id")), "")),
                               "content": result_content(
                                   block.get("content"), lost),
                               "isError": block.get("is_error") is True}
                out.append(message_record(result, src, entry, FORMAT))
            elif btype == "text":
                own.append(text_block(str(block.get("text", ""))))
            elif btype == "image" and image(block):
                own.append(image(block) or {})
            elif btype == "document":
                own.append(block)  # an attached PDF or text, in the shape providers read
            else:
                lost.append(f"user block of type {btype!r}")
    if own:
        user: Obj = {"role": "user", "content": own}
        out.append(message_record(user, src, entry, FORMAT))
    return out


def subagent_transcripts(path: str) -> list[str]:
    """The subagent transcripts Claude Code keeps beside the session file at `path`
    (`<session>.jsonl` -> `<session>/subagents/agent-*.jsonl`), sorted; none for stdin."""
    if path == "-" or not path.endswith(".jsonl"):
        return []
    folder = os.path.join(path[: -len(".jsonl")], "subagents")
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(os.path.join(folder, n) for n in names
                  if n.startswith("agent-") and n.endswith(".jsonl"))
