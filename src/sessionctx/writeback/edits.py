"""A JSONL session as its original lines and the edits a repair makes to them.

Lines that no fix names are written back as they were read, byte for byte: the edits are kept
apart from the original and only applied when the file is rendered.
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sessionctx import decoding
from sessionctx.changes import ChangeKind
from sessionctx.gcpause import paused_gc
from sessionctx.records import object_chunks

_BOM = b"\xef\xbb\xbf"

# Kinds of fix the repair writes, besides the change kinds of the context it mirrors.
REMOVED_UNREADABLE = ChangeKind.REMOVED_UNREADABLE
REMOVED_INVALID = ChangeKind.REMOVED_INVALID
REMOVED_EMPTY = ChangeKind.REMOVED_EMPTY
RELINKED = ChangeKind.RELINKED


@dataclass(slots=True)
class Fix:
    """One change written to the session: what, where in the original, and why."""

    kind: str
    reason: str
    line: int | None = None  # a line of the original file
    index: int | None = None  # an item of the original document
    action: str = "edited"  # edited, removed or inserted
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "action": self.action, "reason": self.reason}
        if self.line is not None:
            out["line"] = self.line
        if self.index is not None:
            out["index"] = self.index
        if self.detail:
            out["detail"] = self.detail
        return out

    def label(self) -> str:
        return f"line {self.line}" if self.line is not None else (
            f"item {self.index}" if self.index is not None else "session")


class Lines:
    """The original lines (numbered from 1), their decoded objects and the pending edits."""

    def __init__(self, raw: bytes, decoded: dict[int, dict[str, Any]] | None = None) -> None:
        """`decoded`: the objects of lines already decoded (by the reader), by line number;
        given, the other lines are decoded one at a time when asked for."""
        self.bom = raw.startswith(_BOM)
        body = raw[len(_BOM):] if self.bom else raw
        self.terminated = body.endswith(b"\n")
        parts = body.split(b"\n")
        if self.terminated:
            parts.pop()
        self.original = parts
        self._text: dict[int, bytes] = {}
        self._objects: dict[int, Any] = {} if decoded is None else decoded
        # the original lines, until their objects are decoded
        self._unread = body if decoded is None else b""
        self.removed: set[int] = set()
        self.inserted: dict[int, list[bytes]] = {}

    def __len__(self) -> int:
        return len(self.original)

    def numbers(self) -> range:
        return range(1, len(self.original) + 1)

    def text(self, n: int) -> bytes:
        return self._text.get(n, self.original[n - 1])

    def obj(self, n: int) -> dict[str, Any] | None:
        """The line's object as it stands now, None when the line holds no JSON object."""
        if self._unread:
            self._decode_original()
        if n not in self._objects:
            try:
                value = decoding.decode(self.text(n))
            except decoding.Malformed:
                value = None
            self._objects[n] = value if isinstance(value, dict) else None
        obj: dict[str, Any] | None = self._objects[n]
        return obj

    def _decode_original(self) -> None:
        """The objects of the lines not yet edited, decoded a chunk of lines at a time as the
        reader decodes them; a line of a chunk that does not decode in one go is decoded
        alone when it is asked for."""
        body, self._unread = self._unread, b""
        n = 1
        with paused_gc():  # a large acyclic tree, as a read makes
            for start, end, objects in object_chunks(body):
                if objects is None:  # every chunk but the last ends with its last newline
                    n += body.count(b"\n", start, end)
                    continue
                for obj in objects:
                    if n not in self._text:
                        self._objects[n] = obj
                    n += 1

    def is_blank(self, n: int) -> bool:
        return not self.original[n - 1].strip()

    def put(self, n: int, text: bytes) -> None:
        self._text[n] = text
        self._objects.pop(n, None)

    def remove(self, n: int) -> None:
        self.removed.add(n)

    def insert_after(self, n: int, text: bytes) -> None:
        self.inserted.setdefault(n, []).append(text)

    def kept(self) -> Iterator[int]:
        return (n for n in self.numbers() if n not in self.removed)

    def _ending(self, n: int) -> bytes:
        """The line ending of an inserted line: that of the line it follows (the first line
        for one inserted at the start), so a CRLF file stays CRLF."""
        near = self.original[max(n, 1) - 1] if self.original else b""
        return b"\r\n" if near.endswith(b"\r") else b"\n"

    def render(self) -> bytes:
        pieces: list[bytes] = []
        last = len(self.original)
        for n in [0, *self.numbers()]:
            if n and n not in self.removed:
                pieces.append(self.text(n))
                if n < last or self.terminated:
                    pieces.append(b"\n")
            for extra in self.inserted.get(n, []):
                eol = self._ending(n)
                if pieces and not pieces[-1].endswith(b"\n"):
                    pieces.append(eol)
                pieces.append(extra + eol)
        out = b"".join(pieces)
        return _BOM + out if self.bom and out else out


def unified_diff(before: bytes, after: bytes, path: str, width: int = 2000) -> str:
    """The lines that change, as a unified diff with no context lines. Lines are compared as
    stored, whole; a very long one is cut only where it is shown, marked as cut, so a change
    past the cut still shows its line."""
    old, new = _diff_lines(before), _diff_lines(after)
    out: list[str] = []
    for i1, i2, j1, j2 in _changed_runs(old, new):
        if not out:
            out += [f"--- {path} (stored)\n", f"+++ {path} (repaired)\n"]
        out.append(f"@@ -{_hunk_range(i1, i2)} +{_hunk_range(j1, j2)} @@\n")
        out.extend("-" + _shown(line, width) for line in old[i1:i2])
        out.extend("+" + _shown(line, width) for line in new[j1:j2])
    return "".join(out)


def _changed_runs(old: list[bytes], new: list[bytes]) -> Iterator[tuple[int, int, int, int]]:
    """Each run of lines that differ, as (old start, old stop, new start, new stop).

    Lines found exactly once on each side, in the same order, are matched first (patience
    diffing); only the gaps between them go to difflib. A session's lines are nearly all
    unique, so the gaps are the edits themselves and the cost grows with the file, where
    difflib alone grows with the file times the number of edits."""
    i = j = 0
    for anchor_i, anchor_j in [*_unique_anchors(old, new), (len(old), len(new))]:
        yield from _gap_runs(old, new, i, anchor_i, j, anchor_j)
        i, j = anchor_i + 1, anchor_j + 1


_GAP_PAIRS = 1_000_000  # the largest gap (old lines times new lines) difflib matches


def _gap_runs(old: list[bytes], new: list[bytes], i: int, i_end: int, j: int, j_end: int
              ) -> Iterator[tuple[int, int, int, int]]:
    """The runs that differ between two anchors. Equal lines at either end match as they
    stand; what is left goes to difflib when small enough, and is shown whole otherwise (a
    file of many repeated lines, where difflib's cost grows with the square of the gap)."""
    while i < i_end and j < j_end and old[i] == new[j]:
        i, j = i + 1, j + 1
    while i < i_end and j < j_end and old[i_end - 1] == new[j_end - 1]:
        i_end, j_end = i_end - 1, j_end - 1
    if i == i_end and j == j_end:
        return
    if (i_end - i) * (j_end - j) > _GAP_PAIRS:
        yield i, i_end, j, j_end
        return
    matcher = difflib.SequenceMatcher(None, old[i:i_end], new[j:j_end], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            yield i + i1, i + i2, j + j1, j + j2


def _unique_anchors(old: list[bytes], new: list[bytes]) -> list[tuple[int, int]]:
    """The longest ordered chain of lines that occur once in `old` and once in `new`."""
    counts: dict[bytes, int] = {}
    for line in old:
        counts[line] = counts.get(line, 0) + 1
    in_new: dict[bytes, int] = {}
    for j, line in enumerate(new):
        if counts.get(line) == 1:
            in_new[line] = -1 if line in in_new else j
    pairs = [(i, j) for i, line in enumerate(old) if (j := in_new.get(line, -1)) >= 0]
    # longest increasing run of new positions, by patience sorting
    tops: list[int] = []  # new position ending the best chain of each length
    ends: list[int] = []  # index into pairs of that chain's last pair
    back: list[int] = []
    for k, (_, j) in enumerate(pairs):
        length = bisect.bisect_left(tops, j)
        if length == len(tops):
            tops.append(j)
            ends.append(k)
        else:
            tops[length], ends[length] = j, k
        back.append(ends[length - 1] if length else -1)
    chain: list[tuple[int, int]] = []
    k = ends[-1] if ends else -1
    while k >= 0:
        chain.append(pairs[k])
        k = back[k]
    return chain[::-1]


def _diff_lines(raw: bytes) -> list[bytes]:
    lines = raw.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the empty piece after the last newline
    return lines


def _hunk_range(start: int, stop: int) -> str:
    """A hunk's line range as unified diffs write it: the first line and the count."""
    if stop - start == 1:
        return str(start + 1)
    return f"{start + 1 if stop > start else start},{stop - start}"


def _shown(line: bytes, width: int) -> str:
    text = line.decode("utf-8", "replace")
    if len(text) > width:
        text = f"{text[:width]}... ({len(text) - width} more characters)"
    return text + "\n"
