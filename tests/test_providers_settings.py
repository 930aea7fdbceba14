"""The request's own settings: Anthropic's thinking switch and prefill, cache breakpoints, and
Chat's limit on calls per message; each test names the API error it prevents."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sessionctx.changes import ChangeKind
from sessionctx.context import build_context
from sessionctx.providers import BuildRequestOptions, anthropic, build_request, validate
from sessionctx.providers.policies.request_settings import RequestError
from tests.conftest import assistant, call, recs, result, text, user
from tests.sdk_types import sdk_check

Msg = dict[str, Any]
SIG = "c2lnbmF0dXJl"
OWN = {"api": "anthropic-messages", "model": "claude-sonnet-4-5"}
BEDROCK_OWN = {"api": "bedrock-converse", "model": "anthropic.claude-3-7-sonnet"}
THOUGHT = {"type": "thinking", "thinking": "plan", "thinkingSignature": SIG}


def build(provider: str, *messages: Msg, model: str | None = None, **opts: Any) -> Any:
    req = build_request(build_context(recs(*messages)), provider, model,
                        options=BuildRequestOptions(placeholder_tools=True, **opts))
    assert validate(req.body, provider, req.model, thinking=opts.get("thinking"),
                    prefill=opts.get("prefill") is not None) == [], req.body
    sdk_check(provider, req.body)
    return req


def kinds(req: Any) -> list[str]:
    return [c.kind for c in req.changes]


@pytest.mark.parametrize(("provider", "model", "meta"), [
    ("anthropic", "claude-sonnet-4-5", OWN),
    ("bedrock", "anthropic.claude-3-7-sonnet", BEDROCK_OWN)])
def test_thinking_on_closes_a_tool_loop_that_has_no_thinking(provider: str, model: str,
                                                             meta: dict[str, str]) -> None:
    # prevents: "Expected thinking or redacted_thinking, but found text. When thinking is
    # enabled, a final assistant message must start with a thinking block" (n8n-io/n8n#22550)
    history = (user("go"), assistant(text("looking"), call("c1"), api="openai-responses",
                                     model="gpt-5.1"), result("c1", "a.txt"))
    plain = build_request(build_context(recs(*history)), provider, model,
                          options=BuildRequestOptions(placeholder_tools=True)).body
    errors = [v.message for v in validate(plain, provider, model, thinking=True)]
    assert any("must start with a thinking block" in e for e in errors)
    req = build(provider, *history, model=model, thinking=True)
    assert kinds(req).count(ChangeKind.LOOP_AS_TEXT) == 2
    dumped = json.dumps(req.body)
    assert "[called tool bash (call c1)" in dumped and "[result of tool bash (call c1)]" in dumped
    assert "tool_use" not in dumped and "toolUse" not in dumped
    # the model's own signed thinking starts the turn: the loop goes as it is
    own = (user("go"), assistant(THOUGHT, call("c1"), **meta), result("c1", "a.txt"))
    kept = build(provider, *own, model=model, thinking=True)
    assert ChangeKind.LOOP_AS_TEXT not in kinds(kept)
    assert "tool_use" in json.dumps(kept.body) or "toolUse" in json.dumps(kept.body)


def test_a_closed_turn_needs_no_thinking() -> None:
    history = (user("go"), assistant(call("c1")), result("c1"), assistant(text("done")),
               user("next"))
    req = build("anthropic", *history, thinking=True)
    assert ChangeKind.LOOP_AS_TEXT not in kinds(req)


@pytest.mark.parametrize(("provider", "model"), [("anthropic", "claude-sonnet-4-5"),
                                                 ("bedrock", "us.anthropic.claude-3-7-sonnet")])
def test_prefill_goes_last_without_trailing_whitespace(provider: str, model: str) -> None:
    # prevents: "final assistant content cannot end with trailing whitespace"
    req = build(provider, user("list the states"), model=model, prefill='["Alabama", ')
    last = req.body["messages"][-1]
    assert last["role"] == "assistant"
    assert json.dumps(last).count('[\\"Alabama\\","') == 1
    assert ChangeKind.PREFILL_TRIMMED in kinds(req)
    bad = {"messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]},
                        {"role": "assistant", "content": [{"type": "text", "text": "A "}]}]}
    assert "trailing whitespace" in validate(bad, "anthropic", "claude-sonnet-4-5",
                                             prefill=True)[0].message


def test_prefill_is_refused_where_the_model_or_setting_refuses_it() -> None:
    # prevents: "This model does not support assistant message prefill. The conversation must
    # end with a user message." (Claude 4.6 and later)
    ctx = build_context(recs(user("q")))
    cases: list[tuple[str, str | None, dict[str, Any], str]] = [
             ("anthropic", "claude-opus-4-8", {}, "does not support assistant message prefill"),
             ("anthropic", "claude-sonnet-4-6", {}, "does not support assistant message"),
             ("bedrock", "anthropic.claude-opus-4-8", {}, "does not support"),
             ("anthropic", "claude-sonnet-4-5", {"thinking": True}, "extended thinking"),
             ("openai-chat", None, {}, "applies to Anthropic"),
             ("anthropic", "claude-sonnet-4-5", {"prefill_text": " "}, "non-blank")]
    for provider, model, extra, message in cases:
        prefill = extra.pop("prefill_text", "{")
        with pytest.raises(RequestError, match=message):
            build_request(ctx, provider, model,
                          options=BuildRequestOptions(prefill=prefill, **extra))
    after = build_context(recs(user("q"), assistant(text("a"))))
    with pytest.raises(RequestError, match="ends with an assistant turn"):
        build_request(after, "anthropic", "claude-sonnet-4-5",
                      options=BuildRequestOptions(prefill="{"))
    sent = {"messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]},
                         {"role": "assistant", "content": [{"type": "text", "text": "{"}]}]}
    assert "does not support assistant message prefill" in \
        validate(sent, "anthropic", "claude-opus-4-8", prefill=True)[0].message


def test_thinking_off_final_assistant_message_holds_no_thinking() -> None:
    # prevents: "When thinking is disabled, an assistant message in the final position cannot
    # contain thinking" (tailcallhq/forgecode#1853)
    sent = {"messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]},
                         {"role": "assistant", "content": [
                             {"type": "thinking", "thinking": "x", "signature": SIG},
                             {"type": "text", "text": "{"}]}]}
    errors = [v.message for v in validate(sent, "anthropic", "claude-sonnet-4-5",
                                          thinking=False, prefill=True)]
    assert any("When thinking is disabled" in e for e in errors)
    req = build("anthropic", user("q"), model="claude-sonnet-4-5", thinking=False, prefill="{")
    assert "thinking" not in json.dumps(req.body["messages"][-1])


def test_forced_tool_choice_with_manual_thinking_is_reported() -> None:
    # prevents: "Thinking may not be enabled when tool_choice forces tool use."
    history = (user("go"), assistant(call("c1")), result("c1"), assistant(text("ok")),
               user("again"))
    body = build_request(build_context(recs(*history)), "anthropic", "claude-sonnet-4-5",
                         options=BuildRequestOptions(placeholder_tools=True,
                                                     tool_choice="any")).body
    assert "forces tool use" in " ".join(
        v.message for v in validate(body, "anthropic", "claude-sonnet-4-5", thinking=True))
    assert validate(body, "anthropic", "claude-opus-4-8", thinking=True) == []
    assert validate(body, "anthropic", "claude-sonnet-4-5", thinking=False) == []
    with pytest.raises(RequestError, match="forces tool use"):
        build_request(build_context(recs(*history)), "anthropic", "claude-sonnet-4-5",
                      options=BuildRequestOptions(placeholder_tools=True, tool_choice="any",
                                                  thinking=True))


def test_cache_breakpoints_kept_within_four_the_latest_kept() -> None:
    # prevents: "A maximum of 4 blocks with cache_control may be provided. Found 6."
    marked = [user(f"part {i}", content=[{"type": "text", "text": f"part {i}",
                                          "cache_control": {"type": "ephemeral"}}])
              if i % 2 == 0 else assistant(text(f"reply {i}")) for i in range(11)]
    ctx = build_context(recs(*marked))
    from sessionctx.providers import naive_request
    naive = naive_request(ctx.messages, "anthropic").body
    assert "A maximum of 4 blocks with cache_control may be provided. Found 6." in \
        [v.message for v in validate(naive, "anthropic")]
    req = build("anthropic", *marked)
    kept = [i for i, m in enumerate(req.body["messages"])
            if any("cache_control" in b for b in m["content"])]
    assert kept == [4, 6, 8, 10]
    removed = [c for c in req.changes if c.kind == anthropic.CACHE_REMOVED]
    assert [c.message_index for c in removed] == [0, 2]
    too_many = json.loads(json.dumps(req.body))
    for m in too_many["messages"]:
        for b in m["content"]:
            b["cache_control"] = {"type": "ephemeral"}
    assert "A maximum of 4 blocks with cache_control may be provided. Found 11." in \
        [v.message for v in validate(too_many, "anthropic")]


def test_a_breakpoint_inside_a_tool_result_counts() -> None:
    cached = {"type": "text", "text": "big output", "cache_control": {"type": "ephemeral"}}
    history = [user("go", content=[{**cached, "text": f"q{i}"} for i in range(4)]),
               assistant(call("c1")),
               {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                "content": [cached], "isError": False}]
    req = build("anthropic", *history)
    assert json.dumps(req.body).count("cache_control") == 4
    assert "cache_control" in json.dumps(req.body["messages"][-1])


def test_chat_splits_a_message_over_128_tool_calls() -> None:
    # prevents: "Invalid 'messages[1].tool_calls': array too long. Expected an array with
    # maximum length 128" (github/copilot-cli#669)
    n = 130
    history = (user("go"), assistant(text("many"), *[call(f"c{i}") for i in range(n)]),
               *[result(f"c{i}", f"out {i}") for i in range(n)], assistant(text("done")),
               user("thanks"))
    from sessionctx.providers import naive_request
    naive = naive_request(build_context(recs(*history)).messages, "openai-chat").body
    assert any("array too long" in v.message for v in validate(naive, "openai-chat"))
    req = build("openai-chat", *history)
    roles = [m["role"] for m in req.body["messages"]]
    assert roles == ["user", "assistant", *["tool"] * 128, "assistant", "tool", "tool",
                     "assistant", "user"]
    assert req.body["messages"][1]["content"] == "many"
    assert req.body["messages"][130]["content"] is None
    ids = [m["tool_call_id"] for m in req.body["messages"] if m["role"] == "tool"]
    assert ids == [f"c{i}" for i in range(n)]
    assert ChangeKind.CALLS_SPLIT in kinds(req)
