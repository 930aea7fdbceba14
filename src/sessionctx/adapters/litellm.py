"""LiteLLM: a `CustomLogger` whose pre-call hooks repair `messages` before any provider sees
them.

    import litellm
    from sessionctx.adapters.litellm import SessionctxLogger

    litellm.callbacks = [SessionctxLogger()]

With the SDK (`litellm.completion`, `acompletion`) the repair runs in
`async_pre_call_deployment_hook`; behind the LiteLLM proxy, in `async_pre_call_hook` (list the
logger under `callbacks` in the proxy config). Messages are OpenAI chat messages: unchanged ones
go out as the very objects given, an assistant message that lost a call goes out without it,
and every change is logged to `sessionctx.adapters.litellm` and given to `on_changes`. Nothing
is invented: a call with no result is left out (its message kept if it says anything else).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from litellm.integrations.custom_logger import CustomLogger

from sessionctx.adapters.fold import IncrementalFold, OnChanges, Reporter, rebuild
from sessionctx.changes import Change
from sessionctx.context import BuildOptions
from sessionctx.formats.common import data_url_image, text_block
from sessionctx.messages import Message, calls
from sessionctx.screenshots import OMITTED_NOTE

__all__ = ["SessionctxLogger"]

_LOG = logging.getLogger("sessionctx.adapters.litellm")
_ITEM = "_item"  # a native image block's index in its message's content parts


class SessionctxLogger(CustomLogger):
    """Repairs the chat messages of every call LiteLLM makes.

    One fold is kept between calls, so an agent loop that sends the same list one turn longer
    each time pays only for its new messages.
    """

    def __init__(self, options: BuildOptions | None = None, *,
                 on_changes: OnChanges | None = None,
                 logger: logging.Logger | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._fold = IncrementalFold(_Natives(), options)
        self._report = Reporter(logger or _LOG, on_changes)
        self._lock = threading.Lock()

    def repair(self, messages: Sequence[Any]) -> Sequence[Any]:
        """The messages to send; `messages` itself when nothing changes."""
        with self._lock:
            folded = self._fold.run(messages)
        if not folded.changed:
            return messages
        self._report(folded.changes)
        return rebuild(messages, folded, lambda note: {"role": "user", "content": note},
                       lambda original, parts: _rewritten(original, parts[0][1]))

    def _repaired(self, data: dict[str, Any]) -> dict[str, Any] | None:
        messages = data.get("messages")
        if not isinstance(messages, list) or not messages:
            return None
        repaired = self.repair(messages)
        if repaired is messages:
            return None
        return {**data, "messages": repaired}

    async def async_pre_call_deployment_hook(self, kwargs: dict[str, Any],
                                             call_type: Any) -> dict[str, Any] | None:
        return self._repaired(kwargs)

    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any,
                                  data: dict[str, Any], call_type: Any) -> dict[str, Any]:
        return self._repaired(data) or data


class _Natives:
    """OpenAI chat messages -> native messages; a legacy `function_call` is named by its
    position and answered by the next `function` message."""

    def __init__(self) -> None:
        self._legacy: str | None = None

    def __call__(self, message: Any, index: int,
                 dropped: list[Change]) -> list[tuple[int, Message]]:
        m = _as_dict(message)
        role = m.get("role")
        if role in ("system", "developer"):
            content = m.get("content")
            return [(0, {"role": "system", "content": content if isinstance(content, str)
                         else "".join(b["text"] for b in _blocks(content) if "text" in b)})]
        if role == "assistant":
            blocks = _blocks(m.get("content"))
            for call in m.get("tool_calls") or []:
                call = _as_dict(call)
                function = _as_dict(call.get("function") or {})
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
    """The original message as the context has it: less its dropped calls, or with its older
    screenshots replaced by a note."""
    m = dict(_as_dict(original))
    if m.get("role") == "assistant":
        kept = {c.id for c in calls(native)}
        tool_calls = [c for c in m.get("tool_calls") or [] if _as_dict(c).get("id") in kept]
        if tool_calls:
            m["tool_calls"] = tool_calls
        else:
            m.pop("tool_calls", None)
        if m.get("function_call") and not any(
                isinstance(i, str) and i.startswith("function_call_") for i in kept):
            m.pop("function_call")
        return m
    content = m.get("content")
    if isinstance(content, list):
        kept_items = {b[_ITEM] for b in native.get("content", []) if _ITEM in b}
        m["content"] = [part if not (isinstance(part, dict) and part.get("type") == "image_url")
                        or k in kept_items else {"type": "text", "text": OMITTED_NOTE}
                        for k, part in enumerate(content)]
    return m
