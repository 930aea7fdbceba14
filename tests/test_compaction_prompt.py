"""Chunking the summarized messages and rendering them for the summarizer."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionctx.compaction.prompt import chunks


def plain_chunks(sizes: list[int], limit: int) -> list[list[int]]:
    """The rule, written plainly: add message after message, starting a new group when the
    next would take a non-empty group over the limit."""
    out: list[list[int]] = [[]]
    size = 0
    for i, tokens in enumerate(sizes):
        if out[-1] and size + tokens > limit:
            out.append([])
            size = 0
        out[-1].append(i)
        size += tokens
    return out


@settings(max_examples=500, deadline=None)
@given(st.lists(st.integers(0, 60), max_size=40), st.integers(-1, 120))
def test_chunks_follow_the_plain_rule(sizes, limit):
    messages: list[dict[str, Any]] = [{"role": "user", "n": i} for i in range(len(sizes))]
    got = [[m["n"] for m in group] for group in chunks(messages, sizes, limit)]
    assert got == (plain_chunks(sizes, limit) if limit > 0 else [list(range(len(sizes)))])


def test_chunks_need_one_size_per_message():
    with pytest.raises(ValueError):
        chunks([{"role": "user"}], [1, 2], 10)
