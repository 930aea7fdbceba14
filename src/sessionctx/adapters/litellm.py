"""LiteLLM: a `CustomLogger` whose pre-call hooks repair a request's history before any
provider sees it, in the shape its call type carries.

    import litellm
    from sessionctx.adapters.litellm import SessionctxLogger

    litellm.callbacks = [SessionctxLogger()]

With the SDK (`litellm.completion`, `acompletion`, `litellm.anthropic.messages`, `responses`)
the repair runs in `async_pre_call_deployment_hook`; behind the LiteLLM proxy, in
`async_pre_call_hook` (see docs/frameworks.md for the proxy's `callbacks:` setting). Each call
type is read in its own shape: chat `messages` (completion), an Anthropic Messages body
(`anthropic_messages`, the proxy's `/v1/messages` route), a Responses `input` (responses). A
request the provider would accept goes out as it came; nothing is invented: a call with no
result is left out (its message kept if it says anything else) and listed as pending.

Chat messages are folded (tool pairing, older browser screenshots) and placed and named by the
provider step of the API LiteLLM sends them to (Anthropic's for an Anthropic model, else Chat
Completions'), the one `build --provider` runs (results right after their calls, no call id
twice, ids and tool names of the API's pattern, arguments a JSON object:
`adapters/provider_step.py`): unchanged ones go out as the very objects given, an assistant
message that lost a call goes out without it, a call or result the step rewrote goes out as
the step sends it. Anthropic and Responses bodies
go through the request repair the proxy runs (`sessionctx.providers.wire.repair_request`),
which runs that same provider step. Every change is logged to `sessionctx.adapters.litellm` and
given to `on_changes` / `on_report`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import litellm
from litellm.integrations.custom_logger import CustomLogger

from sessionctx.adapters.fold import (
    Conversations,
    OnChanges,
    OnReport,
    Report,
    Reporter,
    rebuild,
)
from sessionctx.adapters.provider_step import WireCall, wire_call, wire_calls
from sessionctx.changes import Change
from sessionctx.context import BuildOptions
from sessionctx.formats.common import data_url_image, text_block
from sessionctx.messages import Message
from sessionctx.providers.policies.turns import json_text
from sessionctx.providers.wire import repair_request
from sessionctx.screenshots import OMITTED_NOTE

__all__ = ["SessionctxLogger"]

_LOG = logging.getLogger("sessionctx.adapters.litellm")
_ITEM = "_item"  # a native image block's index in its message's content parts
# the registry's names of the APIs whose calls this adapter repairs
ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES = "anthropic", "openai-chat", "openai-responses"
_ANTHROPIC_CALLS = frozenset({"anthropic_messages", "aanthropic_messages"})
_RESPONSES_CALLS = frozenset({"responses", "aresponses"})
# the keys of a request that bear on whether its history is valid, besides the history
_ANTHROPIC_KEYS = ("model", "system", "tools", "tool_choice", "thinking")
_RESPONSES_KEYS = ("model", "instructions", "tools", "tool_choice", "reasoning")


class SessionctxLogger(CustomLogger):
    """Repairs the history of every call LiteLLM makes.

    Each conversation keeps its own fold between calls (named by `litellm_session_id` or
    `metadata.session_id` where the caller sets one), so an agent loop that sends the same list
    one turn longer each time pays only for its new messages, and one logger serves any number
    of concurrent conversations.
    """

    def __init__(self, options: BuildOptions | None = None, *,
                 on_changes: OnChanges | None = None,
                 on_report: OnReport | None = None,
                 logger: logging.Logger | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._options = options or BuildOptions()
        self._conversations = Conversations(_Natives, self._options, stateful=True)
        self._report = Reporter(logger or _LOG, on_changes, on_report)

    def repair(self, messages: Sequence[Any], conversation: str | None = None,
               model: str | None = None, provider: str | None = None) -> Sequence[Any]:
        """Chat messages to send to `model` (LiteLLM's name, `provider` its
        `custom_llm_provider` where given); `messages` itself when nothing changes."""
        api = _api(model, provider)
        with self._conversations.fold(messages, conversation, api, model) as folded:
            if not folded.changed and not folded.context.pending_calls:
                return messages
            out: Sequence[Any] = messages
            if folded.changed:
                out = rebuild(messages, folded, lambda note: {"role": "user", "content": note},
                              lambda original, parts: _rewritten(original, parts[0][1]))
            self._conversations.keep(self._report(folded.changes, conversation,
                                                  list(folded.context.pending_calls)))
        return out

    def report(self, conversation: str) -> Report | None:
        """The latest changes and pending calls of a conversation named by its session id."""
        return self._conversations.report(conversation)

    def _wire(self, api: str, body: dict[str, Any]) -> Any:
        """`body` through the request repair, or None when the provider would accept it."""
        fixed = repair_request(api, body, note_unpaired=self._options.note_unpaired)
        return fixed if fixed.changed else None

    def _repaired(self, data: dict[str, Any], call_type: Any) -> dict[str, Any] | None:
        kind = str(getattr(call_type, "value", call_type) or "")
        conversation = _conversation(data)
        if kind in _ANTHROPIC_CALLS:
            return self._body(ANTHROPIC, data, "messages", _ANTHROPIC_KEYS, conversation)
        if kind in _RESPONSES_CALLS:
            if not isinstance(data.get("input"), list):
                return None
            return self._body(OPENAI_RESPONSES, data, "input", _RESPONSES_KEYS, conversation)
        messages = data.get("messages")
        if not isinstance(messages, list) or not messages:
            return None
        model, provider = data.get("model"), data.get("custom_llm_provider")
        repaired = self.repair(messages, conversation, model if isinstance(model, str) else None,
                               provider if isinstance(provider, str) else None)
        if repaired is messages:
            return None
        return {**data, "messages": repaired}

    def _body(self, api: str, data: dict[str, Any], history: str, keys: tuple[str, ...],
              conversation: str | None) -> dict[str, Any] | None:
        """A request whose history is a provider body's: repaired as that provider's."""
        if not isinstance(data.get(history), list) or not data[history]:
            return None
        body = {history: data[history], **{k: data[k] for k in keys
                                           if data.get(k) is not None}}
        fixed = self._wire(api, body)
        if fixed is None:
            return None
        self._conversations.keep(self._report(list(fixed.changes), conversation,
                                              list(fixed.pending_calls)))
        return {**data, history: fixed.body[history]}

    async def async_pre_call_deployment_hook(self, kwargs: dict[str, Any],
                                             call_type: Any) -> dict[str, Any] | None:
        return self._repaired(kwargs, call_type)

    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any,
                                  data: dict[str, Any], call_type: Any) -> dict[str, Any]:
        return self._repaired(data, call_type) or data


def _api(model: str | None, provider: str | None) -> str:
    """The API whose rules a chat request's history is sent by: Anthropic's Messages for a
    model LiteLLM sends there (`anthropic/...`, or a name it lists as Anthropic's), Chat
    Completions' for any other."""
    if provider is None and model is not None:
        head, slash, _ = model.partition("/")
        provider = head if slash else "anthropic" if model in litellm.anthropic_models else None
    return ANTHROPIC if provider == "anthropic" else OPENAI_CHAT


def _conversation(data: dict[str, Any]) -> str | None:
    session = data.get("litellm_session_id")
    if session is None:
        metadata = data.get("metadata") or data.get("litellm_metadata")
        if isinstance(metadata, dict):
            session = metadata.get("session_id")
    return str(session) if session is not None else None


class _Natives:
    """OpenAI chat messages -> native messages; a legacy `function_call` is named by its
    position and answered by the next `function` message."""

    def __init__(self) -> None:
        self._legacy: str | None = None

    def __call__(self, message: Any, index: int,
                 dropped: list[Change]) -> list[tuple[int, Message]]:
        # a plain dict is read as it is (`type(...) is dict` inline: this runs for every
        # message and every call of a history)
        m = message if type(message) is dict else _as_dict(message)
        role = m.get("role")
        if role in ("system", "developer"):
            content = m.get("content")
            return [(0, {"role": "system", "content": content if isinstance(content, str)
                         else "".join(b["text"] for b in _blocks(content) if "text" in b)})]
        if role == "assistant":
            blocks = _blocks(m.get("content"))
            for call in m.get("tool_calls") or ():
                if type(call) is not dict:
                    call = _as_dict(call)
                function = call.get("function") or {}
                if type(function) is not dict:
                    function = _as_dict(function)
                blocks.append({"type": "toolCall", "id": call.get("id"),
                               "name": function.get("name"),
                               "arguments": function.get("arguments")})
            legacy = m.get("function_call")
            if legacy:
                self._legacy = f"function_call_{index}"
                blocks.append({"type": "toolCall", "id": self._legacy,
                               "name": _as_dict(legacy).get("name"),
                               "arguments": _as_dict(legacy).get("arguments")})
            return [(0, {"role": "assistant", "content": blocks})]
        if role in ("tool", "function"):
            call_id = m.get("tool_call_id")
            if role == "function" and call_id is None:
                call_id, self._legacy = self._legacy, None
            return [(0, {"role": "toolResult", "toolCallId": call_id,
                         "toolName": m.get("name") or "", "content": _blocks(m.get("content"))})]
        return [(0, {"role": "user", "content": _blocks(m.get("content"))})]


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    dump = getattr(value, "model_dump", None)
    dumped = dump() if callable(dump) else None
    return dumped if isinstance(dumped, dict) else {}


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [text_block(content)] if content else []
    out: list[dict[str, Any]] = []
    for k, part in enumerate(content if isinstance(content, list) else []):
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            out.append(text_block(str(part.get("text", ""))))
        elif part.get("type") == "image_url":
            url = part.get("image_url")
            image = data_url_image(url.get("url") if isinstance(url, dict) else url)
            out.append({**(image or {"type": "image", "data": "", "mimeType": ""}), _ITEM: k})
        else:
            out.append({"type": str(part.get("type"))})
    return out


def _rewritten(original: Any, native: Message) -> Any:
    """The original message as the context has it: less its dropped calls, its calls as the
    provider step sends them, or with its older screenshots replaced by a note."""
    m = dict(_as_dict(original))
    if m.get("role") == "assistant":
        ids = {old: list(queue) for old, queue in wire_calls(native).items()}
        tool_calls = []
        for call in m.get("tool_calls") or []:
            old = _as_dict(call).get("id")
            wire = wire_call(ids, old)
            if wire is not None:
                tool_calls.append(call if wire == (old, None, None) else _sent(call, wire))
        if tool_calls:
            m["tool_calls"] = tool_calls
        else:
            m.pop("tool_calls", None)
        if m.get("function_call") and not any(
                isinstance(i, str) and i.startswith("function_call_") for i in wire_calls(native)):
            m.pop("function_call")
        return m
    if m.get("role") == "tool" and native.get("toolCallId") != m.get("tool_call_id"):
        m["tool_call_id"] = native.get("toolCallId")
    content = m.get("content")
    if isinstance(content, list):
        kept_items = {b[_ITEM] for b in native.get("content", []) if _ITEM in b}
        m["content"] = [part if not (isinstance(part, dict) and part.get("type") == "image_url")
                        or k in kept_items else {"type": "text", "text": OMITTED_NOTE}
                        for k, part in enumerate(content)]
    return m


def _sent(call: Any, wire: WireCall) -> dict[str, Any]:
    """A chat tool call under the wire's id, and its function's name and arguments (as JSON
    text) where the step rewrote them."""
    out = {**_as_dict(call), "id": wire.id}
    function = dict(_as_dict(out.get("function") or {}))
    if wire.name is not None:
        function["name"] = wire.name
    if wire.arguments is not None:
        function["arguments"] = json_text(wire.arguments)
    out["function"] = function
    return out
