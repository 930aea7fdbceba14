"""Python literal text (what `str()` of a list of dicts prints), read without evaluating it.

Some agents store a message's tool calls as the Python text of the list. Reading it with
Python's own parser would let input exhaust the stack or memory; here the text is rewritten
token by token into JSON (quotes, True/False/None, tuples) in one regular-expression pass and
read by the same decoder as every other JSON text, with its nesting limit. Only strings,
numbers, True/False/None, lists, tuples and dicts with string keys survive the rewrite.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sessionctx import decoding

_STRING = re.compile(r"""('(?:[^'\\\n]++|\\.)*+'|"(?:[^"\\\n]++|\\.)*+")""", re.S)
_WORD = re.compile(r"(?<![\w.])(True|False|None)(?![\w.])")
_TRAILING_COMMA = re.compile(r",(\s*[\]}])")
_BRACKETS = str.maketrans("()", "[]")
_WORDS = {"True": "true", "False": "false", "None": "null"}
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)", re.S)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a",
           "b": "\b", "f": "\f", "v": "\v", "\n": ""}


class _Bad(Exception):
    pass


def read_literal(text: str) -> Any | None:
    """The value of the Python literal `text`, or None when it is not one this reader takes."""
    try:
        return decoding.decode(_as_json(text))
    except (_Bad, decoding.Malformed):
        return None


def _as_json(text: str) -> bytes:
    """The JSON spelling of `text`: strings re-quoted, the text between them rewritten. What
    is not a literal (a name, a call, an operator) stays as it is and the decoder refuses it.
    Each piece is written out as it is found, so the rewrite holds one copy of the text, not
    a list of its pieces."""
    if "\x00" in text:
        raise _Bad  # never in a literal's text
    out = bytearray()
    at = 0
    for match in _STRING.finditer(text):
        out += _between(text[at:match.start()])
        quoted = match.group()
        inner = quoted[1:-1]
        if "\\" not in inner and '"' not in inner:
            out += b'"' + inner.encode("utf-8", "surrogatepass") + b'"'
        else:
            out += json.dumps(_ESCAPE.sub(_unescape, inner) if "\\" in inner else inner
                              ).encode()
        at = match.end()
    out += _between(text[at:])
    return bytes(out)


def _between(text: str) -> bytes:
    """Text outside strings: tuples as arrays, True/False/None in JSON, no trailing commas."""
    return _TRAILING_COMMA.sub(r"\1", _WORD.sub(_word, text.translate(_BRACKETS))).encode(
        "utf-8", "surrogatepass")


def _word(match: re.Match[str]) -> str:
    return _WORDS[match.group()]


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if code[0] in "xuU" and len(code) > 1:
        value = int(code[1:], 16)
    elif code[0] in "01234567":
        value = int(code, 8)
    elif code in _SIMPLE:
        return _SIMPLE[code]
    else:
        return "\\" + code  # Python keeps an unknown escape as written
    if 0xD800 <= value <= 0xDFFF or value > 0x10FFFF:
        raise _Bad  # not a character JSON can carry
    return chr(value)
