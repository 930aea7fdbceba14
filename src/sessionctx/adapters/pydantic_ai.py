"""pydantic-ai: a history processor that gives the model a history it accepts, made of the very
`ModelMessage` objects it was given (signatures, ids and `provider_details` intact).

    from pydantic_ai import Agent
    from sessionctx.adapters.pydantic_ai import history_capability

    agent = Agent(model, capabilities=[history_capability()])

`SessionctxHistory()` itself is the processor: pass it as `ProcessHistory(SessionctxHistory())`,
or in `history_processors=[...]` where the installed pydantic-ai still takes that.

What it folds: tool pairing (a call with no return is left out and reported as pending, a return
with no call is dropped), the returns pydantic-ai makes up for interrupted calls (they are not a
tool's outcome, so they are dropped and their call with them), browser screenshots in older tool
returns, and the latest `CompactionPart`, before which nothing is sent, as pydantic-ai itself
reads a compacted history (a provider's compaction from its part on; an application's summary
from its request on). Then what the provider step of the API the run's model calls would place
and name (results right after their calls, no call id twice, ids of the API's pattern), as
`build --provider` does.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai import messages as pm
from pydantic_ai.capabilities import ProcessHistory

from sessionctx.adapters.fold import Conversations, OnChanges, OnReport, Report, Reporter, rebuild
from sessionctx.adapters.provider_step import REWRITTEN, named_api
from sessionctx.changes import Change, ChangeKind, Source
from sessionctx.context import BuildOptions
from sessionctx.messages import Message
from sessionctx.providers.wire import ANTHROPIC, GEMINI, OPENAI_CHAT, OPENAI_RESPONSES
from sessionctx.screenshots import OMITTED_NOTE

__all__ = ["SessionctxHistory", "history_capability"]

_LOG = logging.getLogger("sessionctx.adapters.pydantic_ai")
_PART = "_part"  # a native block's part index in its ModelResponse
_ITEM = "_item"  # a native image block's index in its tool return's content
_ERROR_OUTCOMES = frozenset({"failed", "denied", "retried"})


class SessionctxHistory:
    """A pydantic-ai history processor running the sessionctx fold.

    One instance serves an agent's every run at once, from any number of threads or tasks:
    each conversation (told apart by its first message object) keeps its own fold, so each
    model request costs only its new messages. `on_changes` receives every change made to a
    request, `on_report` the changes with the calls left pending; each change is also logged to
    `sessionctx.adapters.pydantic_ai`.

    The API whose provider step applies is told by the run's model (Anthropic, OpenAI Chat or
    Responses, Google), or named by `provider`; a model it does not know, or none (`process`,
    `clean` called directly), gets Chat Completions' rules.
    """

    def __init__(self, options: BuildOptions | None = None, *,
                 on_changes: OnChanges | None = None,
                 on_report: OnReport | None = None,
                 logger: logging.Logger | None = None,
                 provider: str | None = None) -> None:
        self._conversations = Conversations(_natives, options)
        self._report = Reporter(logger or _LOG, on_changes, on_report)
        self._provider = named_api(provider)

    async def __call__(self, ctx: RunContext[Any],
                       messages: list[pm.ModelMessage]) -> list[pm.ModelMessage]:
        return self.process(messages, ctx.model)

    def process(self, messages: list[pm.ModelMessage],
                model: Any = None) -> list[pm.ModelMessage]:
        """The history `model` (a pydantic-ai model, or None) should see."""
        return self._processed(messages, model)[0]

    def clean(self, messages: list[pm.ModelMessage],
              model: Any = None) -> tuple[list[pm.ModelMessage], Report]:
        """A stored history made fit to pass as `message_history`, with what was changed and
        the calls left pending. pydantic-ai refuses a history that ends on a call with no
        return before any processor runs; this is the way to resume one:

            history, report = SessionctxHistory().clean(stored)
            agent.run_sync("go on", message_history=history)
        """
        return self._processed(messages, model)

    def _processed(self, messages: list[pm.ModelMessage], model: Any
                   ) -> tuple[list[pm.ModelMessage], Report]:
        api = self._provider or _api(model)
        name = getattr(model, "model_name", None)
        with self._conversations.fold(messages, None, api,
                                      name if isinstance(name, str) else None) as folded:
            report = self._report(folded.changes, None, folded.context.pending_calls)
            if not folded.changed:
                return messages, report
            return rebuild(messages, folded,
                           lambda note: pm.ModelRequest(parts=[pm.UserPromptPart(note)]),
                           _changed), report


def history_capability(options: BuildOptions | None = None, *,
                       on_changes: OnChanges | None = None,
                       on_report: OnReport | None = None,
                       logger: logging.Logger | None = None) -> ProcessHistory[Any]:
    """`ProcessHistory(SessionctxHistory(...))`, for `Agent(..., capabilities=[...])`."""
    return ProcessHistory(SessionctxHistory(options, on_changes=on_changes,
                                            on_report=on_report, logger=logger))


_APIS = {"AnthropicModel": ANTHROPIC, "OpenAIResponsesModel": OPENAI_RESPONSES,
         "GoogleModel": GEMINI, "GeminiModel": GEMINI}


def _api(model: Any) -> str:
    """The API a pydantic-ai model calls (Chat Completions' for one it does not know)."""
    while hasattr(model, "wrapped"):  # an instrumented or wrapper model
        model = model.wrapped
    return _APIS.get(type(model).__name__, OPENAI_CHAT)


# -- ModelMessage -> native messages ------------------------------------------------------------

def _natives(message: pm.ModelMessage, index: int,
             dropped: list[Change]) -> list[tuple[int, Message]]:
    if isinstance(message, pm.ModelResponse):
        return _response_natives(message)
    out: list[tuple[int, Message]] = []
    for j, part in enumerate(message.parts):
        if isinstance(part, pm.BaseToolReturnPart):
            if _invented(part):
                dropped.append(Change(
                    ChangeKind.DROPPED_INVENTED_RESULT,
                    f"return of {part.tool_name} ({part.tool_call_id}) dropped: it was made up "
                    "for an interrupted call, not returned by the tool",
                    Source(index=index, part=j), None, {"tool_call_id": part.tool_call_id}))
                continue
            out.append((j, _result(part.tool_call_id, part.tool_name, part.content,
                                   part.outcome in _ERROR_OUTCOMES)))
        elif isinstance(part, pm.RetryPromptPart) and part.tool_name is not None:
            out.append((j, _result(part.tool_call_id, part.tool_name, None, True)))
        elif isinstance(part, pm.CompactionPart):
            out.append((j, _checkpoint(part)))
            out.append((j, {"role": "user", "content": [{"type": "text",
                                                          "text": part.content or ""}]}))
        elif isinstance(part, pm.SystemPromptPart):
            out.append((j, {"role": "system", "content": part.content}))
        else:
            out.append((j, {"role": "user", "content": []}))
    return out


def _response_natives(message: pm.ModelResponse) -> list[tuple[int, Message]]:
    """One assistant message; a compaction part starts a checkpoint, and what came before it in
    the same response is a message of its own that the checkpoint replaces."""
    out: list[tuple[int, Message]] = []
    blocks: list[dict[str, Any]] = []
    for p, part in enumerate(message.parts):
        if isinstance(part, pm.CompactionPart):
            if blocks:
                out.append((len(out), {"role": "assistant", "content": blocks}))
                blocks = []
            out.append((len(out), _checkpoint(part)))
            blocks.append({"type": "compaction", _PART: p})
        elif isinstance(part, pm.TextPart):
            blocks.append({"type": "text", "text": part.content, _PART: p})
        elif isinstance(part, pm.BaseToolCallPart) and not isinstance(part, pm.NativeToolCallPart):
            blocks.append({"type": "toolCall", "id": part.tool_call_id, "name": part.tool_name,
                           "arguments": part.args, _PART: p})
        else:  # reasoning, files, the provider's own tool calls and returns: kept as they are
            blocks.append({"type": part.part_kind, _PART: p})
    out.append((len(out), {"role": "assistant", "content": blocks}))
    return out


def _invented(part: pm.BaseToolReturnPart[Any]) -> bool:
    metadata = part.metadata
    return part.outcome == "interrupted" or (
        isinstance(metadata, dict)
        and metadata.get(pm.SYNTHESIZED_TOOL_RETURN_METADATA_KEY) is True)


def _result(call_id: str, name: str, content: Any, is_error: bool) -> Message:
    blocks: list[dict[str, Any]] = []
    if isinstance(content, list | tuple):
        blocks = [{"type": "image", _ITEM: k} for k, item in enumerate(content)
                  if _is_image(item)]
    elif _is_image(content):
        blocks = [{"type": "image", _ITEM: -1}]
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name, "content": blocks,
            "isError": is_error}


def _is_image(item: Any) -> bool:
    return isinstance(item, pm.ImageUrl) or (isinstance(item, pm.BinaryContent)
                                             and item.is_image)


def _checkpoint(part: pm.CompactionPart) -> Message:
    """A sessionctx checkpoint standing for the compaction: nothing before it is sent."""
    return {"type": "compaction", "at": "", "baseSeq": 0, "plannerVersion": 0,
            "summaryModelRef": part.provider_name or "pydantic-ai",
            "qualityAudit": "not audited: a pydantic-ai compaction", "summary": part.content or "",
            "messages": [], "firstKeptIndex": 0, "tokensBefore": 0, "tokensAfter": 0}


# -- the context -> ModelMessages -----------------------------------------------------------------

def _changed(original: pm.ModelMessage, parts: list[tuple[int, Message]]) -> pm.ModelMessage:
    """A message the context changed: a response less its dropped calls, a request with its
    parts as the context has them."""
    if isinstance(original, pm.ModelResponse):
        return replace(original, parts=[_response_part(original.parts[block[_PART]], block)
                                        for _, native in parts
                                        for block in native["content"] if _PART in block])
    # a compaction part's checkpoint never reaches the context: each part comes once
    return replace(original, parts=[_request_part(original.parts[j], native)
                                    for j, native in parts])


def _response_part(part: Any, block: dict[str, Any]) -> Any:
    """A call part as the provider step sends it (its id, and its tool name and arguments
    where the step rewrote them); any other part as it is."""
    if not isinstance(part, pm.BaseToolCallPart) or block.get("type") != "toolCall":
        return part
    rewritten = block.get(REWRITTEN, ())
    changed = {field: block[key] for field, key in (("tool_name", "name"), ("args", "arguments"))
               if key in rewritten}
    if block.get("id") != part.tool_call_id:
        changed["tool_call_id"] = block["id"]
    return replace(part, **changed) if changed else part


def _request_part(part: Any, native: Message) -> Any:
    """The part as the context has it: itself, a return under the id the provider step gave
    its call, or a tool return whose older screenshots are replaced by a note."""
    if isinstance(part, pm.BaseToolReturnPart | pm.RetryPromptPart) and \
            native.get("role") == "toolResult" and native.get("toolCallId") != part.tool_call_id:
        part = replace(part, tool_call_id=native["toolCallId"])
    if not isinstance(part, pm.BaseToolReturnPart):
        return part
    kept = {block[_ITEM] for block in native["content"] if _ITEM in block}
    content = part.content
    if isinstance(content, list | tuple):
        omitted = [k for k, item in enumerate(content) if _is_image(item) and k not in kept]
        if not omitted:
            return part
        new: list[Any] = list(content)
        for k in omitted:
            new[k] = OMITTED_NOTE
        return replace(part, content=new)
    if _is_image(content) and -1 not in kept:
        return replace(part, content=OMITTED_NOTE)
    return part
