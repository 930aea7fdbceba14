"""The request's own settings (docs/provider-rules.md §1.1, §1.4, §2): Anthropic's thinking
switch and final assistant prefill, and Chat's limit on calls per message.

These rules are about the request around the history, so they run after the turns are placed:
- thinking on: the assistant turn an open tool loop belongs to must start with a thinking
  block ("When thinking is enabled, a final assistant message must start with a thinking
  block"). Nothing can invent one, so a loop that has none it can replay is closed: its calls
  and results are sent as text and the request starts a new assistant turn.
- prefill: only models that take one, never with thinking on, never after an assistant turn,
  and without trailing whitespace ("final assistant content cannot end with trailing
  whitespace").
- Chat: an assistant message holds at most 128 tool_calls ("array too long. Expected an array
  with maximum length 128"); a longer one is split into messages of at most that many, each
  followed by its results, in call order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.errors import SessionctxError
from sessionctx.messages import TextBlock
from sessionctx.providers.as_text import call_text, result_head
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.turns import RESULT, Block, Prepared, Turn, has
from sessionctx.providers.violations import Violation


class RequestError(SessionctxError, ValueError):
    """A request setting the provider or model refuses, with the rule it breaks."""


def apply(prep: Prepared, cap: Capability, thinking: bool | None, prefill: str | None) -> None:
    """The settings' rules on turns already placed (check_settings has accepted them)."""
    if thinking and cap.thinking_rules:
        close_unthought_loop(prep)
    if prefill is not None:
        add_prefill(prep, prefill)
    if cap.max_tool_calls is not None:
        split_calls(prep, cap.max_tool_calls)


def check_settings(cap: Capability, model: str, thinking: bool | None,
                   prefill: str | None, tool_choice: str | None = None) -> None:
    """Refuses settings the target does not take, before anything is built."""
    if (thinking is not None or prefill is not None) and not cap.thinking_rules:
        what = "--thinking" if thinking is not None else "a prefill"
        raise RequestError(f"{what} applies to Anthropic and Claude models on Bedrock, not to "
                           f"{cap.provider}/{model}")
    if thinking and not cap.forced_tool_thinking and tool_choice not in (None, "auto", "none"):
        raise RequestError(f"Thinking may not be enabled when tool_choice forces tool use "
                           f"({model} has manual extended thinking): choose auto or none")
    if prefill is None:
        return
    if not cap.prefill:
        raise RequestError(f"{model} does not support assistant message prefill: the "
                           "conversation must end with a user message")
    if thinking:
        raise RequestError("a prefill is not supported with extended thinking: turn thinking "
                           "off or leave the prefill out")
    if not prefill.strip():
        raise RequestError("a prefill needs some non-blank text")


def close_unthought_loop(prep: Prepared) -> None:
    """With thinking on, an open tool loop whose assistant turn does not start with thinking is
    sent as text, so the request starts a new assistant turn."""
    turns = prep.turns
    if not turns or turns[-1][0] != "user" or not has(turns[-1][1], RESULT):
        return
    start = len(turns) - 1
    while start > 0 and not (turns[start][0] == "user" and not has(turns[start][1], RESULT)):
        start -= 1
    first = next((k for k in range(start, len(turns)) if turns[k][0] == "assistant"), None)
    if first is None or (turns[first][1] and turns[first][1][0]["type"] == "thinking"):
        return
    for k in range(first, len(turns)):
        role, blocks, index = turns[k]
        if role == "assistant" and has(blocks, "toolCall"):
            turns[k] = (role, [_call_as_text(b) for b in blocks], index)
        elif has(blocks, RESULT):
            turns[k] = (role, [t for b in blocks for t in _result_as_text(b)], index)
        else:
            continue
        prep.log(ChangeKind.LOOP_AS_TEXT,
                 "When thinking is enabled, a final assistant message must start "
                 "with a thinking block; this tool loop has none to replay, so its calls and "
                 "results are sent as text", index)


def _call_as_text(block: Block) -> Block:
    if block["type"] != "toolCall":
        return block
    return {"type": "text", "text": call_text(block["name"], block["id"], block["arguments"])}


def _result_as_text(block: Block) -> list[Block]:
    if block["type"] != RESULT:
        return [block]
    head: TextBlock = {"type": "text",
                       "text": result_head(block["name"], block["id"], block["isError"])}
    return [head, *block["content"]]


def add_prefill(prep: Prepared, text: str) -> None:
    """The prefill as the last turn, trailing whitespace trimmed."""
    if prep.turns and prep.turns[-1][0] == "assistant":
        raise RequestError("the history ends with an assistant turn; a prefill goes after a "
                           "user message")
    if not any(role == "user" for role, _, _ in prep.turns):
        raise RequestError("the history holds no user turn; a prefill goes after a user "
                           "message")
    trimmed = text.rstrip()
    if trimmed != text:
        prep.log(ChangeKind.PREFILL_TRIMMED,
                 "final assistant content cannot end with trailing whitespace")
    prep.turns.append(("assistant", [{"type": "text", "text": trimmed}], None))
    prep.log(ChangeKind.PREFILL_ADDED, "the request ends with the given assistant prefill")


def split_calls(prep: Prepared, limit: int) -> None:
    """An assistant turn over `limit` calls becomes turns of at most `limit` calls, each followed
    by the results of its calls (the placement pass put them right after, in call order)."""
    turns = prep.turns
    if all(len(blocks) <= limit for _, blocks, _ in turns):
        return  # no turn holds more blocks, so none holds more calls, than the limit
    out: list[Turn] = []
    k = 0
    while k < len(turns):
        role, blocks, index = turns[k]
        calls = [b for b in blocks if b["type"] == "toolCall"] if role == "assistant" else []
        nxt = turns[k + 1] if k + 1 < len(turns) else None
        if len(calls) <= limit or nxt is None:
            out.append(turns[k])
            k += 1
            continue
        results = {b["id"]: b for b in nxt[1] if b["type"] == RESULT}
        rest: list[Block] = [b for b in nxt[1] if b["type"] != RESULT]
        others: list[Block] = [b for b in blocks if b["type"] != "toolCall"]
        chunks = [calls[i:i + limit] for i in range(0, len(calls), limit)]
        for n, chunk in enumerate(chunks):
            answers: list[Block] = [results[c["id"]] for c in chunk if c["id"] in results]
            out.append((role, [*(others if n == 0 else []), *chunk], index))
            out.append((nxt[0], answers + (rest if n == len(chunks) - 1 else []), nxt[2]))
        prep.log(ChangeKind.CALLS_SPLIT,
                 f"an assistant message holds at most {limit} tool_calls (array "
                 f"too long); its {len(calls)} calls were sent in {len(chunks)} messages, each "
                 "followed by its results", index, calls=len(calls), messages=len(chunks))
        k += 2
    prep.turns = out


# ---------------------------------------------------------------- checking a body

def violations(body: dict[str, Any], cap: Capability, thinking: bool | None, prefill: bool,
               kind_of: Callable[[Any], str | None], forces_tool: bool,
               blocks_of: Callable[[Any], Any] = lambda content: content) -> list[Violation]:
    """The rules of the thinking switch and the prefill, for a body sent with them: `kind_of`
    reads a block of the provider's body in Anthropic's terms (thinking, tool_use,
    tool_result, text), `forces_tool` says whether its tool choice forces a tool, `blocks_of`
    spells out a message's content as the provider's blocks."""
    out: list[Violation] = []
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return out

    def content(k: int) -> list[Any]:  # read where a rule looks: mostly the last messages
        m = messages[k]
        found = blocks_of(m.get("content")) if isinstance(m, dict) else None
        return found if isinstance(found, list) else []

    def role(k: int) -> Any:
        m = messages[k]
        return m.get("role") if isinstance(m, dict) else None

    last = len(messages) - 1
    if prefill:
        if role(last) != "assistant":
            out.append(Violation("messages", "a prefill is the last message, an assistant one"))
        else:
            if not cap.prefill:
                out.append(Violation(f"messages[{last}]", "This model does not support "
                                     "assistant message prefill. The conversation must end "
                                     "with a user message."))
            if thinking:
                out.append(Violation(f"messages[{last}]", "a prefill is not supported with "
                                     "extended thinking"))
            tail = content(last)[-1] if content(last) else None
            if isinstance(tail, dict) and isinstance(tail.get("text"), str) and \
                    tail["text"] != tail["text"].rstrip():
                out.append(Violation(f"messages[{last}]", "final assistant content cannot end "
                                     "with trailing whitespace"))
            if thinking is False and any(kind_of(b) == "thinking" for b in content(last)):
                out.append(Violation(f"messages[{last}]", "When thinking is disabled, an "
                                     "assistant message in the final position cannot contain "
                                     "thinking"))
    if thinking and role(last) == "user" and any(kind_of(b) == "tool_result"
                                                  for b in content(last)):
        start = last
        while start > 0 and not (role(start) == "user" and not any(
                kind_of(b) == "tool_result" for b in content(start))):
            start -= 1
        first = next((k for k in range(start, last) if role(k) == "assistant"), None)
        if first is not None and (not content(first) or kind_of(content(first)[0]) != "thinking"):
            out.append(Violation(f"messages[{first}].content[0]", "Expected thinking or "
                                 "redacted_thinking, but found text. When thinking is enabled, "
                                 "a final assistant message must start with a thinking block "
                                 "(preceeding the lastmost set of tool_use and tool_result "
                                 "blocks)"))
    if thinking and not cap.forced_tool_thinking and forces_tool:
        out.append(Violation("tool_choice", "Thinking may not be enabled when tool_choice "
                             "forces tool use."))
    return out
