"""The request bodies the proxy found valid, so that the same body sent again (a retry, a
count of its tokens before the request itself) needs no check, and one that extends a known
body by new turns is checked only where it is new (`providers/wire_tail.py`).

A body is matched by its bytes, never by a hash of them: it is the known body's bytes again,
or it begins with the known body's bytes up to the end of some items of its history
(`wire_tail.HISTORY`: Anthropic and Chat `messages`, Responses `input`, Gemini `contents`),
compared where they lie (one `memcmp` each, no copy) and only as far as they are alike, so a
body of another conversation costs next to nothing. Only what follows the shared items is read
as JSON: the new items and the keys written after the history, which with the keys written
before it (the same bytes) must be the known body's other keys. A verdict is thus never
carried to anything it was not given for (a Responses body with `previous_response_id`, which
the proxy never checks, is never remembered, so no body with that key matches). Where each
item ends is found once, when a body checked whole is remembered, after its answer; a body
whose items are not written apart alike is not remembered. Memory is bounded: the least
recently used bodies go first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import msgspec

from sessionctx.providers.wire_tail import HISTORY, TAILED, Tally, extends, tally

_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_LIST = msgspec.json.Decoder(list[msgspec.Raw])
LOOKS = 4  # places the first item's bytes are looked for where the history may begin


@dataclass(frozen=True, slots=True)
class _Entry:
    raw: bytes
    others: dict[str, msgspec.Raw]  # every key but the history, as its bytes
    before: dict[str, msgspec.Raw]  # those of them written before the history
    decoded: dict[str, Any]  # the other keys decoded, for the validator
    ends: list[int]  # where each item of the history ends in `raw`
    sep: bytes  # what the items are written apart with
    tally: Tally


class Known:
    """Valid bodies by API and model, at most `entries` of them and `size` bytes in all."""

    def __init__(self, entries: int = 32, size: int = 256 * 1024 * 1024) -> None:
        self.entries, self.size = entries, size
        # by conversation: API, model, first item and the other keys
        self._by_start: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def valid(self, api: str, model: str | None, raw: bytes) -> bool:
        """Whether `raw` is valid by what is known; False: check it whole."""
        if api not in TAILED:
            return False
        with self._lock:
            known = [(k, e) for k, e in reversed(self._by_start.items())
                     if k[0] == api and k[1] == model]
        for key, entry in known:
            if raw == entry.raw:
                with self._lock:
                    if key in self._by_start:
                        self._by_start.move_to_end(key)
                return True
        for key, entry in known:
            shared = _shared(entry, raw)
            if not shared:
                continue
            try:
                found = _extension(api, model, raw, entry, shared)
            except Exception:  # a shape the window check cannot take: the whole check decides
                return False
            if found is None:  # not this conversation's body after all: its other keys differ
                continue
            valid, extended = found
            if extended is not None:
                self._put(key, extended)
            return valid
        return False

    def remember(self, api: str, model: str | None, raw: bytes, body: dict[str, Any]) -> None:
        """`raw` (decoded: `body`) was checked whole and found valid."""
        history = HISTORY.get(api)
        if history is None or not isinstance(body.get(history), list):
            return
        try:
            laid = _layout(raw, history)
            counted = tally(api, body[history])
        except Exception:
            return
        if laid is None or counted is None or counted.twice:
            return
        first, others, before, ends, sep = laid
        decoded = {k: v for k, v in body.items() if k != history}
        self._put((api, model, first, hash(tuple((k, bytes(v)) for k, v in others.items()))),
                  _Entry(raw, others, before, decoded, ends, sep, counted))

    def _put(self, key: tuple[Any, ...], entry: _Entry) -> None:
        with self._lock:
            old = self._by_start.pop(key, None)
            if old is not None:
                self._bytes -= len(old.raw)
            self._by_start[key] = entry
            self._bytes += len(entry.raw)
            while self._by_start and (len(self._by_start) > self.entries or
                                      self._bytes > self.size):
                _, gone = self._by_start.popitem(last=False)
                self._bytes -= len(gone.raw)


def _shared(entry: _Entry, raw: bytes) -> int:
    """How many items of the known body's history `raw` begins with, byte for byte, what
    comes before them included."""
    view, ends = memoryview(entry.raw), entry.ends

    def alike(count: int) -> bool:
        return raw.startswith(view[:ends[count - 1]])

    if not alike(1):
        return 0
    low, high = 1, len(ends)  # alike(low); the count is at most high
    for count in (high, high - 1, high - 2):  # the usual: a turn more after all or most
        if count <= low:
            break
        if alike(count):
            return count
        high = count - 1
    while low < high:
        mid = (low + high + 1) // 2
        if alike(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _extension(api: str, model: str | None, raw: bytes, entry: _Entry,
               shared: int) -> tuple[bool, _Entry | None] | None:
    """Whether `raw`, whose first `shared` items are `entry`'s, is valid by its tail, and its
    own entry to remember (None when it is not valid, or its items are written apart
    otherwise); None when its other keys are not `entry`'s."""
    at = entry.tally.window(shared)
    if at is None:
        return False, None
    start = entry.ends[at - 1]
    key = HISTORY[api]
    after = _after(raw, start, key)
    if after is None:
        return False, None
    items, rest = after
    if {**entry.before, **rest} != entry.others:
        return None
    window = [msgspec.json.decode(m) for m in items]
    counted = extends(api, model, entry.decoded, window, at, entry.tally)
    if counted is None:
        return False, None
    if not raw.startswith(entry.sep.join([b"", *items]), start):
        return True, None
    ends = [start + n for n in accumulate(len(entry.sep) + len(m) for m in items)]
    return True, _Entry(raw, entry.others, entry.before, entry.decoded, entry.ends[:at] + ends,
                        entry.sep, counted)


def _after(raw: bytes, start: int, key: str) -> tuple[list[msgspec.Raw],
                                                      dict[str, msgspec.Raw]] | None:
    """The items after `start` (the end of an item of the history `key`) and the keys written
    after the history; None when the bytes from `start` on are not that."""
    head = b'{"' + key.encode() + b'":'
    doc = head + b"[0" + raw[start:]  # the history's first items as one 0
    try:
        rest = _TOP.decode(doc)
    except msgspec.DecodeError:
        return None
    history = rest.pop(key, None)
    if history is None or not doc.startswith(history, len(head)):  # not ours: a later key
        return None
    return _LIST.decode(history)[1:], rest


def _layout(raw: bytes, key: str) -> tuple[bytes, dict[str, msgspec.Raw],
                                           dict[str, msgspec.Raw], list[int], bytes] | None:
    """The body's first item of the history under `key`, its other keys, those of them written
    before the history, where each item ends and what they are written apart with; None when
    they are not written apart alike."""
    others = _TOP.decode(raw)
    history = others.pop(key, None)
    items = _LIST.decode(history) if history is not None else []
    if not items:
        return None
    first = bytes(items[0])
    begin = raw.find(first)
    for _ in range(LOOKS):  # the same bytes may come earlier, under another key
        if begin < 0:
            return None
        found = _laid(raw, key, items, begin, others)
        if found is not None:
            before, ends, sep = found
            # copies: the memory keeps each body's bytes by its own entry only
            return first, {k: v.copy() for k, v in others.items()}, before, ends, sep
        begin = raw.find(first, begin + 1)
    return None


def _laid(raw: bytes, key: str, items: list[msgspec.Raw], begin: int,
          others: dict[str, msgspec.Raw]) -> tuple[dict[str, msgspec.Raw], list[int],
                                                   bytes] | None:
    """The keys before the history, where its items end and what is between them, when they
    are written from `begin` on; else None."""
    sep = b","
    if len(items) > 1:
        end = begin + len(items[0])
        sep = raw[end:raw.find(bytes(items[1]), end)]
        if sep.strip() != b",":
            return None
    if not raw.startswith(sep.join(items), begin):
        return None
    opening = raw[:begin].rstrip()
    if not opening.endswith(b"["):
        return None
    try:
        before = _TOP.decode(opening[:-1] + b"0}")
    except msgspec.DecodeError:
        return None
    if before.pop(key, None) != msgspec.Raw(b"0"):
        return None  # the items found are not the history's
    ends = [begin + n - len(sep) for n in accumulate(len(sep) + len(m) for m in items)]
    after = _after(raw, ends[-1], key)
    if after is None or after[0] or {**before, **after[1]} != others:
        return None
    return before, ends, sep
