"""Codex rollout JSONL: `response_item` lines read as native messages.

Consecutive model-side items (reasoning, assistant message, function/custom/local-shell calls)
form one assistant message, as one Responses turn; a reasoning item becomes a thinking block
whose thinkingSignature is the JSON-encoded item (pi's convention for OpenAI Responses), and the
model is the one the latest `turn_context` names. A `compacted` line becomes a checkpoint built
from its replacement history. session_meta, turn_context, event_msg (turn_aborted included)
and items with no chat equivalent are kept as context rows. Early rollouts, whose lines are
bare items after an `{id, timestamp, instructions}` header, are read too.
"""

from __future__ import annotations

import json
from typing import Any

from sessionctx.changes import Source
from sessionctx.importers.common import (
    Obj,
    as_list,
    checkpoint_record,
    context_record,
    data_url_image,
    finish,
    is_in,
    jsonl_objects,
    message_record,
    parse_arguments,
    text_block,
)
from sessionctx.records import Problem, Progress, ReadResult, Record

FORMAT = "codex"
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
ITEM_TYPES = frozenset({"message", "reasoning", *_CALLS, *_OUTPUTS, "web_search_call"})
SUMMARY_PREFIX = "The conversation before this point was compacted into this summary:\n"


class _Converter:
    """Turns a sequence of Responses items into native messages (with their source items)."""

    def __init__(self) -> None:
        self.model = ""
        self.ids: dict[str, str] = {}  # call_id -> toolCall id used in the native message
        self.names: dict[str, str] = {}
        self.turn: list[Obj] = []
        self.turn_items: list[Obj] = []
        self.block_items: list[Obj] = []  # the item each block of the turn came from
        # (message, its items, the item of each of its content blocks)
        self.out: list[tuple[Obj, list[Obj], list[Obj]]] = []

    def close(self) -> None:
        if not self.turn_items:
            return
        has_call = any(b["type"] == "toolCall" for b in self.turn)
        message = {"role": "assistant", "content": self.turn, "api": "openai-responses",
                   "provider": "openai", "model": self.model,
                   "stopReason": "toolUse" if has_call else "stop"}
        self.out.append((message, self.turn_items, self.block_items))
        self.turn, self.turn_items, self.block_items = [], [], []

    def item(self, item: Obj, lost: list[str]) -> bool:
        """Convert one item; False when it has no chat equivalent."""
        itype = item.get("type")
        if itype == "reasoning":
            summary = item.get("summary")
            parts = [s.get("text", "") for s in as_list(summary) if isinstance(s, dict)]
            content = item.get("content")
            if isinstance(content, list):
                parts += [c.get("text", "") for c in content if isinstance(c, dict)]
            texts = [p for p in parts if isinstance(p, str) and p]
            self.turn.append({"type": "thinking", "thinking": "\n\n".join(texts),
                              "thinkingSignature": json.dumps(item, ensure_ascii=False)})
        elif itype == "message" and item.get("role") == "assistant":
            for part in as_list(item.get("content")):
                if isinstance(part, dict) and part.get("type") in ("output_text", "text"):
                    self.turn.append(text_block(str(part.get("text", ""))))
                elif isinstance(part, dict) and part.get("type") == "refusal":
                    self.turn.append(text_block(str(part.get("refusal", ""))))
                else:
                    lost.append(f"assistant content part {json.dumps(part)[:60]}")
        elif is_in(itype, _CALLS):
            self.turn.append(self._call(item))
        else:
            self.close()
            return self._other(item, lost)
        self.turn_items.append(item)
        self.block_items.extend([item] * (len(self.turn) - len(self.block_items)))
        return True

    def _call(self, item: Obj) -> Obj:
        call_id = item.get("call_id") or item.get("id") or ""
        native_id = native_call_id(item)
        self.ids[str(call_id)] = native_id
        if item.get("type") == "local_shell_call":
            name, args = "local_shell", item.get("action") or {}
        elif item.get("type") == "custom_tool_call":
            name, args = str(item.get("name", "")), {"input": item.get("input", "")}
        else:
            name, args = str(item.get("name", "")), parse_arguments(item.get("arguments"))
        self.names[str(call_id)] = name
        return {"type": "toolCall", "id": native_id, "name": name, "arguments": args}

    def _other(self, item: Obj, lost: list[str]) -> bool:
        itype = item.get("type")
        if is_in(itype, _OUTPUTS):
            call_id = str(item.get("call_id", ""))
            result = {"role": "toolResult", "toolCallId": self.ids.get(call_id, call_id),
                      "toolName": self.names.get(call_id, ""),
                      "content": _output_content(item.get("output"), lost), "isError": False}
            self.out.append((result, [item], []))
            return True
        if itype == "message" and item.get("role") in ("user", "developer", "system"):
            content: list[Obj] = []
            for part in as_list(item.get("content")):
                ptype = part.get("type") if isinstance(part, dict) else None
                if ptype in ("input_text", "text", "output_text"):
                    content.append(text_block(str(part.get("text", ""))))
                elif ptype == "input_image" and data_url_image(part.get("image_url")):
                    content.append(data_url_image(part.get("image_url")) or {})
                else:
                    lost.append(f"user content part {json.dumps(part)[:60]}")
            role = "user" if item.get("role") == "user" else "system"
            if role == "system":
                self.out.append(({"role": role, "content": "".join(
                    c.get("text", "") for c in content)}, [item], []))
            else:
                self.out.append(({"role": role, "content": content}, [item], []))
            return True
        return False


def native_call_id(item: Obj) -> str:
    """The toolCall id a call item gets: its call_id, with its item id after a '|' when it
    has a different one (pi's convention for Responses calls)."""
    call_id = item.get("call_id") or item.get("id") or ""
    if isinstance(item.get("id"), str) and item.get("call_id") and item["id"] != call_id:
        return f"{call_id}|{item['id']}"
    return str(call_id)


def _output_content(output: Any, lost: list[str]) -> list[Obj]:
    if isinstance(output, str):
        return [text_block(output)]
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return [text_block(output["content"])]
    out: list[Obj] = []
    items = output if isinstance(output, list) else (
        output.get("content") if isinstance(output, dict) else None)
    for part in as_list(items):
        ptype = part.get("type") if isinstance(part, dict) else None
        if ptype in ("input_text", "output_text", "text"):
            out.append(text_block(str(part.get("text", ""))))
        elif ptype == "input_image" and data_url_image(part.get("image_url")):
            out.append(data_url_image(part.get("image_url")) or {})
        else:
            lost.append(f"tool output part {json.dumps(part)[:60]}")
    return out


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    result = ReadResult()
    conv = _Converter()
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
        conv = _Converter()
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
                             messages=messages, tokens_before=0, tokens_after=0, source=src,
                             raw=entry)
