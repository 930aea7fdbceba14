"""The check of a history at its tail (providers/wire_tail.py) and the proxy's memory of valid
bodies (proxy/known.py) give the validator's own verdict: on generated bodies of each API
(Anthropic here, the others from tests/tail_bodies.py), valid and broken, a body that extends a
valid one is valid by the tail check exactly when `wire.violations` finds nothing in the whole
body, and the counts carried over are those of a count of the whole body."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from sessionctx.providers.policies.image_limits import pixel_limit
from sessionctx.providers.registry import provider as registered
from sessionctx.providers.wire import violations
from sessionctx.providers.wire_tail import HISTORY, Tally, extends, tally
from sessionctx.proxy.known import Known
from tests.tail_bodies import GENERATED

CACHE = {"type": "ephemeral"}
IDS = ["toolu_a", "toolu_b", "toolu_c", "toolu_d", "bad id!"]
FAULT = 0.03  # the chance of each fault the generators can make


def _bad(rng: random.Random) -> bool:
    return rng.random() < FAULT


def _text(rng: random.Random) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": " " if _bad(rng) else rng.choice(
        ["hi", "é word", "go"])}
    if rng.random() < 0.15:
        block["cache_control"] = CACHE
    return block


def _image(rng: random.Random | None) -> dict[str, Any]:
    """An image (with `rng`, at times of a type the API refuses)."""
    bad = rng is not None and _bad(rng)
    return {"type": "image", "source": {"type": "base64", "data": "AA==",
                                        "media_type": "image/bmp" if bad else "image/png"}}


def _result(rng: random.Random, cid: str) -> dict[str, Any]:
    content: Any = rng.choice(["out", "", [_text(rng)], [_text(rng), _image(rng)], None])
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": cid}
    if content is not None:
        block["content"] = content
    if rng.random() < 0.1:
        block["is_error"] = True
    return block


def _turn(rng: random.Random, thinking: bool, used: list[str]) -> list[dict[str, Any]]:
    """A user prompt, calls and their results, an answer; mostly valid."""
    prompt: Any = rng.choice(["do it", "next é", [_text(rng)], [_text(rng), _image(rng)]])
    if _bad(rng):
        prompt = rng.choice(["", " ", []])
    elif rng.random() < 0.15:
        prompt = [_image(None) for _ in range(rng.randint(30, 70))]  # towards the image limit
    out = [{"role": "user", "content": prompt}]
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        calls: list[dict[str, Any]] = []
        for _ in range(rng.choice([1, 1, 2])):
            cid = rng.choice(used or IDS) if _bad(rng) else f"toolu_{len(used)}"
            used.append(cid)
            calls.append({"type": "tool_use", "id": cid, "name": "b@d" if _bad(rng) else "ls",
                          "input": "x" if _bad(rng) else {}})
        head = [{"type": "thinking", "thinking": "t", "signature": "" if _bad(rng) else "s"}
                ] if thinking != _bad(rng) else []
        out.append({"role": "assistant", "content": head + [_text(rng)] * rng.randint(0, 1) +
                    calls})
        results = [_result(rng, c["id"]) for c in calls]
        if _bad(rng):
            results = results[:-1]  # an unanswered call
        if _bad(rng):
            results.reverse()
        if _bad(rng):
            results.append(_text(rng))
            rng.shuffle(results)
        out.append({"role": "user", "content": results + [_text(rng)] * rng.randint(0, 1)})
    if rng.random() < 0.05:
        out.append({"role": "system", "content": "an aside"})
    answer: Any = rng.choice(["done", [_text(rng)], [{"type": "web_search", "q": 1}]])
    out.append({"role": "assistant", "content": [] if _bad(rng) else answer})
    if _bad(rng):
        out.append({"role": rng.choice(["assistant", "user"]), "content": "again"})
    return out


def _body(rng: random.Random) -> dict[str, Any]:
    thinking = rng.random() < 0.3
    used: list[str] = []
    messages: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 5)):
        messages += _turn(rng, thinking, used)
    if rng.random() < 0.7:  # the next prompt
        messages.append({"role": "user", "content": [_text(rng)]})
    body: dict[str, Any] = {"model": rng.choice(["claude-sonnet-4-5", "claude-opus-4-6"]),
                            "max_tokens": 9, "messages": messages}
    if rng.random() < 0.9:
        body["tools"] = [{"name": "ls", "input_schema": {"type": "object"}}] + (
            [{"name": "b@d", "input_schema": {"type": "object"}, "cache_control": CACHE}]
            if rng.random() < 0.2 else [])
    if thinking:
        body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    if _bad(rng):
        body["tool_choice"] = {"type": "any"}
    if rng.random() < 0.1:
        body["cache_control"] = CACHE
    return body


def _valid(body: dict[str, Any]) -> bool:
    return not violations("anthropic", body, body["model"], from_text=True)


def _grown(rng: random.Random, old: dict[str, Any]) -> dict[str, Any]:
    """`old` resent as agents resend it: the same messages or fewer, a turn or more after
    (maybe broken), a cache breakpoint moved to the new last message."""
    messages = [json.loads(json.dumps(m)) for m in old["messages"]]
    cut = len(messages) - rng.choice([0, 0, 0, 1, 2, rng.randint(0, len(messages))])
    messages = messages[:max(cut, 1)]
    if rng.random() < 0.3 and isinstance(messages[-1]["content"], list):
        for b in messages[-1]["content"]:
            b.pop("cache_control", None)
    used = [b["id"] for m in messages if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_use"]
    if messages[-1]["role"] == "user" and rng.random() < 0.8:
        messages.append({"role": "assistant", "content": [_text(rng)]})
    for _ in range(rng.randint(0, 2)):
        messages += _turn(rng, "thinking" in old, used)
    if rng.random() < 0.7:
        messages.append({"role": "user", "content": [_text(rng)]})
    return {**old, "messages": messages}


def _shared(old: list[Any], new: list[Any]) -> int:
    n = 0
    while n < min(len(old), len(new)) and old[n] == new[n]:
        n += 1
    return n


ALL = {"anthropic": ("claude-sonnet-4-5", _body, _grown), **GENERATED}


def _crosses_the_pixel_rule(api: str, model: str, counted: Tally, items: list[Any]) -> bool:
    """Whether the new history's image count gives another pixel limit than the old one's."""
    now = tally(api, items)
    cap = registered(api).capability(model)[0]
    return now is not None and pixel_limit(cap, now.images[-1]) != pixel_limit(
        cap, counted.images[-1])


@pytest.mark.parametrize("api", sorted(ALL))
def test_the_tail_check_agrees_with_the_whole_validator(api):
    model, make, grow = ALL[api]
    key = HISTORY[api]
    verdicts = {True: 0, False: 0}
    for seed in range(2500):
        rng = random.Random(seed)
        old = make(rng)
        counted = tally(api, old[key])
        if violations(api, old, model, from_text=True) or counted is None:
            continue
        new = grow(rng, old)
        at = counted.window(_shared(old[key], new[key]))
        if at is None:
            continue
        others = {k: v for k, v in new.items() if k != key}
        found = violations(api, new, model, from_text=True)
        tail = extends(api, model, others, new[key][at:], at, counted)
        if _crosses_the_pixel_rule(api, model, counted, new[key]):
            assert tail is None  # the earlier images were held to another limit: checked whole
            continue
        assert (tail is not None) == (not found), (seed, at, found)
        verdicts[not found] += 1
        if tail is not None:  # the carried counts are those of the whole body
            again = tally(api, new[key])
            assert again is not None
            assert (tail.images, tail.marks, tail.ids, tail.starts) == (
                again.images, again.marks, again.ids, again.starts)
    assert verdicts[True] > 150 and verdicts[False] > 150, verdicts


def _raw(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode()


@pytest.mark.parametrize("api", sorted(ALL))
def test_known_bodies_answer_as_the_validator_does(api):
    model, make, grow = ALL[api]
    checked = {True: 0, False: 0}
    for seed in range(1500):
        rng = random.Random(seed)
        old = make(rng)
        if violations(api, old, model, from_text=True):
            continue
        known = Known()
        raw = _raw(old)
        assert not known.valid(api, model, raw)  # nothing is known yet
        known.remember(api, model, raw, json.loads(raw))
        assert known.valid(api, model, bytes(bytearray(raw)))  # the same bytes again
        new = grow(rng, old)
        said = known.valid(api, model, _raw(new))
        # never valid where the validator finds a fault
        assert not said or not violations(api, new, model, from_text=True), seed
        checked[said] += 1
        if said:  # and the new body is known in its turn
            assert known.valid(api, model, _raw(new))
    assert checked[True] > 100 and checked[False] > 50, checked


def test_a_body_is_only_known_with_the_same_other_keys_and_model():
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 9,
                            "messages": [{"role": "user", "content": "hi"},
                                         {"role": "assistant", "content": "yes"},
                                         {"role": "user", "content": "and?"}]}
    known = Known()
    known.remember("anthropic", None, _raw(body), body)
    turn = [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "go"}]
    assert known.valid("anthropic", None, _raw({**body, "messages": body["messages"] + turn}))
    assert not known.valid("anthropic", "claude-opus-4-6", _raw(body))
    for other in ({**body, "max_tokens": 10}, {**body, "tools": []}):
        assert not known.valid("anthropic", None, _raw(other))
    # the same history spelt with other spacing is other bytes: checked whole
    assert not known.valid("anthropic", None, json.dumps(body, indent=1).encode())


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "gemini"])
def test_a_history_under_another_key_or_of_another_shape_is_checked_whole(api):
    """Each API's history is under its own key; a Responses input given as a string, or an
    API the memory does not take, is not remembered."""
    body = {"model": "gpt-5.1", "messages": [{"role": "user", "content": "hi"}],
            "input": [{"role": "user", "content": "hi"}],
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    known = Known()
    known.remember(api, None, _raw(body), body)
    assert known.valid(api, None, _raw(body))
    others = [{k: v for k, v in body.items() if k != HISTORY[api]}]
    if api == "openai-responses":
        others.append({**body, "input": "hi"})
    for other in others:
        known = Known()
        known.remember(api, None, _raw(other), other)
        assert not known.valid(api, None, _raw(other))
    known = Known()
    known.remember("bedrock", None, _raw(body), body)
    assert not known.valid("bedrock", None, _raw(body))


def test_memory_is_bounded():
    known = Known(entries=3)
    bodies = [{"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": f"{i}"}]}
              for i in range(5)]
    for b in bodies:
        known.remember("anthropic", None, _raw(b), b)
    assert [known.valid("anthropic", None, _raw(b)) for b in bodies] == [
        False, False, True, True, True]
    small = Known(size=100)
    big = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "x" * 200}]}
    small.remember("anthropic", None, _raw(big), big)
    assert not small.valid("anthropic", None, _raw(big))


def test_images_and_breakpoints_before_the_window_count_towards_the_limits():
    """99 images in the earlier results (nested in a tool result) and two more in the new turn
    make 101, over the limit of 100, though the window holds two."""
    results = [{"type": "tool_result", "tool_use_id": f"toolu_{i}",
                "content": [_image(None)] * 33} for i in range(3)]
    old: dict[str, Any] = {"model": "claude-sonnet-4-5", "tools": [{"name": "ls", "input_schema": {
        "type": "object"}}], "messages": [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "ls",
                                           "input": {}} for i in range(3)]},
        {"role": "user", "content": results},
        {"role": "assistant", "content": [{"type": "text", "text": "seen",
                                           "cache_control": CACHE}]},
        {"role": "user", "content": [{"type": "text", "text": "and?", "cache_control": CACHE}]}]}
    counted = tally("anthropic", old["messages"])
    assert _valid(old) and counted is not None and counted.images[-1] == 99
    at = counted.window(len(old["messages"]))
    assert at == 4
    others = {k: v for k, v in old.items() if k != "messages"}
    for extra, ok in (([_image(None)], True), ([_image(None)] * 2, False)):
        new = old["messages"] + [{"role": "assistant", "content": "ok"},
                                 {"role": "user", "content": extra}]
        assert _valid({**old, "messages": new}) is ok
        assert (extends("anthropic", None, others, new[at:], at, counted) is not None) is ok
    marked = [{"type": "text", "text": "x", "cache_control": CACHE}]
    new = [*old["messages"][:at], {"role": "user", "content": "and?"},
           {"role": "assistant", "content": marked * 3}, {"role": "user", "content": marked}]
    assert counted.window(at + 1) == at
    assert not _valid({**old, "messages": new})  # five breakpoints: four in the window
    assert extends("anthropic", None, others, new[at:], at, counted) is None


def _step(i: int, call: str | None = None) -> list[dict[str, Any]]:
    cid = call or f"call_{i}"
    return [{"type": "reasoning", "id": f"rs_{i}", "summary": [], "encrypted_content": "e"},
            {"type": "function_call", "id": f"fc_{i}", "call_id": cid, "name": "ls",
             "arguments": "{}"},
            {"type": "function_call_output", "call_id": cid, "output": "out"}]


def test_a_responses_window_starts_where_no_call_waits_and_knows_the_earlier_calls():
    """In a Codex loop the window is the last step (from its reasoning, where no call waits);
    a call id used before the window, or an output for a call answered before it, is refused
    as the whole check refuses it."""
    api, key = "openai-responses", "input"
    old: dict[str, Any] = {"model": "gpt-5.1", "instructions": "be brief",
                           "input": [{"role": "user", "content": "go"}, *_step(0), *_step(1)]}
    counted = tally(api, old[key])
    assert not violations(api, old, "gpt-5.1") and counted is not None
    assert counted.starts == [0, 1, 4] and counted.ids == {"call_0": 2, "call_1": 5}
    at = counted.window(len(old[key]))
    assert at == 4  # the reasoning of the last step: its call is answered after it
    others = {"model": "gpt-5.1", "instructions": "be brief"}
    for extra, ok in ((_step(2), True), (_step(2, "call_0"), False),
                      ([{"type": "function_call_output", "call_id": "call_0", "output": "x"}],
                       False)):
        new = {**old, key: old[key] + extra}
        assert (not violations(api, new, "gpt-5.1")) is ok
        assert (extends(api, None, others, new[key][at:], at, counted) is not None) is ok
    blank = {**others, "instructions": " "}  # the other keys are checked with the window
    assert extends(api, None, blank, old[key][at:] + _step(2), at, counted) is None
