"""Byte spans of values inside a JSON text, so an edit rewrites only the bytes it changes.

A repair removes one block from a line or one item from a document and points a parent link
elsewhere; everything else, whitespace and key order and number spelling included, stays as
the agent wrote it. Paths are keys and array indexes from the top value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from sessionctx.errors import SessionctxError

Path = Sequence[str | int]

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(rb"-?[0-9][0-9eE+\-.]*|true|false|null")
_SPACE = re.compile(rb"[ \t\r\n]*")
# Everything up to the next bracket outside a string, strings whole: the regex engine steps
# over the text between brackets, so a container is skipped in one step per bracket it holds.
_TO_BRACKET = re.compile(rb'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+', re.DOTALL)
_OPENING = frozenset(b"{[")
_CLOSING = {ord("{"): b"}", ord("["): b"]"}


class SpanError(SessionctxError, ValueError):
    """The text is not the JSON the path expects: a repair stops with this message rather
    than write a line it cannot edit safely."""


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


def without(text: bytes, path: Path, indexes: Iterable[int]) -> bytes:
    """`text` without the members `indexes` of the array at `path`, each going as `delete`
    would take it out, the text joined once."""
    members = ArrayText(text, path)
    for i in sorted(set(indexes), reverse=True):
        members.delete(i)
    return members.render()


def reordered(text: bytes, path: Path, order: Sequence[int]) -> bytes:
    """`text` with the members of the array at `path` in `order` (old indexes), the bytes
    between members kept where they stand."""
    members = ArrayText(text, path)
    members.values = [members.values[i] for i in order]
    return members.render()


class ArrayText:
    """The array at `path` of a JSON text as its members' bytes and the bytes between them.

    A repair that takes out or adds many items of a large document edits this list, a member
    going as `delete` would take it out of the text, and the text is joined once: edited one
    at a time, every edit would scan and copy the whole document again.
    """

    def __init__(self, text: bytes, path: Path) -> None:
        start = _start(text, path)
        if text[start:start + 1] != b"[":
            raise SpanError(f"the value at {list(path)} is not an array")
        items, end = _members(text, start)
        self.head = text[:start + 1]
        self.tail = text[end - 1:]  # from the closing bracket on
        self.lead = text[start + 1:items[0][2]] if items else text[start + 1:end - 1]
        self.trail = text[items[-1][3]:end - 1] if items else b""
        self.values = [text[begin:stop] for _, _, begin, stop in items]
        self.seps = [text[items[k][3]:items[k + 1][2]] for k in range(len(items) - 1)]

    def __len__(self) -> int:
        return len(self.values)

    def delete(self, index: int) -> None:
        """Member `index` goes with the comma that joined it (the one after it, or before the
        last); the last member left goes with the space around it."""
        if not 0 <= index < len(self.values):
            raise IndexError(index)
        if len(self.values) == 1:
            self.values, self.seps, self.lead, self.trail = [], [], b"", b""
            return
        del self.values[index]
        del self.seps[index if index < len(self.values) else index - 1]

    def insert_after(self, index: int, value: Any) -> None:
        """`value` after member `index`, joined and indented as the members are."""
        if not 0 <= index < len(self.values):
            raise IndexError(index)
        if len(self.values) >= 2:
            sep = self.seps[0]
        else:  # the one member's indent, when it starts a line
            before = self.head + self.lead
            line_start = before.rfind(b"\n") + 1
            indent = before[line_start:]
            sep = b",\n" + indent if not indent.strip() and line_start > 0 else b","
        self.values.insert(index + 1, _indented(value, sep))
        self.seps.insert(index, sep)

    def render(self) -> bytes:
        pieces = [self.head, self.lead]
        for k, value in enumerate(self.values):
            if k:
                pieces.append(self.seps[k - 1])
            pieces.append(value)
        pieces += [self.trail, self.tail]
        return b"".join(pieces)
