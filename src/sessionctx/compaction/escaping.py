"""Untrusted text inside the summary prompt and the summary message, kept from breaking out.

Record content, tool names, ids and the summarizer's own output are data: none may close or
open one of the tags they are embedded in, in any case or spacing (`</ Conversation_Records >`)
or through a look-alike (zero-width characters inside, fullwidth or other angle brackets,
`&lt;`), nor start a line that reads as a record header (`--- user`) or a call line
(`[tool call …`) after any line break a reader may honour (CR, VT, FF, FS, GS, RS, NEL,
U+2028, U+2029 as well as LF). A look-alike tag is first rewritten as the tag it imitates;
then both escapes add one backslash and undo exactly, so a text that already looks escaped is
escaped once more, never confused.
"""

from __future__ import annotations

import re
import unicodedata

TAGS = ("conversation_records", "previous_summary", "conversation_summary", "previous_answer",
        "exact_identifiers")
HEADER = "---"

# Every line break str.splitlines honours, and the characters a reader does not see.
BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
INVISIBLE = "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e" \
            "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
_LEAD = rf"(?:[^\S{BREAKS}]|[{INVISIBLE}])"  # what may come before a line's first mark
_DASH = "\\-\u2010-\u2015\u2212\u2e3a\u2e3b\ufe58\ufe63\uff0d"
# a line start that reads as a header (three dashes of any kind) or a call line (`[t…`)
_MARK = rf"(?:(?:[{_DASH}][{INVISIBLE}]*){{3}}|[\[\uff3b]{_LEAD}*[tT\uff34\uff54])"
_START = rf"(?:\A|(?<=[{BREAKS}]))"

_TAG = re.compile(r"<(\\*)(\s*/?\s*(?:" + "|".join(TAGS) + r"))(?![A-Za-z0-9_])",
                  re.IGNORECASE)
_ESCAPED_TAG = re.compile(r"<\\(\\*)(\s*/?\s*(?:" + "|".join(TAGS) + r"))(?![A-Za-z0-9_])",
                          re.IGNORECASE)
_LINE = re.compile(rf"{_START}(\\*)({_LEAD}*{_MARK})")
_ESCAPED_LINE = re.compile(rf"{_START}\\(\\*)({_LEAD}*{_MARK})")
_FIRST = re.compile(rf"\A(\\*)({_LEAD}*{_MARK})")

# What may open a look-alike tag: angle brackets of other scripts and HTML's escapes of `<`.
_OPENER = re.compile("[<\u02c2\u1438\u2039\u2329\u276c\u276e\u27e8\u29fc\u3008\ufe64\uff1c]"
                     r"|&(?:lt|#0*60|#x0*3c);?", re.IGNORECASE)
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def normalise_tags(text: str) -> str:
    """`text` with every look-alike of a prompt tag rewritten as the plain tag it imitates
    (`＜/conversation\u200b_records` becomes `</conversation_records`), so the escape sees it.
    Plain ASCII tags are left as they are."""
    if text.isascii() and "&" not in text:
        return text
    out: list[str] = []
    done = 0
    for opener in _OPENER.finditer(text):
        if opener.start() < done:
            continue
        found = _tag_after(text, opener.end())
        if found is None:
            continue
        canonical, end = found
        if opener.group() == "<" and text[opener.end():end].isascii():
            continue  # a plain tag: the escape sees it as it stands
        out += [text[done:opener.start()], "<", canonical]
        done = end
    return "".join(out) + text[done:] if out else text


def _tag_after(text: str, at: int) -> tuple[str, int] | None:
    """The plain form of `\\*\\s*/?\\s*NAME` read from `at` through invisible characters and
    compatibility forms (fullwidth letters, slashes), and where it ends; None when the text
    there reads as no tag of the prompt."""
    slashes, slash, name = "", "", ""
    stage = 0  # 0 backslashes, 1 space before /, 2 space after /, 3 the name
    i = at
    while i < len(text):
        char = text[i]
        if _INVISIBLE.match(char):
            i += 1
            continue
        folded = unicodedata.normalize("NFKC", char).casefold()
        if stage == 3 and name in TAGS and folded[:1] not in _NAME_CHARS:
            return f"{slashes}{slash}{name}", i
        if folded == "\\" and stage == 0:
            slashes += "\\"
        elif folded.isspace() and stage < 3:
            stage = max(stage, 1)
        elif folded == "/" and stage < 2:
            slash, stage = "/", 2
        elif folded and all(c in _NAME_CHARS for c in folded) and \
                any(t.startswith(name + folded) for t in TAGS):
            name, stage = name + folded, 3
        else:
            return None
        i += 1
    return (f"{slashes}{slash}{name}", i) if name in TAGS else None


def escape_tags(text: str) -> str:
    """`text` with every opening or closing tag of the prompt's tags, or a look-alike of
    one, made inert."""
    text = normalise_tags(text)
    return _TAG.sub(r"<\\\1\2", text) if "<" in text else text


def unescape_tags(text: str) -> str:
    return _ESCAPED_TAG.sub(r"<\1\2", text) if "<\\" in text else text


def escape_lines(text: str) -> str:
    """`text` with no line that starts like a record header or a call line, whatever break
    starts the line."""
    return _LINE.sub(r"\\\1\2", text)


def escape_start(text: str) -> str:
    """`text`, a piece cut out of a longer one, escaped as `escape_lines` would escape it if
    its start were a line start."""
    return _FIRST.sub(r"\\\1\2", text, count=1)


def unescape_lines(text: str) -> str:
    return _ESCAPED_LINE.sub(r"\1\2", text)
