"""A history that extends one already found valid, checked only where it is new.

Agents resend the whole history with a turn more. When the items before some point are those
of a body the provider's validator passed (same model, same other keys), the validator
(`wire.violations`, the one home of the rules) only needs to see the window from a point both
bodies share where no rule of that API looks further back ("a start"), with what the earlier
items count towards request-wide rules carried over as a `Tally`, so the verdict is the one the
validator gives for the whole body. Where a window may start, and what is carried, per API:

- Anthropic Messages: a user prompt (a user message with no tool result), where no call is
  waiting and from where a turn's rules (pairing, placement, thinking, prefill) look no further
  back; carried: unique call ids, images, cache breakpoints. The pixel limit an image is held
  to depends on the request's image count: the window's images are checked against the limit
  for the whole body's count, and a body whose count changes the limit the earlier images were
  checked against is checked whole. (A tool block needs definitions:
  the earlier body had the same, so its blocks had them.)
- OpenAI Chat: any message but a `tool` one (the pairing of calls with tool messages runs from
  an assistant message through the tool messages right after it); carried: unique call ids.
- OpenAI Responses: an item no call waits at (every earlier function_call answered) that is not
  one the model wrote, or is reasoning (a function_call with an item id looks back over the
  model's items to its reasoning, and stops at either); carried: the call ids, so a call id
  used again is found (an output for a call answered before the window has no call in the
  window, which the validator refuses as it refuses a second output in the whole body).
  `instructions` is a key like the others: the same bytes, checked with the window.
- Gemini: a user turn with no function response (a turn's rules look one turn back, to the
  calls a response answers); nothing is carried: its validator counts nothing request-wide.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sessionctx.providers.anthropic_checks import CACHE, breakpoints, marked_blocks
from sessionctx.providers.openai_responses import item_kind, model_item
from sessionctx.providers.policies.image_limits import oversized, pixel_limit
from sessionctx.providers.registry import provider as registered
from sessionctx.providers.wire import (
    ANTHROPIC,
    GEMINI,
    HISTORY_KEYS,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    violations,
)
from sessionctx.providers.wire_read import rules_model

__all__ = ["HISTORY", "TAILED", "Tally", "extends", "tally"]

# the APIs whose bodies can be checked at their tail, and the key of each one's list of items
TAILED = frozenset({ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES, GEMINI})
HISTORY = {api: HISTORY_KEYS[api][0] for api in TAILED}


@dataclass(frozen=True, slots=True)
class Tally:
    """What a history counts: `images[i]` and `marks[i]` (cache breakpoints) over its first i
    items (Anthropic; zero elsewhere); each call id with the item that holds it; the items a
    window may start at, in order; whether a call id came twice."""

    images: list[int]
    marks: list[int]
    ids: dict[str, int]
    starts: list[int]
    twice: bool = False

    def window(self, shared: int) -> int | None:
        """Where the check of a history whose first `shared` items are this one's starts: the
        last start before them (None: none after the first item)."""
        k = bisect_left(self.starts, shared) - 1
        return self.starts[k] if k >= 0 and self.starts[k] > 0 else None


@dataclass(slots=True)
class _Count:
    """A tally being counted; `waiting`: the call ids no output has answered yet (Responses)."""

    images: list[int]
    marks: list[int]
    ids: dict[str, int]
    starts: list[int]
    waiting: set[str] = field(default_factory=set)
    twice: bool = False

    def call(self, cid: Any, i: int) -> None:
        if isinstance(cid, str):
            self.twice = self.twice or cid in self.ids
            self.ids.setdefault(cid, i)
            self.waiting.add(cid)


def tally(api: str, items: list[Any], base: Tally | None = None, at: int = 0) -> Tally | None:
    """`base`'s counts of the first `at` items (`at` one of its starts) with `items` (those
    from `at` on) counted; None for an item whose shape the counts do not cover (the body is
    then checked whole)."""
    if base is None or at == 0:
        count = _Count([0], [0], {}, [])
    else:  # at a start no call waits
        count = _Count(base.images[:at + 1], base.marks[:at + 1],
                       {k: v for k, v in base.ids.items() if v < at},
                       base.starts[:bisect_left(base.starts, at)])
    step = _STEPS[api]
    for i, item in enumerate(items, at):
        count.images.append(count.images[-1])  # the step adds those of item i to these
        count.marks.append(count.marks[-1])
        if type(item) is not dict or not step(item, i, count):
            return None
    return Tally(count.images, count.marks, count.ids, count.starts, count.twice)


def _anthropic(m: dict[str, Any], i: int, count: _Count) -> bool:
    role, content = m.get("role"), m.get("content")
    result = False
    if role != "system" and type(content) is list:  # a system aside is not checked
        for b in content:
            if type(b) is not dict:
                return False
            kind = b.get("type")
            count.marks[-1] += len(marked_blocks(b))
            if kind == "image":
                count.images[-1] += 1
            elif kind == "tool_result":
                result = True
                inner = b.get("content")
                for x in inner if type(inner) is list else ():
                    if type(x) is not dict or x.get("type") in ("tool_use", "tool_result"):
                        return False
                    count.images[-1] += x.get("type") == "image"
            elif kind == "tool_use":
                count.call(b.get("id"), i)
    if role == "user" and not result:
        count.starts.append(i)
    return True


def _chat(m: dict[str, Any], i: int, count: _Count) -> bool:
    role = m.get("role")
    if role != "tool":
        count.starts.append(i)
    if role == "assistant":
        calls = m.get("tool_calls") or []
        if type(calls) is not list:
            return False
        for c in calls:
            if type(c) is not dict:
                return False
            count.call(c.get("id"), i)
    return True


def _responses(item: dict[str, Any], i: int, count: _Count) -> bool:
    kind = item_kind(item)  # a message may leave its type out
    if not count.waiting and (kind == "reasoning" or not model_item(item)):
        count.starts.append(i)
    if kind == "function_call":
        count.call(item.get("call_id"), i)
    elif kind == "function_call_output" and isinstance(item.get("call_id"), str):
        # an output for a call answered before the window has no call in it: the validator
        # refuses it there as it refuses a second output in the whole body
        count.waiting.discard(item["call_id"])
    return True


def _gemini(c: dict[str, Any], i: int, count: _Count) -> bool:
    parts = c.get("parts")
    if type(parts) is not list or any(type(p) is not dict for p in parts):
        return False
    if c.get("role") == "user" and not any("functionResponse" in p for p in parts):
        count.starts.append(i)
    return True


_STEPS: dict[str, Callable[[dict[str, Any], int, _Count], bool]] = {
    ANTHROPIC: _anthropic, OPENAI_CHAT: _chat, OPENAI_RESPONSES: _responses, GEMINI: _gemini}


def extends(api: str, model: str | None, others: dict[str, Any], window: list[Any], at: int,
            prior: Tally) -> Tally | None:
    """The tally of a body whose first `at` items are those `prior` counted in a valid body
    with the same `others` (every key but the history) and `model` (None: the body's own),
    `at` being `prior.window(...)`, and whose items from `at` on are `window`; None when the
    body breaks a rule (or cannot be counted)."""
    if api not in TAILED or at <= 0:
        return None
    model = model if model is not None else rules_model(api, others)
    counted = tally(api, window, prior, at)
    if counted is None or counted.twice:
        return None
    if violations(api, {**others, HISTORY[api]: window}, model, from_text=True):
        return None
    if api != ANTHROPIC:
        return counted
    cap, _ = registered(api).capability(model)
    if cap.max_images is not None and counted.images[-1] > cap.max_images:
        return None
    images = counted.images[-1]
    px = pixel_limit(cap, images)
    if px != pixel_limit(cap, prior.images[-1]):
        return None  # the images before the window were held to another limit
    if px != pixel_limit(cap, images - counted.images[at]) and oversized(
            list(_anthropic_images(window)), cap, images):
        return None  # the window's images were checked against the limit for fewer
    tools = len(breakpoints({"tools": others.get("tools")}))
    marks = counted.marks[-1] + tools + (CACHE in others)
    if cap.max_cache_breakpoints is not None and marks > cap.max_cache_breakpoints:
        return None
    return counted


def _anthropic_images(window: list[Any]) -> Iterator[tuple[str, Any]]:
    """The path and data of each image of an Anthropic window, those of results too (the
    window is one `tally` counted, so its messages are objects; a system aside's blocks are
    not counted, and not read here)."""
    for i, m in enumerate(window):
        content = m.get("content") if m.get("role") != "system" else None
        for j, b in enumerate(content if type(content) is list else ()):
            inner = b.get("content") if b.get("type") == "tool_result" else None
            for k, x in [(None, b), *enumerate(inner if type(inner) is list else ())]:
                if x.get("type") == "image" and isinstance(x.get("source"), dict):
                    where = f"[{i}].content[{j}]" + ("" if k is None else f".content[{k}]")
                    yield where, x["source"].get("data")
