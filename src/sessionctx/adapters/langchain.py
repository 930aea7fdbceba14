"""LangChain: an agent middleware that hands the model a repaired message list, a LangGraph
pre-model hook for graphs built without middleware, and a chat message history on a sessionctx
store.

    from langchain.agents import create_agent
    from sessionctx.adapters.langchain import SessionctxMiddleware

    agent = create_agent(model, tools, middleware=[SessionctxMiddleware()])

The middleware repairs what each model call sends (`wrap_model_call`, LangChain's way to change
one call's request) and leaves the agent's state as it is; `rewrite_state=True` writes the
repaired list back into the state instead, as LangChain's own summarization does. For
`create_react_agent` and hand-built graphs: `pre_model_hook=middleware.pre_model_hook`.

All give back LangChain's own message objects: unchanged messages as they were (ids,
`additional_kwargs`, `response_metadata` intact), an `AIMessage` that lost a call without it (in
`tool_calls`, `invalid_tool_calls`, its content's tool_use blocks and OpenAI-style
`additional_kwargs`), a `ToolMessage` whose older screenshots were replaced with a note. The
middleware needs the `langchain` package (its `AgentMiddleware`, with `langgraph`, which it
installs); the history needs only `langchain-core`'s messages, the hook `langgraph`.

One middleware serves any number of conversations at once: each thread (LangGraph's
`thread_id`, or the list's first message where there is none) is folded apart from the others,
and `report(thread_id)` gives its latest changes and pending calls.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from sessionctx.adapters.fold import (
    Conversations,
    OnChanges,
    OnReport,
    Report,
    Reporter,
    rebuild,
    stored_context,
)
from sessionctx.adapters.provider_step import call_ids, named_api
from sessionctx.changes import Change, ChangeKind
from sessionctx.context import BuildOptions
from sessionctx.formats.common import data_url_image, text_block
from sessionctx.messages import Message, calls
from sessionctx.providers.wire import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES
from sessionctx.screenshots import OMITTED_NOTE
from sessionctx.store import Store, open_store

__all__ = ["SessionctxChatHistory", "SessionctxMiddleware"]

_LOG = logging.getLogger("sessionctx.adapters.langchain")
FORMAT = "langchain"
_ITEM = "_item"  # a native image block's index in its ToolMessage's content
_CALL_BLOCKS = frozenset({"tool_use", "tool_call", "function_call"})


class SessionctxMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Repairs the messages of each model call; reports what changed, per conversation.

    `options.note_unpaired` adds, after a call that was removed for want of a result, a user
    note saying it was interrupted and its outcome is unknown, so the model checks before it
    repeats it.

    The list is also placed and named as the provider step of the API the model is called
    through would (results right after their calls, no call id twice, ids of the API's
    pattern): `provider` names it ("anthropic", "openai-chat", "openai-responses"); by
    default it is told by each call's model (`ChatAnthropic`, `ChatOpenAI`), and where there
    is none (the hook, `repair`) or another model, Chat Completions' rules are used.
    """

    def __init__(self, options: BuildOptions | None = None, *,
                 on_changes: OnChanges | None = None,
                 on_report: OnReport | None = None,
                 logger: logging.Logger | None = None,
                 rewrite_state: bool = False,
                 provider: str | None = None) -> None:
        super().__init__()
        self._conversations = Conversations(_natives, options)
        self._report = Reporter(logger or _LOG, on_changes, on_report)
        self._rewrite_state = rewrite_state
        self._provider = named_api(provider)

    def wrap_model_call(self, request: ModelRequest[Any],
                        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
                        ) -> ModelResponse[Any]:
        return handler(self._request(request))

    async def awrap_model_call(self, request: ModelRequest[Any],
                               handler: Callable[[ModelRequest[Any]],
                                                 Awaitable[ModelResponse[Any]]]
                               ) -> ModelResponse[Any]:
        return await handler(self._request(request))

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        if not self._rewrite_state:
            return None
        messages = state["messages"]
        repaired = self.repair(messages, _thread(runtime))
        if repaired is messages:
            return None
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *repaired]}

    async def abefore_model(self, state: AgentState[Any],
                            runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    def pre_model_hook(self, state: Any, config: Any = None) -> dict[str, Any]:
        """A LangGraph `pre_model_hook`: the repaired list as `llm_input_messages`, so only
        what the model is sent changes, never the graph's state."""
        messages = state["messages"] if isinstance(state, dict) else state.messages
        thread = None
        if isinstance(config, dict):
            thread = (config.get("configurable") or {}).get("thread_id")
        return {"llm_input_messages": list(self.repair(messages,
                                                       str(thread) if thread else None))}

    def repair(self, messages: Sequence[BaseMessage], conversation: str | None = None,
               model: Any = None) -> Sequence[BaseMessage]:
        """The messages `model` (a chat model, or None) should be sent; `messages` itself when
        nothing changes."""
        api, name = self._provider or _api(model), _model_name(model)
        with self._conversations.fold(messages, conversation, api, name) as folded:
            if not folded.changed:
                return messages
            self._conversations.keep(self._report(folded.changes, conversation,
                                                  folded.context.pending_calls))
            return rebuild(messages, folded, HumanMessage,
                           lambda original, parts: _rewritten(original, parts[0][1]))

    def report(self, thread_id: str) -> Report | None:
        """The latest changes and pending calls of a LangGraph thread, if any were made."""
        return self._conversations.report(thread_id)

    def _request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        messages = request.messages
        repaired = self.repair(messages, _thread(request.runtime), request.model)
        if repaired is messages:
            return request
        return request.override(messages=list(repaired))  # type: ignore[arg-type]


def _api(model: Any) -> str:
    """The API a LangChain chat model calls (Chat Completions' for one it does not know)."""
    model = getattr(model, "bound", model)  # a model with tools bound
    kind = getattr(model, "_llm_type", None) if model is not None else None
    if kind == "anthropic-chat":
        return ANTHROPIC
    if isinstance(kind, str) and kind.endswith("openai-chat") and \
            getattr(model, "use_responses_api", None) is True:
        return OPENAI_RESPONSES
    return OPENAI_CHAT


def _model_name(model: Any) -> str | None:
    model = getattr(model, "bound", model)
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    return name if isinstance(name, str) else None


def _thread(runtime: Any) -> str | None:
    info = getattr(runtime, "execution_info", None)
    thread = getattr(info, "thread_id", None)
    return str(thread) if thread else None


class SessionctxChatHistory(BaseChatMessageHistory):
    """A `BaseChatMessageHistory` kept as records in a sessionctx store.

    `messages` is the repaired history read from the latest checkpoint on; every message
    added stays stored as it was given, and `clear()` appends a checkpoint instead of deleting.
    """

    def __init__(self, session_id: str, store: Store | str | None = None, *,
                 options: BuildOptions | None = None,
                 on_changes: OnChanges | None = None,
                 logger: logging.Logger | None = None) -> None:
        self.session_id = session_id
        self.store: Store = store if store is not None and not isinstance(store, str) \
            else open_store(store)
        self._options = options
        self._report = Reporter(logger or _LOG, on_changes)

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        context, by_seq, _ = stored_context(self.store, self.session_id, self._options)
        self._report(context.changes)
        out: list[BaseMessage] = []
        notes = {c.message_index for c in context.changes
                 if c.kind == ChangeKind.INTERRUPTED_NOTE_ADDED}
        for k, (message, source) in enumerate(zip(context.messages, context.sources,
                                                  strict=True)):
            if k in notes:
                out.append(HumanMessage(message["content"][0]["text"]))
                continue
            record = by_seq.get(source.seq)
            raw = record.data.get("raw") if record is not None else None
            if record is None or source.part is not None or not isinstance(raw, dict):
                out.append(_from_native(message))
                continue
            original = messages_from_dict([raw])[0]
            out.append(original if message is record.view else _rewritten(original, message))
        return out

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self.store.append_many(self.session_id, [
            {"type": "message", "message": _native(m), "importedFrom": FORMAT,
             "raw": message_to_dict(m)} for m in messages])

    def clear(self) -> None:
        _, _, last = stored_context(self.store, self.session_id, self._options)
        if last == 0:
            return
        self.store.append_checkpoint(self.session_id, {
            "type": "compaction", "at": "", "baseSeq": last, "plannerVersion": 0,
            "summaryModelRef": "langchain:clear", "qualityAudit": "not a summary: cleared",
            "summary": "", "messages": [], "firstKeptIndex": 0, "tokensBefore": 0,
            "tokensAfter": 0}, expected_last_seq=last)


# -- BaseMessage -> native --------------------------------------------------------------------

def _natives(message: BaseMessage, index: int,
             dropped: list[Change]) -> list[tuple[int, Message]]:
    return [(0, _native(message))]


def _kind(message: BaseMessage) -> type[BaseMessage]:
    """The message class `_native` reads it as: its own when it is one of those, else the one
    it derives from (a chunk, an application's subclass). Looked up by exact class first: an
    `isinstance` on a LangChain message costs more than the rest of its conversion."""
    cls = type(message)
    if cls in _KINDS:
        return cls
    for kind in _KINDS:
        if isinstance(message, kind):
            return kind
    return HumanMessage


_KINDS = (AIMessage, ToolMessage, SystemMessage, HumanMessage)


def _native(message: BaseMessage) -> Message:
    kind = _kind(message)
    if kind is AIMessage:
        ai = cast(AIMessage, message)
        blocks = [b for b in _blocks(ai.content) if b.get("type") not in _CALL_BLOCKS]
        for call in ai.tool_calls:
            blocks.append({"type": "toolCall", "id": call.get("id"), "name": call["name"],
                           "arguments": call.get("args")})
        for bad in ai.invalid_tool_calls:
            blocks.append({"type": "toolCall", "id": bad.get("id"), "name": bad.get("name"),
                           "arguments": {"input": bad.get("args")}})
        return {"role": "assistant", "content": blocks}
    if kind is ToolMessage:
        tool = cast(ToolMessage, message)
        return {"role": "toolResult", "toolCallId": tool.tool_call_id,
                "toolName": tool.name or "", "content": _blocks(tool.content),
                "isError": tool.status == "error"}
    if kind is SystemMessage:
        return {"role": "system", "content": str(message.text)}
    return {"role": "user", "content": _blocks(message.content)}


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

def _rewritten(original: BaseMessage, native: Message) -> BaseMessage:
    """The original message as the context has it: less its dropped calls, its calls and
    result under the ids the provider step gave them, or with its older screenshots replaced
    by a note."""
    if isinstance(original, AIMessage):
        return _with_calls(original, call_ids(native))
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


def _with_calls(message: AIMessage, ids: dict[str | None, list[str | None]]) -> AIMessage:
    """The message with only the calls `ids` names (by the id each has), each under its new
    id, wherever LangChain keeps a call: `tool_calls`, `invalid_tool_calls`, the content's
    call blocks, OpenAI-style `additional_kwargs`."""
    content = message.content
    if isinstance(content, list):
        new_id = _renamer(ids, _block_call_id)
        gone = [isinstance(b, dict) and b.get("type") in _CALL_BLOCKS
                and _block_call_id(b) not in ids for b in content]
        # Responses asks that reasoning be followed by the item it produced: reasoning whose
        # next block was a call taken out, or that nothing follows any more, goes with it
        content = [new_id(b) if isinstance(b, dict) and b.get("type") in _CALL_BLOCKS else b
                   for k, b in enumerate(content) if not gone[k] and not (
                       isinstance(b, dict) and b.get("type") == "reasoning"
                       and not any(not g for g in gone[k + 1:])
                       and (any(gone[k + 1:]) or not ids))]
    extra = dict(message.additional_kwargs)
    if isinstance(extra.get("tool_calls"), list):
        new_id = _renamer(ids, lambda c: c.get("id"))
        left = [new_id(c) for c in extra["tool_calls"] if isinstance(c, dict)
                and c.get("id") in ids]
        if left:
            extra["tool_calls"] = left
        else:
            extra.pop("tool_calls")
    calls_as = _renamer(ids, lambda c: c.get("id"))
    return message.model_copy(update={
        "content": content, "additional_kwargs": extra,
        "tool_calls": [calls_as(c) for c in message.tool_calls if c.get("id") in ids],
        "invalid_tool_calls": [calls_as(c) for c in message.invalid_tool_calls
                               if c.get("id") in ids]})


def _renamer(ids: dict[str | None, list[str | None]],
             id_of: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A copy of each call given, in order, under the next new id its old id has (the call
    itself when that is its own). One renamer per place a call is kept, as each place lists
    every call once."""
    left = {old: list(new) for old, new in ids.items()}

    def renamed(call: Any) -> Any:
        old = id_of(call)
        queue = left.get(old)
        new = queue.pop(0) if queue else old
        if new == old:
            return call
        key = "call_id" if isinstance(call, dict) and call.get("type") == "function_call" \
            else "id"
        return {**call, key: new}
    return renamed


def _block_call_id(block: dict[str, Any]) -> Any:
    """A content block's call id: `call_id` for a Responses function_call (its `id` is the
    item's), `id` for the others."""
    return block.get("call_id") if block.get("type") == "function_call" else block.get("id")


def _from_native(message: Message) -> BaseMessage:
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

