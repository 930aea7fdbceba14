"""Result placement (docs/provider-rules.md §1.3, §2, §3, §4, §5): all results of one assistant
turn, in call order, first in the one user turn right after it; a call without a result and a result
without a call are dropped; an empty output is marked, and a failure is said in text where the wire
has no error field. """

from __future__ import annotations

from dataclasses import dataclass

from sessionctx.changes import ChangeKind
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.ids import Results
from sessionctx.providers.policies.reasoning import Replay
from sessionctx.providers.policies.turns import RESULT, Block, Prepared, Turn, dropped, keep

EMPTY_OUTPUT = "(no output)"
ERROR_NOTE = "(the tool reported an error)"


def mark_empty_output(prep: Prepared, result: Block, index: int) -> None:
    """An empty tool output is sent as an explicit marker, never as nothing."""
    result["content"] = [{"type": "text", "text": EMPTY_OUTPUT}]
    prep.log(ChangeKind.EMPTY_OUTPUT_MARKED,
             "an empty tool output is sent as an explicit marker", index,
             id=result["id"])


def error_in_text(prep: Prepared, cap: Capability, content: list[Block], index: int,
                  result_id: str | None) -> list[Block]:
    """A failed result's content where the wire cannot flag it: the text says so."""
    prep.log(ChangeKind.ERROR_AS_TEXT,
             f"{cap.provider}/{cap.family or 'default'} has no field for a "
             "failed tool result; its text says so", index, id=result_id)
    return [{"type": "text", "text": ERROR_NOTE}, *content]


class InPlace:
    """Placement's short path, taken as the turns are read: results that answer the calls of
    the turn before them, in call order, join one user turn. While every call is answered so
    (`regular`), placement has nothing left to move, and only the turns with reasoning are
    left to decide (`Placement.settle`); otherwise `Placement.run` places every result. The
    short path is kept while it pays: benchmarks/bench_placement.py measures the step with it
    against full placement (1.12-1.18 times its cost on 3k messages)."""

    __slots__ = ("answered", "expect", "group", "prep", "regular", "turns")

    def __init__(self, prep: Prepared, turns: list[Turn]) -> None:
        self.prep, self.turns = prep, turns
        self.expect: list[str | None] = []  # the wire ids of the last assistant turn's calls
        self.answered = 0  # how many of them the results read since have answered, in order
        self.group: list[Block] | None = None  # the blocks of the user turn of those results
        self.regular = True

    def result(self, result: Block, paired: bool, index: int) -> None:
        """The result of message `index` (`paired`: it answers an open call) joins the turns."""
        if paired and self.answered < len(self.expect) and \
                result["id"] == self.expect[self.answered]:
            self.answered += 1
            if not result["content"]:
                mark_empty_output(self.prep, result, index)
            if self.group is None:
                self.group = [result]
                self.turns.append(Turn("user", self.group, index))
            else:
                self.group.append(result)
            return
        self.regular = False
        self.group = None
        self.turns.append(Turn("user", [result], index))

    def next_turn(self) -> list[str | None]:
        """A message of anything but results comes next: the list to append the wire ids of
        its calls to, as they are read."""
        if self.answered < len(self.expect):
            self.regular = False
        self.group = None
        self.answered = 0
        self.expect = []
        return self.expect

    def end(self) -> None:
        if self.answered < len(self.expect):
            self.regular = False


@dataclass(slots=True)
class Placement:
    """Places results over the reader's turns.

    The reader indexed every result that answers an earlier call (`results`): any other result
    is dropped, and so is a call without an indexed result. What reasoning may be replayed is
    decided once the turn's calls are known (`reasoning`: indices of turns holding thinking;
    `replay.bound`: those with item ids or call signatures); turns left with nothing are
    dropped.
    """

    prep: Prepared
    results: Results
    reasoning: set[int]
    replay: Replay

    def run(self) -> list[Turn]:
        prep = self.prep
        results = self.results
        reasoning, bound = self.reasoning, self.replay.bound
        out: list[Turn] = []
        for turn in prep.turns:
            role, blocks, index = turn
            if role == "assistant":
                placed: list[tuple[int, Block]] = []
                lost = False
                for block in blocks:
                    if block["type"] == "toolCall":
                        found = results.get(block["id"])
                        if found is None:
                            lost = True
                            prep.log(ChangeKind.CALL_WITHOUT_RESULT,
                                     "every tool call needs its result "
                                     "in the next message; this call has none", index,
                                     block=block, id=block["id"])
                        else:
                            placed.append(found)
                if lost:
                    blocks = [b for b in blocks if b["type"] != "toolCall" or b["id"] in results]
                if index in reasoning or index in bound:
                    blocks = self.replay.blocks(blocks, index, index in reasoning)
                keep(prep, out, Turn(role, blocks, index))
                if placed:
                    out.append(self._result_turn(index, placed))
            elif blocks and blocks[0]["type"] == RESULT:
                for result in blocks:
                    found = results.get(result["id"])
                    if found is None or found[1] is not result:
                        prep.log(ChangeKind.RESULT_WITHOUT_CALL,
                                 "a tool result must answer a call in "
                                 "the previous message", index, id=result["id"])
            else:
                keep(prep, out, turn)
        return out

    def settle(self, positions: list[int]) -> list[Turn]:
        """When every result already follows its calls, as the reader grouped them, only the
        turns at `positions` (with reasoning) are left to decide."""
        turns = self.prep.turns
        emptied = False
        for position in positions:
            role, blocks, index = turns[position]
            blocks = self.replay.blocks(blocks, index, index in self.reasoning)
            turns[position] = Turn(role, blocks, index)
            if not blocks:
                dropped(self.prep, turns[position])
                emptied = True
        return [t for t in turns if t.blocks] if emptied else turns

    def _result_turn(self, index: int | None, placed: list[tuple[int, Block]]) -> Turn:
        """The user turn that answers the assistant turn at `index`; logged when the results
        were not already its next messages in call order. It takes the first result's index."""
        prep = self.prep
        start = (index or 0) + 1
        in_place = True
        results = []
        for k, (w, result) in enumerate(placed):
            in_place = in_place and w == start + k
            results.append(result)
            if not result["content"]:
                mark_empty_output(prep, result, w)
        if not in_place:
            prep.log(ChangeKind.RESULTS_MOVED,
                     "tool results must come first in the message right after "
                     "their calls, all together", index, ids=[r["id"] for r in results])
        return Turn("user", results, placed[0][0])
