"""Roles and system messages (provider-rules §1.1, §2, §3, §4, §5): system messages before the
conversation join the system prompt, later ones stay where the provider allows them and become
user messages where it does not; consecutive turns of one role are joined where roles must
alternate, and a history that does not start with a user turn gets one saying it continues.
"""

from __future__ import annotations

from itertools import islice
from operator import eq, itemgetter

from sessionctx.changes import ChangeKind
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.turns import RESULT, Block, Prepared, Turn, has

CONTINUED = "(continued from earlier context)"
_ROLE = itemgetter(0)


def place_systems(prep: Prepared, cap: Capability) -> None:
    """System messages before the conversation join the system prompt; later ones stay where
    the provider allows them and become user messages where it does not."""
    out: list[Turn] = []
    leading = True
    prev: Turn | None = None  # the turn before, as this pass left it
    for turn in prep.turns:
        role, blocks, index = turn
        if role != "system":
            leading = leading and not blocks
            out.append(turn)
        elif leading:
            text = "\n\n".join(b["text"] for b in blocks if b["type"] == "text")
            if text:
                prep.system.append(text)
            prep.log(ChangeKind.SYSTEM_HOISTED,
                     "a system message before the conversation goes into the "
                     "system prompt", index)
            turn = ("system", [], index)
        elif cap.system_inline or (cap.mid_system and prev is not None and
                                   prev[0] == "user" and not has(prev[1], RESULT)):
            turn = ("system", [b for b in blocks if b["type"] == "text"], index)
            if turn[1]:
                out.append(turn)
        else:
            turn = ("user", blocks, index)
            out.append(turn)
            prep.log(ChangeKind.SYSTEM_CONVERTED,
                     f"{cap.provider}/{cap.family or 'default'} does not "
                     "accept system messages here; sent as a user message", index)
        prev = turn
    prep.turns = out


def merge_roles(prep: Prepared) -> None:
    """Consecutive turns of one role become one; a turn of results or after calls stays apart,
    and reasoning that would no longer come first is dropped.

    A run of one role is gathered into one list of its own (a stored list is never extended)
    and whether it holds a call is kept as it grows: a run of 100,000 messages is read once.
    """
    turns = prep.turns
    if not any(map(eq, map(_ROLE, turns), map(_ROLE, islice(turns, 1, None)))):
        return  # no two turns in a row share a role (the common case), found at C speed
    out: list[Turn] = []
    joined: list[Block] | None = None  # the last turn's blocks when this pass made the list
    called = False  # whether the last turn in `out` holds a call
    last: str | None = None  # the role of the last turn in `out`
    for turn in turns:
        role, blocks, index = turn
        if role != last or role == "system" or called or has(blocks, RESULT):
            out.append(turn)
            joined = None
            last = role
            called = role == "assistant" and has(blocks, "toolCall")  # only assistants call
            continue
        prev = out[-1]
        thinking = sum(1 for b in blocks if b["type"] == "thinking")
        if thinking and (not prev[1] or prev[1][0]["type"] != "thinking"):
            blocks = [b for b in blocks if b["type"] != "thinking"]
            prep.log(ChangeKind.THINKING_DROPPED,
                     "joined to an earlier message, its reasoning would "
                     "not come first", index, count=thinking)
        if joined is None:
            joined = list(prev[1])
            out[-1] = (role, joined, prev[2])
        joined.extend(blocks)
        called = role == "assistant" and has(blocks, "toolCall")
        prep.log(ChangeKind.TURNS_MERGED, "roles must alternate; consecutive messages of one role "
                 "were joined", index)
    prep.turns = out


def first_user(prep: Prepared) -> None:
    """A history that does not start with a user turn gets a placeholder one first."""
    if prep.turns and prep.turns[0][0] != "user":
        prep.turns.insert(0, ("user", [{"type": "text", "text": CONTINUED}], None))
        prep.log(ChangeKind.FIRST_USER_ADDED,
                 "the provider requires the first message to be a user "
                 "message; a placeholder saying the history continues was put first")
