"""The quality audit: a summary must have every section and keep the exact identifiers.

Identifiers (URLs, paths, uuids, hashes, dates) are taken from the summarized records and the
previous summary, so a later summary cannot silently drop what an earlier one kept.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sessionctx.compaction.prompt import SECTIONS, arguments_text
from sessionctx.messages import Message, calls, is_result, text_of

DEFAULT_MAX_IDENTIFIERS = 40
MIN_IDENTIFIER_CHARS = 4

_IDENTIFIER = re.compile(
    r"(?P<url>https?://[^\s<>\"'`)\]]+)"
    r"|(?P<uuid>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)"
    r"|(?P<abspath>(?<![\w/.:~-])(?:~|)/(?:[\w.@+-]+/)+[\w.@+-]+)"
    r"|(?P<relpath>(?<![\w/.-])(?:[\w.@+-]+/)+[\w.@+-]*\.[A-Za-z0-9]{1,8}\b)"
    r"|(?P<date>\b\d{4}-\d{2}-\d{2}\b)"
    r"|(?P<hex>\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,64}\b)")
_TRAILING = ".,;:!?"
# Every identifier holds a slash, a dash or eight hex digits in a row: a text with none of
# them is passed over without the costly alternation above. Slashes and dashes are found by
# plain substring search; a run of hex digits, in ASCII text, by marking every hex digit and
# searching for eight marks, which costs far less than a regular expression over the text.
_HEX_RUN = re.compile(r"[0-9a-f]{8}")
_HEX_MARKS = {c: "h" if chr(c) in "0123456789abcdef" else "." for c in range(128)}
_EIGHT_MARKS = "h" * 8


def may_hold_identifier(text: str) -> bool:
    if "/" in text or "-" in text:
        return True
    if text.isascii():
        return _EIGHT_MARKS in text.translate(_HEX_MARKS)
    return _HEX_RUN.search(text) is not None


def identifiers_in(text: str) -> list[str]:
    """Identifiers in `text`, in order of first appearance, without duplicates."""
    if not may_hold_identifier(text):
        return []
    seen: dict[str, None] = {}
    for match in _IDENTIFIER.finditer(text):
        value = match.group(0).rstrip(_TRAILING)
        if len(value) >= MIN_IDENTIFIER_CHARS:
            seen.setdefault(value, None)
    return list(seen)


def required_identifiers(summarized: Sequence[Message], previous_summary: str | None, *,
                         limit: int = DEFAULT_MAX_IDENTIFIERS) -> list[str]:
    """What the summary must carry: first those of the previous summary, then of what was
    asked and done (user and assistant text, call arguments), then of tool results."""
    def said() -> Iterator[str]:
        yield previous_summary or ""
        for message in summarized:
            if not is_result(message):
                yield text_of(message.get("content"))
                if message.get("role") == "assistant":
                    for c in calls(message):
                        yield arguments_text(c.arguments)  # as the summarizer reads them

    def results() -> Iterator[str]:
        for message in summarized:
            if is_result(message):
                yield text_of(message.get("content"))

    if limit <= 0:
        return []
    out: dict[str, None] = {}
    texts = itertools.chain(said(), results())
    while batch := list(itertools.islice(texts, _BATCH)):
        # one look at the batch's texts joined (no identifier spans a line break) passes over
        # a batch that holds none at once; the others are searched text by text, in order
        if not may_hold_identifier("\n".join(batch)):
            continue
        for text in batch:
            for ident in identifiers_in(text):
                out.setdefault(ident, None)
                if len(out) >= limit:
                    return list(out)
    return list(out)


_BATCH = 256  # texts looked at together for whether any may hold an identifier


def _heading_pattern(section: str) -> re.Pattern[str]:
    return re.compile(rf"^#{{1,3}}\s+{re.escape(section)}\s*:?\s*$", re.IGNORECASE | re.MULTILINE)


_HEADINGS = [(s, _heading_pattern(s)) for s in SECTIONS]


@dataclass(frozen=True, slots=True)
class AuditResult:
    missing_sections: list[str]
    missing_identifiers: list[str]
    checked_identifiers: int

    @property
    def ok(self) -> bool:
        return not self.missing_sections and not self.missing_identifiers

    def failures(self) -> list[str]:
        out = [f"missing section '## {s}'" for s in self.missing_sections]
        out += [f"missing identifier {i}" for i in self.missing_identifiers]
        return out

    def describe(self) -> str:
        parts = []
        if self.missing_sections:
            parts.append("sections " + ", ".join(repr(s) for s in self.missing_sections))
        if self.missing_identifiers:
            parts.append("identifiers " + ", ".join(self.missing_identifiers))
        return "missing " + "; ".join(parts) if parts else "passed"


def audit(summary: str, identifiers: Iterable[str]) -> AuditResult:
    idents = list(identifiers)
    sections = [s for s, pattern in _HEADINGS if not pattern.search(summary)]
    if not summary.strip():
        sections = list(SECTIONS)
    missing = [i for i in idents if i not in summary]
    return AuditResult(sections, missing, len(idents))


def audit_record(result: AuditResult, *, repaired: bool) -> dict[str, Any]:
    """The `qualityAudit` field of a checkpoint."""
    return {"status": "passed" if result.ok else "failed", "mode": "structural",
            "sections": list(SECTIONS), "identifiersChecked": result.checked_identifiers,
            "repaired": repaired}
