"""Identifiers the summary must carry, found in the summarized text."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionctx.compaction import audit
from sessionctx.compaction.audit import identifiers_in, required_identifiers
from sessionctx.compaction.prompt import arguments_text

PIECES = st.sampled_from([
    "https://x.io/a?b=1", "/etc/hosts", "~/p/q.txt", "src/a.py", "a/b/c.tar.gz", "2024-01-02",
    "123e4567-e89b-12d3-a456-426614174000", "deadbeef12", "cafe1234", "abcdef12", "12345678",
    "ABCDEF12", "x", "-", "/", ".", ",", " ", "\n", "é", "word", "--flag", "a-b", "0f"])


def plain_identifiers(text: str) -> list[str]:
    """The rule, without shortcuts: every match of the pattern, trailing punctuation cut,
    long enough, first appearance kept."""
    found: dict[str, None] = {}
    for match in audit._IDENTIFIER.finditer(text):
        value = match.group(0).rstrip(audit._TRAILING)
        if len(value) >= audit.MIN_IDENTIFIER_CHARS:
            found.setdefault(value, None)
    return list(found)


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=12).map("".join))
def test_identifiers_are_every_match_of_the_pattern(text):
    assert identifiers_in(text) == plain_identifiers(text)


def test_text_without_a_slash_dash_or_hex_run_has_no_identifiers():
    assert identifiers_in("Looking at it. x = 1\nFixed m0 py") == []
    assert identifiers_in("see deadbeef1 and a/b.py") == ["deadbeef1", "a/b.py"]


def test_required_identifiers_come_from_said_text_before_results():
    said = {"role": "user", "content": [{"type": "text", "text": "fix src/a.py"}]}
    called = {"role": "assistant", "content": [
        {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"cmd": "cat /etc/x.conf"}}]}
    answered = {"role": "toolResult", "toolCallId": "c", "content": [
        {"type": "text", "text": "see https://x.io/doc"}]}
    assert required_identifiers([said, answered, called], "kept 2024-01-02") == [
        "2024-01-02", "src/a.py", "/etc/x.conf", "https://x.io/doc"]
    assert required_identifiers([said, answered, called], None, limit=1) == ["src/a.py"]


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=12).map("".join) | st.text(max_size=40))
def test_the_quick_test_agrees_with_its_pattern(text):
    # marking hex digits (ASCII text) or the plain pattern (other text) finds exactly what
    # the slash, dash or eight-hex-digit pattern finds
    assert audit.may_hold_identifier(text) == bool(re.search(r"[/-]|[0-9a-f]{8}", text))


def test_call_arguments_are_read_as_the_prompt_writes_them():
    called = {"role": "assistant", "content": [
        {"type": "toolCall", "id": "c", "name": "x", "arguments": {"p": "é/ü.txt", "n": [1]}}]}
    assert required_identifiers([called], None) == ["é/ü.txt"]


def _one_text_at_a_time(messages: list[dict[str, Any]], previous: str | None,
                        limit: int) -> list[str]:
    """The rule as it reads: each text searched in order, said text before results."""
    said, results = [previous or ""], []
    for m in messages:
        if m["role"] == "toolResult":
            results.append(m["content"][0]["text"])
            continue
        said.append(m["content"][0]["text"] if m["content"] else "")
        said += [arguments_text(b["arguments"]) for b in m["content"][1:]]
    found: dict[str, None] = {}
    for text in said + results:
        for ident in plain_identifiers(text):
            found.setdefault(ident, None)
            if len(found) >= limit:
                return list(found)
    return list(found)


_MESSAGES = st.lists(st.tuples(
    st.sampled_from(["user", "assistant", "toolResult"]),
    st.lists(PIECES, max_size=4).map("".join),
    st.lists(PIECES, max_size=3).map("".join)), max_size=30).map(lambda rows: [
        {"role": role, "content": [{"type": "text", "text": text}]} if role != "assistant" else
        {"role": role, "content": [{"type": "text", "text": text}, {
            "type": "toolCall", "id": "c", "name": "x", "arguments": {"p": arg}}]}
        for role, text, arg in rows])


@settings(max_examples=300, deadline=None)
@given(_MESSAGES, st.none() | st.lists(PIECES, max_size=4).map("".join),
       st.integers(1, 6), st.integers(1, 5))
def test_texts_looked_at_in_batches_give_what_one_at_a_time_gives(messages, previous, limit,
                                                                  batch):
    original = audit._BATCH
    audit._BATCH = batch  # small batches, so that most inputs span several
    try:
        found = required_identifiers(messages, previous, limit=limit)
    finally:
        audit._BATCH = original
    assert found == _one_text_at_a_time(messages, previous, limit)


def test_an_identifier_after_many_texts_without_one_is_found():
    quiet = [{"role": "user", "content": [{"type": "text", "text": f"turn {i}"}]}
             for i in range(audit._BATCH * 3)]
    late = {"role": "toolResult", "content": [{"type": "text", "text": "wrote src/late.py"}]}
    assert required_identifiers([*quiet, late], None) == ["src/late.py"]
