"""A JSONL session as its original lines and the edits a repair makes to them.

Lines that no fix names are written back as they were read, byte for byte: the edits are kept
apart from the original and only applied when the file is rendered.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from sessionctx.changes import ChangeKind

_BOM = b"\xef\xbb\xbf"
_decoder = msgspec.json.Decoder()

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

    def __init__(self, raw: bytes) -> None:
        self.bom = raw.startswith(_BOM)
        body = raw[len(_BOM):] if self.bom else raw
        self.terminated = body.endswith(b"\n")
        parts = body.split(b"\n")
        if self.terminated:
            parts.pop()
        self.original = parts
        self._text: dict[int, bytes] = {}
        self._objects: dict[int, Any] = {}
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
        if n not in self._objects:
            try:
                value = _decoder.decode(self.text(n))
            except msgspec.DecodeError:
                value = None
            self._objects[n] = value if isinstance(value, dict) else None
        obj: dict[str, Any] | None = self._objects[n]
        return obj

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

    def render(self) -> bytes:
        pieces: list[bytes] = []
        last = len(self.original)
        for n in [0, *self.numbers()]:
            if n and n not in self.removed:
                pieces.append(self.text(n))
                if n < last or self.terminated:
                    pieces.append(b"\n")
            for extra in self.inserted.get(n, []):
                if pieces and not pieces[-1].endswith(b"\n"):
                    pieces.append(b"\n")
                pieces.append(extra + b"\n")
        out = b"".join(pieces)
        return _BOM + out if self.bom and out else out


def unified_diff(before: bytes, after: bytes, path: str, width: int = 2000) -> str:
    """The lines that change, as a unified diff; very long lines are cut, marked as cut."""
    def lines(raw: bytes) -> list[str]:
        out = []
        for line in raw.decode("utf-8", "replace").split("\n"):
            if len(line) > width:
                line = f"{line[:width]}... ({len(line) - width} more characters)"
            out.append(line + "\n")
        if out and out[-1] == "\n":
            out.pop()
        return out

    return "".join(difflib.unified_diff(lines(before), lines(after), f"{path} (stored)",
                                        f"{path} (repaired)", n=0))
