"""What sessionctx makes of a session file, counted the way the format tests compare it with
counts they compute from the raw file: calls (answered and pending), results, pending calls
and texts of the built context."""

from __future__ import annotations

from pathlib import Path

from sessionctx.context import Context, build_context
from sessionctx.inputs import read_input


def read_context(path: Path | str, fmt: str) -> Context:
    """The context of `path`, which must read as `fmt` with no problem."""
    result = read_input(str(path))
    assert result.format == fmt and result.problems == []
    return build_context(result.records)


def context_counts(ctx: Context) -> dict[str, int]:
    msgs = ctx.messages
    return {"calls": sum(b["type"] == "toolCall" for m in msgs if m["role"] == "assistant"
                         for b in m["content"]) + len(ctx.pending_calls),
            "results": sum(m["role"] == "toolResult" for m in msgs),
            "pending": len(ctx.pending_calls),
            "texts": sum(b["type"] == "text" for m in msgs if m["role"] != "toolResult"
                         for b in m["content"])}
