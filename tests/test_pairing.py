"""One pairing rule (pairing.py `OpenCalls`): a result answers the earliest open call with its
id. The fold, `check`'s reused-id finder and the provider step all pair by it, so they agree on
which call each result answers."""

from __future__ import annotations

from sessionctx.context import build_context
from sessionctx.pairing import OpenCalls, repeated_calls
from sessionctx.providers import build_from_messages, build_request
from tests.conftest import assistant, call, recs, result, user


def test_a_result_answers_the_earliest_open_call_with_its_id() -> None:
    calls: OpenCalls[str] = OpenCalls()
    calls.open("a", "first")
    calls.open("b", "other")
    calls.open("a", "second")
    assert calls.answer("a") == "first"
    assert sorted(calls.pending()) == [("a", "second"), ("b", "other")]
    assert calls.answer("a") == "second"
    assert calls.answer("a") is None  # answered: a third result pairs with nothing
    assert calls.answer("c") is None
    assert list(calls.pending()) == [("b", "other")]


# two calls that share an id, each answered in turn: results in the stored order
REUSED = [user("go"), assistant(call("a", "first")), result("a", "one", "first"),
          assistant(call("a", "second")), result("a", "two", "second"), user("next")]


def test_the_fold_check_and_the_provider_step_pair_a_reused_id_alike() -> None:
    ctx = build_context(recs(*REUSED))
    assert len(ctx.messages) == len(REUSED)  # the fold pairs both results
    assert [(r.call_slot, r.result_slot) for r in repeated_calls(ctx.messages)] == [(3, 4)]
    body = build_request(ctx, "anthropic").body
    uses = [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_use"]
    answers = [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert [(u["id"], u["name"]) for u in uses] == [("a", "first"), ("a_2", "second")]
    # each result goes with the call it answers, the second with the renamed id
    assert [(r["tool_use_id"], r["content"][0]["text"]) for r in answers] == [
        ("a", "one"), ("a_2", "two")]


def test_the_provider_step_gives_a_result_its_calls_wire_name() -> None:
    # two open calls with one id in one turn: the first result answers the first call
    messages = [user("go"), assistant(call("a", "first"), call("a", "second")),
                result("a", "one", "second"), result("a", "two", "first")]
    body = build_from_messages(messages, None, "openai-chat").body
    tools = [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]
    assert tools == [("a", "one"), ("a_2", "two")]
