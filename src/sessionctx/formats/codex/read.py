"""Codex rollout JSONL: `response_item` lines read as native messages.

The items are mapped as `formats/openai_responses/items.py` maps every Responses item (consecutive
model items form one assistant turn; reasoning is kept for replay), and the model is the one the
latest `turn_context` names. A `compacted` line becomes a checkpoint built from its replacement
history. session_meta, turn_context, event_msg (turn_aborted included) and items with nothing a
model reads are kept as context rows. Early rollouts, whose lines are
bare items after an `{id, timestamp, instructions}` header, are read too.
"""

from __future__ import annotations

from typing import Any

from sessionctx.changes import Source
from sessionctx.formats.common import (
    Obj,
    checkpoint_record,
    context_record,
    finish,
    is_in,
    jsonl_objects,
    message_record,
    text_block,
)
from sessionctx.formats.openai_responses.items import Turns
from sessionctx.records import Problem, Progress, ReadResult, Record

FORMAT = "codex"
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
ITEM_TYPES = frozenset({"message", "reasoning", *_CALLS, *_OUTPUTS, "web_search_call"})
SUMMARY_PREFIX = "The conversation before this point was compacted into this summary:\n"


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    result = ReadResult()
    conv = Turns()
    emitted = 0
    lines_of: dict[int, tuple[int, Obj]] = {}  # id(item) -> its line number and whole line

    def flush(final: bool = False) -> None:
        nonlocal emitted
        if final:
            conv.close()
        for message, items, block_items in conv.out[emitted:]:
            line = lines_of[id(items[0])][0]
            whole = [lines_of[id(item)][1] for item in items]
            blocks = tuple(lines_of[id(item)][0] for item in block_items)
            src = Source(line=line, path=path,
                         block_lines=blocks if len(items) > 1 else None)
            result.records.append(message_record(message, src,
                                                 whole[0] if len(whole) == 1 else whole, FORMAT))
        emitted = len(conv.out)

    for lineno, entry in jsonl_objects(raw, path, result, progress):
        src = Source(line=lineno, path=path)
        etype = entry.get("type")
        payload = entry.get("payload")
        if "payload" not in entry and is_in(etype, ITEM_TYPES):
            etype, payload = "response_item", entry  # a bare item of the early format
        if etype == "turn_context" and isinstance(payload, dict) and isinstance(
                payload.get("model"), str):
            conv.close()
            conv.model = payload["model"]
        if etype == "response_item" and isinstance(payload, dict):
            lost: list[str] = []
            lines_of[id(payload)] = (lineno, entry)
            if not conv.item(payload, lost):
                flush()
                result.records.append(context_record(entry, src, FORMAT,
                                                     f"{payload.get('type')} item"))
            else:
                flush()
            for what in lost:
                result.problems.append(Problem(f"{what} could not be imported", path, lineno))
            continue
        if etype == "compacted" and isinstance(payload, dict):
            conv.close()
            flush()
            result.records.append(_checkpoint(entry, payload, src, conv.model, path, result))
            continue
        result.records.append(context_record(entry, src, FORMAT, f"{etype or 'untyped'} line"))
    flush(final=True)
    result.records.sort(key=lambda r: r.source.line or 0)
    return finish(result, path, FORMAT)


def _checkpoint(entry: Obj, payload: Obj, src: Source, model: str, path: str | None,
                result: ReadResult) -> Record:
    summary = str(payload.get("message", ""))
    history = payload.get("replacement_history")
    messages: list[Obj] = []
    if isinstance(history, list):
        conv = Turns()
        conv.model = model
        lost: list[str] = []
        for item in history:
            if isinstance(item, dict) and not conv.item(item, lost):
                lost.append(f"replacement history item of type {item.get('type')!r}")
        conv.close()
        messages = [m for m, _, _ in conv.out]
        for what in lost:
            result.problems.append(Problem(f"{what} could not be imported", path, src.line))
    else:
        messages = [{"role": "user", "content": [text_block(SUMMARY_PREFIX + summary)]}]
    return checkpoint_record(fmt=FORMAT, at=str(entry.get("timestamp", "")), summary=summary,
                             messages=messages, tokens_before=0, source=src,
                             raw=entry)
