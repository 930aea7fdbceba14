"""The planner: where to cut a built context so the head can be summarized and the tail kept.

It works on the context's messages (a previous checkpoint's messages plus what came after), so
what an earlier compaction kept is planned over again and never lost. A cut lands only at the
start of a turn (a user message: typed by the user, an extension message or a local command),
never where a call before it has its result after it, and never inside the active (last) turn.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from sessionctx.compaction.escaping import unescape_tags
from sessionctx.compaction.tokens import TokenCounter, estimate_message
from sessionctx.errors import CompactionError
from sessionctx.messages import RESULT_ROLES, Message, call_ids, result_id, text_of

PLANNER_VERSION = 1
DEFAULT_KEEP_TURNS = 3
DEFAULT_KEEP_TOKENS = 20_000

SUMMARY_OPEN = "<conversation_summary>"
SUMMARY_CLOSE = "</conversation_summary>"


@dataclass(frozen=True, slots=True)
class Plan:
    """A cut at `cut`: messages[:cut] are summarized, messages[cut:] kept as they are."""

    cut: int
    messages: list[Message]
    sizes: list[int]  # each message's tokens, by the counter the plan was made with
    previous_summary: str | None
    tokens_before: int
    tokens_kept: int
    forced: bool

    @property
    def _start(self) -> int:
        """The first summarized message: the one after the previous summary, if any."""
        return 1 if self.previous_summary is not None else 0

    @property
    def summarized(self) -> list[Message]:
        return self.messages[self._start:self.cut]

    @property
    def summarized_sizes(self) -> list[int]:
        return self.sizes[self._start:self.cut]

    @property
    def kept(self) -> list[Message]:
        return self.messages[self.cut:]


class NothingToCompact(CompactionError):
    """No cut both summarizes something and keeps the active turn whole."""


def is_summary_message(message: Message) -> bool:
    return message.get("role") == "user" and text_of(message.get("content")).lstrip(
        ).startswith(SUMMARY_OPEN)


def summary_text(message: Message) -> str:
    """The summary carried by a summary message, without its wrapper and preamble."""
    text = text_of(message.get("content")).strip()
    body = text[len(SUMMARY_OPEN):]
    if body.endswith(SUMMARY_CLOSE):
        body = body[:-len(SUMMARY_CLOSE)]
    _, sep, rest = body.partition("\n\n")
    return unescape_tags((rest if sep else body).strip())


def valid_cuts(messages: Sequence[Message]) -> list[int]:
    """Every index a cut may land on: a user message with no call before it still waiting for
    a result after it. Index 0 (nothing summarized) is excluded.

    One pass: a result withdraws every candidate after the first call with its id."""
    first_call: dict[str | None, int] = {}  # None, the id of a result without one, never is
    cuts: list[int] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":  # the only role that holds calls
            for cid in call_ids(message):
                if cid not in first_call:
                    first_call[cid] = i
        elif role == "user":
            if i:
                cuts.append(i)
        elif role in RESULT_ROLES:
            start = first_call.get(result_id(message))
            if start is not None:
                while cuts and cuts[-1] > start:
                    cuts.pop()
    return cuts


def plan(messages: Sequence[Message], *, keep_turns: int = DEFAULT_KEEP_TURNS,
         keep_tokens: int = DEFAULT_KEEP_TOKENS, force: bool = False,
         counter: TokenCounter = estimate_message) -> Plan:
    """Keep the larger of the last `keep_turns` turns and the last `keep_tokens` tokens.

    With `force`, when that keeps everything, cut at the start of the active turn instead.
    Raises NothingToCompact when no useful cut exists.
    """
    msgs = list(messages)
    previous = summary_text(msgs[0]) if msgs and is_summary_message(msgs[0]) else None
    first_real = 1 if previous is not None else 0
    sizes = list(map(counter, msgs))
    tokens_before = sum(sizes)
    every = valid_cuts(msgs)
    cuts = every[bisect_right(every, first_real):]  # ascending: those after first_real
    if not cuts:
        raise NothingToCompact("no turn starts after the first message: the whole context is "
                               "the active turn")
    turn_cut = cuts[-keep_turns] if 0 < keep_turns <= len(cuts) else 0
    if keep_turns <= 0:
        turn_cut = cuts[-1]
    token_cut = 0
    kept = 0
    for i in range(len(msgs) - 1, -1, -1):
        kept += sizes[i]
        if kept >= keep_tokens:
            at = bisect_right(cuts, i)  # cuts ascend: the last one at or before i
            token_cut = cuts[at - 1] if at else 0
            break
    cut = min(turn_cut, token_cut)
    forced = False
    if cut <= first_real:
        if not force:
            raise NothingToCompact(
                f"keeping the last {keep_turns} turn(s) or {keep_tokens} tokens keeps "
                "everything; use force to cut at the start of the active turn")
        cut = cuts[-1]
        forced = True
    return Plan(cut, msgs, sizes, previous, tokens_before, sum(sizes[cut:]), forced)
