"""What a call goes out with (docs/provider-rules.md §1.3, §2, §3, §5): an id the provider's
pattern and length take, distinct from the others and the same for the call and its result; a
tool name of the providers' pattern; arguments that are a JSON object. Pure functions of their
input, so calls, results and tool definitions rewrite alike."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from sessionctx import decoding

RAW_ARGUMENTS_KEY = "_sessionctx_raw_arguments"
SAFE_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def split_id(raw: str | None) -> tuple[str | None, str | None]:
    """pi's Responses convention: '<call_id>|<fc item id>'."""
    if raw is not None and "|" in raw:
        head, _, tail = raw.partition("|")
        if head and tail.startswith("fc"):
            return head, tail
    return raw, None


def tool_name(name: str | None) -> str:
    """The name a tool goes out with: its own when the providers' pattern allows it; the same
    rewrite serves calls and definitions, so they still match."""
    if name is not None and TOOL_NAME.fullmatch(name):
        return name
    return SAFE_CHARS.sub("_", name or "")[:64] or "unknown_tool"


NOT_AN_OBJECT = "were not a JSON object"


def repair_arguments(args: Any) -> tuple[dict[str, Any], str | None]:
    """Arguments as a JSON object, and why they changed (None when they did not): anything
    else, strict JSON text only (no NaN or Infinity, which no provider accepts), is kept under
    RAW_ARGUMENTS_KEY."""
    if isinstance(args, dict):
        return args, None
    if args is None:
        return {}, NOT_AN_OBJECT
    if isinstance(args, str):
        if not args.strip():
            return {}, NOT_AN_OBJECT
        try:
            value = decoding.parse_text(args)
        except decoding.Malformed as exc:
            why = f"hold a value JSON cannot carry ({exc.reason})" if exc.nonfinite else (
                NOT_AN_OBJECT)
            return {RAW_ARGUMENTS_KEY: args}, why
        if isinstance(value, dict):
            return value, None
        return {RAW_ARGUMENTS_KEY: args}, NOT_AN_OBJECT
    return {RAW_ARGUMENTS_KEY: json.dumps(args, ensure_ascii=False)}, NOT_AN_OBJECT


def id_map_entry(original: str, fits: Callable[[str], object], max_len: int,
                 used: set[str]) -> str:
    """A deterministic id that `fits` the provider's pattern, is at most `max_len` long and is
    distinct from `used`."""
    if fits(original) and len(original) <= max_len and original not in used:
        return original
    return rewritten_id(original, max_len, used)


def rewritten_id(original: str, max_len: int, used: set[str]) -> str:
    """`id_map_entry` for an id known not to fit or to be taken."""
    base = SAFE_CHARS.sub("_", original) or "call"
    if len(base) <= max_len and base not in used:
        return base
    digest = hashlib.sha256(original.encode()).hexdigest()[:8]
    candidate = ""
    n = 0
    while not candidate or candidate in used:
        tag = digest if n == 0 else f"{digest}{n}"
        candidate = f"{base[:max_len - len(tag) - 1]}_{tag}"
        n += 1
    return candidate
