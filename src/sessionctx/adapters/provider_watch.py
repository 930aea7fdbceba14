"""Whether a framework's list gives the provider step anything to do, read one new message at a
time as the fold takes it: the step costs a pass over the whole context, so it runs only where
the watch finds a reason (`adapters/provider_step.py` runs and reads it back).

A reason is a result that does not follow its call in order, a call id seen before or one some
provider's pattern refuses, a tool name outside the providers' pattern, or arguments that are
not a JSON object (`policies/ids.py` `repair_arguments`, the step's own test). A list with none
of those goes out as the fold left it; the step itself decides what any of them needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from sessionctx.messages import CALL_BLOCK_TYPES, Message, block_call_id, calls, result_id
from sessionctx.providers.policies.ids import TOOL_NAME, repair_arguments
from sessionctx.providers.registry import PROVIDERS
from sessionctx.providers.registry import provider as registered

__all__ = ["Watch"]

# a call as the watch reads it: its id, tool name and arguments
_Call = tuple[str | None, Any, Any]


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
    place, rename or rewrite (the reasons are the module's). A call never answered is no
    reason (the fold takes it out); it errs on the side of running the step, never of skipping
    it. `joined`: consecutive assistant messages are one turn (`provider_step`)."""

    __slots__ = ("_assistant", "_expect", "_fits", "_joined", "_most", "_names", "_next",
                 "_seen", "fresh", "needed")

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
        self._names: set[str] = set()  # tool names known to fit the pattern
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
        names = self._names
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
                    held = _calls(message)
                    ids = [call[0] for call in held]
                    if joined and after_assistant:
                        expect = [*expect, *ids]
                    else:
                        expect, n = ids, 0
                    after_assistant = True
                    for cid, name, args in held:
                        if cid is None or cid in seen or len(cid) > most or not fits(cid):
                            needed = True
                        if cid is not None:
                            seen.add(cid)
                        if name not in names:
                            if isinstance(name, str) and TOOL_NAME.fullmatch(name):
                                names.add(name)
                            else:
                                needed = True
                        if type(args) is not dict and (
                                not isinstance(args, str) or repair_arguments(args)[1]):
                            needed = True
        self._expect, self._next, self._assistant = expect, n, after_assistant
        self.fresh = needed
        self.needed = self.needed or needed


def _calls(message: Message) -> list[_Call]:
    """The calls of an assistant message; the native `toolCall` blocks an adapter makes are
    read at once, any other shape through `messages.calls`."""
    content = message.get("content")
    if "tool_calls" in message or not isinstance(content, list):
        return [(c.id, c.name, c.arguments) for c in calls(message)]
    out: list[_Call] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "toolCall":
            cid = block.get("id")
            out.append((cid if isinstance(cid, str) else block_call_id(block),
                        block.get("name"), block.get("arguments")))
        elif kind in CALL_BLOCK_TYPES:
            return [(c.id, c.name, c.arguments) for c in calls(message)]
    return out
