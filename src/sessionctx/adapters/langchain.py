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
`additional_kwargs`), a `ToolMessage` whose older screenshots were replaced with a note (the
conversion both ways: `adapters/langchain_messages.py`). The middleware needs the `langchain`
package (its `AgentMiddleware`, with `langgraph`, which it installs); the history needs only
`langchain-core`'s messages, the hook `langgraph`.

One middleware serves any number of conversations at once: each thread (LangGraph's
`thread_id`, or the list's first message where there is none) is folded apart from the others,
and `report(thread_id)` gives its latest changes and pending calls.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    BaseMessage,
    HumanMessage,
    RemoveMessage,
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
from sessionctx.adapters.langchain_messages import from_native, native, natives, rewritten, same
from sessionctx.adapters.provider_step import named_api
from sessionctx.changes import ChangeKind
from sessionctx.context import BuildOptions
from sessionctx.providers.wire import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES
from sessionctx.store import Store, open_store

__all__ = ["SessionctxChatHistory", "SessionctxMiddleware"]

_LOG = logging.getLogger("sessionctx.adapters.langchain")
FORMAT = "langchain"


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
        self._conversations = Conversations(natives, options, same=same)
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
                           lambda original, parts: rewritten(original, parts[0][1]))

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
                out.append(from_native(message))
                continue
            original = messages_from_dict([raw])[0]
            out.append(original if message is record.view else rewritten(original, message))
        return out

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self.store.append_many(self.session_id, [
            {"type": "message", "message": native(m), "importedFrom": FORMAT,
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
