"""The fold: every rule of docs/architecture.md's 'Building the context', one test each."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionctx.changes import ChangeKind, Source
from sessionctx.context import BuildOptions, ContextBuilder, build_context
from sessionctx.display import display_messages, render_local_command
from sessionctx.records import make_record
from sessionctx.screenshots import OMITTED_NOTE
from tests.conftest import assistant, call, image, recs, result, text, user

VALID_CHECKPOINT: dict[str, Any] = {
    "type": "compaction", "at": "2026-11-30T10:00:00Z", "baseSeq": 4, "plannerVersion": 1,
    "summaryModelRef": "test/summarizer", "qualityAudit": "passed",
    "summary": "earlier work", "firstKeptIndex": 1, "tokensBefore": 1000, "tokensAfter": 100,
}


def checkpoint(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {**VALID_CHECKPOINT, "messages": list(messages), **extra}


def kinds(ctx: Any) -> list[str]:
    return [c.kind for c in ctx.changes]


def test_article_example_keeps_paired_drops_unpaired_and_the_stop_row():
    ctx = build_context(recs(
        assistant(text("run tests"), call("test-1")),
        assistant(call("patch-1", "edit")),
        result("test-1", "tests failed"),
        {"kind": "context", "text": "this turn was stopped"},
    ))
    assert [m["role"] for m in ctx.messages] == ["assistant", "toolResult"]
    assert ctx.messages[0]["content"][1]["id"] == "test-1"
    assert [(p.id, p.name) for p in ctx.pending_calls] == [("patch-1", "edit")]
    assert kinds(ctx) == [ChangeKind.DROPPED_UNPAIRED_CALL, ChangeKind.DROPPED_EMPTY_MESSAGE,
                          ChangeKind.SKIPPED_CONTEXT_ROW]
    assert ctx.changes[0].record is not None and ctx.changes[0].record.index == 1


def test_text_paired_and_unpaired_call_in_one_message():
    original = assistant(text("two things"), call("a"), call("b"))
    records = recs(user("go"), original, result("a"))
    ctx = build_context(records)
    kept = ctx.messages[1]
    assert [b.get("id") or b.get("text") for b in kept["content"]] == ["two things", "a"]
    assert len(original["content"]) == 3, "the stored record is never modified"
    unpaired = [c for c in ctx.changes if c.kind == ChangeKind.DROPPED_UNPAIRED_CALL]
    assert len(unpaired) == 1 and unpaired[0].message_index == 1
    assert unpaired[0].detail["tool_call_id"] == "b"


def test_orphan_result_is_dropped():
    ctx = build_context(recs(user("hi"), result("ghost")))
    assert [m["role"] for m in ctx.messages] == ["user"]
    assert kinds(ctx) == [ChangeKind.DROPPED_ORPHAN_RESULT]
    assert "no earlier call" in ctx.changes[0].reason


def test_result_before_its_call_pairs_with_nothing():
    ctx = build_context(recs(result("x"), assistant(call("x"))))
    assert ctx.messages == []
    assert kinds(ctx) == [ChangeKind.DROPPED_ORPHAN_RESULT, ChangeKind.DROPPED_UNPAIRED_CALL,
                          ChangeKind.DROPPED_EMPTY_MESSAGE]


def test_result_before_call_then_a_real_result_pairs():
    ctx = build_context(recs(result("x", "early"), assistant(call("x")), result("x", "late")))
    assert [m["role"] for m in ctx.messages] == ["assistant", "toolResult"]
    assert ctx.messages[1]["content"][0]["text"] == "late"


def test_second_result_for_one_call_is_dropped():
    ctx = build_context(recs(assistant(call("x")), result("x", "one"), result("x", "two")))
    assert len(ctx.messages) == 2
    assert kinds(ctx) == [ChangeKind.DROPPED_DUPLICATE_RESULT]


def test_duplicate_call_ids_each_need_their_own_result():
    ctx = build_context(recs(assistant(call("x")), result("x"), assistant(call("x"))))
    assert [m["role"] for m in ctx.messages] == ["assistant", "toolResult"]
    assert len(ctx.pending_calls) == 1


def test_assistant_message_left_empty_is_dropped():
    ctx = build_context(recs(user("q"), assistant(), assistant(text("  ")),
                             {"role": "assistant", "content": "", "stopReason": "aborted"}))
    assert [m["role"] for m in ctx.messages] == ["user"]
    assert kinds(ctx) == [ChangeKind.DROPPED_EMPTY_MESSAGE] * 3
    assert all("no content" in c.reason for c in ctx.changes)


def test_thinking_only_assistant_is_kept():
    msg = assistant({"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"})
    assert build_context(recs(msg)).messages == [msg]


def test_display_false_hides_from_display_but_reaches_model():
    records = recs(user("a"), {"role": "custom", "customType": "resume", "content": "steer",
                               "display": False},
                   {"type": "custom_message", "customType": "x", "content": [text("shown")]})
    ctx = build_context(records)
    assert [m["content"][0]["text"] for m in ctx.messages] == ["a", "steer", "shown"]
    assert all(m["role"] == "user" for m in ctx.messages)
    assert "hidden from display" in ctx.changes[0].reason
    shown = display_messages(records)
    assert [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
            for m in shown] == ["a", "shown"]


def test_empty_extension_message_is_reported_not_sent():
    ctx = build_context(recs({"role": "custom", "customType": "x", "content": []}))
    assert ctx.messages == [] and kinds(ctx) == [ChangeKind.EXTENSION_MESSAGE_EMPTY]


def test_local_commands_included_and_excluded():
    ctx = build_context(recs(
        {"role": "bashExecution", "command": "ls", "output": "a\nb\n", "exitCode": 0},
        {"role": "bashExecution", "command": "secret", "output": "x", "exitCode": 0,
         "excludeFromContext": True},
        {"role": "bashExecution", "command": "other", "output": "x", "excludedFromContext": True},
        {"role": "bashExecution", "command": "   ", "output": "x"},
        {"role": "bashExecution", "command": "sleep 9", "output": [text("partial")],
         "exitCode": None, "signal": "SIGINT", "truncated": True},
    ))
    texts = [m["content"][0]["text"] for m in ctx.messages]
    assert texts[0] == "<local_shell>\n$ ls\nexit=0\noutput:\na\nb\n</local_shell>"
    assert texts[1] == ("<local_shell>\n$ sleep 9\nexit=? signal=SIGINT\noutput:\npartial\n"
                        "[output truncated]\n</local_shell>")
    assert kinds(ctx).count(ChangeKind.LOCAL_COMMAND_EXCLUDED) == 3
    assert all(m["role"] == "user" for m in ctx.messages)


def test_local_command_with_empty_output():
    assert "output: (empty)" in render_local_command({"command": "true", "exitCode": 0})


def test_checkpoint_replaces_what_came_before():
    ctx = build_context(recs(
        user("old"), assistant(text("old answer")),
        checkpoint(user("summary of earlier"), assistant(text("kept"))),
        user("new"),
    ))
    assert [m["content"][0]["text"] for m in ctx.messages] == ["summary of earlier", "kept",
                                                               "new"]
    applied = [c for c in ctx.changes if c.kind == ChangeKind.CHECKPOINT_APPLIED]
    assert applied and applied[0].detail["replaced_messages"] == 2
    assert ctx.sources[1].part == 1 and ctx.sources[1].index == 2


def test_a_checkpoint_starts_the_change_log_afresh():
    # What the checkpoint replaced is not reported: the context starts at the checkpoint, as
    # a store's context does (it is read from the latest valid checkpoint on).
    before = [result("gone", "orphan before"), {"role": 7}, user("old")]
    after = [result("gone2", "orphan after"), user("new")]
    ctx = build_context(recs(*before, checkpoint(user("summary")), *after))
    assert [c.kind for c in ctx.changes] == [ChangeKind.CHECKPOINT_APPLIED,
                                             ChangeKind.DROPPED_ORPHAN_RESULT]
    assert ctx.changes[1].record is not None and ctx.changes[1].record.index == 4
    whole = build_context(recs(*before, *after))
    assert ChangeKind.SKIPPED_INVALID in [c.kind for c in whole.changes]


def test_two_checkpoints_in_a_row_the_last_wins():
    ctx = build_context(recs(user("a"), checkpoint(user("first")), checkpoint(user("second")),
                             user("b")))
    assert [m["content"][0]["text"] for m in ctx.messages] == ["second", "b"]


def test_malformed_checkpoint_is_ignored_and_reported():
    bad = checkpoint(user("should not replace"))
    del bad["baseSeq"]
    pi_style = {"type": "compaction", "summary": "s", "firstKeptEntryId": "abc",
                "tokensBefore": 9}
    ctx = build_context(recs(user("a"), bad, pi_style, user("b")))
    assert [m["content"][0]["text"] for m in ctx.messages] == ["a", "b"]
    invalid = [c for c in ctx.changes if c.kind == ChangeKind.CHECKPOINT_INVALID]
    assert len(invalid) == 2 and "baseSeq" in invalid[0].reason
    assert all(c.is_repair for c in invalid)


def test_checkpoint_with_a_wrong_type_field_is_malformed():
    bad = checkpoint(user("x"), tokensAfter="100")
    ctx = build_context(recs(user("a"), bad))
    assert [c.kind for c in ctx.changes] == [ChangeKind.CHECKPOINT_INVALID]


def test_checkpoint_messages_pair_with_later_results():
    ctx = build_context(recs(checkpoint(assistant(call("c1"))), result("c1")))
    assert [m["role"] for m in ctx.messages] == ["assistant", "toolResult"]


def test_summaries_metadata_and_state_never_reach_the_model():
    records = recs(
        {"role": "compactionSummary", "summary": "s", "tokensBefore": 10},
        {"role": "branchSummary", "summary": "b", "fromId": "x"},
        {"type": "custom", "customType": "ext", "data": {"k": 1}},
        {"type": "label", "label": "l"}, {"type": "model_change", "provider": "p"},
        {"type": "thinking_level_change", "thinkingLevel": "high"},
        {"type": "session_info", "name": "n"},
        {"type": "something_new", "x": 1},
        user("only me"),
    )
    ctx = build_context(records)
    assert [m["content"][0]["text"] for m in ctx.messages] == ["only me"]
    assert kinds(ctx) == [ChangeKind.SKIPPED_SUMMARY, ChangeKind.SKIPPED_SUMMARY,
                          ChangeKind.SKIPPED_EXTENSION_STATE,
                          *[ChangeKind.SKIPPED_METADATA] * 4, ChangeKind.SKIPPED_UNKNOWN]
    assert [m.get("role") for m in display_messages(records)] == [
        "compactionSummary", "branchSummary", "user"]


def browser_history(n: int, images_each: int = 2) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [user("browse", content_extra=1)]
    for i in range(n):
        out.append(assistant(call(f"b{i}", "browser_use")))
        out.append(result(f"b{i}", f"page {i}", "browser_use",
                          *[image(f"img{i}-{k}") for k in range(images_each)]))
    return out


def test_only_latest_browser_result_keeps_its_images():
    records = recs(user("look", content=[text("look"), image("user-img")]),
                   *browser_history(3)[1:],
                   assistant(call("s", "screenshot_tool")),
                   result("s", "other tool", "screenshot_tool", image("other")))
    ctx = build_context(records)
    results = [m for m in ctx.messages if m["role"] == "toolResult"]
    assert [b["type"] for b in results[0]["content"]] == ["text", "text", "text"]
    assert results[0]["content"][1]["text"] == OMITTED_NOTE
    assert results[1]["content"][0]["text"] == "page 1"
    assert [b.get("data") for b in results[2]["content"]] == [None, "img2-0", "img2-1"]
    assert results[3]["content"][1]["data"] == "other", "other tools' images untouched"
    assert ctx.messages[0]["content"][1]["data"] == "user-img", "user images untouched"
    omitted = [c for c in ctx.changes if c.kind == ChangeKind.SCREENSHOT_OMITTED]
    assert [c.detail["images"] for c in omitted] == [2, 2]
    assert records[2].view["content"][1]["type"] == "image", "records untouched"


def test_newer_browser_result_without_images_does_not_take_the_slot():
    history = browser_history(1)
    history += [assistant(call("t", "browser_use")), result("t", "text only", "browser_use")]
    ctx = build_context(recs(*history))
    assert ctx.messages[2]["content"][1]["type"] == "image"


def test_keep_screenshots_and_browser_tool_options():
    history = browser_history(3, images_each=1)
    keep2 = build_context(recs(*history), BuildOptions(keep_screenshots=2))
    images = [m["content"][1]["type"] for m in keep2.messages if m["role"] == "toolResult"]
    assert images == ["text", "image", "image"]
    renamed = build_context(recs(*history), BuildOptions(browser_tools=frozenset({"web"})))
    assert not [c for c in renamed.changes if c.kind == ChangeKind.SCREENSHOT_OMITTED]
    none = build_context(recs(*history), BuildOptions(keep_screenshots=0))
    assert len([c for c in none.changes if c.kind == ChangeKind.SCREENSHOT_OMITTED]) == 3


def test_tolerated_variants_pair():
    ctx = build_context(recs(
        {"role": "assistant", "content": [{"type": "tool_use", "id": "u1", "name": "read",
                                           "input": {"p": 1}}]},
        {"role": "tool", "tool_call_id": "u1", "content": "done"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function",
                         "function": {"name": "f", "arguments": "{}"}},
                        {"id": "c2", "type": "function",
                         "function": {"name": "g", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
        {"role": "assistant", "content": [{"type": "tool_call", "toolCallId": "t9",
                                           "name": "x", "arguments": {}}]},
        {"role": "toolResult", "tool_call_id": "t9", "content": "y"},
    ))
    assert len(ctx.messages) == 6
    assert [c["id"] for c in ctx.messages[2]["tool_calls"]] == ["c1"]
    assert [(p.id, p.name) for p in ctx.pending_calls] == [("c2", "g")]


def test_call_without_id_is_unpaired():
    ctx = build_context(recs(assistant(text("t"), {"type": "toolCall", "name": "x"})))
    assert ctx.pending_calls[0].id is None
    assert "has no id" in ctx.changes[0].reason


def test_note_unpaired_is_factual_and_after_the_results():
    records = recs(user("go"), assistant(call("a"), call("b", "edit")), result("a"),
                   user("continue"))
    plain = build_context(records)
    noted = build_context(records, BuildOptions(note_unpaired=True))
    assert len(noted.messages) == len(plain.messages) + 1
    note = noted.messages[3]
    assert note["role"] == "user" and noted.messages[2]["role"] == "toolResult"
    body = note["content"][0]["text"]
    assert "edit (id b)" in body and "unknown" in body
    assert "failed" not in body and "succeeded" not in body
    assert ChangeKind.INTERRUPTED_NOTE_ADDED in kinds(noted)


def test_note_when_whole_message_was_dropped():
    noted = build_context(recs(user("go"), assistant(call("z", "deploy"))),
                          BuildOptions(note_unpaired=True))
    assert [m["role"] for m in noted.messages] == ["user", "user"]
    assert "deploy" in noted.messages[1]["content"][0]["text"]


def test_timestamps_carry_to_converted_messages():
    ctx = build_context(recs({"role": "custom", "content": "c", "timestamp": 5},
                             {"role": "bashExecution", "command": "ls", "timestamp": 6}))
    assert [m["timestamp"] for m in ctx.messages] == [5, 6]


def test_incremental_builder_matches_as_it_goes():
    builder = ContextBuilder()
    records = recs(user("u"), assistant(call("x")), result("x"), assistant(call("y")))
    builder.append(records[0])
    builder.append(records[1])
    assert builder.context().messages == [records[0].view]
    builder.append(records[2])
    assert len(builder.context().messages) == 3
    builder.append(records[3])
    assert len(builder.context().pending_calls) == 1


def test_to_json_shape():
    ctx = build_context(recs(assistant(call("p")), user("x")))
    data = ctx.to_json()
    assert set(data) == {"messages", "changes", "pending_calls"}
    assert data["changes"][0]["record"] == {"index": 0}
    assert data["pending_calls"][0]["id"] == "p"


_KINDS: dict[str, dict[str, Any]] = {
    "skipped": {"type": "mystery"},  # a change logged as the record is read
    "dropped": {"role": "assistant", "content": []},  # one made assembling the context
    "kept": {"role": "user", "content": "hi"}}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(_KINDS)), st.integers(0, 6)), max_size=30))
def test_changes_are_ordered_by_where_they_are_read_ones_first_among_equals(
        rows: list[tuple[str, int]]) -> None:
    # records named by seq in any order: the change log is in seq order whichever order they
    # came in (merged when already in order, sorted when not)
    records = [make_record(dict(_KINDS[what]), Source(seq=seq)) for what, seq in rows]
    changes = build_context(records).changes
    expected = sorted(
        [(seq, 0, i) for i, (what, seq) in enumerate(rows) if what == "skipped"]
        + [(seq, 1, i) for i, (what, seq) in enumerate(rows) if what == "dropped"])
    assert [(c.record.seq if c.record else None, c.kind) for c in changes] == [
        (seq, ChangeKind.SKIPPED_UNKNOWN if first == 0 else ChangeKind.DROPPED_EMPTY_MESSAGE)
        for seq, first, _ in expected]


def test_a_converted_record_s_change_names_its_message_where_it_ends_up() -> None:
    # the dropped messages before them move the local command and the extension message up:
    # their changes name the index each has in the context, not the place each was added at
    command = {"role": "bashExecution", "command": "ls", "output": "a", "exitCode": 0}
    extension = {"role": "custom", "customType": "note", "content": "hello", "display": True}
    ctx = build_context(recs(assistant(), command, assistant(), extension))
    named = {c.kind: c.message_index for c in ctx.changes}
    assert named[ChangeKind.LOCAL_COMMAND_RENDERED] == 0
    assert named[ChangeKind.EXTENSION_MESSAGE_CONVERTED] == 1
    assert [m["role"] for m in ctx.messages] == ["user", "user"]
    # and a second context of the same builder names them the same
    builder = ContextBuilder().extend(recs(assistant(), command, assistant(), extension))
    assert builder.context().changes == builder.context().changes == ctx.changes
