"""Byte spans of values inside a JSON text, so an edit rewrites only the bytes it changes.

A repair removes one block from a line or one item from a document and points a parent link
elsewhere; everything else, whitespace and key order and number spelling included, stays as
the agent wrote it. Paths are keys and array indexes from the top value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

Path = Sequence[str | int]

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(rb"-?[0-9][0-9eE+\-.]*|true|false|null")
_SPACE = re.compile(rb"[ \t\r\n]*")
# Everything up to the next bracket outside a string, strings whole: the regex engine steps
# over the text between brackets, so a container is skipped in one step per bracket it holds.
_TO_BRACKET = re.compile(rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+', re.DOTALL)
_OPENING = frozenset(b"{[")
_CLOSING = {ord("{"): b"}", ord("["): b"]"}


class SpanError(ValueError):
    """The text is not the JSON the path expects."""


def _ws(text: bytes, pos: int) -> int:
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


def value_end(text: bytes, pos: int) -> int:
    """Where the JSON value starting at `pos` (no leading space) ends."""
    head = text[pos:pos + 1]
    if head == b'"':
        match = _STRING.match(text, pos)
        if match is None:
            raise SpanError(f"unterminated string at byte {pos}")
        return match.end()
    if head in (b"{", b"["):
        return _container_end(text, pos)
    match = _SCALAR.match(text, pos)
    if match is None or match.end() == pos:
        raise SpanError(f"no JSON value at byte {pos}")
    return match.end()


def _container_end(text: bytes, pos: int) -> int:
    """Where the object or array at `pos` ends, found by its brackets alone: only the members
    of the containers on a path are read one by one."""
    depth = 0
    at = pos
    while at < len(text):
        char = text[at]
        if char in _OPENING:
            depth += 1
        elif char in b"}]":
            depth -= 1
            if depth == 0:
                return at + 1
        else:  # a quote where no string is whole: the text ends inside it
            raise SpanError(f"unterminated string at byte {at}")
        skipped = _TO_BRACKET.match(text, at + 1)
        at = skipped.end() if skipped is not None else at + 1
    raise SpanError(f"unterminated container at byte {pos}")


def _members(text: bytes, pos: int) -> tuple[list[tuple[Any, int, int, int]], int]:
    """(key or index, where the member starts (its key, in an object), value start, value end)
    of each member of the container at `pos`, and where it ends."""
    close = _CLOSING[text[pos]]
    members: list[tuple[Any, int, int, int]] = []
    at: int | None = _first_member(text, pos, close)
    end = pos + 1
    while at is not None:
        key, start = _member_head(text, at, close, len(members))
        end = value_end(text, start)
        members.append((key, at, start, end))
        at = _next_member(text, end, close)
    return members, _ws(text, end) + 1


def _value_start(text: bytes, pos: int, step: str | int) -> int:
    """Where the value of member `step` of the container at `pos` starts: the values before
    it are skipped, its own is not read."""
    close = _CLOSING[text[pos]]
    at = _first_member(text, pos, close)
    index = 0
    while at is not None:
        key, start = _member_head(text, at, close, index)
        if key == step:
            return start
        at = _next_member(text, value_end(text, start), close)
        index += 1
    raise SpanError(f"no {step!r} in the value at byte {pos}")


def _first_member(text: bytes, pos: int, close: bytes) -> int | None:
    """Where the first member of the container opened at `pos` starts; None when empty."""
    at = _ws(text, pos + 1)
    return None if text[at:at + 1] == close else at


def _member_head(text: bytes, at: int, close: bytes, index: int) -> tuple[Any, int]:
    """The key of the member at `at` (its `index`, in an array) and where its value starts."""
    if close == b"]":
        return index, at
    match = _STRING.match(text, at)
    if match is None:
        raise SpanError(f"expected a key at byte {at}")
    colon = _ws(text, match.end())
    if text[colon:colon + 1] != b":":
        raise SpanError(f"expected ':' at byte {colon}")
    return json.loads(match.group()), _ws(text, colon + 1)


def _next_member(text: bytes, end: int, close: bytes) -> int | None:
    """Where the member after the value ending at `end` starts; None after the last one."""
    at = _ws(text, end)
    sep = text[at:at + 1]
    if sep == close:
        return None
    if sep != b",":
        raise SpanError(f"expected ',' or {close.decode()!r} at byte {at}")
    return _ws(text, at + 1)


def members(text: bytes, path: Path = ()) -> list[tuple[Any, int, int]]:
    """The members of the container at `path`."""
    start = _start(text, path)
    if text[start:start + 1] not in (b"{", b"["):
        raise SpanError(f"the value at {list(path)} is not an object or array")
    return [(key, begin, end) for key, _, begin, end in _members(text, start)[0]]


def span(text: bytes, path: Path = ()) -> tuple[int, int]:
    """The byte span of the value at `path` in `text`, one JSON text (so the top value ends
    where the text's trailing space starts)."""
    if not path:
        return _ws(text, 0), len(text.rstrip(b" \t\r\n"))
    start = _start(text, path)
    return start, value_end(text, start)


def _start(text: bytes, path: Path) -> int:
    """Where the value at `path` starts."""
    start = _ws(text, 0)
    for step in path:
        if text[start:start + 1] not in (b"{", b"["):
            raise SpanError(f"no {step!r} in the scalar at byte {start}")
        start = _value_start(text, start, step)
    return start


def replace(text: bytes, path: Path, value: Any) -> bytes:
    """`text` with the value at `path` replaced by `value`, written as the agents write JSON."""
    start, end = span(text, path)
    return text[:start] + encode(value) + text[end:]


def delete(text: bytes, path: Path, index: int) -> bytes:
    """`text` without member `index` (by position) of the array or object at `path`, and the
    comma that joined it."""
    container_start = _start(text, path)
    if text[container_start:container_start + 1] not in (b"{", b"["):
        raise SpanError(f"the value at {list(path)} is not an object or array")
    items, container_end = _members(text, container_start)
    _, start, _, end = items[index]
    if len(items) == 1:
        return text[:container_start + 1] + text[container_end - 1:]
    if index + 1 < len(items):
        return text[:start] + text[items[index + 1][1]:]
    return text[:items[index - 1][3]] + text[end:]


def insert_after(text: bytes, path: Path, index: int, value: Any) -> bytes:
    """`text` with `value` placed after member `index` of the array at `path`, joined and
    indented as the array's members are (a compact array stays compact)."""
    items = members(text, path)
    _, _, end = items[index]
    if len(items) >= 2:
        sep = text[items[0][2]:items[1][1]]
    else:
        line_start = text.rfind(b"\n", 0, items[index][1]) + 1
        indent = text[line_start:items[index][1]]
        sep = b",\n" + indent if not indent.strip() and line_start > 0 else b","
    return text[:end] + sep + _indented(value, sep) + text[end:]


def _indented(value: Any, sep: bytes) -> bytes:
    if b"\n" not in sep:
        return encode(value)
    indent = sep.rsplit(b"\n", 1)[1]
    pretty = json.dumps(value, ensure_ascii=False, indent=2).encode("utf-8", "backslashreplace")
    return pretty.replace(b"\n", b"\n" + indent)


def encode(value: Any) -> bytes:
    """JSON as Node's JSON.stringify writes it: no spaces, non-ASCII text as it is."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only an escape can carry it
        return json.dumps(value, separators=(",", ":")).encode("ascii")
