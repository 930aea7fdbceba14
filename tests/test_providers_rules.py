"""One test per provider rule, named after the real API error the rule prevents."""

from __future__ import annotations

import base64
import copy
import io
import json
import sys
from typing import Any

import pytest

from sessionctx.changes import ChangeKind
from sessionctx.context import build_context
from sessionctx.providers import (
    PROVIDERS,
    BuildRequestOptions,
    build_from_messages,
    build_request,
    naive_request,
    policies,
    validate,
)
from sessionctx.providers import images as img
from sessionctx.providers.capabilities import capability
from tests.conftest import assistant, call, image, recs, result, text, user
from tests.sdk_types import sdk_check

Msg = dict[str, Any]
PLACEHOLDERS = BuildRequestOptions(placeholder_tools=True)


def build(provider: str, *messages: Msg, model: str | None = None, system: str | None = None,
          as_text: bool = False) -> tuple[dict[str, Any], list[str]]:
    """Build through the core context, assert the body is valid, return body and change kinds."""
    ctx = build_context(recs(*messages))
    req = build_request(ctx, provider, model, system,
                        BuildRequestOptions(as_text, placeholder_tools=True))
    assert validate(req.body, provider, model) == []
    sdk_check(provider, req.body)
    return req.body, [c.kind for c in req.changes]


def naive_errors(provider: str, *messages: Msg, model: str | None = None) -> str:
    ctx = build_context(recs(*messages))
    body = naive_request(ctx.messages, provider, model).body
    return " | ".join(v.message for v in validate(body, provider, model))


def png(width: int, height: int) -> str:
    from PIL import Image
    out = io.BytesIO()
    Image.new("RGB", (width, height)).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


PARALLEL = (user("go"), assistant(call("a"), call("b")), user("meanwhile"),
            result("a"), result("b"))


# ---------------------------------------------------------------- tool result placement

def test_anthropic_results_first_in_next_user_message() -> None:
    # prevents: "Did not find 2 tool_result block(s) at the beginning of this message"
    assert "Did not find" in naive_errors("anthropic", *PARALLEL)
    body, kinds = build("anthropic", *PARALLEL)
    content = body["messages"][2]["content"]
    assert [b["type"] for b in content] == ["tool_result", "tool_result", "text"]
    assert ChangeKind.RESULTS_MOVED in kinds


def test_bedrock_results_in_next_user_message() -> None:
    # prevents: "Expected toolResult blocks at messages.2.content for the following Ids"
    assert "Expected toolResult blocks" in naive_errors("bedrock", *PARALLEL)
    body, _ = build("bedrock", *PARALLEL)
    assert [next(iter(b)) for b in body["messages"][2]["content"]] == \
        ["toolResult", "toolResult", "text"]


def test_openai_chat_one_tool_message_per_call_right_after() -> None:
    # prevents: "An assistant message with 'tool_calls' must be followed by tool messages
    # responding to each 'tool_call_id'"
    assert "must be followed by tool messages" in naive_errors("openai-chat", *PARALLEL)
    body, _ = build("openai-chat", *PARALLEL)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "tool", "user"]


def test_responses_call_output_pairing() -> None:
    # prevents: "No tool output found for function call call_..."
    body, _ = build("openai-responses", *PARALLEL)
    kinds = [i.get("type") for i in body["input"]]
    assert kinds == ["message", "function_call", "function_call", "function_call_output",
                     "function_call_output", "message"]
    bad = {"input": [{"type": "function_call", "call_id": "x", "name": "f",
                      "arguments": "{}"}]}
    assert "No tool output found" in validate(bad, "openai-responses")[0].message


def test_gemini_equal_call_and_response_parts() -> None:
    # prevents: "Please ensure that the number of function response parts is equal to the
    # number of function call parts of the function call turn."
    assert "number of function response parts" in naive_errors("gemini", *PARALLEL)
    body, _ = build("gemini", *PARALLEL)
    roles = [c["role"] for c in body["contents"]]
    assert roles == ["user", "model", "user"]
    parts = body["contents"][2]["parts"]
    assert [next(iter(p)) for p in parts] == ["functionResponse", "functionResponse", "text"]


def test_gemini_first_call_carries_a_thought_signature() -> None:
    # prevents: "Function call ... is missing a thought_signature in functionCall parts"
    body, kinds = build("gemini", *PARALLEL)
    calls = body["contents"][1]["parts"]
    assert calls[0]["thoughtSignature"] == "skip_thought_signature_validator"
    assert "thoughtSignature" not in calls[1]
    assert ChangeKind.CALL_SIGNATURE_ADDED in kinds
    body2, _ = build("gemini", *PARALLEL, model="gemini-2.5-pro")
    assert "thoughtSignature" not in body2["contents"][1]["parts"][0]


@pytest.mark.parametrize("model", ["gemini-3-pro", "gemini-2.5-pro"])
def test_gemini_corrupted_signature_is_not_replayed(model: str) -> None:
    # prevents: "Invalid / Corrupted thought signature" (and google-genai refusing to build the
    # request: "Data should be valid base64")
    good = "c2lnbmF0dXJl"
    own = assistant({"type": "thinking", "thinking": "plan", "thinkingSignature": "!!"},
                    text("running"), {**call("a"), "thoughtSignature": "not base64"},
                    api="google-generative-ai", model=model)
    body, kinds = build("gemini", user("go"), own, result("a"), model=model)
    parts = body["contents"][1]["parts"]
    assert [p.get("thought") for p in parts] == [None, None]  # the reasoning is not replayed
    assert parts[1].get("thoughtSignature") in (None, "skip_thought_signature_validator")
    assert kinds.count(ChangeKind.SIGNATURE_CORRUPT) == 1
    fine = assistant({"type": "thinking", "thinking": "plan", "thinkingSignature": good},
                     text("running"), {**call("a"), "thoughtSignature": good},
                     api="google-generative-ai", model=model)
    body, kinds = build("gemini", user("go"), fine, result("a"), model=model)
    parts = body["contents"][1]["parts"]
    assert parts[0] == {"text": "plan", "thought": True, "thoughtSignature": good}
    assert parts[2]["thoughtSignature"] == good
    assert ChangeKind.SIGNATURE_CORRUPT not in kinds


def test_orphan_result_is_never_sent() -> None:
    # prevents: "unexpected tool_use_id found in tool_result blocks"
    msgs = [user("a"), assistant(text("b")), {"role": "toolResult", "toolCallId": "zz",
                                              "content": [text("x")]}]
    req = policies.prepare(msgs, None, capability("anthropic")[0], "claude-opus-4-8")
    assert all(b["type"] != policies.RESULT for _, blocks, _ in req.turns for b in blocks)
    assert ChangeKind.RESULT_WITHOUT_CALL in [c.kind for c in req.changes]


def raw_build(provider: str, *messages: Msg) -> tuple[dict[str, Any], list[str]]:
    """Build straight from messages, without the core's pairing, and check the body."""
    req = build_from_messages(list(messages), None, provider, options=PLACEHOLDERS)
    assert validate(req.body, provider) == []
    sdk_check(provider, req.body)
    return req.body, [c.kind for c in req.changes]


def test_result_before_its_call_does_not_hide_the_later_result() -> None:
    # the early result answers nothing; the call is answered by the one that follows it
    msgs = (user("go"), result("x", "too early"), assistant(call("x")), result("x", "on time"))
    body, kinds = raw_build("anthropic", *msgs)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][2]["content"][0]["content"][0]["text"] == "on time"
    assert "too early" not in json.dumps(body)
    assert ChangeKind.RESULT_WITHOUT_CALL in kinds and ChangeKind.CALL_WITHOUT_RESULT not in kinds


def test_results_out_of_call_order_are_put_in_order_and_logged() -> None:
    msgs = (user("go"), assistant(call("a"), call("b")), result("b", "B"), result("a", "A"))
    body, kinds = raw_build("anthropic", *msgs)
    assert [b["tool_use_id"] for b in body["messages"][2]["content"]] == ["a", "b"]
    assert ChangeKind.RESULTS_MOVED in kinds


@pytest.mark.parametrize("provider", PROVIDERS)
def test_call_blocks_outside_assistant_messages_are_not_sent(provider: str) -> None:
    # prevents: "tool_use blocks belong to assistant messages"
    stray = {"role": "user", "content": [{"type": "toolCall", "id": "c9", "name": "bash",
                                          "arguments": {}}, text("hi")]}
    body, kinds = raw_build(provider, stray)
    assert "c9" not in json.dumps(body)
    assert ChangeKind.UNSUPPORTED_BLOCK in kinds


# ---------------------------------------------------------------- ids

def test_ids_rewritten_to_pattern_same_on_call_and_result() -> None:
    # prevents: "tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
    msgs = (user("go"), assistant(call("fs.read:1")), result("fs.read:1"))
    assert "should match pattern" in naive_errors("anthropic", *msgs)
    body, kinds = build("anthropic", *msgs)
    use = body["messages"][1]["content"][0]["id"]
    assert body["messages"][2]["content"][0]["tool_use_id"] == use
    assert use.startswith("fs_read_1") and ChangeKind.ID_REWRITTEN in kinds
    again, _ = build("anthropic", *msgs)
    assert again == body  # deterministic, so prompt caches hold


def test_openai_chat_ids_at_most_40_characters() -> None:
    # prevents: "Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string
    # with maximum length 40"
    long_id = "toolu_" + "x" * 60
    msgs = (user("go"), assistant(call(long_id)), result(long_id))
    assert "at most 40" in naive_errors("openai-chat", *msgs)
    body, _ = build("openai-chat", *msgs)
    new = body["messages"][1]["tool_calls"][0]["id"]
    assert len(new) <= 40 and body["messages"][2]["tool_call_id"] == new


def test_responses_call_id_at_most_64() -> None:
    # prevents: "Invalid 'input[95].call_id': string too long. Expected ... maximum length 64"
    long_id = "c" * 80
    body, _ = build("openai-responses", user("go"), assistant(call(long_id)), result(long_id))
    assert len(body["input"][1]["call_id"]) <= 64


def test_id_collisions_resolved() -> None:
    msgs = (user("go"), assistant(call("a.b"), call("a_b")), result("a.b", "one"),
            result("a_b", "two"))
    body, _ = build("anthropic", *msgs)
    ids = [b["id"] for b in body["messages"][1]["content"]]
    assert len(set(ids)) == 2
    res = {b["tool_use_id"]: b["content"][0]["text"] for b in body["messages"][2]["content"]}
    assert res[ids[0]] == "one" and res[ids[1]] == "two"


def test_duplicate_call_ids_renamed() -> None:
    # prevents: "messages.1.content.1: tool_use ids must be unique"
    msgs = [user("go"), assistant(call("x")), result("x", "first"), assistant(call("x")),
            result("x", "second")]
    cap, model = capability("anthropic")
    prep = policies.prepare(msgs, None, cap, model)
    ids = [b["id"] for _, blocks, _ in prep.turns for b in blocks if b["type"] == "toolCall"]
    outs = {b["id"]: c["text"] for _, blocks, _ in prep.turns for b in blocks
            if b["type"] == policies.RESULT for c in b["content"][:1] if c["type"] == "text"}
    assert ids == ["x", "x_2"] and outs == {"x": "first", "x_2": "second"}
    assert ChangeKind.DUPLICATE_ID_RENAMED in [c.kind for c in prep.changes]


def test_renamed_duplicate_never_collides_with_a_stored_id() -> None:
    # the second "x" becomes "x_2", which a later call already uses as its own id
    msgs = (user("go"), assistant(call("x")), result("x", "1"), assistant(call("x")),
            result("x", "2"), assistant(call("x_2")), result("x_2", "3"))
    body, _ = raw_build("anthropic", *msgs)
    uses = [b["id"] for m in body["messages"] for b in m["content"] if b["type"] == "tool_use"]
    answers = {b["tool_use_id"]: b["content"][0]["text"] for m in body["messages"]
               for b in m["content"] if b["type"] == "tool_result"}
    assert len(set(uses)) == 3
    assert [answers[u] for u in uses] == ["1", "2", "3"]


def test_responses_pipe_ids_split_into_call_id() -> None:
    msgs = (user("go"), assistant(call("call_1|fc_9")), result("call_1|fc_9"))
    body, kinds = build("openai-responses", *msgs)
    assert body["input"][1]["call_id"] == "call_1" and "id" not in body["input"][1]
    assert body["input"][2]["call_id"] == "call_1"
    assert ChangeKind.REASONING_ID_REMOVED in kinds


def test_gemini_function_response_takes_its_calls_name() -> None:
    # prevents a functionResponse without a name (results stored in OpenAI's shape have none),
    # or with the name the call had before it was rewritten to the allowed pattern
    nameless = {**result("a"), "toolName": None}
    assert "must be the called function's name" in naive_errors(
        "gemini", user("go"), assistant(call("a")), nameless)
    body, _ = build("gemini", user("go"), assistant(call("a")), nameless)
    assert body["contents"][2]["parts"][0]["functionResponse"]["name"] == "bash"
    body, kinds = build("gemini", user("go"), assistant(call("b", "mcp.read")),
                        result("b", name="mcp.read"))
    sent = body["contents"][1]["parts"][0]["functionCall"]["name"]
    assert sent == "mcp_read" and ChangeKind.NAME_REWRITTEN in kinds
    assert body["contents"][2]["parts"][0]["functionResponse"]["name"] == sent


# ---------------------------------------------------------------- arguments

@pytest.mark.parametrize("provider", PROVIDERS)
def test_malformed_arguments_kept_recoverably(provider: str) -> None:
    # prevents: OpenAI "arguments ... is not valid JSON" / Anthropic "input: Input should be a
    # valid dictionary"
    bad = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": '{"cmd": "ls'}
    msgs = (user("go"), assistant(bad), result("c1"))
    body, kinds = build(provider, *msgs)
    assert ChangeKind.ARGUMENTS_REPAIRED in kinds
    assert '{"cmd": "ls' in raw_arguments(body)


def raw_arguments(obj: Any) -> list[str]:
    """Every value kept under the raw-arguments marker, in argument strings too."""
    if isinstance(obj, str):
        try:
            obj = json.loads(obj)
        except ValueError:
            return []
        if not isinstance(obj, dict):
            return []
    if isinstance(obj, dict):
        found = [obj[policies.RAW_ARGUMENTS_KEY]] if policies.RAW_ARGUMENTS_KEY in obj else []
        return found + [r for v in obj.values() for r in raw_arguments(v)]
    if isinstance(obj, list):
        return [r for v in obj for r in raw_arguments(v)]
    return []


def test_repair_arguments() -> None:
    assert policies.repair_arguments('{"a": 1}') == ({"a": 1}, None)
    assert policies.repair_arguments("[1]") == ({policies.RAW_ARGUMENTS_KEY: "[1]"},
                                                "were not a JSON object")
    assert policies.repair_arguments(None) == ({}, "were not a JSON object")
    assert policies.repair_arguments(3) == ({policies.RAW_ARGUMENTS_KEY: "3"},
                                            "were not a JSON object")
    for stored in ('{"a": NaN}', '{"a": -Infinity}', '{"a": 1e999}'):
        args, why = policies.repair_arguments(stored)
        assert args == {policies.RAW_ARGUMENTS_KEY: stored}
        assert why is not None and "JSON cannot carry" in why


# ---------------------------------------------------------------- thinking

def thinking(t: str, sig: str | None = "sig") -> Msg:
    return {"type": "thinking", "thinking": t, "thinkingSignature": sig}


def test_anthropic_thinking_replayed_to_same_model_only() -> None:
    # prevents: "messages.1.content.0.thinking.signature: Field required" and replaying
    # thinking to a model that did not produce it
    own = assistant(thinking("hmm"), text("hi"), api="anthropic-messages",
                    model="claude-opus-4-8")
    body, _ = build("anthropic", user("q"), own, user("more"))
    assert body["messages"][1]["content"][0] == {"type": "thinking", "thinking": "hmm",
                                                 "signature": "sig"}
    other = assistant(thinking("hmm"), text("hi"), api="openai-responses", model="gpt-5")
    body, kinds = build("anthropic", user("q"), other, user("more"))
    assert [b["type"] for b in body["messages"][1]["content"]] == ["text"]
    assert ChangeKind.THINKING_DROPPED in kinds
    body, kinds = build("anthropic", user("q"), other, user("more"), as_text=True)
    assert body["messages"][1]["content"][0] == {"type": "text", "text": "hmm"}
    assert ChangeKind.THINKING_AS_TEXT in kinds


def test_reasoning_after_a_block_turned_to_text_is_not_replayed_as_thinking() -> None:
    # prevents: "If an assistant message contains any thinking blocks, the first block must be
    # thinking or redacted_thinking": unsigned reasoning turned to text comes first, so signed
    # reasoning after it cannot stay thinking
    own = assistant(thinking("plan", sig=None), thinking("check"), text("hi"),
                    api="anthropic-messages", model="claude-opus-4-8")
    body, kinds = build("anthropic", user("q"), own, user("more"), as_text=True)
    assert body["messages"][1]["content"] == [{"type": "text", "text": t}
                                              for t in ("plan", "check", "hi")]
    assert kinds.count(ChangeKind.THINKING_AS_TEXT) == 1


def test_anthropic_final_block_cannot_be_thinking() -> None:
    # prevents: "The final block in an assistant message cannot be thinking"
    only = assistant(thinking("hmm"), api="anthropic-messages", model="claude-opus-4-8")
    msgs = (user("q"), only, user("more"))
    assert "cannot be thinking" in naive_errors("anthropic", *msgs)
    body, _ = build("anthropic", *msgs)
    assert all(b["type"] != "thinking" for m in body["messages"] for b in m["content"])


def test_responses_reasoning_item_replayed_with_its_call() -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"}
    msg = assistant(thinking("", json.dumps(item)), call("call_1|fc_1"),
                    api="openai-responses", model="gpt-5.1")
    body, _ = build("openai-responses", user("q"), msg, result("call_1|fc_1"))
    assert body["input"][1] == item
    assert body["input"][2]["id"] == "fc_1"
    # another model: the reasoning goes and so does the fc_ id
    # prevents: "Item 'fc_1' of type 'function_call' was provided without its required
    # 'reasoning' item: 'rs_1'"
    body, kinds = build("openai-responses", user("q"), msg, result("call_1|fc_1"),
                        model="gpt-4.1")
    assert [i["type"] for i in body["input"]][1] == "function_call"
    assert "id" not in body["input"][1]
    assert ChangeKind.REASONING_ID_REMOVED in kinds


def test_bedrock_reasoning_signature_only_for_claude() -> None:
    # prevents: "This model doesn't support the reasoningContent.reasoningText.signature field"
    bad = {"messages": [{"role": "user", "content": [{"text": "q"}]},
                        {"role": "assistant", "content": [
                            {"reasoningContent": {"reasoningText": {"text": "t",
                                                                    "signature": "s"}}},
                            {"text": "a"}]}]}
    assert validate(bad, "bedrock", "amazon.nova-pro") != []
    assert validate(bad, "bedrock", "anthropic.claude-opus-4-8") == []


# ---------------------------------------------------------------- empty blocks

@pytest.mark.parametrize("provider", PROVIDERS)
def test_empty_text_blocks_removed(provider: str) -> None:
    # prevents: "messages: text content blocks must contain non-whitespace text"
    msgs = (user("q"), assistant(text("  "), text("answer")), user("more"))
    body, kinds = build(provider, *msgs)
    assert '"  "' not in json.dumps(body)
    assert ChangeKind.EMPTY_TEXT_REMOVED in kinds


@pytest.mark.parametrize("provider", PROVIDERS)
def test_empty_tool_output_marked(provider: str) -> None:
    # prevents Bedrock "The content field at messages.<n>.content.0.toolResult cannot be empty"
    # (the core build drops an empty result message, so the messages go in directly)
    empty = {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": []}
    req = build_from_messages([user("q"), assistant(call("c1")), empty], None, provider,
                              options=PLACEHOLDERS)
    body, kinds = req.body, [c.kind for c in req.changes]
    assert validate(body, provider) == []
    sdk_check(provider, body)
    assert policies.EMPTY_OUTPUT in json.dumps(body)
    assert ChangeKind.EMPTY_OUTPUT_MARKED in kinds


# ---------------------------------------------------------------- roles

def test_bedrock_strict_alternation() -> None:
    # prevents: "A conversation must alternate between user and assistant roles."
    msgs = (user("a"), user("b"), assistant(text("c")), assistant(text("d")), user("e"))
    assert "must alternate" in naive_errors("bedrock", *msgs)
    body, kinds = build("bedrock", *msgs)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert ChangeKind.TURNS_MERGED in kinds


@pytest.mark.parametrize("provider", ["anthropic", "bedrock", "gemini"])
def test_first_message_is_user(provider: str) -> None:
    # prevents Gemini "function call turn comes immediately after a user turn" on a history
    # that starts with a model call, and Bedrock/Anthropic first-message errors
    msgs = [assistant(text("hello")), user("hi")]
    cap, model = capability(provider)
    prep = policies.prepare(msgs, None, cap, model)
    assert prep.turns[0][0] == "user"
    assert ChangeKind.FIRST_USER_ADDED in [c.kind for c in prep.changes]


def test_system_messages() -> None:
    # prevents Anthropic "role 'system' is not supported on this model"
    msgs = ({"role": "system", "content": "be brief"}, user("q"), assistant(text("a")),
            {"role": "system", "content": "now longer"}, user("b"))
    body, kinds = build("anthropic", *msgs, model="claude-sonnet-4-5", system="top")
    assert body["system"] == "top\n\nbe brief"
    assert all(m["role"] != "system" for m in body["messages"])
    assert ChangeKind.SYSTEM_CONVERTED in kinds and ChangeKind.SYSTEM_HOISTED in kinds
    chat, _ = build("openai-chat", *msgs, system="top")
    assert chat["messages"][0] == {"role": "system", "content": "top\n\nbe brief"}
    assert {"role": "system", "content": "now longer"} in chat["messages"]
    gem, _ = build("gemini", *msgs, system="top")
    assert gem["systemInstruction"] == {"parts": [{"text": "top\n\nbe brief"}]}


# ---------------------------------------------------------------- images

def test_openai_chat_tool_images_move_to_user_message() -> None:
    # prevents: "Image URLs are only allowed for messages with role 'user', but this message
    # with role 'tool' contains an image URL."
    msgs = (user("q"), assistant(call("c1", "shot")), result("c1", "here", "shot", image()))
    assert "only allowed for messages with role 'user'" in naive_errors("openai-chat", *msgs)
    body, kinds = build("openai-chat", *msgs)
    assert body["messages"][2] == {"role": "tool", "tool_call_id": "c1", "content": "here"}
    assert body["messages"][3]["role"] == "user"
    assert body["messages"][3]["content"][1]["type"] == "image_url"
    assert ChangeKind.TOOL_IMAGES_MOVED in kinds


@pytest.mark.parametrize("provider", ["anthropic", "bedrock", "openai-chat",
                                      "openai-responses"])
def test_assistant_images_become_notes(provider: str) -> None:
    # prevents Anthropic "'image' blocks are not permitted within assistant turns" (Bedrock:
    # "You can only include images and documents if the role is user"); Chat would drop the
    # image without a word and Responses has no assistant image item at all
    msgs = (user("draw a cat"), assistant(text("here it is"), image()), user("thanks"))
    if provider in ("anthropic", "bedrock"):
        assert naive_errors(provider, *msgs)
    body, kinds = build(provider, *msgs)
    assert "does not accept images in assistant messages" in json.dumps(body)
    assert "here it is" in json.dumps(body)
    assert ChangeKind.IMAGE_OMITTED in kinds


def test_gemini_keeps_images_in_model_turns() -> None:
    msgs = (user("draw a cat"), assistant(text("here it is"), image()), user("thanks"))
    body, kinds = build("gemini", *msgs)
    assert body["contents"][1]["parts"][1] == {"inlineData": {"mimeType": "image/png",
                                                              "data": "aGVsbG8="}}
    assert ChangeKind.IMAGE_OMITTED not in kinds


def test_assistant_images_do_not_count_toward_the_limit() -> None:
    msgs = (user("q", content=[text("look"), *[image() for _ in range(20)]]),
            assistant(text("a"), image()), user("more"))
    body, kinds = build("bedrock", *msgs)
    assert kinds.count(ChangeKind.IMAGE_OVER_LIMIT) == 0
    assert sum("image" in b for b in body["messages"][0]["content"]) == 20


def test_image_count_limit_replaces_oldest() -> None:
    # prevents Bedrock "You can include up to 20 images"
    msgs = [user("q", content=[image() for _ in range(22)])]
    msgs[0]["content"].append(text("look"))
    assert "up to 20 images" in naive_errors("bedrock", *msgs)
    body, kinds = build("bedrock", *msgs)
    blocks = body["messages"][0]["content"]
    assert ["image" in b for b in blocks].count(True) == 20
    assert "limit of 20 images" in blocks[0]["text"]
    assert kinds.count(ChangeKind.IMAGE_OVER_LIMIT) == 2


def test_oversize_image_downscaled_with_pillow() -> None:
    # prevents Anthropic "At least one of the image dimensions exceed max allowed size"
    msgs = (user("q", content=[text("see"), image(png(8100, 10))]),)
    body, kinds = build("anthropic", *msgs)
    data = body["messages"][0]["content"][1]["source"]["data"]
    size = img.dimensions(base64.b64decode(data))
    assert size is not None and max(size) <= 8000
    assert ChangeKind.IMAGE_DOWNSCALED in kinds


def test_oversize_image_note_without_pillow(monkeypatch: pytest.MonkeyPatch) -> None:
    msgs = (user("q", content=[text("see"), image(png(8100, 10))]),)
    monkeypatch.setitem(sys.modules, "PIL", None)
    body, kinds = build("anthropic", *msgs)
    assert "8100x10 px" in body["messages"][0]["content"][1]["text"]
    assert ChangeKind.IMAGE_OMITTED in kinds


def test_many_images_lower_the_pixel_limit() -> None:
    # over 20 images in one Anthropic request: 2000 px per side
    big = png(2100, 10)
    msgs = (user("q", content=[text("see"), *[image(big) for _ in range(21)]]),)
    _, kinds = build("anthropic", *msgs)
    assert kinds.count(ChangeKind.IMAGE_DOWNSCALED) == 21


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP"])
def test_dimensions_from_headers(fmt: str) -> None:
    from PIL import Image
    out = io.BytesIO()
    Image.new("RGB", (123, 45)).save(out, format=fmt)
    assert img.dimensions(out.getvalue()) == (123, 45)


def test_unsupported_image_type_becomes_note() -> None:
    msgs = (user("q", content=[text("see"), image(mime="image/bmp")]),)
    assert "not accepted" in naive_errors("anthropic", *msgs)
    body, kinds = build("anthropic", *msgs)
    assert body["messages"][0]["content"][1]["type"] == "text"
    assert ChangeKind.IMAGE_OMITTED in kinds


# ---------------------------------------------------------------- failed tool results

FAILED = (user("go"), assistant(call("a")), result("a", "permission denied", isError=True))


def test_error_flag_kept_where_the_wire_has_one() -> None:
    body, kinds = build("anthropic", *FAILED)
    assert body["messages"][2]["content"][0]["is_error"] is True
    body, kinds2 = build("gemini", *FAILED)
    assert "error" in body["contents"][2]["parts"][0]["functionResponse"]["response"]
    body, kinds3 = build("bedrock", *FAILED)
    assert body["messages"][2]["content"][0]["toolResult"]["status"] == "error"
    assert ChangeKind.ERROR_AS_TEXT not in kinds + kinds2 + kinds3


@pytest.mark.parametrize("provider", ["openai-chat", "openai-responses"])
def test_openai_failed_result_says_so_in_its_text(provider: str) -> None:
    # Chat tool messages and Responses function_call_output items have no error field: sent
    # as stored, the model could not tell a failed call from one that succeeded.
    body, kinds = build(provider, *FAILED)
    if provider == "openai-chat":
        output = body["messages"][2]["content"]
    else:
        output = body["input"][2]["output"]
    texts = [output] if isinstance(output, str) else [p["text"] for p in output]
    joined = "\n".join(texts)
    assert joined.startswith(policies.ERROR_NOTE) and "permission denied" in joined
    assert kinds.count(ChangeKind.ERROR_AS_TEXT) == 1
    ok, ok_kinds = build(provider, user("go"), assistant(call("a")), result("a", "fine"))
    assert policies.ERROR_NOTE not in json.dumps(ok) and ChangeKind.ERROR_AS_TEXT not in ok_kinds


def test_failed_result_with_no_output_is_not_marked_empty() -> None:
    body, kinds = build("openai-chat", user("go"), assistant(call("a")),
                        {**result("a", "x", isError=True), "content": []})
    assert policies.ERROR_NOTE in json.dumps(body["messages"][2])
    assert ChangeKind.EMPTY_OUTPUT_MARKED not in kinds


def test_bedrock_status_only_for_claude_and_nova() -> None:
    # prevents: toolResult.status, "only supported by Amazon Nova and Anthropic Claude models"
    sent = {"messages": [
        {"role": "user", "content": [{"text": "go"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "a", "name": "bash",
                                                       "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "a", "status": "error",
                                                     "content": [{"text": "denied"}]}}]}],
            "toolConfig": {"tools": [{"toolSpec": {"name": "bash",
                                                   "inputSchema": {"json": {"type": "object"}}}}]}}
    assert "status" in validate(sent, "bedrock", "meta.llama3-70b-instruct-v1:0")[0].message
    assert validate(sent, "bedrock", "eu.anthropic.claude-sonnet-4-5") == []
    for model in ("anthropic.claude-opus-4-8", "eu.anthropic.claude-sonnet-4-5",
                  "amazon.nova-pro-v1:0", "us.amazon.nova-lite-v1:0"):
        body, kinds = build("bedrock", *FAILED, model=model)
        assert body["messages"][2]["content"][0]["toolResult"]["status"] == "error", model
        assert ChangeKind.ERROR_AS_TEXT not in kinds
    body, kinds = build("bedrock", *FAILED, model="meta.llama3-70b-instruct-v1:0")
    out = body["messages"][2]["content"][0]["toolResult"]
    assert "status" not in out
    assert out["content"][0] == {"text": policies.ERROR_NOTE}
    assert ChangeKind.ERROR_AS_TEXT in kinds


def test_naive_body_sends_error_results_as_stored() -> None:
    ctx = build_context(recs(*FAILED))
    body = naive_request(ctx.messages, "openai-chat").body
    assert policies.ERROR_NOTE not in json.dumps(body)


# ---------------------------------------------------------------- capability table

def test_model_picks_the_capability_row() -> None:
    assert capability("anthropic")[0].family == "claude-opus-4-8"
    assert capability("anthropic", "claude-sonnet-4-5")[0].family == "claude-"
    assert not capability("anthropic", "claude-sonnet-4-5")[0].mid_system
    assert capability("gemini", "gemini-2.5-flash")[0].call_signature_required is False
    assert capability("bedrock", "amazon.nova-pro")[0].reasoning_signature is False
    # a cross-region inference profile id picks its model's row
    for model in ("us.anthropic.claude-opus-4-8", "eu.anthropic.claude-sonnet-4-5",
                  "global.anthropic.claude-opus-4-8", "apac.anthropic.claude-3-7-sonnet"):
        assert capability("bedrock", model)[0].family.startswith("anthropic.claude"), model
    assert capability("bedrock", "apac.anthropic.claude-3-7-sonnet")[0].prefill
    assert capability("bedrock", "meta.llama3-70b-instruct-v1:0")[0].family == ""
    assert capability("openai-chat")[0].id_max_len == 40
    with pytest.raises(ValueError, match="unknown provider"):
        capability("nope")


def test_anthropic_mid_conversation_system_on_models_that_accept_it() -> None:
    msgs = (user("q"), {"role": "system", "content": "note"}, assistant(text("a")), user("b"))
    body, _ = build("anthropic", *msgs, model="claude-opus-4-8")
    assert body["messages"][1] == {"role": "system",
                                   "content": [{"type": "text", "text": "note"}]}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_image_repairs_leave_the_stored_messages_as_they_were(provider: str) -> None:
    # notes and downscaled copies replace images in the body, never in the context
    msgs = [user("q", content=[text("see"), image(png(8100, 10)), image(mime="image/bmp"),
                               *[image() for _ in range(22)]]),
            assistant(call("c1", "shot")), result("c1", "", "shot", image(png(8100, 10)))]
    before = copy.deepcopy(msgs)
    build_from_messages(msgs, None, provider)
    assert msgs == before


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_stored_text_list_is_sent_without_being_modified(provider: str) -> None:
    said = [{"type": "text", "text": "Running it."}]
    stored = {"role": "assistant", "content": said,
              "tool_calls": [{"id": "c1", "type": "function",
                              "function": {"name": "bash", "arguments": "{}"}}]}
    before = copy.deepcopy(stored)
    body, _ = build(provider, user("go"), stored, result("c1", "done"), user("thanks"))
    assert stored == before and stored["content"] is said and len(said) == 1
    assert "c1" in json.dumps(body)


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_an_id_or_name_ending_in_a_newline_does_not_fit_a_pattern(provider: str) -> None:
    """`$` matches before a final newline: the patterns are held to the whole string."""
    body, kinds = build(provider, user("go"), assistant(call("c1\n", "run\n")),
                        result("c1\n", "ok", name="run\n"), user("next"))
    text = json.dumps(body)
    assert "c1\\n" not in text and "run\\n" not in text, text
    assert "tool_name_rewritten" in kinds
    if provider != "gemini":  # Gemini's ids are optional, and its validator checks no names
        naive = naive_errors(provider, user("go"), assistant(call("c1\n", "run\n")),
                             result("c1\n", "ok", name="run\n"), user("next"))
        assert naive, "the validator let the stored id and name through"


def test_pairing_speaks_one_vocabulary_from_the_fold_to_the_provider_step():
    from sessionctx.pairing import PROVIDER_STEP_KIND

    # the same broken history through the provider step alone names each drop with the kind
    # the fold's kind maps to, and the fold's own context leaves the provider step nothing
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "toolCall", "id": "a", "name": "x",
                                               "arguments": {}}]},
            {"role": "toolResult", "toolCallId": "b", "content": "orphan"},
            {"role": "user", "content": "next"}]
    alone = {c.kind for c in build_from_messages(msgs, None, "anthropic").changes}
    folded = build_context(recs(*msgs))
    core = {c.kind for c in folded.changes}
    assert {ChangeKind.DROPPED_UNPAIRED_CALL, ChangeKind.DROPPED_ORPHAN_RESULT} <= core
    assert {PROVIDER_STEP_KIND[k] for k in core if k in PROVIDER_STEP_KIND} <= alone
    after = {c.kind for c in build_request(folded, "anthropic").changes}
    assert not after & set(PROVIDER_STEP_KIND.values())
