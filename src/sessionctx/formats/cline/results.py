"""Which blocks of the user message after native tool calls answer those calls, as Cline
pairs them.

Cline runs each `tool_use` of an assistant message in order and writes its outcome into the
next user message. When it can map the call to its `tool_use_id` it writes a `tool_result`
(with that id, and the provider's `call_id` beside it); when it cannot (the map is cleared
between requests, and some providers send no `call_id`), it writes a text block
`"[<tool description>] Result:\\n<result>"`, where the description starts with the tool's
name: `[read_file for 'a.cs']`, `[attempt_completion]`, `[use_mcp_tool for 'server']`, except
for its sub-agent tools: `use_subagents` is `[subagents]`, a configured sub-agent's
`use_subagent_<name>` is `[subagent: <its name as configured>]` (or `[subagents]` when its
configuration is gone).
A call it skipped after the user rejected an earlier one is answered by
`"Skipping tool due to user rejecting a previous tool. [<description>]"` (or "Tool was
interrupted and not executed due to ..."), and, with one tool per message, by
`"Tool [<name>] was not executed because a tool has already been used in this message. ..."`.
Before sending, Cline puts a `tool_result` "result missing" first for a call with no result
block; when that placeholder stands in the file, the text after it is the call's real result.
Cline's SDK, taking over a task of the extension, puts its own placeholder ("[migration] Tool
result missing in legacy conversation history.") in the user message after the calls and
moves that message's other blocks, the "[…] Result:" texts among them, to a user message of
their own after it: the results of a reply are read from all the user messages that follow
it (`answers_run`), as the SDK reads them.

Each such text answers the earliest call of the message before it, not answered yet, whose
name it carries. The file is read as it stands; nothing here changes what Cline wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

MCP_MARK = "0mcp0"  # Cline's native name of an MCP tool: <server key>0mcp0<tool name>
PLACEHOLDERS = frozenset({"result missing",
                          "[migration] Tool result missing in legacy conversation history."})
_SKIPPED = ("Skipping tool due to user rejecting a previous tool. ",
            "Tool was interrupted and not executed due to user rejecting a previous tool. ")
_SKIPPED_OLD = ("Skipping tool ", " due to user rejecting a previous tool.")
_ALREADY = " was not executed because a tool has already been used in this message."


@dataclass(frozen=True, slots=True)
class Call:
    """A `tool_use` block of the assistant message before: its id, name and `call_id`."""

    id: str
    name: str
    call_id: str = ""


@dataclass(slots=True)
class Answers:
    """What the user message's blocks are, by index: text that answers a call (its id), a
    `tool_result` whose `tool_use_id` names no call but whose `call_id` does (the call's id),
    and placeholders a real text result replaces."""

    texts: dict[int, str] = field(default_factory=dict)
    result_ids: dict[int, str] = field(default_factory=dict)
    superseded: set[int] = field(default_factory=set)


def calls_of(content: Any) -> list[Call]:
    """The `tool_use` blocks of an assistant message's content, in order."""
    if not isinstance(content, list):
        return []
    return [Call(b["id"], str(b.get("name", "")), str(b.get("call_id") or ""))
            for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
            and isinstance(b.get("id"), str)]


def answers(calls: list[Call], blocks: list[Any]) -> Answers:
    """How the user message `blocks` answers `calls` (the message before it)."""
    out = Answers()
    if not calls:
        return out
    ids = {c.id for c in calls}
    by_call_id = {c.call_id: c.id for c in calls if c.call_id}
    answered: set[str] = set()
    placeholders: dict[str, int] = {}
    for i, block in enumerate(blocks):
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        cid = block.get("tool_use_id")
        by_call = by_call_id.get(block.get("call_id") or "") if isinstance(
            block.get("call_id"), str) else None
        if not (isinstance(cid, str) and cid in ids) and by_call is not None:
            cid = out.result_ids[i] = by_call
        if not isinstance(cid, str):
            continue
        if isinstance(block.get("content"), str) and block["content"] in PLACEHOLDERS:
            placeholders.setdefault(cid, i)
        else:
            answered.add(cid)
    for i, block in enumerate(blocks):
        if not isinstance(block, dict) or block.get("type") != "text":
            continue
        text = block.get("text")
        call = _answered_call(text, calls, answered) if isinstance(text, str) else None
        if call is None:
            continue
        answered.add(call.id)
        out.texts[i] = call.id
        if call.id in placeholders:
            out.superseded.add(placeholders[call.id])
    return out


def _answered_call(text: str, calls: list[Call], answered: set[str]) -> Call | None:
    for call in calls:
        if call.id not in answered and _answers(text, call.name):
            return call
    return None


def answers_run(calls: list[Call], run: list[list[Any]]) -> list[Answers]:
    """How the user messages after `calls` (their blocks, each message's in `run`), up to
    the next other message, answer those calls: each message's own `Answers`, its indexes
    within it."""
    whole = answers(calls, [b for blocks in run for b in blocks])
    out = []
    start = 0
    for blocks in run:
        end = start + len(blocks)
        out.append(Answers({i - start: c for i, c in whole.texts.items() if start <= i < end},
                           {i - start: c for i, c in whole.result_ids.items()
                            if start <= i < end},
                           {i - start for i in whole.superseded if start <= i < end}))
        start = end
    return out


_SUBAGENTS = "use_subagents"
_SUBAGENT = "use_subagent_"  # a configured sub-agent's tool: use_subagent_<name>


def _described_names(name: str) -> tuple[str, ...]:
    """The names Cline's description of a call starts with."""
    if MCP_MARK in name:
        return ("use_mcp_tool",)
    if name == _SUBAGENTS:
        return ("subagents",)
    if name.startswith(_SUBAGENT):
        return ("subagent:", "subagents")
    return (name,)


def _answers(text: str, name: str) -> bool:
    """Whether `text` answers a call named `name`: by its description, or as the note that it
    was not run, which names the tool as Cline ran it."""
    described = _described_names(name)
    return any(_answers_as(text, d) for d in described) or any(
        text.startswith(f"Tool [{n}]{_ALREADY}") for n in (name, *described))


def _answers_as(text: str, name: str) -> bool:
    head = f"[{name}"
    if text.startswith(head) and text[len(head):len(head) + 1] in ("]", " "):
        return "] Result:" in text
    for prefix in _SKIPPED:
        if text.startswith(prefix):
            rest = text[len(prefix):]
            return rest.startswith(head) and rest[len(head):len(head) + 1] in ("]", " ")
    return text.startswith(_SKIPPED_OLD[0] + head) and text.endswith(_SKIPPED_OLD[1])
