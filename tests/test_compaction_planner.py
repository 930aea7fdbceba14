"""The planner: cuts only at turn starts, never splits a pair or the active turn."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionctx.compaction.planner import NothingToCompact, plan, valid_cuts
from sessionctx.compaction.prompt import summary_message
from sessionctx.context import build_context
from sessionctx.messages import calls, result_id
from tests.conftest import assistant, call, recs, result, text, user


def turns(n: int, body: int = 40) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for t in range(n):
        out += [user(f"ask {t} " + "u" * body),
                assistant(text("working"), call(f"c{t}", "bash", cmd=f"step {t}")),
                result(f"c{t}", "r" * body), assistant(text(f"done {t}"))]
    return out


def test_keeps_last_n_turns_when_that_is_larger() -> None:
    msgs = turns(6)
    p = plan(msgs, keep_turns=3, keep_tokens=1)
    assert p.cut == 12 and p.kept[0] == msgs[12] and len(p.summarized) == 12


def test_keeps_last_k_tokens_when_that_is_larger() -> None:
    msgs = turns(10, body=400)  # each turn is a little over 200 tokens
    p = plan(msgs, keep_turns=1, keep_tokens=700)
    kept_turns = len(p.kept) // 4
    assert kept_turns >= 4 and p.tokens_kept >= 700
    assert msgs[p.cut]["role"] == "user"


def test_nothing_to_compact_unless_forced() -> None:
    msgs = turns(3)
    with pytest.raises(NothingToCompact):
        plan(msgs, keep_turns=3, keep_tokens=20_000)
    forced = plan(msgs, keep_turns=3, keep_tokens=20_000, force=True)
    assert forced.forced and forced.cut == 8  # the active (last) turn is kept whole
    with pytest.raises(NothingToCompact):
        plan(turns(1), force=True)


def test_previous_summary_is_carried_and_not_resummarized() -> None:
    msgs = [summary_message("## Decisions\nuse /srv/app"), *turns(5)]
    p = plan(msgs, keep_turns=2, keep_tokens=1)
    assert p.previous_summary == "## Decisions\nuse /srv/app"
    assert p.summarized == msgs[1:p.cut] and msgs[0] not in p.summarized


def test_no_cut_between_a_call_and_a_late_result() -> None:
    msgs = [user("a"), assistant(call("x")), user("meanwhile"), result("x"), user("b"),
            assistant(text("ok"))]
    assert valid_cuts(msgs) == [4]


def _histories() -> st.SearchStrategy[list[dict[str, Any]]]:
    step = st.tuples(st.integers(0, 3), st.lists(st.booleans(), min_size=3, max_size=3),
                     st.integers(0, 300), st.booleans())
    turn = st.tuples(st.sampled_from(["user", "custom", "bash"]), st.lists(step, max_size=3))
    return st.lists(turn, min_size=1, max_size=12).map(_history)


def _history(spec: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []
    n = 0
    for kind, steps in spec:
        if kind == "user":
            out.append(user("u" * 50))
        elif kind == "custom":
            out.append({"role": "custom", "customType": "x", "content": "ext", "display": True})
        else:
            out.append({"role": "bashExecution", "command": "ls", "output": "a", "exitCode": 0})
        out.extend(late)  # results that arrive after the next turn started
        late = []
        for ncalls, answered, size, delayed in steps:
            ids = [f"c{n + i}" for i in range(ncalls)]
            n += ncalls
            out.append(assistant(text("t" * size), *[call(i) for i in ids]))
            for i, cid in enumerate(ids):
                if answered[i]:
                    (late if delayed and i == 0 else out).append(result(cid, "r" * size))
            out.append(assistant(text("done")))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_histories(), st.integers(0, 5), st.integers(0, 3000), st.booleans())
def test_no_plan_splits_a_pair_or_the_active_turn(history, keep_turns, keep_tokens, force):
    for messages in (build_context(recs(*history)).messages, history):
        try:
            p = plan(messages, keep_turns=keep_turns, keep_tokens=keep_tokens, force=force)
        except NothingToCompact:
            continue
        head, tail = p.messages[:p.cut], p.kept
        assert head and tail
        assert tail[0]["role"] == "user"  # a turn start
        last_turn = max(i for i, m in enumerate(messages) if m["role"] in ("user", "custom",
                                                                            "bashExecution"))
        assert p.cut <= last_turn  # the active turn is kept whole
        head_calls = {c.id for m in head for c in calls(m)}
        tail_results = {result_id(m) for m in tail} - {None}
        assert not head_calls & tail_results  # no call summarized away from its result
