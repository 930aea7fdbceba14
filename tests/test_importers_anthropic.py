"""Anthropic Messages lists: a real Cline session, and variants of it built here."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionctx.changes import ChangeKind
from sessionctx.cli import main
from sessionctx.context import build_context
from sessionctx.inputs import read_raw
from sessionctx.providers import PROVIDERS, BuildRequestOptions, build_request, validate
from sessionctx.records import CONTEXT, MESSAGE, ReadResult
from tests.conftest import FIXTURES

SESSION = FIXTURES / "anthropic" / "session.messages.json"
SUCCESS = FIXTURES / "anthropic" / "success.messages.json"
Obj = dict[str, Any]


def raw_counts(items: list[Obj]) -> dict[str, int]:
    """What the importer should give, counted from the raw JSON alone."""
    messages = calls = results = images = thinking = 0
    for m in items:
        content = m["content"]
        blocks = content if isinstance(content, list) else [{"type": "text"}]
        if m["role"] == "assistant":
            messages += 1
            calls += sum(b["type"] == "tool_use" for b in blocks)
            thinking += sum(b["type"] in ("thinking", "redacted_thinking") for b in blocks)
            continue
        tool_results = [b for b in blocks if b["type"] == "tool_result"]
        results += len(tool_results)
        messages += len(tool_results) + (len(tool_results) < len(blocks))
        images += sum(b["type"] == "image" for b in blocks)
        images += sum(isinstance(x, dict) and x.get("type") == "image" for b in tool_results
                      if isinstance(b.get("content"), list) for x in b["content"])
    return {"messages": messages, "calls": calls, "results": results, "images": images,
            "thinking": thinking}


def counts(result: ReadResult) -> dict[str, int]:
    messages = [r.view for r in result.records if r.kind == MESSAGE]
    blocks = [b for m in messages for b in m["content"]]
    return {"messages": len(messages),
            "calls": sum(b["type"] == "toolCall" for b in blocks),
            "results": sum(m["role"] == "toolResult" for m in messages),
            "images": sum(b["type"] == "image" for b in blocks),
            "thinking": sum(b["type"] == "thinking" for b in blocks)}


def doc(path: Path = SESSION) -> Obj:
    value: Obj = json.loads(path.read_text())
    return value


def read(value: Any, fmt: str = "auto") -> ReadResult:
    return read_raw(json.dumps(value).encode(), "history.json", fmt)


def png() -> str:
    """A 2x2 PNG, base64."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    pixels = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(pixels)) + chunk(b"IEND", b""))
    return base64.b64encode(data).decode()


def image_block() -> Obj:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                        "data": png()}}


def assert_every_body_valid(result: ReadResult, model: str | None = None) -> None:
    ctx = build_context(result.records)
    for provider in PROVIDERS:
        body = build_request(ctx, provider, model=model if provider == "anthropic" else None,
                             options=BuildRequestOptions(placeholder_tools=True)).body
        assert validate(body, provider) == [], provider


@pytest.mark.parametrize("path", [SESSION, SUCCESS], ids=lambda p: p.name)
def test_the_real_cline_session_imports_with_independent_counts(path: Path) -> None:
    result = read_raw(path.read_bytes(), str(path))
    assert result.format == "anthropic" and not result.problems
    assert counts(result) == raw_counts(doc(path)["messages"])
    ctx = build_context(result.records)
    assert ctx.pending_calls == []
    assert not [c for c in ctx.changes if c.kind.is_repair]
    assert_every_body_valid(result)


def test_real_counts_are_not_trivial() -> None:
    found = raw_counts(doc()["messages"])
    assert found == {"messages": 32, "calls": 11, "results": 11, "images": 0, "thinking": 0}
    assert raw_counts(doc(SUCCESS)["messages"])["thinking"] == 1


def test_the_session_file_fields_are_one_context_row() -> None:
    result = read(doc())
    rows = [r for r in result.records if r.kind == CONTEXT]
    assert len(rows) == 1 and rows[0].data["raw"]["system_prompt"].startswith("You are Cline")
    assert "messages" not in rows[0].data["raw"]


def test_records_keep_the_exact_json_of_their_message() -> None:
    items = doc()["messages"]
    for r in read(doc()).records:
        if r.kind == MESSAGE:
            assert r.data["raw"] == items[r.source.index]
            assert r.data["raw"].get("ts") == items[r.source.index].get("ts")


def test_cline_file_block_goes_as_its_file_content_text() -> None:
    first = next(r.view for r in read(doc()).records if r.kind == MESSAGE)
    block = doc()["messages"][0]["content"][1]
    assert first["content"][1]["text"] == (
        f"<file_content path=\"{block['path']}\">\n{block['content']}\n</file_content>")


def test_cline_structured_result_goes_as_its_json_text() -> None:
    items = doc()["messages"]
    raw = next(b for m in items for b in m["content"] if b["type"] == "tool_result"
               and isinstance(b["content"], list))
    result = next(r.view for r in read(doc()).records if r.kind == MESSAGE
                  and r.view.get("toolCallId") == raw["tool_use_id"])
    assert json.loads(result["content"][0]["text"]) == raw["content"]
    assert result["toolName"] == raw["name"]


def bare() -> list[Obj]:
    """The real messages as a bare list, as api_conversation_history.json keeps them."""
    return list(doc()["messages"])


def test_a_bare_list_is_detected_and_counted() -> None:
    result = read(bare())
    assert result.format == "anthropic"
    assert counts(result) == raw_counts(bare())
    assert [r.kind for r in result.records].count(CONTEXT) == 0


def test_a_dangling_call_at_the_end_is_pending() -> None:
    call = {"type": "tool_use", "id": "toolu_dangling", "name": "run_commands",
            "input": {"commands": ["ls"]}}
    items = [*bare(), {"role": "assistant", "content": [{"type": "text", "text": "Let me"},
                                                        call]}]
    result = read(items)
    ctx = build_context(result.records)
    assert [p.id for p in ctx.pending_calls] == ["toolu_dangling"]
    assert counts(result) == raw_counts(items)
    assert_every_body_valid(result)


def test_an_orphan_result_is_dropped() -> None:
    orphan = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "late"}]}
    items = [*bare()[:1], orphan, *bare()[1:]]
    ctx = build_context(read(items).records)
    assert [c.kind for c in ctx.changes] == [ChangeKind.DROPPED_ORPHAN_RESULT]
    assert_every_body_valid(read(items))


def request_log(messages: list[Obj], model: str = "claude-opus-4-8") -> Obj:
    return {"model": model, "max_tokens": 4096, "system": "You are terse.",
            "tools": [{"name": "read_files", "description": "Read",
                       "input_schema": {"type": "object"}}], "messages": messages}


def test_signed_thinking_is_replayed_to_its_model() -> None:
    items = bare()
    first = next(i for i, m in enumerate(items) if m["role"] == "assistant")
    items[first] = {**items[first], "content": [
        {"type": "thinking", "thinking": "Look first.", "signature": "c2lnbmF0dXJl"},
        *items[first]["content"]]}
    del items[first]["modelInfo"]
    result = read(request_log(items))
    assert counts(result)["thinking"] == 1
    ctx = build_context(result.records)
    body = build_request(ctx, "anthropic", model="claude-opus-4-8").body
    blocks = [b for m in body["messages"] for b in m["content"] if isinstance(b, dict)]
    assert {"type": "thinking", "thinking": "Look first.", "signature": "c2lnbmF0dXJl"} in blocks
    assert_every_body_valid(result, "claude-opus-4-8")


def test_redacted_thinking_keeps_its_data() -> None:
    items = bare()[:3]
    items[1] = {**items[1], "content": [{"type": "redacted_thinking", "data": "b3BhcXVl"},
                                        *items[1]["content"]]}
    del items[1]["modelInfo"]
    result = read(request_log(items))
    block = next(r.view for r in result.records if r.kind == MESSAGE
                 and r.view["role"] == "assistant")["content"][0]
    assert block == {"type": "thinking", "thinking": "", "thinkingSignature": "b3BhcXVl",
                     "redacted": True}
    body = build_request(build_context(result.records), "anthropic",
                         model="claude-opus-4-8").body
    assert body["messages"][1]["content"][0] == {"type": "redacted_thinking", "data": "b3BhcXVl"}


def test_images_in_user_messages_and_tool_results() -> None:
    items = bare()[:3]
    items[0] = {"role": "user", "content": [{"type": "text", "text": "see"}, image_block()]}
    result_block = items[2]["content"][0]
    items[2] = {"role": "user", "content": [{**result_block, "content": [
        {"type": "text", "text": "shot"}, image_block()]}]}
    result = read(items)
    assert counts(result) == raw_counts(items) and counts(result)["images"] == 2
    assert not result.problems
    assert_every_body_valid(result)


def test_string_content_reads_as_text() -> None:
    items = [{"role": "user", "content": "hello"},
             {"role": "assistant", "content": "Hi. What can I do?"}]
    result = read(request_log(items))
    assert result.format == "anthropic"
    assert [r.view["content"] for r in result.records if r.kind == MESSAGE] == [
        [{"type": "text", "text": "hello"}], [{"type": "text", "text": "Hi. What can I do?"}]]
    assert_every_body_valid(result)


def test_a_request_log_keeps_system_and_tools_as_a_context_row() -> None:
    result = read(request_log(bare()))
    assert result.format == "anthropic"
    row = next(r for r in result.records if r.kind == CONTEXT)
    assert row.data["raw"]["system"] == "You are terse." and row.data["raw"]["tools"]
    assistants = [r.view for r in result.records if r.kind == MESSAGE
                  and r.view["role"] == "assistant"]
    assert {m["model"] for m in assistants} == {"anthropic/claude-opus-4.8-fast",
                                                "mistralai/voxtral-small-24b-2507"}
    assert counts(result) == raw_counts(bare())


def roo_history() -> list[Obj]:
    """Roo Code's non-destructive condense and truncation, on the real messages."""
    items = [{**m, "ts": 1000 + i} for i, m in enumerate(bare()[:13])]
    condensed = [{**m, "condenseParent": "c1"} for m in items[:6]]
    summary = {"role": "user", "content": [{"type": "text", "text": "## Summary\nEdited."}],
               "ts": 2000, "isSummary": True, "condenseId": "c1"}
    # the result of a call that went with the condense, sent beside the summary no more
    late = {**items[6], "content": [{"type": "tool_result", "tool_use_id": "toolu_gone",
                                     "content": "old"},
                                    {"type": "text", "text": "go on"}]}
    marker = {"role": "user", "content": [{"type": "text", "text": "[truncated]"}],
              "ts": 2001, "isTruncationMarker": True, "truncationId": "t1"}
    truncated = [{**m, "truncationParent": "t1"} for m in items[7:9]]
    return [*condensed, summary, late, *truncated, marker, *items[9:]]


def test_roo_condensed_and_truncated_messages_are_context_rows() -> None:
    items = roo_history()
    result = read(items)
    assert result.format == "anthropic" and not result.problems
    rows = {r.source.index: r.data["note"] for r in result.records if r.kind == CONTEXT}
    assert set(rows) == {0, 1, 2, 3, 4, 5, 7, 8, 9}
    assert "before its latest summary" in rows[0]
    assert "condensed away" in rows[7]
    assert "sliding-window truncation" in rows[8]
    ctx = build_context(result.records)
    assert not [c for c in ctx.changes if c.kind.is_repair]
    assert ctx.messages[0]["content"][0]["text"].startswith("## Summary")
    assert ctx.pending_calls == []
    # the summary, the text beside the dropped result, the marker, two calls and results
    assert len(ctx.messages) == 7
    assert_every_body_valid(result)


def test_roo_reasoning_blocks_become_thinking() -> None:
    items = bare()[:3]
    items[1] = {**items[1], "content": [{"type": "reasoning", "text": "plan"},
                                        *items[1]["content"]]}
    encrypted = {"type": "reasoning", "id": "rs_1", "summary": [],
                 "encrypted_content": "gAAAA"}
    result = read([*items, encrypted])
    assistants = [r.view for r in result.records if r.kind == MESSAGE
                  and r.view["role"] == "assistant"]
    assert assistants[0]["content"][0] == {"type": "thinking", "thinking": "plan"}
    assert json.loads(assistants[-1]["content"][0]["thinkingSignature"]) == encrypted
    assert assistants[-1]["api"] == "openai-responses"
    assert_every_body_valid(result)


def test_gemini_thought_signatures_of_roo_and_cline_go_on_calls() -> None:
    calls = [{"type": "tool_use", "id": f"c{n}", "name": "read_file", "input": {"n": n}}
             for n in (1, 2)]
    items = [{"role": "user", "content": "read both"},
             {"role": "assistant", "content": [*calls, {"type": "thoughtSignature",
                                                        "thoughtSignature": "c2ln"}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"c{n}",
                                           "content": "x"} for n in (1, 2)]}]
    result = read(items)
    assert not result.problems
    blocks = result.records[1].view["content"]
    assert [b.get("thoughtSignature") for b in blocks] == ["c2ln", None]
    assert_every_body_valid(result)
    cline = [items[0], {"role": "assistant", "content": [{**calls[0], "signature": "c2ln"},
                                                        calls[1]]}, items[2]]
    blocks = read(cline).records[1].view["content"]
    assert [b.get("thoughtSignature") for b in blocks] == ["c2ln", None]


def test_cline_xml_tool_text_stays_text() -> None:
    items = [{"role": "user", "content": [{"type": "text", "text": "<task>\nlist\n</task>"},
                                          {"type": "text", "text": "<environment_details>\n# "
                                           "VSCode Visible Files\n</environment_details>"}]},
             {"role": "assistant", "content": "<list_files>\n<path>.</path>\n</list_files>"},
             {"role": "user", "content": [
                 {"type": "text", "text": "[list_files for '.'] Result:"},
                 {"type": "text", "text": "a.txt"}]},
             {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                                                "name": "attempt_completion",
                                                "input": {"result": "done"}}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                           "content": "[ERROR] interrupted"}]}]
    result = read(items)
    assert result.format == "anthropic"
    ctx = build_context(result.records)
    assert ctx.messages[0]["content"][1]["text"].startswith("<environment_details>")
    assert ctx.messages[1]["content"][0]["text"].startswith("<list_files>")
    assert ctx.pending_calls == [] and not ctx.changes


def test_an_unknown_block_is_reported_with_its_item() -> None:
    items = bare()[:2]
    items[1] = {**items[1], "content": [*items[1]["content"],
                                        {"type": "hologram", "id": "h1"}]}
    result = read(items)
    assert [p.message for p in result.problems] == [
        "item 1: assistant block of type 'hologram' could not be imported"]


def test_cli_check_and_build_with_and_without_from(tmp_path: Path) -> None:
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(bare()))
    for args in (["check", str(path), "--json"],
                 ["check", "--from", "anthropic", str(path), "--json"]):
        outcome = CliRunner().invoke(main, args)
        assert outcome.exit_code == 0, outcome.output
        assert json.loads(outcome.output)["format"] == "anthropic"
    for provider in PROVIDERS:
        outcome = CliRunner().invoke(main, ["check", str(SESSION), "--provider", provider,
                                            "--placeholder-tools"])
        assert outcome.exit_code == 0, (provider, outcome.output)


def test_plain_messages_read_as_anthropic_when_named(tmp_path: Path) -> None:
    path = tmp_path / "messages.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"},
                                {"role": "assistant", "content": "hello"}]))
    outcome = CliRunner().invoke(main, ["check", "--from", "anthropic", str(path), "--json"])
    assert outcome.exit_code == 0 and json.loads(outcome.output)["format"] == "anthropic"
    outcome = CliRunner().invoke(main, ["check", str(path), "--json"])
    assert json.loads(outcome.output)["format"] != "anthropic"


def test_from_anthropic_on_another_format_exits_2() -> None:
    swe = FIXTURES / "swe-agent" / "function_calling_simple.traj"
    outcome = CliRunner().invoke(main, ["check", "--from", "anthropic", str(swe)])
    assert outcome.exit_code == 2
    assert "not an anthropic file: expected one JSON document" in outcome.output


@pytest.mark.parametrize("value", [
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    [{"role": "user", "content": [{"type": "text", "text": "a"}]},
     {"role": "assistant", "content": [{"type": "thinking", "thinking": "t",
                                        "thinkingSignature": "s"}]}],
    [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
    {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]},
    [{"role": "toolResult", "toolCallId": "c", "content": []},
     {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "n"}]}],
])
def test_other_formats_are_not_taken(value: Any) -> None:
    assert read(value).format != "anthropic"


@pytest.mark.parametrize(("tags", "sent"), [
    ({1: {"truncationParent": "t1"}, 2: {"truncationParent": "t1"},
      3: {"isTruncationMarker": True, "truncationId": "t1"}}, [0, 3, 4, 5, 6]),
    ({1: {"truncationParent": "t9"}}, [0, 1, 2, 3, 4, 5, 6]),  # its marker was rewound away
    ({1: {"condenseParent": "c9"}}, [0, 1, 2, 3, 4, 5, 6]),  # so was its summary
])
def test_roo_tags_hide_only_what_roo_leaves_out(tags: dict[int, Obj], sent: list[int]) -> None:
    items = [{**m, **tags.get(i, {})} for i, m in enumerate(bare()[:7])]
    result = read(items)
    assert sorted({r.source.index or 0 for r in result.records if r.kind == MESSAGE}) == sent
    ctx = build_context(result.records)
    assert ctx.pending_calls == [] and not [c for c in ctx.changes if c.kind.is_repair]


_IDS = st.sampled_from(["toolu_a", "toolu_b", "toolu_c"])
_USER_BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(min_size=1, max_size=8)),
    st.builds(lambda i, t, e: {"type": "tool_result", "tool_use_id": i, "content": t,
                               "is_error": e}, _IDS, st.text(max_size=8), st.booleans()))
_ASSISTANT_BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(min_size=1, max_size=8)),
    st.builds(lambda i: {"type": "tool_use", "id": i, "name": "bash", "input": {"c": i}},
              _IDS),
    st.just({"type": "redacted_thinking", "data": "b3BhcXVl"}))
_MESSAGE = st.one_of(
    st.builds(lambda c: {"role": "user", "content": c},
              st.one_of(st.text(min_size=1, max_size=8), st.lists(_USER_BLOCK, min_size=1,
                                                                  max_size=3))),
    st.builds(lambda c: {"role": "assistant", "content": c},
              st.lists(_ASSISTANT_BLOCK, min_size=1, max_size=3)))


@settings(max_examples=40, deadline=None)
@given(st.lists(_MESSAGE, min_size=1, max_size=8))
def test_any_messages_list_reads_with_its_counts_and_valid_bodies(rest: list[Obj]) -> None:
    items = [{"role": "user", "content": "start"}, *rest]  # a body always has something
    result = read(items, "anthropic")
    # the one thing named: results stored after another block, which repair puts first
    assert all(p.kind == "tool_results_moved" for p in result.problems)
    assert counts(result) == raw_counts(items)
    assert_every_body_valid(result)
