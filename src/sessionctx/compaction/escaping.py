"""Untrusted text inside the summary prompt and the summary message, kept from breaking out.

Record content, tool names, ids and the summarizer's own output are data: none may close or
open one of the tags they are embedded in, in any case or spacing (`</ Conversation_Records >`),
nor start a line that reads as a record header (`--- user`). Both escapes add one backslash and
undo exactly, so a text that already looks escaped is escaped once more, never confused.
"""

from __future__ import annotations

import re

TAGS = ("conversation_records", "previous_summary", "conversation_summary", "previous_answer")
HEADER = "---"

_TAG = re.compile(r"<(\\*)(\s*/?\s*(?:" + "|".join(TAGS) + r"))(?![A-Za-z0-9_])",
                  re.IGNORECASE)
_ESCAPED_TAG = re.compile(r"<\\(\\*)(\s*/?\s*(?:" + "|".join(TAGS) + r"))(?![A-Za-z0-9_])",
                          re.IGNORECASE)
_LINE = re.compile(r"^(\\*)([ \t]*" + HEADER + ")", re.MULTILINE)
_ESCAPED_LINE = re.compile(r"^\\(\\*)([ \t]*" + HEADER + ")", re.MULTILINE)


def escape_tags(text: str) -> str:
    """`text` with every opening or closing tag of the prompt's tags made inert."""
    return _TAG.sub(r"<\\\1\2", text) if "<" in text else text


def unescape_tags(text: str) -> str:
    return _ESCAPED_TAG.sub(r"<\1\2", text) if "<\\" in text else text


def escape_lines(text: str) -> str:
    """`text` with no line that starts like a record header."""
    return _LINE.sub(r"\\\1\2", text) if HEADER in text else text


def unescape_lines(text: str) -> str:
    return _ESCAPED_LINE.sub(r"\1\2", text) if HEADER in text else text
