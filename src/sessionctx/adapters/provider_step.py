"""The provider step for a framework's list: the fold's context run through the same provider
step `build --provider` and the proxy run (`providers/policies`), and read back as the context's
own native messages, so each adapter sends it as its framework's objects.

What is read back is what a framework's client cannot do for itself when it renders the list:
where each tool result goes (first after its calls, in call order, before any other message)
and the id each call and its result go out with (a reused id renamed, an id the provider's
pattern refuses rewritten). Every other rule of the step (joining turns, the system prompt,
block shapes) is the client's own rendering, so the step runs with those turned off and its
other changes are not taken.

The step costs a pass over the whole context, so the fold first watches, one new message at a
time, for a reason to run it (`Watch`): a result that does not follow its call in order, a call
id seen before or one some provider's pattern refuses. A list with none of those goes out as the
fold left it; the step itself decides what any of them needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import msgspec

from sessionctx.changes import Change, ChangeKind, Source
from sessionctx.context import Context
from sessionctx.errors import BadArgument
from sessionctx.messages import (
    CALL_BLOCK_TYPES,
    RESULT_ROLES,
    Call,
    Message,
    block_call_id,
    calls,
    result_id,
)
from sessionctx.pairing import OpenCall, Pairing
from sessionctx.providers.policies import RESULT, prepare
from sessionctx.providers.registry import PROVIDERS
from sessionctx.providers.registry import provider as registered

__all__ = ["KINDS", "RENAMED_FROM", "Step", "Watch", "call_ids", "named_api", "provider_step",
           "run_step"]

# the changes of the step that the read-back carries out
KINDS = frozenset({ChangeKind.RESULTS_MOVED, ChangeKind.DUPLICATE_ID_RENAMED,
                   ChangeKind.ID_REWRITTEN})
# on a call block or result message whose id the step changed: the id it had
RENAMED_FROM = "_sessionctx_renamed_from"


def named_api(name: str | None) -> str | None:
    """An adapter's `provider` argument, checked when the adapter is made (an unknown name is
    a BadArgument naming the known ones), not at its first request."""
    if name is not None:
        registered(name)
    return name


def call_ids(native: Message) -> dict[str | None, list[str | None]]:
    """The ids a native message's calls go out with, under the id each call had before the
    step (one list per id, in call order, should a message hold two calls with one id)."""
    out: dict[str | None, list[str | None]] = {}
    content = native.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "toolCall":
            new = block.get("id")
            out.setdefault(block.get(RENAMED_FROM, new), []).append(new)
    return out


def _id_rule() -> tuple[Callable[[str], object], int]:
    """What every provider's call-id rule takes: all their default rows' patterns at once, and
    the shortest length any allows, from the capability tables."""
    patterns: list[str] = []
    most = None
    for name in PROVIDERS:
        cap, _ = registered(name).capability()
        if cap.id_pattern not in patterns:
            patterns.append(cap.id_pattern)
        most = cap.id_max_len if most is None else min(most, cap.id_max_len)
    return re.compile("".join(f"(?={p})" for p in patterns)).match, most or 0


_ID_RULE: tuple[Callable[[str], object], int] | None = None


class Watch:
    """Whether a list, read one native message at a time, gives the provider step anything to
    place or rename: a result that is not the next one its turn's calls wait for, in order, or
    a call id seen before or one a provider's pattern refuses. A call never answered is no
    reason (the fold takes it out); it errs on the side of running the step, never of skipping
    it. `joined`: consecutive assistant messages are one turn (`provider_step`)."""

    __slots__ = ("_assistant", "_expect", "_fits", "_joined", "_most", "_next", "_seen",
                 "fresh", "needed")

    def __init__(self, joined: bool = False) -> None:
        global _ID_RULE
        if _ID_RULE is None:
            _ID_RULE = _id_rule()
        self._fits, self._most = _ID_RULE
        self._joined = joined
        self._assistant = False  # whether the last message was an assistant's
        self._expect: list[Any] = []  # the call ids of the last assistant turn
        self._next = 0  # how many of them the results since have answered, in order
        self._seen: set[str] = set()
        self.needed = False  # a reason was found in any message read
        self.fresh = False  # one was found in the messages the last `extend` read

    def taken(self, ids: frozenset[str]) -> None:
        """Ids the step gave: a later call with one of them is reused too."""
        self._seen |= ids

    def extend(self, natives: Iterable[list[tuple[int, Message]]]) -> None:
        """Reads the next messages, in order: each framework message's (part, native message)
        pairs, as the fold keeps them (one walk with the state in locals: it runs for every
        message a framework sends)."""
        expect, n, after_assistant = self._expect, self._next, self._assistant
        seen, most, fits, joined = self._seen, self._most, self._fits, self._joined
        needed = False
        for pairs in natives:
            for _, message in pairs:
                role = message.get("role")
                if role == "toolResult" or role == "tool":  # RESULT_ROLES, inline
                    after_assistant = False
                    rid = message.get("toolCallId")
                    if n < len(expect) and expect[n] == (
                            rid if isinstance(rid, str) else result_id(message)):
                        n += 1
                    else:
                        needed = True
                elif role != "assistant":
                    after_assistant = False
                    if expect:
                        expect, n = [], 0
                else:
                    ids = _call_ids(message)
                    if joined and after_assistant:
                        expect = [*expect, *ids]
                    else:
                        expect, n = ids, 0
                    after_assistant = True
                    for cid in ids:
                        if cid is None or cid in seen or len(cid) > most or not fits(cid):
                            needed = True
                        if cid is not None:
                            seen.add(cid)
        self._expect, self._next, self._assistant = expect, n, after_assistant
        self.fresh = needed
        self.needed = self.needed or needed


def _call_ids(message: Message) -> list[str | None]:
    """The ids of an assistant message's calls; the native `toolCall` blocks an adapter makes
    are read at once, any other shape through `messages.calls`."""
    content = message.get("content")
    if "tool_calls" in message or not isinstance(content, list):
        return [c.id for c in calls(message)]
    out: list[str | None] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "toolCall":
            cid = block.get("id")
            out.append(cid if isinstance(cid, str) else block_call_id(block))
        elif kind in CALL_BLOCK_TYPES:
            return [c.id for c in calls(message)]
    return out


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
    for g, ids in wires.items():
        taken = 0
        given.update(ids)
        for k in runs[g]:
            held = list(calls(messages[k]))
            mine = ids[taken:taken + len(held)]
            taken += len(held)
            if any(c.id != w for c, w in zip(held, mine, strict=True)):
                renamed[k] = _with_ids(messages[k], held, mine)
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
               ) -> tuple[list[int], dict[int, list[str]], dict[int, str]] | None:
    """The order of the messages in the step's turns, the ids the calls of each assistant
    message go out with (where one changed), and the new id of each result whose id changed.
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
    wires: dict[int, list[str]] = {}
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
            ids = [b["id"] for b in blocks if b["type"] == "toolCall"]
            held = [c.id for c in calls(messages[index])]
            if len(ids) != len(held):
                return None
            if ids != held:
                wires[index] = ids
    return _with_left_out(order, len(messages)), wires, result_ids


def _with_ids(message: Message, held: list[Call], wires: list[str]) -> Message:
    """An assistant message copied with its calls' new ids, wherever each call is."""
    out = dict(message)
    for call, wire in zip(held, wires, strict=True):
        key, i = call.where
        listed: list[dict[str, Any]] = out[key]
        if listed is message[key]:
            listed = out[key] = list(listed)
        block = dict(listed[i])
        block[RENAMED_FROM] = call.id
        if "id" in block or "call_id" not in block:
            block["id"] = wire
        else:
            block["call_id"] = wire
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
