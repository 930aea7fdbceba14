"""OpenAI Responses input-item lists: real items (those of the real Codex rollout fixture, each
a Responses item as the API took it) as a bare list, as JSONL and inside a request log, and
variants built from them in code; counts are computed here from the raw JSON."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionctx.changes import ChangeKind
from sessionctx.cli import main
from sessionctx.context import Context, build_context
from sessionctx.formats.detect import decode_document, detect
from sessionctx.inputs import read_input
from sessionctx.providers import PROVIDERS, BuildRequestOptions, build_request, validate
from sessionctx.records import CONTEXT, MESSAGE
from tests.conftest import FIXTURES
from tests.sdk_types import sdk_check
from tests.test_importers_fixtures import imported_counts

CODEX = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
MODEL = "gpt-5-codex"  # the model the rollout's turn_context lines name
Item = dict[str, Any]
PNG = "data:image/png;base64," + base64.b64encode(
    bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                  "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082")
).decode()


def real_items() -> list[Item]:
    """Every Responses item the real rollout holds, in order."""
    lines = [json.loads(x) for x in CODEX.read_text().splitlines() if x.strip()]
    return [o["payload"] for o in lines if o["type"] == "response_item"]


# What the model writes besides messages: reasoning, calls, and the tools the server ran.
MODEL_ITEMS = ("reasoning", "function_call", "web_search_call", "file_search_call",
               "code_interpreter_call", "image_generation_call", "mcp_call", "mcp_list_tools")


def expected_counts(items: list[Item]) -> dict[str, int]:
    """Counts from the raw items: a run of model items is one assistant turn (an easy
    message, `{role, content}`, has no type)."""
    messages = images = 0
    calls: list[str] = []
    results: list[str] = []
    in_turn = False
    for it in items:
        kind = it.get("type", "message")
        model_side = kind in MODEL_ITEMS or (kind == "message" and it["role"] == "assistant")
        messages += not (model_side and in_turn)
        in_turn = model_side
        if kind == "function_call":
            calls.append(it["call_id"])
        if kind == "function_call_output":
            results.append(it["call_id"])
        content = it.get("content")
        if isinstance(content, list):
            images += sum(p["type"] == "input_image" for p in content)
    return {"messages": messages, "calls": len(calls), "results": len(results),
            "images": images, "unpaired": len(set(calls) - set(results))}


def write(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value))
    return path


def write_jsonl(tmp_path: Path, items: list[Item]) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


def request(items: list[Item], **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "instructions": "You are a coding agent.", "input": items,
            "tools": [{"type": "function", "name": "shell", "parameters": {
                "type": "object", "properties": {"command": {"type": "array"}}}}],
            "store": False, **extra}


def assert_valid_bodies(ctx: Context, sdk: bool = True) -> None:
    for provider in PROVIDERS:
        body = build_request(ctx, provider, options=BuildRequestOptions(
            placeholder_tools=True)).body
        assert validate(body, provider) == [], provider
        if sdk:
            sdk_check(provider, body)


def imported(path: Path, fmt: str = "auto") -> Context:
    result = read_input(str(path), fmt)
    assert not result.problems, [str(p) for p in result.problems]
    assert result.format == "openai-responses"
    return build_context(result.records)


# -- the real items in the three shapes ----------------------------------------------------------

@pytest.mark.parametrize("shape", ["list", "jsonl", "request"])
def test_real_items_import_with_independent_counts(tmp_path: Path, shape: str) -> None:
    items = real_items()
    assert len(items) == 54  # 3 user, 2 assistant messages, 17 reasoning, 16 calls, 16 outputs
    path = {"list": lambda: write(tmp_path, "items.json", items),
            "jsonl": lambda: write_jsonl(tmp_path, items),
            "request": lambda: write(tmp_path, "request.json", request(items))}[shape]()
    assert detect(path.read_bytes(), decode_document(path.read_bytes())) == "openai-responses"
    result = read_input(str(path))
    assert not result.problems, [str(p) for p in result.problems]
    counts = imported_counts(result.records)
    want = expected_counts(items)
    if shape == "request":
        want["messages"] += 1  # the instructions, as the system message
    assert counts == want
    ctx = build_context(result.records)
    assert not ctx.pending_calls and not ctx.repairs
    assert_valid_bodies(ctx, sdk=shape == "list")


def test_records_keep_their_item_and_where_it_was(tmp_path: Path) -> None:
    items = real_items()
    result = read_input(str(write_jsonl(tmp_path, items)))
    first = result.records[0]
    assert first.source.line == 1 and first.data["raw"] == items[0]
    turns = [r for r in result.records if isinstance(r.data.get("raw"), list)]
    assert turns and all(r.source.block_lines for r in turns)
    kept = [x for r in result.records
            for x in (r.data["raw"] if isinstance(r.data["raw"], list) else [r.data["raw"]])]
    assert kept == items  # every item is kept, in order, exactly as it was


def test_request_fields_are_kept(tmp_path: Path) -> None:
    value = request(real_items()[:1])
    result = read_input(str(write(tmp_path, "r.json", value)))
    system, user = result.records
    assert system.kind == MESSAGE and system.view == {"role": "system",
                                                       "content": "You are a coding agent."}
    assert system.data["raw"] == {k: v for k, v in value.items() if k != "input"}
    assert user.view["role"] == "user"
    del value["instructions"]
    settings, user = read_input(str(write(tmp_path, "r.json", value))).records
    assert settings.kind == CONTEXT and settings.data["raw"]["tools"][0]["name"] == "shell"
    assert settings.data["raw"]["model"] == MODEL


# -- reasoning -----------------------------------------------------------------------------------

def test_reasoning_goes_back_to_the_model_of_the_request(tmp_path: Path) -> None:
    items = real_items()
    stored = [i for i in items if i["type"] == "reasoning"]
    ctx = imported(write(tmp_path, "r.json", request(items)))
    req = build_request(ctx, "openai-responses", MODEL)
    sent = [i for i in req.body["input"] if i["type"] == "reasoning"]
    assert [i["encrypted_content"] for i in sent] == [r["encrypted_content"] for r in stored]
    assert req.body["store"] is False
    assert ChangeKind.THINKING_DROPPED not in [c.kind for c in req.changes]
    assert validate(req.body, "openai-responses", MODEL) == []
    other = build_request(ctx, "openai-responses", "gpt-5")
    assert not [i for i in other.body["input"] if i["type"] == "reasoning"]
    assert ChangeKind.THINKING_DROPPED in [c.kind for c in other.changes]


def test_reasoning_with_an_id_replays_with_its_call_id(tmp_path: Path) -> None:
    items: list[Item] = [
        {"role": "user", "content": "list files"},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text",
                                                         "text": "run ls"}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell",
         "arguments": "{\"command\": [\"ls\"]}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}]
    ctx = imported(write(tmp_path, "r.json", request(items)))
    body = build_request(ctx, "openai-responses", MODEL).body
    assert [i["type"] for i in body["input"]] == [
        "message", "reasoning", "function_call", "function_call_output"]
    assert body["input"][1]["id"] == "rs_1" and body["input"][2]["id"] == "fc_1"
    assert validate(body, "openai-responses", MODEL) == []


# -- variants ------------------------------------------------------------------------------------

def test_a_dangling_call_is_a_pending_call(tmp_path: Path) -> None:
    items = real_items()
    last_output = max(i for i, it in enumerate(items) if it["type"] == "function_call_output")
    cut = items[:last_output] + items[last_output + 1:]
    call_id = items[last_output]["call_id"]
    result = read_input(str(write(tmp_path, "r.json", cut)))
    ctx = build_context(result.records)
    assert [p.id for p in ctx.pending_calls] == [call_id]
    assert_valid_bodies(ctx, sdk=False)


def test_an_orphan_output_is_dropped_and_named(tmp_path: Path) -> None:
    items = real_items()
    first_call = next(i for i, it in enumerate(items) if it["type"] == "function_call")
    call_id = items[first_call]["call_id"]
    cut = items[:first_call] + items[first_call + 1:]
    ctx = build_context(read_input(str(write(tmp_path, "r.json", cut))).records)
    orphans = [c for c in ctx.changes if c.kind == ChangeKind.DROPPED_ORPHAN_RESULT]
    assert [c.detail.get("tool_call_id") for c in orphans] == [call_id]
    assert_valid_bodies(ctx, sdk=False)


def test_computer_call_with_a_screenshot_output(tmp_path: Path) -> None:
    items: list[Item] = [
        {"role": "user", "content": [{"type": "input_text", "text": "open the page"}]},
        {"type": "computer_call", "id": "cu_1", "call_id": "call_c1", "status": "completed",
         "action": {"type": "click", "button": "left", "x": 10, "y": 20},
         "pending_safety_checks": []},
        {"type": "computer_call_output", "call_id": "call_c1",
         "output": {"type": "computer_screenshot", "image_url": PNG}},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Clicked."}]}]
    ctx = imported(write(tmp_path, "c.json", items))
    call = ctx.messages[1]["content"][0]
    assert call["type"] == "toolCall" and call["name"] == "computer"
    assert call["arguments"]["type"] == "click"
    shot = ctx.messages[2]
    assert shot["role"] == "toolResult" and shot["content"][0]["type"] == "image"
    assert not ctx.pending_calls
    assert_valid_bodies(ctx)


def test_every_call_kind_pairs_with_its_output(tmp_path: Path) -> None:
    items: list[Item] = [
        {"role": "user", "content": "go"},
        {"type": "custom_tool_call", "call_id": "k1", "name": "apply_patch", "input": "*** x"},
        {"type": "custom_tool_call_output", "call_id": "k1", "output": "done"},
        {"type": "local_shell_call", "id": "ls_1", "call_id": "k2", "status": "completed",
         "action": {"type": "exec", "command": ["ls"], "env": {}}},
        {"type": "local_shell_call_output", "id": "k2", "output": "{\"output\": \"a\"}"},
        {"type": "shell_call", "call_id": "k3", "action": {"commands": ["pwd"]}},
        {"type": "shell_call_output", "call_id": "k3", "output": [
            {"stdout": "/w\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]},
        {"type": "apply_patch_call", "call_id": "k4", "status": "completed",
         "operation": {"type": "update_file", "path": "a.py", "diff": "@@"}},
        {"type": "apply_patch_call_output", "call_id": "k4", "status": "failed"}]
    ctx = imported(write(tmp_path, "k.json", items))
    assert not ctx.pending_calls and not ctx.repairs
    results = [m for m in ctx.messages if m["role"] == "toolResult"]
    assert [r["toolName"] for r in results] == ["apply_patch", "local_shell", "shell",
                                                 "apply_patch"]
    assert "exit code 0" in results[2]["content"][0]["text"]
    assert results[3]["isError"] and results[3]["content"][0]["text"] == "failed"
    assert_valid_bodies(ctx)


def test_server_items_reach_the_model_and_dangle_nowhere(tmp_path: Path) -> None:
    items: list[Item] = [
        {"role": "user", "content": "who is the mayor of Paris?"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed",
         "action": {"type": "search", "query": "mayor of Paris"}},
        {"type": "mcp_call", "id": "mcp_1", "server_label": "wiki", "name": "lookup",
         "arguments": "{}", "output": "Anne Hidalgo"},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "Anne Hidalgo."}]},
        {"type": "item_reference", "id": "msg_7"}]
    result = read_input(str(write(tmp_path, "s.json", items)))
    assert [str(p) for p in result.problems] == [
        f"{tmp_path / 's.json'}: item 4: item_reference item kept as a context row, not sent: "
        "it holds nothing a model reads"]
    ctx = build_context(result.records)
    assert not ctx.pending_calls
    text = "".join(b["text"] for b in ctx.messages[1]["content"])
    assert "web_search_call ws_1" in text and "mayor of Paris" in text
    assert "Anne Hidalgo" in text and text.endswith("Anne Hidalgo.")
    assert_valid_bodies(ctx)


def test_an_unconvertible_part_is_reported_and_its_item_kept(tmp_path: Path) -> None:
    items: list[Item] = [
        {"role": "user", "content": [{"type": "input_text", "text": "what is this?"},
                                     {"type": "input_image", "image_url": "https://x/y.png"}]}]
    result = read_input(str(write(tmp_path, "u.json", items)))
    assert len(result.problems) == 1 and "could not be imported" in result.problems[0].message
    assert result.records[0].data["raw"] == items[0]


def test_agents_sdk_session_items_are_read(tmp_path: Path) -> None:
    agents = pytest.importorskip("agents")
    import asyncio

    async def stored() -> list[Any]:
        session = agents.SQLiteSession("s")
        await session.add_items(real_items())
        got: list[Any] = await session.get_items()
        return got

    items = asyncio.run(stored())
    result = read_input(str(write(tmp_path, "session.json", items)))
    assert result.format == "openai-responses" and not result.problems
    assert imported_counts(result.records) == expected_counts(real_items())


# -- detection and the command line --------------------------------------------------------------

def test_other_formats_keep_their_detection(tmp_path: Path) -> None:
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None,
                                                 "tool_calls": []},
            {"role": "developer", "content": [{"type": "text", "text": "be brief"}]}]
    native = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    for value, fmt in ((chat, "openai-chat"), (native, "native")):
        raw = json.dumps(value).encode()
        assert detect(raw, decode_document(raw)) == fmt
    assert detect(CODEX.read_bytes()) == "codex"


def test_a_chat_message_among_items_is_reported_not_misread(tmp_path: Path) -> None:
    items: list[Item] = [*real_items()[:2], {"role": "assistant", "content": None,
                                             "tool_calls": [{"id": "c", "type": "function"}]}]
    result = read_input(str(write(tmp_path, "m.json", items)), "openai-responses")
    assert [p.message for p in result.problems] == ["item 2: not a Responses input item"]
    assert result.records[-1].kind == CONTEXT and result.records[-1].data["raw"] == items[2]


def test_check_reads_it_named_and_detected(tmp_path: Path) -> None:
    path = str(write_jsonl(tmp_path, real_items()))
    for args in (["check", "--json", path], ["check", "--json", "--from", "openai-responses",
                                             path]):
        outcome = CliRunner().invoke(main, args)
        assert outcome.exit_code == 0, outcome.output
        assert json.loads(outcome.output)["pending_calls"] == []


def test_a_file_of_another_format_named_as_this_one_exits_2(tmp_path: Path) -> None:
    for path in (str(CODEX), str(write(tmp_path, "odd.json", {"hello": "world"}))):
        outcome = CliRunner().invoke(main, ["check", "--from", "openai-responses", path])
        assert outcome.exit_code == 2, outcome.output
        assert "not an openai-responses file: expected OpenAI Responses input items" in \
            outcome.output
        assert outcome.output.count("\n") == 1


def test_jsonl_that_opens_with_a_plain_message_is_still_detected(tmp_path: Path) -> None:
    items: list[Item] = [{"role": "user", "content": "hi"}, *real_items()[1:4]]
    path = write_jsonl(tmp_path, items)
    assert detect(path.read_bytes()) == "openai-responses"
    native = b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}\n'
    assert detect(native) == "native"


def test_a_request_whose_input_is_a_string(tmp_path: Path) -> None:
    path = write(tmp_path, "r.json", {"model": MODEL, "input": "hello"})
    result = read_input(str(path), "openai-responses")
    assert [r.view for r in result.records if r.kind == MESSAGE] == [
        {"role": "user", "content": [{"type": "text", "text": "hello"}]}]


# -- repair writes it back -------------------------------------------------------------------------

def _broken(items: list[Item]) -> tuple[list[Item], str]:
    """Real items broken as a killed run leaves them: a call whose output was never written,
    after its reasoning, then the user's next message; later an answered call whose output
    was written twice. (items, the dangling call id)"""
    assert [it["type"] for it in items[2:8]] == ["reasoning", "function_call",
                                                 "function_call_output"] * 2
    assert items[51]["role"] == "user"
    second = {**items[7], "output": "answered a second time"}
    out = [*items[:4], items[51], *items[5:8], second, *items[52:]]
    return out, items[3]["call_id"]


@pytest.mark.parametrize("shape", ["jsonl", "list", "request"])
def test_repair_takes_out_the_dangling_call_its_reasoning_and_the_duplicate(
        tmp_path: Path, shape: str) -> None:
    from tests.repair_helpers import assert_repaired
    from tests.test_repair_documents import assert_items_repaired

    items, dangling = _broken(real_items())
    if shape == "jsonl":
        path = write_jsonl(tmp_path, items)
        report = assert_repaired(path, path.read_bytes(), "openai-responses")
        after = [json.loads(x) for x in path.read_text().splitlines()]
    else:
        value: Any = items if shape == "list" else request(items)
        path = tmp_path / "r.json"
        path.write_text(json.dumps(value, indent=2))
        where: list[str | int] = [] if shape == "list" else ["input"]
        report = assert_items_repaired(path, path.read_bytes(), where, "openai-responses")
        loaded = json.loads(path.read_text())
        after = loaded if shape == "list" else loaded["input"]
    kinds = sorted(c["kind"] for c in report["changes"])
    assert kinds == ["dropped_duplicate_result", "dropped_lone_reasoning",
                     "dropped_unpaired_call"]
    assert dangling not in [it.get("call_id") for it in after]
    assert len(after) == len(items) - 3
    ctx = build_context(read_input(str(path)).records)
    assert not ctx.pending_calls and not ctx.repairs
    body = build_request(ctx, "openai-responses", MODEL).body
    assert validate(body, "openai-responses", MODEL) == []


def test_repair_notes_the_interrupted_call_after_its_turn(tmp_path: Path) -> None:
    from tests.test_repair_documents import assert_items_repaired

    items = real_items()[:4]  # two user messages, reasoning, a call with no output
    assert [it["type"] for it in items] == ["message", "message", "reasoning", "function_call"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(items, indent=2))
    report = assert_items_repaired(path, path.read_bytes(), [], "openai-responses",
                                   "--note-unpaired")
    after = json.loads(path.read_text())
    assert after[:2] == items[:2] and len(after) == 3
    assert after[2]["role"] == "user" and "outcome is unknown" in after[2]["content"][0]["text"]
    assert "interrupted_note_added" in [c["kind"] for c in report["changes"]]


EXTRA: list[Item] = [
    {"type": "web_search_call", "id": "ws_1", "status": "completed",
     "action": {"type": "search", "query": "q"}},
    {"type": "computer_call", "id": "cu_1", "call_id": "cc_1",
     "action": {"type": "screenshot"}, "pending_safety_checks": []},
    {"type": "computer_call_output", "call_id": "cc_1",
     "output": {"type": "computer_screenshot", "image_url": PNG}},
    {"type": "item_reference", "id": "msg_1"},
    {"role": "developer", "content": "Answer in French."},
]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_any_selection_of_items_keeps_them_all_and_gives_valid_bodies(data: st.DataObject
                                                                       ) -> None:
    """Items lost or reordered as a broken run leaves them: every item is kept, and every
    provider's body is valid."""
    pool = real_items() + EXTRA
    picked = data.draw(st.lists(st.integers(0, len(pool) - 1), max_size=30))
    items = [pool[i] for i in picked]
    raw = json.dumps({"model": MODEL, "input": items}).encode()
    from sessionctx.inputs import read_raw

    result = read_raw(raw, "r.json", "openai-responses")
    kept = [x for r in result.records if isinstance(r.data.get("raw"), list | dict)
            for x in (r.data["raw"] if isinstance(r.data["raw"], list) else [r.data["raw"]])]
    assert [x for x in kept if "model" not in x] == items
    ctx = build_context(result.records)
    for provider in PROVIDERS:
        body = build_request(ctx, provider, MODEL if provider.startswith("openai") else None,
                             options=BuildRequestOptions(placeholder_tools=True)).body
        found = validate(body, provider)
        if not body.get("contents", body.get("input", body.get("messages"))):
            # nothing to send (no item a model reads): the validator rightly says so
            assert found and found[0].message.endswith("at least one message is required")
            found = found[1:]
        assert found == [], provider
