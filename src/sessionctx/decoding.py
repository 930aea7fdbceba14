"""The one boundary where bytes become values: every JSON text sessionctx reads (a line, a
document, tool-call arguments stored as text) is decoded here, so a malformed one is refused
with the reason that fits and never escapes as an exception of the decoder.

What is refused, and why it is refused here rather than later:
- nesting deeper than MAX_DEPTH levels: every later step (building, rendering, encoding the
  output) walks values, and a value nested thousands deep would exhaust the stack there;
- numbers JSON cannot carry (NaN, Infinity, 1e999): no provider accepts them;
- lone UTF-16 surrogate escapes and invalid UTF-8: they cannot be written back out;
- a document larger than the size limit, like a line larger than it.
Duplicate keys are not refused (the last value is kept, as JSON parsers do) but reported, so
a caller can say which value was kept.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate, repeat
from operator import sub
from typing import Any

import msgspec

from sessionctx.errors import SessionctxError

MAX_DEPTH = 256
"""How deeply arrays and objects may nest in one record (or one argument text)."""

_decoder = msgspec.json.Decoder()
_encode = msgspec.json.encode
_NOT_STRUCTURE = bytes(range(256)).translate(None, b'[]{}"')
_NOT_OPENING_COLON_OR_NEWLINE = bytes(range(256)).translate(None, b"[{:\n")
_STRING = re.compile(rb'"[^"]*"')
_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_PIECE = 64 * 1024
_NAN = re.compile(rb"(?<![\w\"])-?(?:NaN|Infinity)(?![\w\"])")
_LONE_SURROGATE = re.compile(
    rb"\\u[dD][cCdDeEfF][0-9a-fA-F]{2}|\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])")


class Malformed(SessionctxError, ValueError):
    """A JSON text that cannot be read; the message says what is wrong with it."""

    def __init__(self, reason: str, *, nonfinite: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.nonfinite = nonfinite


def decode(data: bytes | memoryview) -> Any:
    """The value of one JSON text; Malformed with the reason when it is not one we accept."""
    try:
        return _accepted(data)
    except msgspec.DecodeError as exc:
        reason, nonfinite = _reason(bytes(data), exc)
        raise Malformed(reason, nonfinite=nonfinite) from None


def decode_or_none(data: bytes | memoryview) -> Any:
    """`decode`'s value, or None where it refuses the text, without working out why: for
    asking whether a whole file is one JSON text, where the reason for a JSONL file would be
    looked for in all of it."""
    try:
        return _accepted(data)
    except (msgspec.DecodeError, Malformed):
        return None


def _accepted(data: bytes | memoryview) -> Any:
    """The value of one JSON text; the decoder's error when it is not one, Malformed when it
    nests too deep."""
    try:
        value = _decoder.decode(data)
    except RecursionError:
        raise Malformed(_too_deep()) from None
    if _nesting_exceeds(bytes(data) if isinstance(data, memoryview) else data):
        raise Malformed(_too_deep())
    return value


def decode_lines(data: memoryview, count: int) -> list[Any] | None:
    """The values of `count` JSON lines in one decode, or None when any line is off (too deep,
    malformed, duplicate keys): the caller then reads line by line to say which and why."""
    try:
        values: list[Any] = _decoder.decode_lines(data)
    except (msgspec.DecodeError, RecursionError):
        return None
    if len(values) != count:
        return None
    raw = bytes(data)
    # one pass over the text keeps what both checks count: opening brackets, colons, newlines
    marks = raw.translate(None, _NOT_OPENING_COLON_OR_NEWLINE)
    if _lines_nest_too_deep(values, marks.translate(None, b":")) or \
            duplicate_keys_possible(raw, values, marks.count(b":")):
        return None
    return values


def parse_text(text: str) -> Any:
    """The value of a JSON text held in a string (tool-call arguments): strict JSON only."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise Malformed(f"holds a lone surrogate {text[exc.start]!r}, which is not valid "
                        "Unicode") from None
    if len(data) <= MAX_DEPTH:  # too short to nest deeper than the limit: the decoder's word
        try:                    # is the whole answer (most arguments are this short)
            return _decoder.decode(data)
        except (msgspec.DecodeError, RecursionError):
            pass  # `decode` says why
    return decode(data)


def duplicate_keys_possible(raw: bytes, value: Any, colons: int | None = None) -> bool:
    """Whether the text `raw` (holding `colons` colons, counted here when not given) may hold
    an object with a repeated key, given its decoded `value`.

    Decoding keeps one value per key, so re-encoding the value writes one ':' per key kept; the
    text has one ':' per key written, plus those inside strings, which re-encoding writes as
    they decoded: the same, unless the text escaped one (\\u003a, found by its prefix; the
    encoder never escapes a colon). Fewer colons written back means a key was dropped.
    """
    try:
        again = _encode(value)
    except (TypeError, ValueError, OverflowError):
        return True
    if colons is None:
        colons = raw.count(b":")
    return colons != again.count(b":") or b"\\u003" in raw


def duplicate_keys(raw: bytes) -> list[str]:
    """The keys that repeat within one object of the text `raw` (which decodes)."""
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> None:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen and key not in repeated:
                repeated.append(key)
            seen.add(key)
        # None for the object: only its keys are wanted, so a second tree of the whole
        # document is never built beside the one decoded

    try:
        json.loads(raw, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return []
    return repeated


def duplicate_problem(keys: list[str]) -> str:
    names = ", ".join(repr(k) for k in keys[:5])
    more = f" and {len(keys) - 5} more" if len(keys) > 5 else ""
    return (f"duplicate key {names}{more} in an object; the last value of each was kept")


def nesting(raw: bytes) -> int:
    """How deeply arrays and objects nest in the valid JSON text `raw`: the most brackets open
    at once, strings aside. Counted a piece of the text at a time (each piece ends outside a
    string), so no more than a piece is ever split into parts: a large document of tiny values
    would otherwise hold a few parts per value, many times the text's own size."""
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = raw.translate(None, _NOT_STRUCTURE)
    depth = deepest = start = 0
    while start < len(structure):
        end = start + _PIECE
        if structure.count(b'"', start, end) % 2:  # the piece would end inside a string
            end = structure.find(b'"', end) + 1 or len(structure)
        steps = _STRING.sub(b"", structure[start:end]).translate(_STEP)  # 2 opens, 0 closes
        if steps:
            deepest = max(deepest, max(accumulate(map(sub, steps, repeat(1)), initial=depth)))
            depth += steps.count(2) - steps.count(0)
        start = end
    return deepest


def _nesting_exceeds(raw: bytes) -> bool:
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return False  # fewer brackets than the limit cannot nest deeper than it
    return nesting(raw) > MAX_DEPTH


def _lines_nest_too_deep(values: list[Any], marks: bytes) -> bool:
    """`_nesting_exceeds` for JSON lines, given their decoded `values` and `marks`, the text's
    opening brackets and newlines: no value spans two lines, and only a line with more opening
    brackets than the limit can nest deeper than it, so the few values of lines that have
    that many are the only ones measured (their brackets are mostly inside strings)."""
    opening = marks.split(b"\n")
    if max(map(len, opening)) <= MAX_DEPTH:
        return False
    if len(opening) > len(values):
        opening.pop()  # the empty piece after the last line's newline
    return any(len(opens) > MAX_DEPTH and _deeper_than_limit(value)
               for opens, value in zip(opening, values, strict=True))


def _deeper_than_limit(value: Any) -> bool:
    """Whether arrays and objects nest deeper than MAX_DEPTH in a decoded value, walked a level
    at a time (no recursion, whatever the depth)."""
    level = [value] if isinstance(value, (dict, list)) else []
    for _ in range(MAX_DEPTH):
        below: list[Any] = []
        for held in level:
            below.extend(v for v in (held.values() if isinstance(held, dict) else held)
                         if isinstance(v, (dict, list)))
        if not below:
            return False
        level = below
    return True


def _too_deep() -> str:
    return f"arrays and objects nest deeper than {MAX_DEPTH} levels, the limit"


def _reason(raw: bytes, exc: msgspec.DecodeError) -> tuple[str, bool]:
    """Why the decoder refused `raw`, and whether for a number JSON cannot carry."""
    text = str(exc)
    if not raw.strip():
        return "is empty", False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as ue:
        return f"invalid UTF-8 at byte {ue.start + 1}", False
    if isinstance(exc, msgspec.ValidationError) and text.startswith("Number out of range"):
        return "holds a number too large for JSON (it would be Infinity)", True
    if _LONE_SURROGATE.search(raw):
        return ("holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), which is not valid "
                "Unicode", False)
    if _NAN.search(raw) and _pythonic(raw):
        return "holds NaN or Infinity, which JSON cannot carry", True
    return f"not valid JSON: {text}", False


def _pythonic(raw: bytes) -> bool:
    """Whether `raw` is JSON but for NaN/Infinity (Python's json module would read it)."""
    def refuse(name: str) -> Any:
        raise _NonFinite

    try:
        json.loads(raw, parse_constant=refuse)
    except _NonFinite:
        return True
    except (ValueError, RecursionError):
        return False
    return False


class _NonFinite(Exception):
    pass

