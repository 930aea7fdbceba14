"""Reading calls and results from every tolerated message shape."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionctx.messages import call_ids, calls, result_id

IDS = st.one_of(st.sampled_from(["a", "b", "c"]), st.none(), st.integers(0, 3))
NAMES = st.one_of(st.sampled_from(["bash", "edit"]), st.none(), st.integers(0, 3))
ARGS = st.one_of(st.none(), st.text(max_size=6), st.dictionaries(st.sampled_from("xy"),
                                                                   st.integers(), max_size=2))


@st.composite
def call_block(draw: st.DrawFn) -> dict[str, Any]:
    block: dict[str, Any] = {"type": draw(st.sampled_from(["toolCall", "tool_use", "tool_call"]))}
    for key in draw(st.lists(st.sampled_from(["id", "toolCallId", "tool_call_id"]),
                             max_size=2, unique=True)):
        block[key] = draw(IDS)
    if draw(st.booleans()):
        block["name"] = draw(NAMES)
    if draw(st.booleans()):
        block[draw(st.sampled_from(["arguments", "input"]))] = draw(ARGS)
    return block


BLOCK = st.one_of(
    call_block(),
    st.builds(lambda t: {"type": "text", "text": t}, st.one_of(st.text(max_size=6), st.none())),
    st.builds(lambda m: {"type": "image", "data": "AA", **m},
              st.sampled_from([{"mimeType": "image/png"}, {"mime_type": "image/gif"}, {}])),
    st.builds(lambda t: {"type": "thinking", "thinking": t}, st.text(max_size=6)),
    st.sampled_from([{"type": "other", "v": 1}, "bare", 3, None]))


@st.composite
def tool_calls(draw: st.DrawFn) -> list[Any]:
    items: list[Any] = []
    for _ in range(draw(st.integers(0, 3))):
        item: dict[str, Any] = {draw(st.sampled_from(["id", "tool_call_id"])): draw(IDS)}
        if draw(st.booleans()):
            item["function"] = draw(st.one_of(
                st.builds(lambda n, a: {"name": n, "arguments": a}, NAMES, ARGS),
                st.just("not a dict")))
        else:
            item.update(name=draw(NAMES), arguments=draw(ARGS))
        items.append(draw(st.one_of(st.just(item), st.just("junk"))))
    return items


@st.composite
def any_message(draw: st.DrawFn) -> dict[str, Any]:
    """Messages of every role in every tolerated (and some malformed) shape."""
    role = draw(st.sampled_from(["user", "assistant", "toolResult", "tool", "system", None]))
    message: dict[str, Any] = {"role": role} if role is not None else {}
    message["content"] = draw(st.one_of(st.lists(BLOCK, max_size=4), st.text(max_size=6),
                                        st.none()))
    if draw(st.booleans()):
        message["tool_calls"] = draw(st.one_of(tool_calls(), st.just("junk")))
    for key in draw(st.lists(st.sampled_from(["toolCallId", "tool_call_id"]), max_size=2,
                             unique=True)):
        message[key] = draw(IDS)
    if draw(st.booleans()):
        message["toolName"] = draw(NAMES)
    if draw(st.booleans()):
        message["isError"] = draw(st.sampled_from([True, False, "true", None]))
    return message


@settings(max_examples=500, deadline=None)
@given(any_message())
def test_call_ids_are_the_string_ids_of_calls(message):
    assert call_ids(message) == [c.id for c in calls(message) if c.id is not None]


def test_a_call_id_is_the_first_string_among_its_keys():
    message = {"role": "assistant", "content": [
        {"type": "toolCall", "id": 7, "toolCallId": "b", "name": 3, "input": {"x": 1}},
        {"type": "tool_use", "tool_call_id": "c", "name": "edit"},
        {"type": "tool_call", "id": None}]}
    assert [(c.id, c.name, c.arguments) for c in calls(message)] == [
        ("b", None, {"x": 1}), ("c", "edit", None), (None, None, None)]
    assert call_ids(message) == ["b", "c"]


def test_a_result_id_is_the_first_string_among_its_keys():
    assert result_id({"role": "toolResult", "toolCallId": 5, "tool_call_id": "b"}) == "b"
    assert result_id({"role": "tool", "toolCallId": "a", "tool_call_id": "b"}) == "a"
    assert result_id({"role": "tool", "toolCallId": None}) is None
    assert result_id({"role": "user", "toolCallId": "a"}) is None
