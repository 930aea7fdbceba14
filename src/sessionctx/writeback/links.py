"""Parent links of tree-shaped sessions: an entry taken out leaves no child hanging.

Claude Code chains its lines by `uuid`/`parentUuid`, pi its entries by `id`/`parentId`. When a
line goes, every line that named it as parent names its parent instead, so the chain from the
last entry still reaches the root. A line that cannot be decoded is read for its two ids as
text, so the children of a torn line are re-attached too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sessionctx.writeback import spans
from sessionctx.writeback.edits import RELINKED, Fix, Lines


@dataclass(frozen=True, slots=True)
class LinkKeys:
    id: str
    parent: str
    others: tuple[str, ...] = ()  # other fields that point at a parent by id


def _text_field(text: bytes, key: str) -> str | None:
    match = re.search(rb'"' + re.escape(key.encode()) + rb'"\s*:\s*"([^"\\]*)"', text)
    if match is None:
        return None
    try:
        return match.group(1).decode("utf-8")
    except UnicodeDecodeError:
        return None


def ids_of(lines: Lines, n: int, keys: LinkKeys) -> tuple[str | None, str | None]:
    """The line's own id and its parent's, from its object or, when unreadable, its text."""
    obj = lines.obj(n)
    if obj is not None:
        own, parent = obj.get(keys.id), obj.get(keys.parent)
        return (own if isinstance(own, str) else None,
                parent if isinstance(parent, str) else None)
    text = lines.original[n - 1]
    return _text_field(text, keys.id), _text_field(text, keys.parent)


class Links:
    """The parent each removed line had, and the nearest ancestor of an id that stays."""

    def __init__(self, lines: Lines, removed: Iterable[int], keys: LinkKeys) -> None:
        self.lines, self.keys = lines, keys
        self.parent_of: dict[str, str | None] = {}
        self._survivors: dict[str, str | None] = {}  # removed id -> the ancestor that stays
        for n in removed:
            own, parent = ids_of(lines, n, keys)
            if own is not None:
                self.parent_of[own] = parent
        if self.parent_of:  # an id a kept line still holds (an entry written twice) stays
            for n in lines.kept():
                own = ids_of(lines, n, keys)[0]
                if own is not None:
                    self.parent_of.pop(own, None)

    def surviving(self, uid: str | None) -> str | None:
        """The nearest ancestor of `uid` that stays (`uid` itself when it stays). The answer
        for each removed id on the way is kept, so a long run of removed entries is walked
        once, not once per child; a walk that ends in a cycle keeps nothing."""
        walked: list[str] = []
        seen: set[str] = set()
        current = uid
        while current is not None and current in self.parent_of and current not in seen:
            if current in self._survivors:
                current = self._survivors[current]
                break
            seen.add(current)
            walked.append(current)
            current = self.parent_of[current]
        if current is None or current not in self.parent_of:
            self._survivors.update(dict.fromkeys(walked, current))
        return current

    def point(self, n: int, key: str, new: str | None, why: str) -> Fix:
        """Set line `n`'s link `key` to `new`."""
        obj = self.lines.obj(n) or {}
        old = obj.get(key)
        self.lines.put(n, spans.replace(self.lines.text(n), [key], new))
        return Fix(RELINKED, why, line=n, detail={"field": key, "from": old, "to": new})

    def children(self) -> dict[str, list[int]]:
        """The kept lines that name each id as their parent, in file order, as the lines stand
        now: one pass over the file, however many lines are asked about."""
        out: dict[str, list[int]] = {}
        for n in self.lines.kept():
            obj = self.lines.obj(n)
            parent = obj.get(self.keys.parent) if obj is not None else None
            if isinstance(parent, str):
                out.setdefault(parent, []).append(n)
        return out

    def relink(self) -> list[Fix]:
        """Point the children of removed lines at the nearest ancestor that stays."""
        fixes = []
        for n in list(self.lines.kept()):
            for key in (self.keys.parent, *self.keys.others):
                obj = self.lines.obj(n)
                old = obj.get(key) if obj is not None else None
                if not isinstance(old, str) or old not in self.parent_of:
                    continue
                new = self.surviving(old)
                fixes.append(self.point(n, key, new, f"its {key} {old} was taken out; now "
                                        f"{new if new is not None else 'null (a root)'}"))
        return fixes
