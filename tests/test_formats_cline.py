"""Cline's native tool calls are answered calls however Cline wrote the answer: a tool_result,
a "[tool for 'x'] Result:" text, the text after its "result missing" placeholder. Counts are
worked out here from the raw JSON; the file is never changed by repair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessionctx.context import build_context
from sessionctx.inputs import read_input
from sessionctx.writeback import plan_repair, repair
from tests.conftest import FIXTURES
from tests.format_counts import accepted_bodies

CLINE = FIXTURES / "cline"
KINDS = ["native-tool-result.json", "text-result.json", "result-missing.json",
         "xml-tool-text.json", "subagent-text-result.json", "migration-placeholder.json"]
PLACEHOLDER = "result missing"
MIGRATION = "[migration] Tool result missing in legacy conversation history."


def _heads(name: str) -> set[str]:
    """How the first word of Cline's description of a call named `name` reads."""
    if "0mcp0" in name:
        return {"use_mcp_tool"}
    if name == "use_subagents":
        return {"subagents"}
    if name.startswith("use_subagent_"):
        return {"subagent:", "subagents"}
    return {name}


def raw_counts(messages: list[dict[str, Any]]) -> dict[str, int]:
    """Calls, the answers Cline wrote in the user messages right after them, and user
    texts, from the raw list."""
    calls = answered = texts = 0
    previous: list[str] = []
    said_for = 0  # answers in the user messages since the last calls
    for m in messages:
        content = _blocks(m)
        if m["role"] == "assistant":
            answered += min(len(previous), said_for)
            previous = [b["name"] for b in content if b["type"] == "tool_use"]
            calls += len(previous)
            said_for = 0
            continue
        heads = {h for n in previous for h in _heads(n)}
        real = [b for b in content if b["type"] == "tool_result"
                and b["content"] not in (PLACEHOLDER, MIGRATION)]
        said = [b for b in content if b["type"] == "text" and previous and (
            b["text"].split(" ")[0].strip("[]") in heads
            or b["text"].startswith("Skipping tool")
            or any(b["text"].startswith(f"Tool [{n}] was not executed") for n in previous))]
        said_for += len(real) + len(said)
        texts += sum(1 for b in content if b["type"] == "text") - len(said)
    return {"calls": calls, "answered": answered + min(len(previous), said_for),
            "texts": texts}


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def context_counts(path: Path) -> dict[str, int]:
    ctx = build_context(read_input(str(path)).records)
    calls = [b for m in ctx.messages if m["role"] == "assistant" for b in _blocks(m)
             if b["type"] == "toolCall"]
    results = [m for m in ctx.messages if m["role"] == "toolResult"]
    texts = sum(1 for m in ctx.messages if m["role"] == "user" for b in _blocks(m)
                if b["type"] == "text")
    return {"calls": len(calls) + len(ctx.pending_calls), "answered": len(results),
            "texts": texts, "pending": len(ctx.pending_calls)}


@pytest.mark.parametrize("name", KINDS)
def test_every_kind_reads_with_its_calls_answered(name: str) -> None:
    path = CLINE / name
    want = raw_counts(json.loads(path.read_text()))
    got = context_counts(path)
    assert got == {**want, "pending": 0}
    assert read_input(str(path)).problems == []


@pytest.mark.parametrize("name", KINDS)
def test_every_provider_gets_the_calls_and_their_results(name: str) -> None:
    path = CLINE / name
    calls = raw_counts(json.loads(path.read_text()))["calls"]
    ctx = build_context(read_input(str(path)).records)
    for provider, body in accepted_bodies(ctx).items():
        if provider == "anthropic":
            uses = [b for m in body["messages"] if isinstance(m["content"], list)
                    for b in m["content"] if b["type"] == "tool_use"]
            results = [b for m in body["messages"] if isinstance(m["content"], list)
                       for b in m["content"] if b["type"] == "tool_result"]
            assert len(uses) == len(results) == calls


def test_texts_answer_calls_in_order_and_by_name() -> None:
    ctx = build_context(read_input(str(CLINE / "text-result.json")).records)
    answer = {m["toolCallId"]: m["content"][0]["text"] for m in ctx.messages
              if m["role"] == "toolResult"}
    assert answer["toolu_02B"].startswith("[read_file for 'src/app.py'] Result:")
    assert answer["toolu_02C"].startswith("[read_file for 'README.md'] Result:")
    assert answer["toolu_02D"].startswith("[use_mcp_tool for 'github'] Result:")
    assert answer["toolu_02F"].startswith("Skipping tool due to user rejecting")
    feedback = [b["text"] for m in ctx.messages if m["role"] == "user" for b in m["content"]
                if "use upper() instead" in b["text"]]
    assert len(feedback) == 1  # the user's feedback stays the user's


def test_the_text_after_a_placeholder_is_the_result() -> None:
    ctx = build_context(read_input(str(CLINE / "result-missing.json")).records)
    answer = {m["toolCallId"]: m["content"][0]["text"] for m in ctx.messages
              if m["role"] == "toolResult"}
    assert answer == {
        "toolu_03A": "[read_file for 'src/app.py'] Result:\ndef main():\n    print('hello')\n",
        "toolu_03B": "[list_files for 'src'] Result:\napp.py\nutil.py",
        "toolu_03C": "[read_file for 'src/util.py'] Result:\nGREETING = 'hello'\n"}


@pytest.mark.parametrize("name", KINDS)
def test_repair_leaves_the_file_byte_identical(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes((CLINE / name).read_bytes())
    plan = plan_repair(path.read_bytes(), str(path))
    assert plan.after == plan.before and plan.fixes == []
    result = repair(str(path))
    assert not result.written and path.read_bytes() == (CLINE / name).read_bytes()


def _variant(tmp_path: Path, messages: list[dict[str, Any]]) -> Path:
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(messages))
    return path


def test_a_text_naming_another_tool_answers_nothing(tmp_path: Path) -> None:
    messages = json.loads((CLINE / "text-result.json").read_text())
    messages[2]["content"][0]["text"] = messages[2]["content"][0]["text"].replace(
        "[search_files", "[list_files", 1)
    ctx = build_context(read_input(str(_variant(tmp_path, messages))).records)
    assert [p.id for p in ctx.pending_calls] == ["toolu_02A"]
    assert raw_counts(messages)["answered"] == raw_counts(messages)["calls"] - 1


def test_a_text_two_messages_later_answers_nothing(tmp_path: Path) -> None:
    messages = json.loads((CLINE / "text-result.json").read_text())
    answer = messages[2]["content"].pop(0)
    messages[4]["content"].append(answer)  # after the next calls: not this call's answer
    ctx = build_context(read_input(str(_variant(tmp_path, messages))).records)
    assert [p.id for p in ctx.pending_calls] == ["toolu_02A"]


def test_the_last_calls_without_an_answer_stay_pending(tmp_path: Path) -> None:
    messages = json.loads((CLINE / "text-result.json").read_text())[:-2]
    ctx = build_context(read_input(str(_variant(tmp_path, messages))).records)
    assert [p.id for p in ctx.pending_calls] == ["toolu_02H"]
    want = raw_counts(messages)
    assert want["calls"] - want["answered"] == 1


def test_a_result_found_by_its_call_id() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_9", "name": "ls",
                                           "input": {}, "call_id": "call_9"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "fc_9",
                                      "call_id": "call_9", "content": "a.txt"}]}]
    from sessionctx.formats.anthropic.read import read

    ctx = build_context(read(json.dumps(messages).encode(), None).records)
    assert ctx.pending_calls == []
    assert [m["toolCallId"] for m in ctx.messages if m["role"] == "toolResult"] == ["toolu_9"]


def test_sub_agent_calls_are_answered_by_their_own_descriptions() -> None:
    ctx = build_context(read_input(str(CLINE / "subagent-text-result.json")).records)
    answer = {m["toolCallId"]: m["content"][0]["text"] for m in ctx.messages
              if m["role"] == "toolResult"}
    assert answer["toolu_06A"].startswith("[subagents] Result:")
    assert answer["toolu_06B"].startswith("[subagent: Code Reviewer] Result:")
    assert answer["toolu_06C"].startswith("[read_file for 'src/parser.py'] Result:")
    assert answer["toolu_06D"].startswith("Tool [use_subagent_code_reviewer] was not executed")


def test_texts_moved_after_the_sdk_placeholders_answer_the_calls() -> None:
    ctx = build_context(read_input(str(CLINE / "migration-placeholder.json")).records)
    answer = {m["toolCallId"]: m["content"][0]["text"] for m in ctx.messages
              if m["role"] == "toolResult"}
    assert answer == {"toolu_07A": "[read_file for 'src/app.py'] Result:\ndef main():\n"
                                   "    print('hello')\n",
                      "toolu_07B": "[list_files for 'src'] Result:\napp.py\nutil.py"}
    assert MIGRATION not in json.dumps(ctx.messages)


def test_a_placeholder_with_no_text_after_it_is_a_pending_call(tmp_path: Path) -> None:
    messages = json.loads((CLINE / "migration-placeholder.json").read_text())
    del messages[3]["content"][1]  # the list_files text
    ctx = build_context(read_input(str(_variant(tmp_path, messages))).records)
    assert [(p.id, p.written_by) for p in ctx.pending_calls] == [("toolu_07B", "cline")]
    assert raw_counts(messages)["calls"] - raw_counts(messages)["answered"] == 1
