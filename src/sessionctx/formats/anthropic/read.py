"""Anthropic Messages lists, read as native messages: a bare list of `{role, content}`
messages (Cline's and Roo Code's `api_conversation_history.json`), a request log
(`{model, messages, system, tools, ...}`) and Cline's `messages.json` (`{version, messages,
system_prompt}`).

`tool_use` blocks become toolCall blocks and each `tool_result` a toolResult message;
`thinking` keeps its signature, `redacted_thinking` its data; base64 images and documents stay.
A tool Anthropic's server ran within the turn (web search, web fetch, code execution, MCP
connector) keeps its call and result in the assistant message: both become text, as a Responses
server item does, so they reach every provider and dangle nowhere.
What an agent stores beside the Messages shape is read as that agent sends it:

- Roo Code condenses and truncates without deleting: what its `getEffectiveApiHistory` leaves
  out (everything before the latest `isSummary` message, results whose call went with it, and
  messages whose `truncationParent` marker is present) is kept as context rows, not sent.
  Its `reasoning` blocks become thinking (encrypted ones keep the item as their signature),
  and a Gemini `thoughtSignature` block goes on the message's first call, as Roo sends it.
- Cline's `file` blocks go out as the `<file_content path>` text Cline sends, and a tool
  result that is not content blocks as its JSON text.

The request's other fields (system prompt, tools, settings) are one context row.
"""

from __future__ import annotations

import json
from typing import Any

from sessionctx.changes import ChangeKind, Source
from sessionctx.formats.anthropic.order import results_after_other_blocks
from sessionctx.formats.cline import results as cline
from sessionctx.formats.common import (
    Obj,
    context_record,
    document_items,
    finish,
    is_in,
    message_record,
    server_block,
    text_block,
)
from sessionctx.formats.registry import BY_NAME
from sessionctx.records import Problem, Progress, ReadResult, Record

FORMAT = "anthropic"
ROLES = frozenset({"user", "assistant"})
EXPECTED = BY_NAME[FORMAT].expected
STOP = {"end_turn": "stop", "tool_use": "toolUse", "max_tokens": "length",
         "stop_sequence": "stop", "refusal": "stop", "pause_turn": "stop"}
# block types only Anthropic content has (a native thinking block says thinkingSignature)
_TYPED = frozenset({"tool_use", "tool_result", "redacted_thinking"})


def messages_of(document: Any, evident: bool = True) -> list[Any] | None:
    """The message list of an Anthropic Messages document, or None when it is not one. With
    `evident` (detection), only when something in it is Anthropic's own: a list of plain
    role/content messages is also an OpenAI chat list."""
    if isinstance(document, list):
        items: list[Any] = document
    elif isinstance(document, dict) and isinstance(document.get("messages"), list):
        items = document["messages"]
    else:
        return None
    dicts = [m for m in items if isinstance(m, dict)]
    if not dicts or not all(is_in(m.get("role"), ROLES) or _reasoning_item(m) for m in dicts):
        return None
    if not evident or any(_anthropic_block(b) for m in dicts for b in _blocks(m)):
        return items
    if isinstance(document, dict) and ("system" in document or "system_prompt" in document
                                       or _anthropic_tools(document.get("tools"))):
        return items  # a request whose messages hold text only
    return None


def _blocks(message: Obj) -> list[Obj]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _anthropic_block(block: Obj) -> bool:
    btype = block.get("type")
    if is_in(btype, _TYPED):
        return True
    if btype in ("image", "document"):
        return isinstance(block.get("source"), dict)
    if btype == "thinking":
        return "signature" in block
    return btype == "file" and isinstance(block.get("path"), str)


def _anthropic_tools(tools: Any) -> bool:
    return isinstance(tools, list) and any(
        isinstance(t, dict) and "input_schema" in t for t in tools)


def _reasoning_item(item: Obj) -> bool:
    """A Roo Code reasoning item stored between messages (sent as a Responses item)."""
    return item.get("type") == "reasoning" and "role" not in item


def image(block: Obj) -> Obj | None:
    """A native image from an Anthropic base64 image (or Cline's `data`/`mediaType` one)."""
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64" and isinstance(
            source.get("data"), str):
        return {"type": "image", "data": source["data"],
                "mimeType": source.get("media_type") or "image/png"}
    if isinstance(block.get("data"), str) and isinstance(block.get("mediaType"), str):
        return {"type": "image", "data": block["data"], "mimeType": block["mediaType"]}
    return None


def result_content(content: Any, lost: list[str]) -> list[Obj]:
    """A tool result's content as native blocks; content that is not blocks (Cline's
    `{query, result}` lists) goes as its JSON text, as Cline sends it."""
    if isinstance(content, str):
        return [text_block(content)]
    if content is None:
        return []
    if not isinstance(content, list) or not all(
            isinstance(b, dict) and isinstance(b.get("type"), str) for b in content):
        return [text_block(json.dumps(content, ensure_ascii=False))]
    out: list[Obj] = []
    for block in content:
        btype = block.get("type")
        if btype == "text":
            out.append(text_block(str(block.get("text", ""))))
        elif btype == "image" and image(block) is not None:
            out.append(image(block) or {})
        elif btype == "document":
            out.append(block)  # a PDF or text, in the shape providers read
        else:
            lost.append(f"tool_result block {json.dumps(block)[:60]}")
    return out


def assistant_block(block: Any, lost: list[str]) -> Obj | None:
    """One assistant content block as a native block, or None (reported in `lost`)."""
    if not isinstance(block, dict):
        lost.append("a non-object content block")
        return None
    btype = block.get("type")
    if btype == "text":
        return _with_cache(text_block(str(block.get("text", ""))), block)
    if btype == "thinking":
        out: Obj = {"type": "thinking", "thinking": str(block.get("thinking", ""))}
        if isinstance(block.get("signature"), str):
            out["thinkingSignature"] = block["signature"]
        return out
    if btype == "redacted_thinking":
        return {"type": "thinking", "thinking": "", "thinkingSignature": block.get("data", ""),
                "redacted": True}
    if btype in ("server_tool_use", "mcp_tool_use") or (
            isinstance(btype, str) and btype.endswith("_tool_result")):
        return server_block(block, lost)  # run and answered by the server, in this turn
    if btype == "tool_use":
        call: Obj = {"type": "toolCall", "id": block.get("id"), "name": block.get("name"),
                     "arguments": block.get("input") if block.get("input") is not None else {}}
        if isinstance(block.get("signature"), str):
            call["thoughtSignature"] = block["signature"]  # Cline keeps Gemini's here
        return _with_cache(call, block)
    lost.append(f"assistant block of type {btype!r}")
    return None


def _with_cache(native: Obj, block: Obj) -> Obj:
    if "cache_control" in block:
        native["cache_control"] = block["cache_control"]
    return native


def _reasoning(block: Obj) -> Obj:
    """A Roo Code reasoning block or item as thinking: plain text, or the encrypted item kept
    whole as the signature (replayed only where the item came from)."""
    summary = block.get("summary")
    texts = [s.get("text", "") for s in summary if isinstance(s, dict)] if isinstance(
        summary, list) else []
    text = block.get("text") if isinstance(block.get("text"), str) else "\n\n".join(
        t for t in texts if isinstance(t, str))
    out: Obj = {"type": "thinking", "thinking": text}
    if isinstance(block.get("encrypted_content"), str):
        item = {k: block[k] for k in ("type", "id", "summary", "encrypted_content") if k in block}
        out["thinkingSignature"] = json.dumps(item, ensure_ascii=False)
    return out


class _Reader:
    """The records of one message list, in order."""

    def __init__(self, path: str | None, model: str, hidden: dict[int, str],
                 dropped_results: set[str], items: list[Any]) -> None:
        self.path = path
        self.model = model
        self.hidden = hidden
        self.dropped_results = dropped_results
        self.result = ReadResult()
        self.names: dict[str, str] = {}
        self.calls: list[cline.Call] = []  # the calls of the message before the next user's
        self.items = items
        # how each user message still to come after those calls answers them, the next last
        self.run: list[cline.Answers] = []

    def item(self, i: int, item: Any) -> None:
        src = Source(index=i, path=self.path)
        if not isinstance(item, dict):
            self.result.problems.append(Problem(f"item {i}: not a message object", self.path))
            return
        if i in self.hidden:
            self.result.records.append(context_record(item, src, FORMAT, self.hidden[i]))
            return
        lost: list[str] = []
        if _reasoning_item(item):
            self._assistant(item, [_reasoning(item)], src, responses=True)
        elif item.get("role") == "assistant":
            self._assistant_message(item, src, lost)
        elif item.get("role") == "user":
            self._user(item, src, lost)
        else:
            lost.append(f"a message with role {item.get('role')!r}")
        for what in lost:
            self.result.problems.append(
                Problem(f"item {i}: {what} could not be imported", self.path))

    def _assistant_message(self, item: Obj, src: Source, lost: list[str]) -> None:
        content = item.get("content")
        self.calls = cline.calls_of(content)
        self.run = []
        raw = content if isinstance(content, list) else (
            [{"type": "text", "text": content}] if isinstance(content, str) else [])
        blocks: list[Obj] = []
        responses = False
        signature: Any = None
        for block in raw:
            if isinstance(block, dict) and block.get("type") == "reasoning":
                blocks.append(_reasoning(block))
                responses = responses or "encrypted_content" in block
                continue
            if isinstance(block, dict) and block.get("type") == "thoughtSignature":
                signature = block.get("thoughtSignature")
                continue
            native = assistant_block(block, lost)
            if native is not None:
                blocks.append(native)
        first_call = next((b for b in blocks if b["type"] == "toolCall"), None)
        if isinstance(signature, str) and first_call is not None:
            first_call["thoughtSignature"] = signature  # Gemini's: on the step's first call
        for b in blocks:
            if b["type"] == "toolCall" and isinstance(b.get("id"), str):
                self.names[b["id"]] = str(b.get("name", ""))
        self._assistant(item, blocks, src, responses)

    def _assistant(self, item: Obj, blocks: list[Obj], src: Source, responses: bool) -> None:
        has_call = any(b["type"] == "toolCall" for b in blocks)
        reason = item.get("stop_reason")
        stop = STOP.get(reason, "toolUse" if has_call else "stop") if isinstance(
            reason, str) else ("toolUse" if has_call else "stop")
        info = item.get("modelInfo")
        model = info.get("id") if isinstance(info, dict) else item.get("model")
        message: Obj = {"role": "assistant", "content": blocks,
                        "api": "openai-responses" if responses else "anthropic-messages",
                        "provider": "openai" if responses else "anthropic",
                        "model": model if isinstance(model, str) else self.model,
                        "stopReason": stop}
        self.result.records.append(message_record(message, src, item, FORMAT))

    def _user(self, item: Obj, src: Source, lost: list[str]) -> None:
        own: list[Obj] = []
        if results_after_other_blocks(item):
            self.result.problems.append(Problem(
                f"item {src.index}: user message holds other blocks before its tool results; "
                "the API takes results first (repair puts them first)", self.path,
                kind=ChangeKind.RESULTS_MOVED))
        blocks = _content(item)
        answers = self._answers(src.index or 0, blocks)
        for i, block in enumerate(blocks):
            btype = block.get("type") if isinstance(block, dict) else None
            if i in answers.superseded:
                self.result.records.append(context_record(
                    block, src, FORMAT, "Cline's placeholder for a result it wrote as text "
                    "after it: not sent"))
            elif btype == "tool_result":
                self._result(block, item, src, lost, answers.result_ids.get(i))
            elif i in answers.texts:
                cid = answers.texts[i]
                self.result.records.append(message_record(
                    {"role": "toolResult", "toolCallId": cid,
                     "toolName": self.names.get(cid, ""),
                     "content": [text_block(str(block.get("text", "")))], "isError": False},
                    src, item, FORMAT))
            elif btype == "text":
                own.append(_with_cache(text_block(str(block.get("text", ""))), block))
            elif btype == "image" and image(block) is not None:
                own.append(image(block) or {})
            elif btype == "document":
                own.append(block)  # an attached PDF or text, in the shape providers read
            elif btype == "file" and isinstance(block, dict):
                own.append(text_block(f"<file_content path=\"{block.get('path', '')}\">\n"
                                      f"{block.get('content', '')}\n</file_content>"))
            else:
                lost.append(f"user block of type {btype!r}")
        if own:
            self.result.records.append(message_record(
                {"role": "user", "content": own}, src, item, FORMAT))

    def _answers(self, i: int, blocks: list[Any]) -> cline.Answers:
        """How the user message at `i` answers the calls before it, worked out once for the
        run of user messages that follows them (Cline reads a reply's results from all of
        them)."""
        if self.calls:
            run = [blocks]
            for k in range(i + 1, len(self.items)):
                later = self.items[k]
                if k in self.hidden or not isinstance(later, dict) or later.get(
                        "role") != "user":
                    break
                run.append(_content(later))
            self.run = cline.answers_run(self.calls, run)[::-1]
            self.calls = []
        return self.run.pop() if self.run else cline.Answers()

    def _result(self, block: Obj, item: Obj, src: Source, lost: list[str],
                call_id: str | None = None) -> None:
        cid = call_id or str(block.get("tool_use_id", ""))
        if cid in self.dropped_results:
            self.result.records.append(context_record(
                block, src, FORMAT, "result of a call Roo Code condensed away: not sent"))
            return
        name = block.get("name") if isinstance(block.get("name"), str) else self.names.get(cid)
        self.result.records.append(message_record(
            {"role": "toolResult", "toolCallId": cid, "toolName": str(name or ""),
             "content": result_content(block.get("content"), lost),
             "isError": block.get("is_error") is True}, src, item, FORMAT))


def _content(item: Obj) -> list[Any]:
    content = item.get("content")
    return content if isinstance(content, list) else [text_block(content)] if isinstance(
        content, str) else []


def roo_hidden(items: list[Any]) -> tuple[dict[int, str], set[str]]:
    """What Roo Code's effective history leaves out: the index of each message it does not
    send (with why), and the ids of results it strips because their call was condensed."""
    dicts = [(i, m) for i, m in enumerate(items) if isinstance(m, dict)]
    markers = {m["truncationId"] for _, m in dicts
               if m.get("isTruncationMarker") and isinstance(m.get("truncationId"), str)}
    hidden: dict[int, str] = {}
    summaries = [i for i, m in dicts if m.get("isSummary") is True]
    dropped: set[str] = set()
    if summaries:
        last = summaries[-1]
        for i, _ in dicts:
            if i < last:
                hidden[i] = "condensed by Roo Code: before its latest summary, not sent"
        kept_calls = {str(b.get("id")) for i, m in dicts if i >= last
                      and m.get("role") == "assistant" for b in _blocks(m)
                      if b.get("type") == "tool_use"}
        dropped = {str(b.get("tool_use_id")) for i, m in dicts if i >= last
                   and m.get("role") == "user" for b in _blocks(m)
                   if b.get("type") == "tool_result"} - kept_calls
    for i, m in dicts:
        if i not in hidden and is_in(m.get("truncationParent"), markers):
            hidden[i] = ("hidden by Roo Code's sliding-window truncation (its marker is in "
                         "the history): not sent")
    return hidden, dropped


def _request_row(doc: Obj, path: str | None) -> Record:
    rest = {k: v for k, v in doc.items() if k != "messages"}
    return context_record(rest, Source(path=path), FORMAT,
                          "the fields beside the messages (system prompt, tools, settings)")


def read(raw: bytes, path: str | None, document: Any = None,
         progress: Progress | None = None) -> ReadResult:
    """The progress of a JSON document is not reported: it is decoded in one step."""
    found = document_items(raw, path, document, FORMAT, EXPECTED,
                           lambda doc: messages_of(doc, evident=False))
    if isinstance(found, ReadResult):
        return found
    doc, items = found
    model = doc.get("model") if isinstance(doc, dict) else None
    hidden, dropped = roo_hidden(items)
    reader = _Reader(path, model if isinstance(model, str) else "", hidden, dropped, items)
    if isinstance(doc, dict) and set(doc) - {"messages"}:
        reader.result.records.append(_request_row(doc, path))
    for i, item in enumerate(items):
        reader.item(i, item)
    return finish(reader.result, path, FORMAT)
