"""A history that extends one already found valid, checked only where it is new.

Agents resend the whole history with a turn more. When the messages before some point are
those of a body the provider's validator passed (same model, same other keys), the validator
(`wire.violations`, the one home of the rules) only needs to see the window from the last
user prompt the two bodies share: a user message with no tool result, where no call is
waiting and from where a turn's rules (pairing, placement, thinking, prefill) look no further
back. What the earlier messages count towards request-wide limits (unique call ids, images,
cache breakpoints) is carried over as a `Tally`, so the verdict is the one the validator
gives for the whole body. (A tool block needs definitions: the earlier body had the same, so
its blocks had them.) Anthropic Messages only: other
bodies are checked whole.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

from sessionctx.providers.anthropic import CACHE, _breakpoints, _marked
from sessionctx.providers.registry import provider as registered
from sessionctx.providers.wire import ANTHROPIC, _model, violations

__all__ = ["TAILED", "Tally", "extends", "tally"]

TAILED = frozenset({ANTHROPIC})  # the APIs whose bodies can be checked at their tail


@dataclass(frozen=True, slots=True)
class Tally:
    """What a history counts: `images[i]` and `marks[i]` (cache breakpoints) over its first i
    messages; each call id with the message that holds it; the user prompts (messages with no
    tool result) in order; whether a call id came twice."""

    images: list[int]
    marks: list[int]
    ids: dict[str, int]
    prompts: list[int]
    twice: bool = False

    def window(self, shared: int) -> int | None:
        """Where the check of a history whose first `shared` messages are this one's starts:
        the last prompt before them (None: none after the first message)."""
        k = bisect_left(self.prompts, shared) - 1
        return self.prompts[k] if k >= 0 and self.prompts[k] > 0 else None


def tally(messages: list[Any], base: Tally | None = None, at: int = 0) -> Tally | None:
    """`base`'s counts of the first `at` messages with `messages` (those from `at` on) counted;
    None for a message whose shape the counts do not cover (the body is then checked whole)."""
    if base is None or at == 0:
        images, marks, ids, prompts = [0], [0], {}, []
    else:
        images, marks = base.images[:at + 1], base.marks[:at + 1]
        ids = {k: v for k, v in base.ids.items() if v < at}
        prompts = base.prompts[:bisect_left(base.prompts, at)]
    seen_images, seen_marks, twice = images[-1], marks[-1], False
    for i, m in enumerate(messages, at):
        if type(m) is not dict:
            return None
        role, content = m.get("role"), m.get("content")
        result = False
        if role != "system" and type(content) is list:  # a system aside is not checked
            for b in content:
                if type(b) is not dict:
                    return None
                kind = b.get("type")
                seen_marks += len(_marked(b))
                if kind == "image":
                    seen_images += 1
                elif kind == "tool_result":
                    result = True
                    inner = b.get("content")
                    for x in inner if type(inner) is list else ():
                        if type(x) is not dict or x.get("type") in ("tool_use", "tool_result"):
                            return None
                        seen_images += x.get("type") == "image"
                elif kind == "tool_use" and isinstance(b.get("id"), str):
                    twice = twice or b["id"] in ids
                    ids.setdefault(b["id"], i)
        if role == "user" and not result:
            prompts.append(i)
        images.append(seen_images)
        marks.append(seen_marks)
    return Tally(images, marks, ids, prompts, twice)


def extends(api: str, model: str | None, others: dict[str, Any], window: list[Any], at: int,
            prior: Tally) -> Tally | None:
    """The tally of a body whose first `at` messages are those `prior` counted in a valid body
    with the same `others` (every key but the history) and `model` (None: the body's own),
    `at` being `prior.window(...)`, and whose messages from `at` on are `window`; None when the
    body breaks a rule (or cannot be counted)."""
    if api not in TAILED or at <= 0:
        return None
    model = model if model is not None else _model(others)
    counted = tally(window, prior, at)
    if counted is None or counted.twice:
        return None
    if violations(api, {**others, "messages": window}, model, from_text=True):
        return None
    cap, _ = registered(api).capability(model)
    if cap.max_images is not None and counted.images[-1] > cap.max_images:
        return None
    tools = len(_breakpoints({"tools": others.get("tools")}))
    marks = counted.marks[-1] + tools + (CACHE in others)
    if cap.max_cache_breakpoints is not None and marks > cap.max_cache_breakpoints:
        return None
    return counted
