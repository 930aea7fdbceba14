"""What sessionctx makes of a session file, counted the way the format tests compare it with
counts they compute from the raw file: calls (answered and pending), results, pending calls
and texts of the built context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessionctx.context import Context, build_context
from sessionctx.inputs import read_input
from sessionctx.providers import PROVIDERS, BuildRequestOptions, build_request, validate
from tests.sdk_types import sdk_check


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


def accepted_bodies(ctx: Context, label: str = "") -> dict[str, dict[str, Any]]:
    """The body of each provider built from `ctx` (tools named in the history declared), each
    checked to pass the provider's validator and its SDK's request types."""
    out = {}
    for provider in PROVIDERS:
        body = build_request(ctx, provider, options=BuildRequestOptions(
            placeholder_tools=True)).body
        assert validate(body, provider) == [], (label, provider)
        sdk_check(provider, body)
        out[provider] = body
    return out
