"""The provider step for a framework's list: the fold's context run through the same provider
step `build --provider` and the proxy run (`providers/policies`), and read back as the context's
own native messages, so each adapter sends it as its framework's objects.

What is read back is what a framework's client cannot do for itself when it renders the list:
where each tool result goes (first after its calls, in call order, before any other message),
the id each call and its result go out with (a reused id renamed, an id the provider's pattern
refuses rewritten), and a call's tool name and arguments where the provider would refuse them
(a name outside the pattern rewritten, arguments that are not a JSON object kept inside one).
Every other rule of the step (joining turns, the system prompt, block shapes) is the client's
own rendering, so the step runs with those turned off and its other changes are not taken.

The step costs a pass over the whole context, so the fold runs it only where a watch over the
new messages finds a reason to (`adapters/provider_watch.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import msgspec

from sessionctx.changes import Change, ChangeKind, Source
from sessionctx.context import Context
from sessionctx.errors import BadArgument
from sessionctx.messages import (
    RESULT_ROLES,
    Call,
    Message,
    calls,
    result_id,
)
from sessionctx.pairing import OpenCall, Pairing
from sessionctx.providers.policies import RESULT, prepare, repair_arguments
from sessionctx.providers.registry import provider as registered

__all__ = ["KINDS", "RENAMED_FROM", "REWRITTEN", "Step", "WireCall", "named_api", "provider_step",
           "run_step", "wire_call", "wire_calls"]

# the changes of the step that the read-back carries out
KINDS = frozenset({ChangeKind.RESULTS_MOVED, ChangeKind.DUPLICATE_ID_RENAMED,
                   ChangeKind.ID_REWRITTEN, ChangeKind.NAME_REWRITTEN,
                   ChangeKind.ARGUMENTS_REPAIRED})
# on a call block or result message the step changed: the id it had
RENAMED_FROM = "_sessionctx_renamed_from"
# on a call block: which of "name" and "arguments" the step rewrote (the block holds the new)
REWRITTEN = "_sessionctx_rewritten"


class WireCall(NamedTuple):
    """A call as the step sends it: its id, and its tool name and arguments where the step
    rewrote them (None: as the framework holds them)."""

    id: str | None
    name: str | None = None
    arguments: dict[str, Any] | None = None


def named_api(name: str | None) -> str | None:
    """An adapter's `provider` argument, checked when the adapter is made (an unknown name is
    a BadArgument naming the known ones), not at its first request."""
    if name is not None:
        registered(name)
    return name


def wire_calls(native: Message) -> dict[str | None, list[WireCall]]:
    """How a native message's calls go out, under the id each call had before the step (one
    list per id, in call order, should a message hold two calls with one id)."""
    out: dict[str | None, list[WireCall]] = {}
    content = native.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "toolCall":
            new = block.get("id")
            rewritten = block.get(REWRITTEN, ())
            out.setdefault(block.get(RENAMED_FROM, new), []).append(WireCall(
                new, block["name"] if "name" in rewritten else None,
                block["arguments"] if "arguments" in rewritten else None))
    return out


def wire_call(calls: dict[str | None, list[WireCall]], old: Any) -> WireCall | None:
    """The next way out of a framework call whose id was `old` (taken off `calls`, a copy of
    `wire_calls`' answer): None for a call the context left out."""
    queue = calls.get(old)
    if queue is None:
        return None
    return queue.pop(0) if queue else WireCall(old)


@dataclass(frozen=True, slots=True)
class Step:
    """What the provider step made of a context's messages: them in its order (some copied
    with a new id), where each went, and its changes (indices those of `messages`)."""

    messages: list[Message]
    sources: list[Source]
    position: dict[int, int]  # a message's index in the context -> its index here
    added: list[Change]
    new_ids: frozenset[str]  # the ids it gave

    def applied(self, context: Context) -> Context:
        """`context` (whose first messages are those this step was made of) as placed and
        named: any messages after those follow as they are."""
        k = len(self.messages)
        messages, sources = self.messages, self.sources
        if len(context.messages) > k:
            messages = messages + context.messages[k:]
            sources = sources + context.sources[k:]
        return Context(messages, sources,
                       [_at(c, self.position) for c in context.changes] + self.added,
                       context.pending_calls)


def provider_step(context: Context, api: str, model: str | None = None,
                  joined: bool = False) -> Context:
    """`context` as the provider step of `api` would place and name it: its messages in the
    step's order, a call or result whose id the step changed copied with the new id, and the
    step's changes of `KINDS` added (their indices those of the returned messages). The
    context itself when the step changes none of that.

    `joined`: consecutive assistant messages are one turn, as a framework that keeps one
    message per model item sends them (the OpenAI Agents SDK's Responses items: parallel
    calls are one item each); they go through the step as one message and come back apart."""
    step = run_step(context, api, model, joined)
    return context if step is None else step.applied(context)


def run_step(context: Context, api: str, model: str | None = None,
             joined: bool = False) -> Step | None:
    """The provider step of `api` over `context` (`provider_step`), or None when it changes
    no place and no id."""
    target = registered(api)
    try:
        cap, chosen = target.capability(model)
    except BadArgument:  # a model the API does not serve by that name: its default row
        cap, chosen = target.capability()
    cap = replace(cap, merge_roles=False, first_user=False, system_inline=True)
    messages = context.messages
    runs = _runs(messages) if joined else [[k] for k in range(len(messages))]
    view = [messages[run[0]] if len(run) == 1 else _joined(messages, run) for run in runs]
    prep = prepare(view, [context.sources[run[0]] for run in runs], cap, chosen)
    changes = [c for c in prep.changes if c.kind in KINDS]
    if not changes:
        return None
    read = _read_back(view, prep.turns)
    if read is None:  # turns this reading does not follow: sent as the fold left them
        return None
    order_view, wires, result_ids = read
    order = [k for g in order_view for k in runs[g]]
    renamed: dict[int, Message] = {}
    for g, new in result_ids.items():
        k = runs[g][0]
        renamed[k] = {**messages[k], "toolCallId": new, RENAMED_FROM: result_id(messages[k])}
    given: set[str] = set(result_ids.values())
    for g, sent in wires.items():
        taken = 0
        given.update(w.id for w in sent if w.id is not None)
        for k in runs[g]:
            held = list(calls(messages[k]))
            mine = sent[taken:taken + len(held)]
            taken += len(held)
            if any(c.id != w.id or w.name is not None or w.arguments is not None
                   for c, w in zip(held, mine, strict=True)):
                renamed[k] = _with_calls(messages[k], held, mine)
    position = {k: p for p, k in enumerate(order)}
    first = {g: position[run[0]] for g, run in enumerate(runs) if run[0] in position}
    return Step([renamed.get(k, messages[k]) for k in order],
                [context.sources[k] for k in order], position,
                [_at(c, first) for c in changes], frozenset(given))


def _runs(messages: list[Message]) -> list[list[int]]:
    """The messages' indices, each run of consecutive assistant messages as one."""
    out: list[list[int]] = []
    after_assistant = False
    for k, m in enumerate(messages):
        assistant = m.get("role") == "assistant"
        if assistant and after_assistant:
            out[-1].append(k)
        else:
            out.append([k])
        after_assistant = assistant
    return out


def _joined(messages: list[Message], run: list[int]) -> Message:
    """A run of assistant messages as one: the first's keys, every one's content."""
    content: list[Any] = []
    for k in run:
        held = messages[k].get("content")
        content += held if isinstance(held, list) else []
    return {**messages[run[0]], "content": content}


def _at(change: Change, position: dict[int, int]) -> Change:
    index = change.message_index
    if index is None or index not in position:
        return change
    return msgspec.structs.replace(change, message_index=position[index])


def _read_back(messages: list[Message], turns: list[Any]
               ) -> tuple[list[int], dict[int, list[WireCall]], dict[int, str]] | None:
    """The order of the messages in the step's turns, how the calls of each assistant message
    go out (where one changed), and the new id of each result whose id changed.
    A result turn follows the assistant turn whose calls it answers, in their order; which
    message each result is, pairing says."""
    answers: dict[tuple[int, tuple[str, int]], int] = {}
    pairing = Pairing()
    for k, m in enumerate(messages):
        if m.get("role") == "assistant":
            for call in calls(m):
                pairing.add_call(k, call)
        elif m.get("role") in RESULT_ROLES:
            found = pairing.answer(result_id(m))
            if isinstance(found, OpenCall):
                answers[(found.slot, found.call.where)] = k
    order: list[int] = []
    wires: dict[int, list[WireCall]] = {}
    result_ids: dict[int, str] = {}
    last: int | None = None  # the assistant message of the latest assistant turn
    for role, blocks, index in turns:
        if blocks and blocks[0]["type"] == RESULT:
            if last is None:
                return None
            wheres = [c.where for c in calls(messages[last])]
            if len(blocks) > len(wheres):
                return None
            for where, block in zip(wheres, blocks, strict=False):
                j = answers.get((last, where))
                if j is None:
                    return None
                order.append(j)
                if result_id(messages[j]) != block["id"]:
                    result_ids[j] = block["id"]
            continue
        if index is None:
            continue
        order.append(index)
        if role == "assistant":
            last = index
            sent = [b for b in blocks if b["type"] == "toolCall"]
            held = list(calls(messages[index]))
            if len(sent) != len(held):
                return None
            wire = [_wire(b, c) for b, c in zip(sent, held, strict=True)]
            if any(w != (c.id, None, None) for w, c in zip(wire, held, strict=True)):
                wires[index] = wire
    return _with_left_out(order, len(messages)), wires, result_ids


def _wire(block: dict[str, Any], call: Call) -> WireCall:
    """How the step sends a call: its id; its name where the step rewrote it; its arguments
    where they were not a JSON object (as `repair_arguments`, the step's own test, finds)."""
    return WireCall(block["id"], block["name"] if block["name"] != call.name else None,
                    block["arguments"] if repair_arguments(call.arguments)[1] else None)


def _with_calls(message: Message, held: list[Call], wires: list[WireCall]) -> Message:
    """An assistant message copied with its calls as the step sends them, wherever each call
    is: the new id, and the name and arguments where those were rewritten (`REWRITTEN`)."""
    out = dict(message)
    for call, wire in zip(held, wires, strict=True):
        key, i = call.where
        listed: list[dict[str, Any]] = out[key]
        if listed is message[key]:
            listed = out[key] = list(listed)
        block = dict(listed[i])
        block[RENAMED_FROM] = call.id
        if "id" in block or "call_id" not in block:
            block["id"] = wire.id
        else:
            block["call_id"] = wire.id
        rewritten = []
        for field, value in (("name", wire.name), ("arguments", wire.arguments)):
            if value is not None:
                block[field] = value
                rewritten.append(field)
        if rewritten:
            block[REWRITTEN] = tuple(rewritten)
        listed[i] = block
    return out


def _with_left_out(order: list[int], n: int) -> list[int]:
    """Every message the step left out of its turns (a system message it hoisted, a message
    with nothing it could send) kept where it was, before the first message that followed it;
    this reading takes nothing out."""
    present = set(order)
    if len(present) == n:
        return order
    missing = [k for k in range(n) if k not in present]
    out: list[int] = []
    m = 0
    for k in order:
        while m < len(missing) and missing[m] < k:
            out.append(missing[m])
            m += 1
        out.append(k)
    out.extend(missing[m:])
    return out
