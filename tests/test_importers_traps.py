"""Hand-made variants of the real fixtures, built in code, covering each format's traps."""

from __future__ import annotations

import copy
import json
from typing import Any

from sessionctx.context import build_context
from sessionctx.inputs import read_raw
from sessionctx.records import CHECKPOINT, CONTEXT, MESSAGE, ReadResult, select_branch
from tests.conftest import FIXTURES

CLAUDE = FIXTURES / "claude-code" / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl"
CODEX = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
PI = FIXTURES / "pi" / "large-session.jsonl"
GEMINI = FIXTURES / "gemini-cli" / "tool-result-cancelled.json"
SWE = FIXTURES / "swe-agent" / "function_calling_simple.traj"
OPENHANDS = FIXTURES / "openhands" / "fncall-llm-message.json"
Obj = dict[str, Any]


def lines(path: Any) -> list[Obj]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def jsonl(objs: list[Obj]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def imported(objs: list[Obj] | Obj, fmt: str = "auto") -> ReadResult:
    raw = jsonl(objs) if isinstance(objs, list) else json.dumps(objs).encode()
    return read_raw(raw, "variant", fmt)


def messages(result: ReadResult) -> list[Obj]:
    return [r.view for r in result.records if r.kind == MESSAGE]


# -- Claude Code ------------------------------------------------------------------------------

def test_claude_lines_sharing_a_message_id_are_joined() -> None:
    result = imported(lines(CLAUDE))
    assistants = [m for m in messages(result) if m["role"] == "assistant"]
    assert len(assistants) == 3
    assert [b["type"] for b in assistants[0]["content"]] == ["text", "toolCall"]


def test_claude_repeated_streamed_block_is_kept_once() -> None:
    objs = lines(CLAUDE)
    dup = next(o for o in objs if o.get("type") == "assistant")
    again = copy.deepcopy(dup)
    again["uuid"] = "dup-uuid"
    objs.insert(objs.index(dup) + 1, again)
    objs[objs.index(again) + 1]["parentUuid"] = "dup-uuid"
    first = [m for m in messages(imported(objs)) if m["role"] == "assistant"]
    assert len(first) == 3
    assert [b["type"] for b in first[0]["content"]] == ["text", "toolCall"]


def test_claude_repeats_are_told_by_equality_whatever_the_key_order() -> None:
    # one message streamed over several lines: a block written again with its keys in
    # another order is a repeat; one with the same type and text but another field is not
    def line(k: int, block: Obj) -> Obj:
        return {"type": "assistant", "uuid": f"a{k}", "parentUuid": f"a{k - 1}" if k else None,
                "isSidechain": False, "message": {"id": "msg_1", "role": "assistant",
                                                  "model": "claude-sonnet-4-5",
                                                  "content": [block]}}

    text = {"type": "text", "text": "Looking."}
    objs = [line(0, text), line(1, {"text": "Looking.", "type": "text"}),
            line(2, {**text, "citations": None}), line(3, {"type": "text", "text": "Done."})]
    content = messages(imported(objs))[0]["content"]
    assert [b["text"] for b in content] == ["Looking.", "Looking.", "Done."]


def test_claude_tool_results_arrive_as_user_entries() -> None:
    result = imported(lines(CLAUDE))
    results = [m for m in messages(result) if m["role"] == "toolResult"]
    assert len(results) == 2
    assert all(m["toolName"] for m in results)
    assert all(r.data["raw"]["type"] == "user" for r in result.records
               if r.kind == MESSAGE and r.view["role"] == "toolResult")


def test_claude_sidechain_and_bookkeeping_lines_are_context_rows() -> None:
    objs = lines(CLAUDE)
    side = copy.deepcopy(next(o for o in objs if o.get("type") == "assistant"))
    side.update(isSidechain=True, uuid="side-1")
    side["message"]["id"] = "msg_side"
    objs.insert(6, side)
    objs.append({"type": "summary", "summary": "title", "leafUuid": "x"})
    objs.append({"type": "queue-operation", "operation": "enqueue", "sessionId": "s"})
    result = imported(objs)
    assert not result.problems
    rows = [r for r in result.records if r.kind == CONTEXT]
    kinds = [r.data["raw"].get("type") for r in rows]
    assert kinds.count("file-history-snapshot") == 2
    assert "summary" in kinds and "queue-operation" in kinds
    assert any(r.data["raw"].get("isSidechain") for r in rows)
    assert sum(m["role"] == "assistant" for m in messages(result)) == 3


def test_claude_is_meta_entries_stay_user_messages() -> None:
    objs = lines(CLAUDE)
    meta = [o for o in objs if o.get("isMeta")]
    assert meta
    result = imported(objs)
    raws = [r.data["raw"] for r in result.records if r.kind == MESSAGE]
    assert any(isinstance(x, dict) and x.get("isMeta") for x in raws)


def test_claude_compact_boundary_becomes_a_checkpoint() -> None:
    objs = lines(CLAUDE)
    last = objs[-1]
    boundary = {"type": "system", "subtype": "compact_boundary", "uuid": "b1",
                "parentUuid": None, "logicalParentUuid": last["uuid"], "isSidechain": False,
                "timestamp": "2025-01-01T00:00:00Z", "sessionId": "s",
                "compactMetadata": {"trigger": "manual", "preTokens": 1234}}
    summary = {"type": "user", "uuid": "s1", "parentUuid": "b1", "isSidechain": False,
               "isCompactSummary": True, "sessionId": "s",
               "message": {"role": "user", "content": "Summary of the work so far."}}
    follow = {"type": "user", "uuid": "u2", "parentUuid": "s1", "isSidechain": False,
              "sessionId": "s", "message": {"role": "user", "content": "go on"}}
    result = imported([*objs, boundary, summary, follow])
    checkpoints = [r for r in result.records if r.kind == CHECKPOINT]
    assert len(checkpoints) == 1 and checkpoints[0].problem is None
    assert checkpoints[0].view["tokensBefore"] == 1234
    ctx = build_context(result.records)
    assert [m["content"][0]["text"] for m in ctx.messages] == [
        "Summary of the work so far.", "go on"]
    assert not ctx.pending_calls  # the dangling call before the boundary is gone


def test_claude_unknown_block_is_reported_with_its_line() -> None:
    objs = lines(CLAUDE)
    entry = next(o for o in objs if o.get("type") == "assistant")
    entry["message"]["content"].append({"type": "hologram", "id": "h1"})
    result = imported(objs)
    assert [p.line for p in result.problems] == [objs.index(entry) + 1]
    assert "hologram" in result.problems[0].message


# -- Codex ------------------------------------------------------------------------------------

def test_codex_turn_aborted_leaves_the_call_pending() -> None:
    objs = lines(CODEX)
    last_output = max(i for i, o in enumerate(objs)
                      if (o.get("payload") or {}).get("type") == "function_call_output")
    call_id = objs[last_output]["payload"]["call_id"]
    cut = [*objs[:last_output], {"timestamp": "t", "type": "event_msg",
                                 "payload": {"type": "turn_aborted", "reason": "interrupted"}}]
    result = imported(cut)
    ctx = build_context(result.records)
    assert [p.id for p in ctx.pending_calls] == [call_id]
    assert result.records[-1].kind == CONTEXT
    assert result.records[-1].data["raw"]["payload"]["type"] == "turn_aborted"


def test_codex_compacted_with_replacement_history_is_a_checkpoint() -> None:
    objs = lines(CODEX)
    history = [o["payload"] for o in objs if o["type"] == "response_item"][-2:]
    compacted = {"timestamp": "2025-09-25T03:00:00Z", "type": "compacted",
                 "payload": {"message": "summary", "replacement_history": history}}
    after = {"timestamp": "t", "type": "response_item",
             "payload": {"type": "message", "role": "user",
                         "content": [{"type": "input_text", "text": "next"}]}}
    result = imported([*objs, compacted, after])
    cp = [r for r in result.records if r.kind == CHECKPOINT]
    assert len(cp) == 1 and cp[0].problem is None
    ctx = build_context(result.records)
    assert len(ctx.messages) == len(cp[0].view["messages"]) + 1


def test_codex_legacy_compacted_keeps_the_summary_as_user_text() -> None:
    result = imported([{"timestamp": "t", "type": "compacted",
                        "payload": {"message": "what happened"}}])
    ctx = build_context(result.records)
    assert "what happened" in ctx.messages[0]["content"][0]["text"]


def test_codex_custom_and_local_shell_calls_pair_with_outputs() -> None:
    items: list[Obj] = [
        {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** x"},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "done"},
        {"type": "local_shell_call", "call_id": "c2", "id": "ls_1", "status": "completed",
         "action": {"type": "exec", "command": ["ls"]}},
        {"type": "function_call_output", "call_id": "c2", "output": "a\nb"},
    ]
    objs: list[Obj] = [{"timestamp": "t", "type": "turn_context", "payload": {"model": "m"}},
            *({"timestamp": "t", "type": "response_item", "payload": i} for i in items)]
    result = imported(objs)
    ctx = build_context(result.records)
    assert not ctx.pending_calls and not ctx.repairs
    assert ctx.messages[2]["content"][0]["id"] == "c2|ls_1"
    assert ctx.messages[3]["toolCallId"] == "c2|ls_1"


# -- Gemini CLI -------------------------------------------------------------------------------

def test_gemini_cancelled_call_is_an_error_result() -> None:
    result = imported(json.loads(GEMINI.read_text()))
    assistant, res = messages(result)
    assert assistant["content"][0]["type"] == "thinking"
    assert res["isError"] is True and "Cancelled" in res["content"][0]["text"]


def test_gemini_session_with_an_unanswered_call() -> None:
    message = json.loads(GEMINI.read_text())
    del message["toolCalls"][0]["result"]
    session = {"sessionId": "s", "messages": [
        {"id": "u", "type": "user", "content": "start python"}, message,
        {"id": "i", "type": "info", "content": "note"}]}
    result = imported(session)
    ctx = build_context(result.records)
    assert [p.name for p in ctx.pending_calls] == ["run_shell_command"]
    assert result.records[-1].kind == CONTEXT


# -- OpenAI chat ------------------------------------------------------------------------------

def test_openhands_message_list_pairs() -> None:
    result = read_raw(OPENHANDS.read_bytes(), "oh.json")
    ctx = build_context(result.records)
    assert not ctx.pending_calls and not ctx.repairs
    assert messages(result)[2]["content"][1]["arguments"]["command"] == "create"


def test_tool_calls_stored_as_python_text_are_read() -> None:
    items = json.loads(OPENHANDS.read_text())
    items[2]["tool_calls"] = str(items[2]["tool_calls"])
    result = read_raw(json.dumps(items).encode(), "oh.json")
    assert not result.problems
    assert messages(result)[2]["content"][1]["name"] == "str_replace_editor"


def test_swe_agent_tool_call_ids_pair() -> None:
    result = imported(json.loads(SWE.read_text()))
    ctx = build_context(result.records)
    assert not ctx.pending_calls and not ctx.repairs
    assert ctx.messages[0]["role"] == "system"


def test_openai_chat_image_parts_and_messages_key() -> None:
    doc = {"messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "see"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}},
            {"type": "image_url", "image_url": {"url": "https://example.com/x.png"}}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]}
    result = imported(doc)
    assert messages(result)[0]["content"][1] == {"type": "image", "data": "aGk=",
                                                 "mimeType": "image/png"}
    assert [p.message for p in result.problems] == [
        "item 0: image_url part that is not a data URL could not be imported"]
    assert [p.id for p in build_context(result.records).pending_calls] == ["c1"]


# -- pi ---------------------------------------------------------------------------------------

def pi_tree() -> list[Obj]:
    """The pi fixture (a linear v1 file) with the id/parentId chain pi's migration adds."""
    objs = lines(PI)
    for i, o in enumerate(objs[1:], 1):
        o["id"] = f"e{i:07d}"
        o["parentId"] = f"e{i - 1:07d}" if i > 1 else None
    objs[0]["version"] = 3
    return objs


def _pi_with(extra: list[Obj], after: int) -> tuple[list[Obj], ReadResult]:
    objs = pi_tree()
    parent = objs[after]["id"]
    for e in extra:
        e.setdefault("parentId", parent)
        parent = e["id"]
    objs = [*objs[:after + 1], *extra]
    return objs, imported(objs)


def test_pi_compaction_entry_becomes_an_equivalent_checkpoint() -> None:
    objs = pi_tree()
    kept_from = next(o for o in objs[20:] if o.get("type") == "message"
                     and o["message"]["role"] == "user")
    at = objs.index(kept_from) + 3
    compaction = {"type": "compaction", "id": "cmp00001", "timestamp": "2025-01-01T00:00:00Z",
                  "summary": "SUMMARY", "firstKeptEntryId": kept_from["id"],
                  "tokensBefore": 5000}
    follow = {"type": "message", "id": "after001",
              "message": {"role": "user", "content": [{"type": "text", "text": "next"}]}}
    _, result = _pi_with([compaction, follow], at)
    cp = [r for r in result.records if r.kind == CHECKPOINT]
    assert len(cp) == 1 and cp[0].problem is None and cp[0].data["id"] == "cmp00001"
    records, _ = select_branch(result.records)
    ctx = build_context(records)
    assert "SUMMARY" in ctx.messages[0]["content"][0]["text"]
    assert ctx.messages[1] == kept_from["message"]
    assert ctx.messages[-1]["content"][0]["text"] == "next"
    kept = [o for o in objs[objs.index(kept_from):at + 1] if o["type"] == "message"]
    assert len(ctx.messages) == 1 + len(kept) + 1


def test_pi_compaction_keeps_nothing_from_an_entry_off_its_branch() -> None:
    # the first kept entry is not an ancestor (gone, or on another branch): the checkpoint
    # holds the summary alone, and what follows it
    compaction = {"type": "compaction", "id": "cmp00001", "timestamp": "2025-01-01T00:00:00Z",
                  "summary": "SUMMARY", "firstKeptEntryId": "not-on-the-branch",
                  "tokensBefore": 5000}
    follow = {"type": "message", "id": "after001",
              "message": {"role": "user", "content": [{"type": "text", "text": "next"}]}}
    _, result = _pi_with([compaction, follow], 30)
    records, _ = select_branch(result.records)
    ctx = build_context(records)
    assert len(ctx.messages) == 2
    assert "SUMMARY" in ctx.messages[0]["content"][0]["text"]
    assert ctx.messages[1]["content"][0]["text"] == "next"


def test_pi_branch_summary_custom_and_bash_execution() -> None:
    extra: list[Obj] = [
        {"type": "branch_summary", "id": "bs000001", "fromId": "x", "summary": "BRANCH"},
        {"type": "custom", "id": "cu000001", "customType": "ext", "data": {"a": 1}},
        {"type": "custom_message", "id": "cm000001", "customType": "ext",
         "content": "hello", "display": False},
        {"type": "message", "id": "be000001",
         "message": {"role": "bashExecution", "command": "ls", "output": "a", "exitCode": 0}},
    ]
    _, result = _pi_with(extra, 10)
    records, _ = select_branch(result.records)
    ctx = build_context(records)
    texts = [m["content"][0]["text"] for m in ctx.messages[-3:]]
    assert "BRANCH" in texts[0] and texts[1] == "hello" and "ls" in texts[2]
    assert any(r.data.get("type") == "custom" for r in result.records)


def test_pi_leaf_choice_still_applies() -> None:
    objs, result = _pi_with([], 10)
    leaf = objs[5]["id"]
    records, off = select_branch(result.records, leaf)
    assert off and records[-1].data["id"] == leaf


# -- detection --------------------------------------------------------------------------------

def test_file_in_no_known_format_names_the_formats_tried() -> None:
    result = read_raw(b'{"hello": 1}\n{"world": 2}\n', "odd.jsonl")
    assert result.fatal
    message = result.problems[0].message
    for fmt in ("native", "claude-code", "codex", "pi", "gemini-cli", "openai-chat"):
        assert fmt in message


def test_native_records_stay_native() -> None:
    raw = jsonl([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    result = read_raw(raw, "n.jsonl")
    assert result.records[0].data == {"role": "user",
                                      "content": [{"type": "text", "text": "hi"}]}


def test_pi_v1_compaction_with_an_entry_index() -> None:
    objs = lines(PI)
    compaction = {"type": "compaction", "timestamp": "2025-01-01T00:00:00Z", "summary": "S1",
                  "firstKeptEntryIndex": 40, "tokensBefore": 10}
    variant = [*objs[:50], compaction, *objs[50:60]]
    result = imported(variant)
    cp = [r for r in result.records if r.kind == CHECKPOINT]
    assert len(cp) == 1 and cp[0].problem is None
    kept = [o["message"] for o in objs[40:50] if o["type"] == "message"]
    assert cp[0].view["messages"][1:] == kept
    ctx = build_context(result.records)
    assert "S1" in ctx.messages[0]["content"][0]["text"]


def test_claude_parallel_calls_on_sibling_branches_are_spliced_back() -> None:
    objs = lines(CLAUDE)
    first_call = next(o for o in objs if o.get("type") == "assistant"
                      and o["message"]["content"][0]["type"] == "tool_use")
    second = copy.deepcopy(first_call)
    second["uuid"] = "par-call"
    second["parentUuid"] = first_call["parentUuid"]  # a sibling of the first call's line
    second["message"]["content"][0] = {"type": "tool_use", "id": "toolu_par", "name": "Read",
                                       "input": {"file_path": "/x"}}
    result_line = {"type": "user", "uuid": "par-result", "parentUuid": "par-call",
                   "isSidechain": False, "sessionId": "s", "message": {"role": "user",
                   "content": [{"type": "tool_result", "tool_use_id": "toolu_par",
                                "content": "file x"}]}}
    at = objs.index(first_call) + 1
    result = imported([*objs[:at], second, result_line, *objs[at:]])
    ctx = build_context(result.records)
    assert "toolu_par" not in [p.id for p in ctx.pending_calls]
    first = next(m for m in ctx.messages if m["role"] == "assistant" and any(
        b.get("id") == "toolu_par" for b in m["content"]))
    assert [b["type"] for b in first["content"]] == ["text", "toolCall", "toolCall"]
    assert any(m.get("toolCallId") == "toolu_par" for m in ctx.messages)


def test_openai_legacy_function_call_pairs_with_its_function_message() -> None:
    doc = [{"role": "user", "content": "weather?"},
           {"role": "assistant", "content": None,
            "function_call": {"name": "weather", "arguments": '{"city": "Oslo"}'}},
           {"role": "function", "name": "weather", "content": "rain"},
           {"role": "assistant", "content": "It rains."}]
    result = read_raw(json.dumps(doc).encode(), "f.json")
    ctx = build_context(result.records)
    assert not ctx.pending_calls and not ctx.repairs
    assert ctx.messages[1]["content"][0]["arguments"] == {"city": "Oslo"}
    assert ctx.messages[2]["toolCallId"] == ctx.messages[1]["content"][0]["id"]


def test_codex_early_rollout_with_bare_items() -> None:
    items = [o["payload"] for o in lines(CODEX) if o["type"] == "response_item"]
    early = [{"id": "x", "timestamp": "2025-08-01T00:00:00Z", "instructions": None},
             {"record_type": "state"}, *items]
    current = imported(lines(CODEX))
    result = imported(early)
    assert not result.problems
    assert [r.view for r in result.records if r.kind == MESSAGE] == [
        {**r.view, "model": ""} if r.view["role"] == "assistant" else r.view
        for r in current.records if r.kind == MESSAGE]


def test_claude_api_error_and_transcript_only_entries() -> None:
    objs = lines(CLAUDE)
    last = objs[-1]
    error = {"type": "assistant", "uuid": "err1", "parentUuid": last["uuid"],
             "isSidechain": False, "sessionId": "s", "isApiErrorMessage": True,
             "message": {"id": "synthetic-1", "role": "assistant", "model": "<synthetic>",
                         "content": [{"type": "text", "text": "API Error: overloaded"}]}}
    shown = {"type": "user", "uuid": "t1", "parentUuid": "err1", "isSidechain": False,
             "sessionId": "s", "isVisibleInTranscriptOnly": True,
             "message": {"role": "user", "content": "only for the transcript"}}
    result = imported([*objs, error, shown])
    model = messages(result)
    assert model[-1]["stopReason"] == "error"
    assert result.records[-1].kind == CONTEXT
    assert result.records[-1].data["note"] == "entry shown in the transcript only"
