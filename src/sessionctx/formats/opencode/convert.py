"""opencode messages and parts, wherever they were stored, as native records.

What reaches the model follows opencode's own conversion (`MessageV2.toModelMessages`): a
user message's `text` parts (not those marked `ignored`), its image and PDF files (stored as
`data:` URLs: opencode reads a file given by path into one when the message is written) and a
`subtask` part as the line opencode sends for it; an assistant message's `text`, `reasoning`
(with Anthropic's signature, kept in its metadata) and `tool` parts, a new model message at
each `step-start`, each tool part's result after its step (`completed`: its output with the
images and PDFs attached to it, or "[Old tool result content cleared]" once its time is
marked `compacted`; `error`: its error, or the partial `output` of a call marked
`interrupted`). A tool part still `pending` or `running` was never answered: it stays a call
without a result (opencode itself sends it as interrupted). An assistant message that failed
is not sent, unless it was aborted after writing something. Every other part (step-finish,
snapshot, patch, agent, …) is bookkeeping and reaches no model. After a compaction
(`MessageV2.filterCompacted`) the model sees the user message holding the latest `compaction`
part whose summary reply finished, as "What did we do so far?", and what follows it; a
compaction that kept a tail (`tail_start_id`) puts the kept messages after its summary reply.
The messages not sent are context rows.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sessionctx.changes import Source
from sessionctx.formats.anthropic.read import assistant_block
from sessionctx.formats.common import (
    context_record,
    data_url_file,
    message_record,
    text_block,
)
from sessionctx.records import ReadResult

FORMAT = "opencode"
API = "opencode"
# the API behind an opencode provider whose reasoning sessionctx sends back (its signature)
_APIS = {"anthropic": "anthropic-messages"}
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

    shown = _after_compaction(messages)
    kept = {id(m) for m in shown}
    for msg in messages:
        if id(msg) not in kept:
            out.append(context_record(msg.raw, place(msg), FORMAT,
                                      "before opencode's latest compaction: not sent"))
    for msg in shown:
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


def _after_compaction(messages: list[Message]) -> list[Message]:
    """The messages the model sees, in the order it sees them: from the latest compaction
    whose summary reply finished (the whole session if none); a compaction part naming a
    `tail_start_id` keeps the messages from that one on, placed after the summary reply."""
    summarised: set[Any] = set()
    start, tail = 0, None
    for k in range(len(messages) - 1, -1, -1):  # newest first, as opencode walks them
        info = messages[k].info
        if tail is not None:
            if info.get("id") == tail:
                start = k
                break
            continue
        compaction = next((p for p in messages[k].parts if p.get("type") == "compaction"),
                          None)
        if info.get("role") == "user" and info.get("id") in summarised and compaction:
            start, tail = k, compaction.get("tail_start_id")
            if not tail or info.get("id") == tail:
                break
            start = 0  # until the kept tail is found: a tail not stored keeps everything
            continue
        if info.get("role") == "assistant" and info.get("summary") is True and \
                info.get("finish") and not info.get("error"):
            summarised.add(info.get("parentID"))
    shown = messages[start:]
    ask = next((k for k in range(len(shown) - 1, -1, -1)
                if shown[k].info.get("role") == "user" and any(
                    p.get("type") == "compaction" and p.get("tail_start_id") is not None
                    for p in shown[k].parts)), -1)
    if ask <= 0:
        return shown
    parts = next(p for p in shown[ask].parts if p.get("type") == "compaction"
                 and p.get("tail_start_id") is not None)
    reply = next((k for k in range(ask + 1, len(shown))
                  if shown[k].info.get("role") == "assistant" and shown[k].info.get("summary")
                  and shown[k].info.get("parentID") == shown[ask].info.get("id")), -1)
    kept = next((k for k, m in enumerate(shown) if m.info.get("id") ==
                 parts["tail_start_id"]), -1)
    if 0 <= kept < ask < reply:
        return [*shown[ask:reply + 1], *shown[kept:ask], *shown[reply + 1:]]
    return shown


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
    if kind == "subtask":
        return text_block("The following tool was executed by the user")
    if kind == "file":
        return data_url_file(part.get("url"), part.get("mime"), part.get("filename"))
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
        out.append({"role": "assistant", "content": list(blocks),
                    "api": _APIS.get(str(provider), API),
                    "provider": str(provider), "model": str(model),
                    "stopReason": "toolUse" if calls else "stop"})
        out.extend(results)
        blocks.clear()
        results.clear()

    for part in msg.parts:
        kind = part.get("type")
        if kind == "step-start":
            flush()
        elif kind == "text" and isinstance(part.get("text"), str):
            blocks.append(text_block(part["text"]))
        elif kind == "reasoning" and isinstance(part.get("text"), str):
            blocks.append(_reasoning(part))
        elif kind == "tool":
            state = _obj(part.get("state"))
            cid, name = str(part.get("callID", "")), str(part.get("tool", ""))
            args = state.get("input")
            blocks.append({"type": "toolCall", "id": cid, "name": name,
                           "arguments": args if isinstance(args, dict) else {}})
            if (result := _result(state)) is not None:
                body, failed, files = result
                results.append({"role": "toolResult", "toolCallId": cid, "toolName": name,
                                "content": [text_block(body if isinstance(body, str) else
                                                       "(no output)"), *files],
                                "isError": failed})
    flush()
    return out


def _reasoning(part: Obj) -> Obj:
    """A reasoning part, with what Anthropic needs to take it back: opencode keeps the
    provider's metadata of the part (`metadata.anthropic`: its `signature`, or a redacted
    block's `redactedData`), read as the Anthropic block it came from."""
    anthropic = _obj(_obj(part.get("metadata")).get("anthropic"))
    if isinstance(anthropic.get("redactedData"), str):
        stored: Obj = {"type": "redacted_thinking", "data": anthropic["redactedData"]}
    else:
        stored = {"type": "thinking", "thinking": part["text"]}
        if isinstance(anthropic.get("signature"), str):
            stored["signature"] = anthropic["signature"]
    return assistant_block(stored, []) or {"type": "thinking", "thinking": part["text"]}


def _result(state: Obj) -> tuple[Any, bool, list[Obj]] | None:
    """What opencode sends as a tool part's result, whether as an error, and the images and
    PDFs attached to it; None while the call was never answered."""
    status = state.get("status")
    if status == "completed":
        if _obj(state.get("time")).get("compacted"):
            return "[Old tool result content cleared]", False, []
        attached = state.get("attachments")
        files = [b for a in attached if isinstance(a, dict) and (b := data_url_file(
            a.get("url"), a.get("mime"), a.get("filename"))) is not None] if isinstance(
            attached, list) else []
        return state.get("output"), False, files
    if status == "error":
        meta = _obj(state.get("metadata"))
        if meta.get("interrupted") is True and isinstance(meta.get("output"), str):
            return meta["output"], False, []
        return state.get("error"), True, []
    return None


def _obj(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}
