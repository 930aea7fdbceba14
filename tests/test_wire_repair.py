"""repair_request: a provider body checked, and repaired by the provider step only when the
provider would refuse it; the body's other keys kept, no result invented, the same body always
giving the same repair."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import sessionctx
from sessionctx.errors import SessionctxError
from sessionctx.providers.wire import APIS, repair_request

TOOLS = [{"name": "bash", "input_schema": {"type": "object"}}]


def _anthropic(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 64, "system": "be brief",
            "tools": TOOLS, "messages": list(messages), "stream": True, "x_unknown": [1, "é"],
            **extra}


def _call(cid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": "bash", "input": {"cmd": "ls"}}


def _result(cid: str, text: str = "a b") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": cid, "content": text}


def _results_sent(body: dict[str, Any]) -> list[Any]:
    return [b.get("tool_use_id") for m in body["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


VALID = {
    "anthropic": _anthropic(
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}, _call("t1")]},
        {"role": "user", "content": [_result("t1"), {"type": "text", "text": "more"}]}),
    "openai-chat": {"model": "gpt-4o", "messages": [
        {"role": "system", "content": "sys"}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "x"}], "stream": True},
    "openai-responses": {"model": "gpt-5", "instructions": "be", "input": [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "x"}], "store": False},
    "gemini": {"contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "ls",
                                                         "response": {"output": "x"}}}]}],
        "generationConfig": {"temperature": 0}},
}


@pytest.mark.parametrize("api", APIS)
def test_a_valid_body_comes_back_as_the_object_given(api):
    body = VALID[api]
    model = "gemini-2.5-flash" if api == "gemini" else None
    fixed = repair_request(api, body, model=model)
    assert fixed.body is body and not fixed.changed and not fixed.violations


def test_claude_code_text_before_its_results_is_reordered_and_every_other_key_kept():
    body = _anthropic(
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [_call("t1")]},
        {"role": "user", "content": [{"type": "text", "text": "also"}, _result("t1")]})
    before = copy.deepcopy(body)
    fixed = sessionctx.repair_request("anthropic", body)
    assert body == before  # the body given is not touched
    assert fixed.changed and fixed.violations and not fixed.remaining
    assert list(fixed.body) == list(body)  # keys in their places
    assert {k: v for k, v in fixed.body.items() if k != "messages"} == {
        k: v for k, v in body.items() if k != "messages"}
    last = fixed.body["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result" and last[1] == {"type": "text", "text": "also"}


def test_an_unanswered_call_is_removed_and_pending_never_answered():
    body = _anthropic(
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "let me"}, _call("t9")]},
        {"role": "user", "content": "go on"})
    fixed = repair_request("anthropic", body)
    assert [p.id for p in fixed.pending_calls] == ["t9"]
    assert "t9" not in _results_sent(fixed.body)
    assert "t9" not in json.dumps(fixed.body["messages"])
    assert any(c.kind == "dropped_unpaired_call" for c in fixed.changes)
    noted = repair_request("anthropic", body, note_unpaired=True)
    assert "t9" not in _results_sent(noted.body)
    assert "interrupted" in json.dumps(noted.body["messages"])
    assert noted.summary()["pending_calls"][0]["id"] == "t9"


def test_the_same_broken_body_gives_the_same_bytes():
    body = _anthropic(
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [_call("t1"), _call("t2")]},
        {"role": "user", "content": [{"type": "text", "text": "x"}, _result("t2")]})
    first = json.dumps(repair_request("anthropic", body).body)
    again = json.dumps(repair_request("anthropic", copy.deepcopy(body)).body)
    assert first == again


def test_chat_responses_and_gemini_lose_their_unanswered_calls():
    chat = copy.deepcopy(VALID["openai-chat"])
    chat["messages"][-1] = {"role": "user", "content": "go on"}
    fixed = repair_request("openai-chat", chat)
    assert fixed.changed and not fixed.remaining and fixed.body["stream"] is True
    assert not any(m.get("tool_calls") for m in fixed.body["messages"])
    assert [p.id for p in fixed.pending_calls] == ["c1"]

    responses = copy.deepcopy(VALID["openai-responses"])
    del responses["input"][2]
    fixed = repair_request("openai-responses", responses)
    assert fixed.changed and not fixed.remaining and fixed.body["store"] is False
    assert not any(i.get("type") == "function_call_output" for i in fixed.body["input"])
    assert fixed.body["instructions"] == "be"

    gemini = copy.deepcopy(VALID["gemini"])
    gemini["contents"][2] = {"role": "user", "parts": [{"text": "go on"}]}
    fixed = repair_request("gemini", gemini, model="gemini-2.5-flash")
    assert fixed.changed and not fixed.remaining
    assert "functionCall" not in json.dumps(fixed.body)
    assert fixed.body["generationConfig"] == {"temperature": 0}


def test_a_gemini_call_without_an_id_is_sent_back_without_one():
    gemini = copy.deepcopy(VALID["gemini"])
    gemini["contents"].append({"role": "user", "parts": [{"text": "a"}]})
    gemini["contents"].append({"role": "user", "parts": [{"text": "b"}]})
    gemini["contents"].insert(0, {"role": "model", "parts": [{"text": "first"}]})
    fixed = repair_request("gemini", gemini, model="gemini-2.5-flash")
    assert fixed.changed and not fixed.remaining
    call = next(p["functionCall"] for c in fixed.body["contents"] for p in c["parts"]
                if "functionCall" in p)
    assert "id" not in call


def test_what_no_importer_reads_keeps_the_body_as_it_is():
    body = _anthropic(
        {"role": "user", "content": [{"type": "mystery", "x": 1}]},
        {"role": "assistant", "content": [_call("t1")]},
        {"role": "user", "content": "go"})
    fixed = repair_request("anthropic", body)
    assert fixed.body is body and not fixed.changed and fixed.unread and fixed.violations


def test_force_with_signatures_dropped_leaves_refused_reasoning_out():
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "c2lnbmF0dXJl" * 20}
    body = _anthropic(
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [thinking, {"type": "text", "text": "ok"}]},
        {"role": "user", "content": "go"})
    assert repair_request("anthropic", body).body is body
    fixed = repair_request("anthropic", body, force=True, drop_signatures=True)
    assert fixed.changed and "c2lnbmF0dXJl" not in json.dumps(fixed.body)


def test_an_unknown_api_is_a_clear_error():
    with pytest.raises(SessionctxError):
        repair_request("bedrock-converse", {})


def test_claude_codes_system_messages_stay_after_the_same_user_turn():
    aside = {"role": "system", "content": [], "output_config": {"effort": "medium"}}
    late = {"role": "system", "content": [{"type": "text", "text": "# Environment"}]}
    body = _anthropic(
        {"role": "user", "content": "hi"}, aside,
        {"role": "assistant", "content": [_call("t1")]},
        {"role": "user", "content": [{"type": "text", "text": "also"}, _result("t1")]},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "go on"}, late)
    fixed = repair_request("anthropic", body)
    assert fixed.changed and not fixed.unread and not fixed.remaining
    roles = [m["role"] for m in fixed.body["messages"]]
    assert roles == ["user", "system", "assistant", "user", "assistant", "user", "system"]
    assert fixed.body["messages"][1] is aside and fixed.body["messages"][-1] is late
    valid = _anthropic({"role": "user", "content": "hi"}, aside,
                       {"role": "assistant", "content": "ok"})
    assert repair_request("anthropic", valid).body is valid


def test_a_result_the_agent_wrote_for_itself_counts_as_pending_in_a_repair():
    invented = {"type": "tool_result", "tool_use_id": "t1", "is_error": True,
                "content": "[Tool call interrupted: the session ended before this call's "
                           "result was recorded]"}
    body = _anthropic(
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [_call("t1")]},
        {"role": "user", "content": [{"type": "text", "text": "x"}, invented]})
    fixed = repair_request("anthropic", body)
    assert "t1" not in json.dumps(fixed.body["messages"])
    assert [p.id for p in fixed.pending_calls] == ["t1"]
    assert any(c.kind == "result_written_by_agent" and c.detail["dropped"] for c in fixed.changes)
    valid = _anthropic(
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [_call("t1")]},
        {"role": "user", "content": [invented]})
    assert repair_request("anthropic", valid).body is valid  # a valid body is the agent's


def test_a_responses_body_with_the_apis_own_tool_types_is_valid_as_it_is():
    """Codex sends custom, tool_search and web_search tools beside its functions: none is a
    function definition to check, so its valid request is not rebuilt."""
    body: dict[str, Any] = {"model": "gpt-5.5", "instructions": "be brief", "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text",
                                                              "text": "sandbox: read-only"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "tools": [{"type": "function", "name": "exec_command", "strict": False,
                   "parameters": {"type": "object", "properties": {}}},
                  {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
                  {"type": "tool_search", "execution": "client"},
                  {"type": "web_search", "external_web_access": False}]}
    fixed = repair_request("openai-responses", body)
    assert not fixed.changed and fixed.body is body and not fixed.violations
    # a function definition is still checked
    body["tools"][0]["parameters"] = {"type": "string"}
    assert [v.path for v in repair_request("openai-responses", body).violations] == ["tools[0]"]


def _reused_id_body(model: str) -> dict[str, Any]:
    turn = [{"role": "assistant", "content": [{"type": "tool_use", "id": "call_01",
                                               "name": "ls", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_01",
                                          "content": "a.txt"}]}]
    return {"model": model, "max_tokens": 8, "tools": [{"name": "ls", "input_schema": {
        "type": "object"}}], "messages": [{"role": "user", "content": "list"}, *turn, *turn]}


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "gpt-4o", "gemini-2.5-pro"])
def test_another_makers_model_name_is_judged_by_the_apis_own_rules(model):
    """A gateway may name any model on the Messages API; the API enforces its rules whatever
    the name, so the body is checked and repaired, not sent unchecked."""
    fixed = repair_request("anthropic", _reused_id_body(model))
    assert [c.kind for c in fixed.changes] == ["duplicate_call_id_renamed"]
    ids = [b["id"] for m in fixed.body["messages"] if isinstance(m["content"], list)
           for b in m["content"] if b["type"] == "tool_use"]
    assert len(set(ids)) == 2 and fixed.body["model"] == model


def test_a_refusal_for_two_calls_with_one_id_is_one_a_rebuild_answers():
    from sessionctx.proxy.reactive import refusal

    text = b'{"type":"error","error":{"type":"invalid_request_error","message":' \
           b'"messages.3.content.0: `tool_use` ids must be unique"}}'
    assert refusal(400, text) is not None
    assert refusal(400, b'{"error":{"message":"max_tokens: too large"}}') is None


def test_tool_blocks_in_a_body_without_tools_go_as_text_not_under_a_made_up_schema():
    """A summary request over a history with calls often defines no tools; Anthropic refuses
    tool blocks then. The repair sends each call and result as text and adds no definition."""
    body = {"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": [
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls",
                                           "input": {"path": "."}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "a.txt"},
                                     {"type": "text", "text": "now summarize"}]}]}
    fixed = repair_request("anthropic", body)
    assert {str(c.kind) for c in fixed.changes} >= {"tool_call_as_text", "tool_result_as_text"}
    assert "tools" not in fixed.body and fixed.remaining == ()
    sent = json.dumps(fixed.body["messages"])
    assert "tool_use" not in sent and "a.txt" in sent and '\\"path\\":\\".\\"' in sent


def test_the_anthropic_validator_reads_string_content_as_the_text_block_it_spells():
    from sessionctx.providers import validate
    from sessionctx.providers.wire import violations

    body = _anthropic({"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"},
                      {"role": "user", "content": " \n"})
    found = [(v.path, v.message) for v in validate(body, "anthropic")]
    assert found == [("messages[2].content[0]",
                      "text content blocks must contain non-whitespace text")]
    assert found == [(v.path, v.message) for v in violations("anthropic", body, None)]


def test_the_responses_validator_reads_a_message_without_its_type_and_the_models_own_text():
    from sessionctx.providers import validate

    body = {"model": "gpt-5", "input": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
        {"type": "message", "role": "user", "content": [{"type": "output_text", "text": "x"}]},
        {"role": "user", "content": " "}]}
    assert [(v.path, v.message) for v in validate(body, "openai-responses")] == [
        ("input[2].content[0]", "unsupported part 'output_text'"),
        ("input[3].content[0]", "empty text part")]
