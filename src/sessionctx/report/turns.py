"""Which turn of a provider body each context message went into, found without asking the
provider step: a body shares its texts and arguments with the context (the same string
objects), so a body turn holding a message's strings came from that message."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sessionctx.messages import Message

_LISTS = ("messages", "contents", "input")


def body_turns(body: dict[str, Any]) -> list[Any]:
    """The history list of a body, whatever the provider calls it."""
    for key in _LISTS:
        value = body.get(key)
        if isinstance(value, list):
            return value
    return []


def _strings(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) > 1:  # CPython shares the empty and one-character strings
                yield item
        elif isinstance(item, dict):
            # ids are rewritten to one new string for a call and its result alike: they would
            # tie a result's turn to the call's message
            stack.extend(v for k, v in item.items() if not k.lower().endswith("id"))
        elif isinstance(item, list):
            stack.extend(item)


def turns_of_messages(messages: Sequence[Message], body: dict[str, Any]
                      ) -> tuple[list[dict[str, Any]], list[list[int]]]:
    """The body's turns for the page, and for each context message the turns it went into.

    A turn is matched by the string objects it shares with a message, else by a long text
    equal to one only that message holds (a provider may copy a lone text); a turn with neither
    (a call item whose arguments were encoded anew) goes with the turn before it, as the
    provider writes a message's parts one after another.
    """
    owner: dict[int, int] = {}
    by_text: dict[str, int] = {}
    caller = _callers(messages)
    for j, message in enumerate(messages):
        for s in _strings(message):
            # a string met in two messages (an interned role or type) says nothing
            if owner.setdefault(id(s), j) != j:
                owner[id(s)] = -1
            if len(s) >= 16 and by_text.setdefault(s, j) != j:
                by_text[s] = -1
    into: list[list[int]] = [[] for _ in messages]
    turns: list[dict[str, Any]] = []
    previous: set[int] = set()
    for k, turn in enumerate(body_turns(body)):
        role = turn.get("role", turn.get("type")) if isinstance(turn, dict) else None
        turns.append({"role": role if isinstance(role, str) else "?", "body": turn})
        found: set[int] = set()
        for s in _strings(turn):
            j = owner.get(id(s), -1)
            if j < 0 and len(s) >= 16:
                j = by_text.get(s, -1)
            if j >= 0:
                found.add(j)
        if not found:  # a call item encoded anew: the message that made the call
            j = caller.get(_call_id(turn), -1)
            found = {j} if j >= 0 else previous
        for j in sorted(found):
            into[j].append(k)
        previous = found
    return turns, into


def _callers(messages: Sequence[Message]) -> dict[str, int]:
    """Each call id, and the context message that makes the call."""
    out: dict[str, int] = {}
    for j, message in enumerate(messages):
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(
                    block.get("id"), str):
                out.setdefault(block["id"].split("|", 1)[0], j)
    return out


def _call_id(turn: Any) -> str:
    """The call a body turn makes, when it is one call item (a Responses function call)."""
    if isinstance(turn, dict) and turn.get("type") in ("function_call", "custom_tool_call"):
        call_id = turn.get("call_id")
        return call_id if isinstance(call_id, str) else ""
    return ""
