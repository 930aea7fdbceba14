"""Byte spans of values inside a JSON text, so an edit rewrites only the bytes it changes.

A repair removes one block from a line or one item from a document and points a parent link
elsewhere; everything else, whitespace and key order and number spelling included, stays as
the agent wrote it. Paths are keys and array indexes from the top value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

Path = Sequence[str | int]

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(rb"-?[0-9][0-9eE+\-.]*|true|false|null")
_SPACE = re.compile(rb"[ \t\r\n]*")
# Everything up to the next bracket outside a string, strings whole: the regex engine steps
# over the text between brackets, so a container is skipped in one step per bracket it holds.
_TO_BRACKET = re.compile(rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+', re.DOTALL)
_OPENING = frozenset(b"{[")


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


def _container(text: bytes, pos: int) -> tuple[list[tuple[Any, int, int]], int]:
    """The members of the object or array at `pos` as (key or index, start, end) of each value,
    and where the container ends."""
    found, end = _members(text, pos)
    return [(key, start, stop) for key, _, start, stop in found], end


def _members(text: bytes, pos: int) -> tuple[list[tuple[Any, int, int, int]], int]:
    """(key or index, where the member starts (its key, in an object), value start, value end)
    of each member of the container at `pos`, and where it ends."""
    found = list(_each_member(text, pos))
    return found, _ws(text, found[-1][3] if found else pos + 1) + 1


def _each_member(text: bytes, pos: int) -> Iterator[tuple[Any, int, int, int]]:
    """`_members` one at a time: a search for one member skips no more than the ones before
    it."""
    close = b"}" if text[pos:pos + 1] == b"{" else b"]"
    i = _ws(text, pos + 1)
    if text[i:i + 1] == close:
        return
    index = 0
    while True:
        key: Any = index
        member_start = i
        if close == b"}":
            match = _STRING.match(text, i)
            if match is None:
                raise SpanError(f"expected a key at byte {i}")
            key = json.loads(match.group())
            i = _ws(text, match.end())
            if text[i:i + 1] != b":":
                raise SpanError(f"expected ':' at byte {i}")
            i = _ws(text, i + 1)
        end = value_end(text, i)
        yield key, member_start, i, end
        index += 1
        i = _ws(text, end)
        sep = text[i:i + 1]
        if sep == close:
            return
        if sep != b",":
            raise SpanError(f"expected ',' or {close.decode()!r} at byte {i}")
        i = _ws(text, i + 1)


def members(text: bytes, path: Path = ()) -> list[tuple[Any, int, int]]:
    """The members of the container at `path`."""
    start, _ = span(text, path)
    if text[start:start + 1] not in (b"{", b"["):
        raise SpanError(f"the value at {list(path)} is not an object or array")
    return _container(text, start)[0]


def span(text: bytes, path: Path = ()) -> tuple[int, int]:
    """The byte span of the value at `path` in `text`, one JSON text (so the top value ends
    where the text's trailing space starts)."""
    start = _ws(text, 0)
    end = len(text.rstrip(b" \t\r\n"))
    for step in path:
        if text[start:start + 1] not in (b"{", b"["):
            raise SpanError(f"no {step!r} in the scalar at byte {start}")
        found = next(((s, e) for key, _, s, e in _each_member(text, start) if key == step),
                     None)
        if found is None:
            raise SpanError(f"no {step!r} in the value at byte {start}")
        start, end = found
    return start, end


def replace(text: bytes, path: Path, value: Any) -> bytes:
    """`text` with the value at `path` replaced by `value`, written as the agents write JSON."""
    start, end = span(text, path)
    return text[:start] + encode(value) + text[end:]


def delete(text: bytes, path: Path, index: int) -> bytes:
    """`text` without member `index` (by position) of the array or object at `path`, and the
    comma that joined it."""
    container_start, container_end = span(text, path)
    if text[container_start:container_start + 1] not in (b"{", b"["):
        raise SpanError(f"the value at {list(path)} is not an object or array")
    items = _members(text, container_start)[0]
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
