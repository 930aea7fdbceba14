"""Python literal text (what `str()` of a list of dicts prints), read without evaluating it.

Some agents store a message's tool calls as the Python text of the list. Reading it with
Python's own parser would let input exhaust the stack or memory; this reader takes only
strings, numbers, True/False/None, lists, tuples and dicts, in one pass with its own stack,
nested at most as deeply as a JSON record may be.
"""

from __future__ import annotations

import re
from typing import Any

from sessionctx.decoding import MAX_DEPTH

_SPACE = re.compile(r"\s*")
_STRING = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*\"""", re.S)
_NUMBER = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_WORDS = {"None": None, "True": True, "False": False}
_WORD = re.compile(r"None|True|False")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)", re.S)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a",
           "b": "\b", "f": "\f", "v": "\v", "\n": ""}
_OPEN = {"[": "]", "(": ")", "{": "}"}


class _Bad(Exception):
    pass


def read_literal(text: str) -> Any | None:
    """The value of the Python literal `text`, or None when it is not one this reader takes."""
    try:
        return _Reader(text).value()
    except _Bad:
        return None


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


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def _skip(self) -> None:
        match = _SPACE.match(self.text, self.pos)
        self.pos = match.end() if match else self.pos

    def _scalar(self) -> Any:
        text, pos = self.text, self.pos
        for pattern in (_STRING, _NUMBER, _WORD):
            match = pattern.match(text, pos)
            if match:
                self.pos = match.end()
                token = match.group()
                if pattern is _STRING:
                    return _ESCAPE.sub(_unescape, token[1:-1])
                if pattern is _WORD:
                    return _WORDS[token]
                return float(token) if any(c in token for c in ".eE") else int(token)
        raise _Bad

    def value(self) -> Any:
        """One value: containers are kept on an explicit stack of (container, closer, key)."""
        stack: list[tuple[list[Any] | dict[Any, Any], str, list[Any]]] = []
        result: Any = None
        while True:
            self._skip()
            char = self.text[self.pos:self.pos + 1]
            if char in _OPEN:
                if len(stack) >= MAX_DEPTH:
                    raise _Bad
                self.pos += 1
                stack.append(({} if char == "{" else [], _OPEN[char], []))
                self._skip()
                if self.text.startswith(_OPEN[char], self.pos):
                    self.pos += 1
                    item: Any = stack.pop()[0]
                else:
                    continue
            else:
                item = self._scalar()
            while True:  # place the finished item in its container, closing what ends
                if not stack:
                    self._skip()
                    if self.pos != len(self.text):
                        raise _Bad
                    result = item
                    return result
                container, closer, key = stack[-1]
                self._skip()
                if isinstance(container, dict):
                    if not key:
                        if not self.text.startswith(":", self.pos) or isinstance(
                                item, list | dict):
                            raise _Bad
                        self.pos += 1
                        key.append(item)
                        break
                    container[key.pop()] = item
                else:
                    container.append(item)
                if self.text.startswith(",", self.pos):
                    self.pos += 1
                    self._skip()
                    if not self.text.startswith(closer, self.pos):
                        break
                if not self.text.startswith(closer, self.pos):
                    raise _Bad
                self.pos += 1
                item = stack.pop()[0]
