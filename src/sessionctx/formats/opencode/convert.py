"""opencode messages and parts, wherever they were stored, as native records.

What reaches the model follows opencode's own conversion (`MessageV2.toModelMessages`): a
user message's `text` parts (not those marked `ignored`) and its image files; an assistant
message's `text`, `reasoning` and `tool` parts, a new model message at each `step-start`,
each tool part's result after its step (`completed`: its output, `error`: its error). A tool
part still `pending` or `running` was never answered: it stays a call without a result (opencode
itself sends it as interrupted). An assistant message that failed is not sent, unless it was
aborted after writing something. Every other part (step-finish, snapshot, patch, agent, …) is
bookkeeping and reaches no model. After a compaction (`MessageV2.filterCompacted`) the model
sees only the user message holding the latest `compaction` part whose summary reply finished,
as "What did we do so far?", and what follows it; the messages before are context rows.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sessionctx.changes import Source
from sessionctx.formats.common import (
    context_record,
    data_url_image,
    message_record,
    text_block,
)
from sessionctx.records import ReadResult

FORMAT = "opencode"
API = "opencode"
Obj = dict[str, Any]


class Message(NamedTuple):
    info: Obj
    parts: list[Obj]
    source: Source
    raw: Any


def convert(session: Obj, messages: list[Message], path: str | None,
            others: list[str] | None = None) -> ReadResult:
    result = ReadResult()
    out = result.records
    note = "the session's info" + (
        f"; the store's other sessions, not read: {', '.join(map(str, others))}"
        if others else "")
    out.append(context_record(session, Source(index=0, path=path), FORMAT, note))

    def place(msg: Message) -> Source:
        return Source(index=len(out), path=msg.source.path)

    start = _compacted_at(messages)
    for msg in messages[:start]:
        out.append(context_record(msg.raw, place(msg), FORMAT,
                                  "before opencode's latest compaction: not sent"))
    for msg in messages[start:]:
        role = msg.info.get("role")
        if role == "user":
            blocks = [b for p in msg.parts if (b := _user_block(p)) is not None]
            if blocks:
                out.append(message_record({"role": "user", "content": blocks}, place(msg),
                                          msg.raw, FORMAT))
            else:
                out.append(context_record(msg.raw, place(msg), FORMAT,
                                          "a user message with nothing the model reads"))
        elif role == "assistant" and _sent(msg):
            for message in _assistant(msg):
                out.append(message_record(message, place(msg), msg.raw, FORMAT))
        else:
            why = "a failed reply opencode does not send" if role == "assistant" else (
                f"a message of role {role!r}")
            out.append(context_record(msg.raw, place(msg), FORMAT, why))
    return result


def _compacted_at(messages: list[Message]) -> int:
    """Where the messages the model sees start: at the latest compaction that finished."""
    summarised = {m.info.get("parentID") for m in messages
                  if m.info.get("role") == "assistant" and m.info.get("summary") is True
                  and m.info.get("finish") and not m.info.get("error")}
    for k in range(len(messages) - 1, -1, -1):
        msg = messages[k]
        if msg.info.get("role") == "user" and msg.info.get("id") in summarised and any(
                p.get("type") == "compaction" for p in msg.parts):
            return k
    return 0


def _sent(msg: Message) -> bool:
    error = msg.info.get("error")
    if not error:
        return True
    aborted = isinstance(error, dict) and error.get("name") == "MessageAbortedError"
    return aborted and any(p.get("type") not in ("step-start", "reasoning") for p in msg.parts)


def _user_block(part: Obj) -> Obj | None:
    kind = part.get("type")
    if kind == "text" and isinstance(part.get("text"), str) and not part.get("ignored"):
        return text_block(part["text"])
    if kind == "compaction":
        return text_block("What did we do so far?")
    if kind == "file" and str(part.get("mime", "")).startswith("image/"):
        return data_url_image(part.get("url"))
    return None


def _assistant(msg: Message) -> list[Obj]:
    """One assistant message per step, each followed by the results of its tool parts."""
    info = msg.info
    model = info.get("modelID") or _obj(info.get("model")).get("modelID") or ""
    provider = info.get("providerID") or _obj(info.get("model")).get("providerID") or API
    out: list[Obj] = []
    blocks: list[Obj] = []
    results: list[Obj] = []

    def flush() -> None:
        if not blocks:
            return
        calls = any(b["type"] == "toolCall" for b in blocks)
        out.append({"role": "assistant", "content": list(blocks), "api": API,
                    "provider": str(provider), "model": str(model),
                    "stopReason": "toolUse" if calls else "stop"})
        out.extend(results)
        blocks.clear()
        results.clear()

    for part in msg.parts:
        kind = part.get("type")
        if kind == "step-start":
            flush()
        elif kind == "text" and isinstance(part.get("text"), str) and not part.get("ignored"):
            blocks.append(text_block(part["text"]))
        elif kind == "reasoning" and isinstance(part.get("text"), str):
            blocks.append({"type": "thinking", "thinking": part["text"]})
        elif kind == "tool":
            state = _obj(part.get("state"))
            cid, name = str(part.get("callID", "")), str(part.get("tool", ""))
            args = state.get("input")
            blocks.append({"type": "toolCall", "id": cid, "name": name,
                           "arguments": args if isinstance(args, dict) else {}})
            status = state.get("status")
            if status in ("completed", "error"):
                body = state.get("output") if status == "completed" else state.get("error")
                results.append({"role": "toolResult", "toolCallId": cid, "toolName": name,
                                "content": [text_block(body if isinstance(body, str) else
                                                       "(no output)")],
                                "isError": status == "error"})
    flush()
    return out


def _obj(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}
