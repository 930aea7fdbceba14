"""Roles and system messages (docs/provider-rules.md §1.1, §2, §3, §4, §5): system messages before
the conversation join the system prompt, later ones stay where the provider allows them and become
user messages where it does not; consecutive turns of one role are joined where roles must
alternate, and a history that does not start with a user turn gets one saying it continues. """

from __future__ import annotations

from sessionctx.changes import ChangeKind
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.reasoning import THINKING_DROPPED
from sessionctx.providers.policies.turns import RESULT, Block, Prepared, Turn, has

SYSTEM_CONVERTED = ChangeKind.SYSTEM_CONVERTED
SYSTEM_HOISTED = ChangeKind.SYSTEM_HOISTED
TURNS_MERGED = ChangeKind.TURNS_MERGED
FIRST_USER_ADDED = ChangeKind.FIRST_USER_ADDED

CONTINUED = "(continued from earlier context)"


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
            prep.log(SYSTEM_HOISTED, "a system message before the conversation goes into the "
                     "system prompt", index)
            turn = Turn("system", [], index)
        elif cap.system_inline or (cap.mid_system and prev is not None and
                                   prev[0] == "user" and not has(prev[1], RESULT)):
            turn = Turn("system", [b for b in blocks if b["type"] == "text"], index)
            if turn.blocks:
                out.append(turn)
        else:
            turn = Turn("user", blocks, index)
            out.append(turn)
            prep.log(SYSTEM_CONVERTED, f"{cap.provider}/{cap.family or 'default'} does not "
                     "accept system messages here; sent as a user message", index)
        prev = turn
    prep.turns = out


def merge_roles(prep: Prepared) -> None:
    """Consecutive turns of one role become one; a turn of results or after calls stays apart,
    and reasoning that would no longer come first is dropped."""
    out: list[Turn] = []
    # A run of one role is joined into one new list, extended in place, and whether the last
    # turn holds a call is asked once and kept as it grows: a long run costs its length, not
    # its square.
    joined: list[Block] | None = None
    calls: bool | None = None  # whether the last turn holds a call; None: not asked yet
    for turn in prep.turns:
        role, blocks, index = turn
        prev = out[-1] if out else None
        joins = False
        if prev is not None and prev[0] == role and role != "system" and \
                not has(blocks, RESULT):
            if calls is None:
                calls = has(prev[1], "toolCall")
            joins = not calls
        if prev is None or not joins:
            out.append(turn)
            joined = None
            calls = None
            continue
        thinking = sum(1 for b in blocks if b["type"] == "thinking")
        if thinking and (not prev[1] or prev[1][0]["type"] != "thinking"):
            blocks = [b for b in blocks if b["type"] != "thinking"]
            prep.log(THINKING_DROPPED, "joined to an earlier message, its reasoning would "
                     "not come first", index, count=thinking)
        if joined is None:  # a new list: the stored ones are never modified
            joined = prev.blocks + blocks
            out[-1] = Turn(role, joined, prev.message_index)
        else:
            joined.extend(blocks)
        calls = has(blocks, "toolCall")
        prep.log(TURNS_MERGED, "roles must alternate; consecutive messages of one role "
                 "were joined", index)
    prep.turns = out


def first_user(prep: Prepared) -> None:
    """A history that does not start with a user turn gets a placeholder one first."""
    if prep.turns and prep.turns[0][0] != "user":
        prep.turns.insert(0, Turn("user", [{"type": "text", "text": CONTINUED}], None))
        prep.log(FIRST_USER_ADDED, "the provider requires the first message to be a user "
                 "message; a placeholder saying the history continues was put first")
