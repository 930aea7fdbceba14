"""Real recorded API requests (pydantic-ai's VCR cassettes, origins in fixtures/SOURCES.md): the
body of every recorded OpenAI Responses and Anthropic Messages request, exactly as sent, read
as a request log and as its bare `input` or `messages` list, auto-detected and named. Counts are
computed here from the raw JSON, and every provider body built from them must validate."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from sessionctx.changes import ChangeKind
from sessionctx.context import Context, build_context
from sessionctx.formats.common import server_block
from sessionctx.formats.detect import decode_document, detect
from sessionctx.inputs import read_input
from sessionctx.providers import BuildRequestOptions, build_request, validate
from sessionctx.providers.policies.reasoning import AFTER_TEXT, FOREIGN, NOT_FIRST
from sessionctx.records import MESSAGE, ReadResult
from tests.conftest import FIXTURES
from tests.sdk_types import sdk_check
from tests.test_importers_anthropic import assert_every_body_valid, counts, raw_counts
from tests.test_importers_fixtures import imported_counts
from tests.test_importers_openai_responses import (
    MODEL_ITEMS,
    assert_valid_bodies,
    expected_counts,
)

Obj = dict[str, Any]
RESPONSES = sorted((FIXTURES / "openai-responses").glob("*.yaml"))
ANTHROPIC = sorted((FIXTURES / "anthropic").glob("*.yaml"))


def recorded_bodies(path: Path) -> list[Obj]:
    """The JSON body of each recorded request, as it was sent (a download has none)."""
    cassette = yaml.safe_load(path.read_text())
    bodies: list[Obj] = []
    for interaction in cassette["interactions"]:
        request = interaction["request"]
        body = request.get("parsed_body")
        if body is None and request.get("body"):
            body = json.loads(request["body"])
        if isinstance(body, dict):
            bodies.append(body)
    return bodies


def cases(paths: list[Path]) -> list[Any]:
    return [pytest.param(p, n, id=f"{p.stem}-{n}") for p in paths
            for n in range(len(recorded_bodies(p)))]


def last(paths: list[Path]) -> list[Any]:
    """The final request of each recording: the one that carries the whole history."""
    return [pytest.param(p, id=p.stem) for p in paths]


def write(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value))
    return path


def read_both(path: Path, fmt: str) -> ReadResult:
    """The file read auto-detected and named: the same format, the same records."""
    named = read_input(str(path), fmt)
    assert not named.problems, [str(p) for p in named.problems]
    auto = read_input(str(path))
    if auto.format == fmt:
        assert [r.view for r in auto.records] == [r.view for r in named.records]
    return named


def thinking_blocks(records: ReadResult) -> list[Obj]:
    return [b for r in records.records if r.kind == MESSAGE
            for b in r.view["content"] if isinstance(b, dict) and b["type"] == "thinking"]


def assert_clean(ctx: Context) -> None:
    assert ctx.pending_calls == []
    assert not [c for c in ctx.changes if c.kind.is_repair]


# -- OpenAI Responses ----------------------------------------------------------------------------

def responses_body(path: Path, n: int = -1) -> Obj:
    return recorded_bodies(path)[n]


@pytest.mark.parametrize("shape", ["request", "input"])
@pytest.mark.parametrize(("path", "n"), cases(RESPONSES))
def test_recorded_responses_requests(tmp_path: Path, path: Path, n: int, shape: str) -> None:
    body = responses_body(path, n)
    items = body["input"]
    value = body if shape == "request" else items
    result = read_both(write(tmp_path, f"{shape}.json", value), "openai-responses")
    want = expected_counts(items)
    if shape == "request" and body.get("instructions"):
        want["messages"] += 1  # the instructions, as the system message
    assert imported_counts(result.records) == want
    assert len(thinking_blocks(result)) == sum(i.get("type") == "reasoning" for i in items)
    ctx = build_context(result.records)
    assert_clean(ctx)
    assert_valid_bodies(ctx)


@pytest.mark.parametrize(("path", "n"), cases(RESPONSES))
def test_every_recorded_responses_request_is_detected(path: Path, n: int) -> None:
    raw = json.dumps(responses_body(path, n)).encode()
    assert detect(raw, decode_document(raw)) == "openai-responses"  # plain input messages too


@pytest.mark.parametrize("path", last(RESPONSES))
def test_a_recorded_input_list_is_detected(path: Path) -> None:
    raw = json.dumps(responses_body(path)["input"]).encode()
    assert detect(raw, decode_document(raw)) == "openai-responses"


def test_the_recordings_hold_what_they_are_kept_for() -> None:
    kinds = {i.get("type", "message") for p in RESPONSES for i in responses_body(p)["input"]}
    assert {"reasoning", "function_call", "function_call_output", "web_search_call",
            "mcp_call", "mcp_list_tools", "code_interpreter_call"} <= kinds
    reasoning = [i for p in RESPONSES for i in responses_body(p)["input"]
                 if i.get("type") == "reasoning"]
    assert len(reasoning) == 8 and all(r["id"] and r["encrypted_content"] for r in reasoning)


def leading_reasoning(items: list[Obj]) -> list[Obj]:
    """The reasoning items that open a run of model items (one turn), counted from the raw
    items: what may go back first in its turn."""
    out: list[Obj] = []
    in_turn = opening = False
    for it in items:
        kind = it.get("type", "message")
        if not (kind in MODEL_ITEMS or (kind == "message" and it["role"] == "assistant")):
            in_turn = False
            continue
        if not in_turn:
            in_turn = opening = True
        if kind != "reasoning":
            opening = False
        elif opening:
            out.append(it)
    return out


def item_kinds(items: list[Obj]) -> list[str]:
    return [i.get("type", "message") for i in items]


SERVER_KINDS = ("web_search_call", "code_interpreter_call", "mcp_call", "mcp_list_tools")


def assert_own_items_back(ctx: Context, items: list[Obj], model: str) -> None:
    """Built for the model that wrote them, the items go back as they were sent: every
    reasoning item by its id and encrypted_content, every server-run item as itself, in
    their order, nothing dropped; the body validates here and against the SDK's types."""
    req = build_request(ctx, "openai-responses", model)
    sent = req.body["input"]
    assert item_kinds(sent) == item_kinds(items)
    assert [(i["id"], i["encrypted_content"]) for i in sent if i["type"] == "reasoning"] == [
        (r["id"], r["encrypted_content"]) for r in items if r.get("type") == "reasoning"]
    assert [i for i in sent if i["type"] in SERVER_KINDS] == [
        i for i in items if i.get("type") in SERVER_KINDS]
    assert ChangeKind.THINKING_DROPPED not in [c.kind for c in req.changes]
    assert validate(req.body, "openai-responses", model) == []
    sdk_check("openai-responses", req.body)


def assert_text_elsewhere(ctx: Context, items: list[Obj], model: str) -> None:
    """For another model the server-run items are text and the reasoning is dropped, the
    change saying why; the body still validates."""
    req = build_request(ctx, "openai-responses", model)
    sent = req.body["input"]
    assert not [i for i in sent if i["type"] == "reasoning" or i["type"] in SERVER_KINDS]
    for item in items:
        if item.get("type") in SERVER_KINDS:
            assert f"[{item['type']} {item['id']}" in json.dumps(sent)
    dropped = [c for c in req.changes if c.kind == ChangeKind.THINKING_DROPPED]
    assert sum(c.detail.get("count", 1) for c in dropped) == item_kinds(items).count("reasoning")
    assert all(c.reason.endswith(FOREIGN) for c in dropped)
    assert validate(req.body, "openai-responses", model) == []
    sdk_check("openai-responses", req.body)


@pytest.mark.parametrize("path", [p for p in RESPONSES if any(
    i.get("type") == "reasoning" for i in responses_body(p)["input"])], ids=lambda p: p.stem)
def test_the_same_model_gets_the_recorded_items_back(tmp_path: Path, path: Path) -> None:
    """What the agent sent and the API took goes back to the same model whole: reasoning
    after a server-run item too, as the API asks only that reasoning be followed by the item
    it produced."""
    body = responses_body(path)
    ctx = build_context(read_input(str(write(tmp_path, "r.json", body))).records)
    assert_own_items_back(ctx, body["input"], body["model"])
    assert_text_elsewhere(ctx, body["input"], "gpt-4.1")


def test_half_the_recorded_reasoning_follows_another_item_of_its_turn() -> None:
    """Why reasoning may not have to come first in its turn: in the real recordings half of
    it comes after a server-run item."""
    stored = [i for p in RESPONSES for i in responses_body(p)["input"]
              if i.get("type") == "reasoning"]
    leading = [i for p in RESPONSES for i in leading_reasoning(responses_body(p)["input"])]
    assert (len(stored), len(leading)) == (8, 4)


def mcp_turn(list_id: str | None = "mcpl_1") -> list[Obj]:
    """A user question, then a turn: mcp_list_tools, reasoning, mcp_call, reasoning, message."""
    listed: Obj = {"type": "mcp_list_tools", "server_label": "docs", "tools": [
        {"name": "ask", "input_schema": {"type": "object"}}]}
    if list_id is not None:
        listed["id"] = list_id
    return [
        {"role": "user", "content": "What does the README say?"},
        listed,
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA1"},
        {"type": "mcp_call", "id": "mcp_1", "server_label": "docs", "name": "ask",
         "arguments": "{\"q\": \"readme\"}", "output": "It says hello.",
         "status": "completed"},
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAA2"},
        {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
         "content": [{"type": "output_text", "text": "It says hello.", "annotations": []}]},
        {"role": "user", "content": "Thanks."}]


def test_a_built_mcp_turn_goes_back_whole_to_its_model(tmp_path: Path) -> None:
    items = mcp_turn()
    path = write(tmp_path, "r.json", {"model": "o4-mini", "input": items})
    ctx = build_context(read_input(str(path), "openai-responses").records)
    assert_own_items_back(ctx, items, "o4-mini")
    assert_text_elsewhere(ctx, items, "gpt-5.1")
    anthropic = json.dumps(build_request(ctx, "anthropic").body)
    assert "[mcp_list_tools mcpl_1]" in anthropic and "responsesItem" not in anthropic


def test_with_tools_as_text_server_items_stay_text_for_their_model(tmp_path: Path) -> None:
    """Calls sent as text take the server-run calls with them: the turn no longer goes back
    as its own items, so reasoning must come first in it again."""
    items = mcp_turn()
    path = write(tmp_path, "r.json", {"model": "o4-mini", "input": items})
    ctx = build_context(read_input(str(path), "openai-responses").records)
    req = build_request(ctx, "openai-responses", "o4-mini",
                        options=BuildRequestOptions(tools_as_text=True))
    sent = req.body["input"]
    assert not [i for i in sent if i["type"] in SERVER_KINDS]
    assert "[mcp_list_tools mcpl_1]" in json.dumps(sent) and "[mcp_call mcp_1" in json.dumps(sent)
    dropped = [c for c in req.changes if c.kind == ChangeKind.THINKING_DROPPED]
    assert sum(c.detail.get("count", 1) for c in dropped) == 2
    assert all(c.reason.endswith(NOT_FIRST) for c in dropped)
    assert validate(req.body, "openai-responses", "o4-mini") == []


def test_reasoning_before_a_server_item_that_must_be_text_is_dropped(tmp_path: Path) -> None:
    """A server-run item without an id cannot go back as itself: it goes as text, and the
    reasoning before it (not first in its turn), which needs it, is dropped, the change naming
    why; the reasoning after it goes back."""
    items = mcp_turn(list_id=None)
    items[1:1] = [{"type": "message", "role": "assistant", "content": "Looking it up."},
                  {"type": "reasoning", "id": "rs_0", "summary": [],
                   "encrypted_content": "gAAA0"}]
    path = write(tmp_path, "r.json", {"model": "o4-mini", "input": items})
    ctx = build_context(read_input(str(path), "openai-responses").records)
    req = build_request(ctx, "openai-responses", "o4-mini")
    sent = req.body["input"]
    assert item_kinds(sent) == ["message", "message", "reasoning", "mcp_call", "reasoning",
                                "message", "message"]
    assert sent[1]["content"].startswith("Looking it up.")
    assert "[mcp_list_tools]" in sent[1]["content"]
    assert [i["id"] for i in sent if i["type"] == "reasoning"] == ["rs_1", "rs_2"]
    dropped = [c for c in req.changes if c.kind == ChangeKind.THINKING_DROPPED]
    assert len(dropped) == 1 and dropped[0].reason.endswith(AFTER_TEXT)
    assert validate(req.body, "openai-responses", "o4-mini") == []
    sdk_check("openai-responses", req.body)


def test_server_run_items_reach_other_providers_as_text(tmp_path: Path) -> None:
    path = FIXTURES / "openai-responses" / "test_openai_responses_model_mcp_server_tool.yaml"
    body = responses_body(path)
    call = next(i for i in body["input"] if i.get("type") == "mcp_call")
    ctx = build_context(read_input(str(write(tmp_path, "r.json", body))).records)
    sent = json.dumps(build_request(ctx, "anthropic").body)
    assert f"mcp_call {call['id']}" in sent and "ask_question" in sent


def test_a_recorded_text_file_goes_as_text(tmp_path: Path) -> None:
    path = FIXTURES / "openai-responses" / "test_openai_responses_text_document_url_input.yaml"
    body = responses_body(path)
    part = next(p for p in body["input"][0]["content"] if p["type"] == "input_file")
    text = base64.b64decode(part["file_data"].split(";base64,", 1)[1]).decode()
    ctx = build_context(read_input(str(write(tmp_path, "r.json", body))).records)
    for provider in ("anthropic", "openai-chat", "gemini"):
        req = build_request(ctx, provider)
        assert text.splitlines()[0] in json.dumps(req.body, ensure_ascii=False), provider
        assert validate(req.body, provider) == [], provider


# -- Anthropic Messages --------------------------------------------------------------------------

def anthropic_body(path: Path, n: int = -1) -> Obj:
    return recorded_bodies(path)[n]


@pytest.mark.parametrize("shape", ["request", "messages"])
@pytest.mark.parametrize(("path", "n"), cases(ANTHROPIC))
def test_recorded_anthropic_requests(tmp_path: Path, path: Path, n: int, shape: str) -> None:
    body = anthropic_body(path, n)
    value = body if shape == "request" else body["messages"]
    result = read_both(write(tmp_path, f"{shape}.json", value), "anthropic")
    assert counts(result) == raw_counts(body["messages"])
    assert_clean(build_context(result.records))
    assert_every_body_valid(result, body["model"])


@pytest.mark.parametrize("shape", ["request", "messages"])
@pytest.mark.parametrize("path", last(ANTHROPIC))
def test_a_recorded_anthropic_history_is_detected(path: Path, shape: str) -> None:
    body = anthropic_body(path)
    raw = json.dumps(body if shape == "request" else body["messages"]).encode()
    assert detect(raw, decode_document(raw)) == "anthropic"


def test_the_anthropic_recordings_hold_what_they_are_kept_for() -> None:
    blocks = [b for p in ANTHROPIC for m in anthropic_body(p)["messages"]
              if isinstance(m["content"], list) for b in m["content"]]
    kinds = {b["type"] for b in blocks}
    assert {"thinking", "redacted_thinking", "tool_use", "tool_result", "image",
            "server_tool_use", "web_search_tool_result", "mcp_tool_use",
            "mcp_tool_result"} <= kinds
    assert all(b["signature"] for b in blocks if b["type"] == "thinking")


@pytest.mark.parametrize("path", [p for p in ANTHROPIC if raw_counts(
    anthropic_body(p)["messages"])["thinking"]], ids=lambda p: p.stem)
def test_the_same_model_gets_the_recorded_thinking_back(tmp_path: Path, path: Path) -> None:
    body = anthropic_body(path)
    stored = [b.get("signature", b.get("data")) for m in body["messages"]
              if m["role"] == "assistant" for b in m["content"]
              if b["type"] in ("thinking", "redacted_thinking")]
    ctx = build_context(read_input(str(write(tmp_path, "r.json", body))).records)
    req = build_request(ctx, "anthropic", body["model"],
                        options=BuildRequestOptions(placeholder_tools=True))
    sent = [b.get("signature", b.get("data")) for m in req.body["messages"]
            if m["role"] == "assistant" for b in m["content"]
            if b["type"] in ("thinking", "redacted_thinking")]
    assert sent == stored
    assert validate(req.body, "anthropic", body["model"]) == []


def test_server_tool_blocks_become_text_without_their_encrypted_content(
        tmp_path: Path) -> None:
    path = FIXTURES / "anthropic" / "test_anthropic_web_search_tool.yaml"
    body = anthropic_body(path)
    use = next(b for m in body["messages"] if m["role"] == "assistant" for b in m["content"]
               if b["type"] == "server_tool_use")
    found = next(b for m in body["messages"] if m["role"] == "assistant" for b in m["content"]
                 if b["type"] == "web_search_tool_result")
    ctx = build_context(read_input(str(write(tmp_path, "r.json", body))).records)
    text = "".join(b.get("text", "") for m in ctx.messages if m["role"] == "assistant"
                   for b in m["content"])
    assert f"[server_tool_use {use['id']}]" in text and use["input"]["query"] in text
    assert "[web_search_tool_result]" in text and found["content"][0]["url"] in text
    assert "encrypted_content" not in text and found["content"][0]["encrypted_content"] not in text
    assert_clean(ctx)


# -- variants ------------------------------------------------------------------------------------

def test_a_recorded_request_cut_after_its_call_has_a_pending_call(tmp_path: Path) -> None:
    path = FIXTURES / "openai-responses" / "test_openai_responses_thinking_with_tool_calls.yaml"
    body = responses_body(path)
    cut = [i for i in body["input"] if i.get("type") != "function_call_output"]
    calls = [i["call_id"] for i in cut if i.get("type") == "function_call"]
    ctx = build_context(read_input(str(write(tmp_path, "r.json", {**body, "input": cut}))).records)
    assert [str(p.id).split("|")[0] for p in ctx.pending_calls] == calls  # call_id|item id
    assert_valid_bodies(ctx, sdk=False)


def test_recorded_messages_cut_after_their_calls_have_pending_calls(tmp_path: Path) -> None:
    body = anthropic_body(FIXTURES / "anthropic" / "test_multiple_parallel_tool_calls.yaml")
    cut = body["messages"][:-1]  # the user message that holds the four results
    calls = [b["id"] for b in cut[-1]["content"] if b["type"] == "tool_use"]
    result = read_input(str(write(tmp_path, "m.json", {**body, "messages": cut})))
    assert [p.id for p in build_context(result.records).pending_calls] == calls
    assert len(calls) == 4
    assert_every_body_valid(result, body["model"])


def test_an_embeddings_request_is_not_a_responses_request() -> None:
    raw = json.dumps({"model": "text-embedding-3-small", "input": ["a", "b"]}).encode()
    assert detect(raw, decode_document(raw)) != "openai-responses"


def test_a_server_run_item_as_text_leaves_out_what_no_model_reads() -> None:
    lost: list[str] = []
    search = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
        {"type": "web_search_result", "url": "https://a.example", "encrypted_content": "Eq=="}]}
    assert server_block(search, lost)["text"] == (
        '[web_search_tool_result] {"tool_use_id": "srvtoolu_1", "content": [{"type": '
        '"web_search_result", "url": "https://a.example"}]}\n')
    image = {"type": "image_generation_call", "id": "ig_1", "status": "completed",
             "result": "iVBORw0KGgo="}
    assert server_block(image, lost)["text"] == (
        '[image_generation_call ig_1 completed] {"result": "an image"}\n')
    assert lost == ["the image of image_generation_call ig_1"]


def test_the_responses_check_takes_exactly_the_server_items_sent(tmp_path: Path) -> None:
    """Reasoning may be followed by a server-run item; such an item needs its id; an MCP
    approval request, which sessionctx never sends as an item, is refused."""
    path = write(tmp_path, "r.json", {"model": "o4-mini", "input": mcp_turn()})
    ctx = build_context(read_input(str(path), "openai-responses").records)
    items = build_request(ctx, "openai-responses", "o4-mini").body["input"]
    assert item_kinds(items)[1:4] == ["mcp_list_tools", "reasoning", "mcp_call"]
    assert validate({"input": items}, "openai-responses", "o4-mini") == []
    unnamed = {"input": [{k: v for k, v in i.items() if k != "id" or i.get("type") != "mcp_call"}
                         for i in items]}
    assert [v.path for v in validate(unnamed, "openai-responses", "o4-mini")] == ["input[3].id"]
    approval = {"input": [*items, {"type": "mcp_approval_request", "id": "mcpr_1",
                                   "server_label": "docs", "name": "ask", "arguments": "{}"}]}
    assert [v.message for v in validate(approval, "openai-responses", "o4-mini")] == [
        "unsupported item type 'mcp_approval_request'"]
