"""LangChain's message objects as native messages, and the context's messages back as
LangChain's: what the middleware and the chat history (`adapters/langchain.py`) fold and send.

Unchanged messages are never rebuilt: only an `AIMessage` that lost a call (wherever LangChain
keeps one) or whose calls were renamed, a `ToolMessage` under a new call id or whose older
screenshots were replaced with a note, is copied.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from sessionctx.adapters.provider_step import WireCall, wire_call, wire_calls
from sessionctx.changes import Change
from sessionctx.formats.common import data_url_image, text_block
from sessionctx.messages import Message, calls
from sessionctx.providers.policies.turns import json_text
from sessionctx.screenshots import OMITTED_NOTE

__all__ = ["from_native", "native", "natives", "rewritten", "same"]

_ITEM = "_item"  # a native image block's index in its ToolMessage's content
_CALL_BLOCKS = frozenset({"tool_use", "tool_call", "function_call"})


# -- BaseMessage -> native --------------------------------------------------------------------

def natives(message: BaseMessage, index: int,
            dropped: list[Change]) -> list[tuple[int, Message]]:
    """The fold's converter (`fold.Convert`): one native message a LangChain message."""
    return [(0, native(message))]


def same(a: BaseMessage, b: BaseMessage) -> bool:
    """Whether two messages convert alike (one loaded anew as a copy of the other): the same
    class and fields. pydantic's own `==` also compares what conversion never reads, at
    thrice the cost."""
    return a is b or (type(a) is type(b) and a.__dict__ == b.__dict__)


_KINDS = (AIMessage, ToolMessage, SystemMessage, HumanMessage)
_EXACT: dict[type, type[BaseMessage]] = {kind: kind for kind in _KINDS}


def _kind(message: BaseMessage) -> type[BaseMessage]:
    """The message class `native` reads it as: its own when it is one of those, else the one
    it derives from (a chunk, an application's subclass). Looked up by exact class first: an
    `isinstance` on a LangChain message costs more than the rest of its conversion."""
    exact = _EXACT.get(type(message))
    if exact is not None:
        return exact
    for kind in _KINDS:
        if isinstance(message, kind):
            return kind
    return HumanMessage


def native(message: BaseMessage) -> Message:
    """The native message a LangChain message stands for. Its fields are read from its
    `__dict__` at once: a pydantic field read looks through the class's bases first, and this
    runs for every message of a history."""
    kind = _kind(message)
    fields = message.__dict__
    content = fields["content"]
    if kind is AIMessage:
        blocks = ([text_block(content)] if content else []) if type(content) is str else [
            b for b in _blocks(content) if b.get("type") not in _CALL_BLOCKS]
        for call in fields["tool_calls"]:
            blocks.append({"type": "toolCall", "id": call.get("id"), "name": call["name"],
                           "arguments": call.get("args")})
        for bad in fields["invalid_tool_calls"]:
            # the text as it was streamed: the provider step decides what it needs
            blocks.append({"type": "toolCall", "id": bad.get("id"), "name": bad.get("name"),
                           "arguments": bad.get("args")})
        return {"role": "assistant", "content": blocks}
    if kind is ToolMessage:
        return {"role": "toolResult", "toolCallId": fields["tool_call_id"],
                "toolName": fields["name"] or "", "content": _blocks(content),
                "isError": fields["status"] == "error"}
    if kind is SystemMessage:
        return {"role": "system", "content": str(message.text)}
    return {"role": "user", "content": _blocks(content)}


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [text_block(content)] if content else []
    out: list[dict[str, Any]] = []
    for k, part in enumerate(content if isinstance(content, list) else []):
        if isinstance(part, str):
            out.append(text_block(part))
        elif not isinstance(part, dict):
            continue
        elif part.get("type") == "text":
            out.append(text_block(str(part.get("text", ""))))
        elif _is_image(part):
            out.append({**(_image(part) or {"type": "image", "data": "", "mimeType": ""}),
                        _ITEM: k})
        else:
            out.append({"type": str(part.get("type")), **{
                key: part[key] for key in ("id", "name") if key in part}})
    return out


def _is_image(part: dict[str, Any]) -> bool:
    return part.get("type") in ("image_url", "image")


def _image(part: dict[str, Any]) -> dict[str, Any] | None:
    url = part.get("image_url")
    if isinstance(url, dict):
        url = url.get("url")
    if url is None and isinstance(part.get("base64"), str):
        return {"type": "image", "data": part["base64"],
                "mimeType": part.get("mime_type") or "image/png"}
    return data_url_image(url if url is not None else part.get("url"))


# -- the context -> BaseMessage ---------------------------------------------------------------

def rewritten(original: BaseMessage, native: Message) -> BaseMessage:
    """The original message as the context has it: less its dropped calls, its calls and
    result as the provider step sends them (ids, names, arguments), or with its older
    screenshots replaced by a note."""
    if isinstance(original, AIMessage):
        return _with_calls(original, wire_calls(native))
    update: dict[str, Any] = {}
    if isinstance(original, ToolMessage) and native.get("toolCallId") != original.tool_call_id:
        update["tool_call_id"] = native.get("toolCallId")
    kept_items = {b[_ITEM] for b in native.get("content", []) if _ITEM in b}
    content = original.content
    if isinstance(content, list) and any(isinstance(part, dict) and _is_image(part)
                                         and k not in kept_items
                                         for k, part in enumerate(content)):
        update["content"] = [
            part if not (isinstance(part, dict) and _is_image(part)) or k in kept_items
            else {"type": "text", "text": OMITTED_NOTE} for k, part in enumerate(content)]
    return original.model_copy(update=update) if update else original


def _with_calls(message: AIMessage, wires: dict[str | None, list[WireCall]]) -> AIMessage:
    """The message with only the calls `wires` names (by the id each has), each as the step
    sends it, wherever LangChain keeps a call: `tool_calls`, `invalid_tool_calls`, the
    content's call blocks, OpenAI-style `additional_kwargs`."""
    content = message.content
    if isinstance(content, list):
        sent = _sender(wires, _block_call_id)
        gone = [isinstance(b, dict) and b.get("type") in _CALL_BLOCKS
                and _block_call_id(b) not in wires for b in content]
        # Responses asks that reasoning be followed by the item it produced: reasoning whose
        # next block was a call taken out, or that nothing follows any more, goes with it
        content = [sent(b) if isinstance(b, dict) and b.get("type") in _CALL_BLOCKS else b
                   for k, b in enumerate(content) if not gone[k] and not (
                       isinstance(b, dict) and b.get("type") == "reasoning"
                       and not any(not g for g in gone[k + 1:])
                       and (any(gone[k + 1:]) or not wires))]
    extra = dict(message.additional_kwargs)
    if isinstance(extra.get("tool_calls"), list):
        sent = _sender(wires, lambda c: c.get("id"))
        left = [sent(c) for c in extra["tool_calls"] if isinstance(c, dict)
                and c.get("id") in wires]
        if left:
            extra["tool_calls"] = left
        else:
            extra.pop("tool_calls")
    calls_as = _sender(wires, lambda c: c.get("id"))
    return message.model_copy(update={
        "content": content, "additional_kwargs": extra,
        "tool_calls": [calls_as(c) for c in message.tool_calls if c.get("id") in wires],
        "invalid_tool_calls": [calls_as(c) for c in message.invalid_tool_calls
                               if c.get("id") in wires]})


def _sender(wires: dict[str | None, list[WireCall]],
            id_of: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Each call given, in order, as the next way out its old id has (the call itself when
    the step kept it as it is). One sender per place a call is kept, as each place lists
    every call once."""
    left = {old: list(queue) for old, queue in wires.items()}

    def sent(call: Any) -> Any:
        old = id_of(call)
        wire = wire_call(left, old)
        if wire is None or wire == (old, None, None):
            return call
        return _as_sent(call, wire)
    return sent


def _as_sent(call: dict[str, Any], wire: WireCall) -> dict[str, Any]:
    """A copy of a call under the wire's id, name and arguments, each where its shape keeps
    it: a tool call's `args`, an invalid one's text, a tool_use block's `input`, a Responses
    function_call's `call_id` and text, an OpenAI-style call's `function`."""
    kind = call.get("type")
    out = {**call, "call_id" if kind == "function_call" else "id": wire.id}
    function = call.get("function")
    if isinstance(function, dict):
        out["function"] = function = dict(function)
        if wire.name is not None:
            function["name"] = wire.name
        if wire.arguments is not None:
            function["arguments"] = json_text(wire.arguments)
        return out
    if wire.name is not None:
        out["name"] = wire.name
    if wire.arguments is not None:
        if kind in ("function_call", "invalid_tool_call"):
            out["arguments" if kind == "function_call" else "args"] = json_text(wire.arguments)
        else:
            out["input" if kind == "tool_use" else "args"] = wire.arguments
    return out


def _block_call_id(block: dict[str, Any]) -> Any:
    """A content block's call id: `call_id` for a Responses function_call (its `id` is the
    item's), `id` for the others."""
    return block.get("call_id") if block.get("type") == "function_call" else block.get("id")


def from_native(message: Message) -> BaseMessage:
    """A message of a checkpoint another writer made (`sessionctx compact`), as LangChain's."""
    role = message.get("role")
    content = message.get("content")
    text = content if isinstance(content, str) else "".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict)
        and b.get("type") == "text")
    if role == "assistant":
        return AIMessage(text, tool_calls=[
            {"name": c.name or "", "args": c.arguments if isinstance(c.arguments, dict)
             else {}, "id": c.id, "type": "tool_call"} for c in calls(message)])
    if role in ("toolResult", "tool"):
        return ToolMessage(text, tool_call_id=str(message.get("toolCallId")
                                                  or message.get("tool_call_id") or ""))
    if role == "system":
        return SystemMessage(text)
    return HumanMessage(text)

