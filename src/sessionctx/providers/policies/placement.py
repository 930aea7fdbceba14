"""Result placement (docs/provider-rules.md §1.3, §2, §3, §4, §5): all results of one assistant
turn, in call order, first in the one user turn right after it; a call without a result and a result
without a call are dropped; an empty output is marked, and a failure is said in text where the wire
has no error field. """

from __future__ import annotations

from dataclasses import dataclass

from sessionctx.changes import ChangeKind
from sessionctx.messages import TextBlock
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.ids import Results, WireIds, sent
from sessionctx.providers.policies.turns import (
    RESULT,
    Block,
    Prepared,
    ResultBlock,
    Turn,
    keep,
)

EMPTY_OUTPUT = "(no output)"
ERROR_NOTE = "(the tool reported an error)"


def mark_empty_output(prep: Prepared, result: ResultBlock, index: int) -> None:
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
    note: TextBlock = {"type": "text", "text": ERROR_NOTE}
    return [note, *content]


def in_place(ids: WireIds) -> bool:
    """Whether every result already stands where placement would put it: the results of each
    assistant message with calls are the messages right after it, answering its calls in
    order (the reader then read them into one user turn), every call is answered and no other
    result is read. Placement then has nothing to move (`Placement.grouped`); otherwise
    `Placement.run` places every result. The ids pass notes it as it pairs them
    (`WireIds.in_order`). This short path is kept while it pays: benchmarks/bench_placement.py
    measures the step with it against full placement (1.09-1.20 times its cost on 10k
    messages)."""
    return ids.in_order and not ids.open_calls


@dataclass(slots=True)
class Placement:
    """Places results over the reader's turns, once the ids pass has paired them.

    The ids pass indexed every result that answers an earlier call (`results`): any other
    result is dropped, and so is a call without an indexed result. Turns left with nothing
    are dropped. Both ways give the positions of the turns the reasoning pass decides (those
    of messages in `replay`: with thinking, item ids or call signatures), which it can decide
    only once the calls that survive are known.
    """

    prep: Prepared
    results: Results
    replay: set[int]
    empty: list[tuple[ResultBlock, int]]  # each result read with no content, and its message

    def grouped(self, turns: list[Turn], positions: list[int]) -> tuple[list[Turn], list[int]]:
        """When every result already follows its calls (`in_place`), the turns as read, with
        empty outputs marked."""
        for result, index in self.empty:
            if sent(self.results, result):
                mark_empty_output(self.prep, result, index)
        return turns, positions

    def run(self, turns: list[Turn]) -> tuple[list[Turn], list[int]]:
        prep = self.prep
        results = self.results
        replay = self.replay
        out: list[Turn] = []
        positions: list[int] = []
        for turn in turns:
            role, blocks, index = turn
            if role == "assistant":
                placed: list[tuple[int, ResultBlock]] = []
                lost = False
                for block in blocks:
                    if block["type"] == "toolCall":
                        wire = block["id"]
                        found = results.get(wire) if wire is not None else None
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
                if blocks and index in replay:
                    positions.append(len(out))
                keep(prep, out, (role, blocks, index))
                if placed:
                    out.append(self._result_turn(index, placed))
            elif blocks and blocks[0]["type"] == RESULT:
                for result in blocks:
                    if result["type"] != RESULT:  # the reader's turns of results hold no other
                        continue
                    rid = result["id"]
                    found = results.get(rid) if rid is not None else None
                    if found is None or found[1] is not result:
                        prep.log(ChangeKind.RESULT_WITHOUT_CALL,
                                 "a tool result must answer a call in "
                                 "the previous message", index, id=result["id"])
            else:
                keep(prep, out, turn)
        return out, positions

    def _result_turn(self, index: int | None, placed: list[tuple[int, ResultBlock]]) -> Turn:
        """The user turn that answers the assistant turn at `index`; logged when the results
        were not already its next messages in call order. It takes the first result's index."""
        prep = self.prep
        start = (index or 0) + 1
        in_place = True
        results: list[Block] = []
        for k, (w, result) in enumerate(placed):
            in_place = in_place and w == start + k
            results.append(result)
            if not result["content"]:
                mark_empty_output(prep, result, w)
        if not in_place:
            prep.log(ChangeKind.RESULTS_MOVED,
                     "tool results must come first in the message right after "
                     "their calls, all together", index, ids=[r["id"] for _, r in placed])
        return ("user", results, placed[0][0])
