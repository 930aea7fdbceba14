"""The request bodies the proxy found valid, so that the same body sent again (a retry, a
count of its tokens before the request itself) needs no check, and one that extends a known
body by new turns is checked only where it is new (`providers/wire_tail.py`).

A body is matched by its bytes: its keys besides the history (`wire_tail.HISTORY`: Anthropic
and Chat `messages`, Responses `input`, Gemini `contents`) must be the same bytes as the known
body's, and the shared messages are the messages whose bytes are the same, so a verdict is
never carried to anything it was not given for (a Responses body with `previous_response_id`,
which the proxy never checks, is never remembered, so no body with that key matches). Bodies
are read as JSON text split into the raw bytes of each key and message (msgspec `Raw`),
without building the objects of the history; only the window's messages are decoded. Memory
is bounded: the least recently used bodies go first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import msgspec

from sessionctx.providers.wire_tail import HISTORY, TAILED, Tally, extends, tally

_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_LIST = msgspec.json.Decoder(list[msgspec.Raw])


@dataclass(frozen=True, slots=True)
class _Entry:
    raw: bytes
    others: dict[str, msgspec.Raw]  # every key but the history, as its bytes
    decoded: dict[str, Any]  # the same keys decoded, for the validator
    messages: list[msgspec.Raw]  # the history's items (messages, input items, contents)
    tally: Tally


class Known:
    """Valid bodies by API and model, at most `entries` of them and `size` bytes in all."""

    def __init__(self, entries: int = 32, size: int = 256 * 1024 * 1024) -> None:
        self.entries, self.size = entries, size
        self._by_start: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()
        self._exact: dict[tuple[str, str | None, bytes], tuple[Any, ...]] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        # the split of the last body `valid` could not vouch for: the whole check comes next,
        # and `remember` of the same bytes object takes it rather than split them again
        self._unknown: tuple[bytes, _Split | None] | None = None

    def valid(self, api: str, model: str | None, raw: bytes) -> bool:
        """Whether `raw` is valid by what is known; False: check it whole."""
        if api not in TAILED:
            return False
        with self._lock:
            same = self._exact.get((api, model, raw))
            if same is not None:
                self._by_start.move_to_end(same)
                return True
        try:
            split = _split(raw, HISTORY[api])
            self._unknown = (raw, split)
            if split is None:
                return False
            others, messages = split
            key = _key(api, model, others, messages)
            with self._lock:
                entry = self._by_start.get(key)
            if entry is None or entry.others != others:
                return False
            at = entry.tally.window(_shared(entry.messages, messages))
            if at is None:
                return False
            window = [msgspec.json.decode(m) for m in messages[at:]]
            counted = extends(api, model, entry.decoded, window, at, entry.tally)
        except Exception:  # a shape the window check cannot take: the whole check decides
            return False
        if counted is None:
            return False
        self._unknown = None
        self._put(api, model, key, _Entry(raw, others, entry.decoded, messages, counted))
        return True

    def remember(self, api: str, model: str | None, raw: bytes, body: dict[str, Any]) -> None:
        """`raw` (decoded: `body`) was checked whole and found valid."""
        history = HISTORY.get(api)
        if history is None or not isinstance(body.get(history), list):
            return
        unknown, self._unknown = self._unknown, None
        try:
            split = unknown[1] if unknown is not None and unknown[0] is raw else \
                _split(raw, history)
            counted = tally(api, body[history])
        except Exception:
            return
        if split is None or counted is None or counted.twice:
            return
        others, messages = split
        decoded = {k: v for k, v in body.items() if k != history}
        self._put(api, model, _key(api, model, others, messages),
                  _Entry(raw, others, decoded, messages, counted))

    def _put(self, api: str, model: str | None, key: tuple[Any, ...], entry: _Entry) -> None:
        with self._lock:
            old = self._by_start.pop(key, None)
            if old is not None:
                self._forget(api, model, old)
            self._by_start[key] = entry
            self._exact[(api, model, entry.raw)] = key
            self._bytes += len(entry.raw)
            while self._by_start and (len(self._by_start) > self.entries or
                                      self._bytes > self.size):
                gone_key, gone = self._by_start.popitem(last=False)
                self._forget(gone_key[0], gone_key[1], gone)

    def _forget(self, api: str, model: str | None, entry: _Entry) -> None:
        self._exact.pop((api, model, entry.raw), None)
        self._bytes -= len(entry.raw)


_Split = tuple[dict[str, msgspec.Raw], list[msgspec.Raw]]


def _split(raw: bytes, key: str) -> _Split | None:
    """The body's keys but the history (under `key`), and its items, each as its bytes."""
    top = _TOP.decode(raw)
    history = top.pop(key, None)
    if history is None:
        return None
    messages = _LIST.decode(history)
    return (top, messages) if messages else None


def _key(api: str, model: str | None, others: dict[str, msgspec.Raw],
         messages: list[msgspec.Raw]) -> tuple[Any, ...]:
    """A conversation's key: its API, model, first message and other keys."""
    return (api, model, bytes(messages[0]),
            hash(tuple((k, bytes(v)) for k, v in others.items())))


def _shared(old: list[msgspec.Raw], new: list[msgspec.Raw]) -> int:
    """How many messages the two histories begin with alike."""
    if len(new) >= len(old) and new[:len(old)] == old:
        return len(old)
    low, high = 0, min(len(old), len(new))  # old[:low] is shared; old[:high + 1] is not
    while low < high:
        mid = (low + high + 1) // 2
        if new[:mid] == old[:mid]:
            low = mid
        else:
            high = mid - 1
    return low
