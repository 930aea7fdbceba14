"""Byte spans inside a JSON text, as repair edits them: every value at its path, whatever the
spacing and whatever brackets, quotes and escapes its strings hold."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionctx.writeback import spans

_TEXT = st.text(alphabet='ab[]{}",:\\\n é\u2028', max_size=8)
_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False,
                                                                      allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=30)
_LAYOUT = st.sampled_from([{}, {"indent": 2}, {"separators": (",", ":")},
                           {"separators": (" , ", " : ")}, {"ensure_ascii": False}])


def _paths(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...],
                                                                        Any]]:
    out = [(path, value)]
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(
        value, list) else []
    for key, held in items:
        out += _paths(held, (*path, key))
    return out


@settings(max_examples=300, deadline=None)
@given(_VALUE, _LAYOUT, st.sampled_from(["", " ", "\n  "]))
def test_every_value_is_found_at_its_path(value: Any, layout: dict[str, Any],
                                          around: str) -> None:
    text = (around + json.dumps(value, **layout) + around).encode()
    assert spans.value_end(text, len(around)) == len(text) - len(around)
    for path, held in _paths(value):
        start, end = spans.span(text, path)
        assert json.loads(text[start:end]) == held
        if isinstance(held, (dict, list)):
            found = spans.members(text, path)
            keys = list(held) if isinstance(held, dict) else list(range(len(held)))
            assert [key for key, _, _ in found] == keys
            assert [json.loads(text[s:e]) for _, s, e in found] == [
                held[k] for k in keys]


@settings(max_examples=300, deadline=None)
@given(st.lists(_VALUE, min_size=1, max_size=5) | st.dictionaries(_TEXT, _VALUE, min_size=1,
                                                                    max_size=5),
       _LAYOUT, st.data())
def test_a_deleted_member_leaves_the_others_as_they_were(container: Any,
                                                         layout: dict[str, Any],
                                                         data: st.DataObject) -> None:
    text = json.dumps({"x": [container]}, **layout).encode()
    index = data.draw(st.integers(0, len(container) - 1))
    left = spans.delete(text, ["x", 0], index)
    if isinstance(container, dict):
        expected: Any = {k: v for i, (k, v) in enumerate(container.items()) if i != index}
    else:
        expected = [v for i, v in enumerate(container) if i != index]
    assert json.loads(left) == {"x": [expected]}


@pytest.mark.parametrize("text", [b'{"a": [1, {"b": "]"}', b'{"a": "}', b'[[["x"]]'])
def test_a_text_that_ends_inside_a_value_is_refused(text: bytes) -> None:
    with pytest.raises(spans.SpanError):
        spans.value_end(text, 0)


def _inserted(text: bytes, path: spans.Path, index: int, value: Any) -> bytes:
    """What adding `value` after member `index` must write: joined as the first two members
    are joined, else on a line of its own when the member starts one, else after a comma."""
    items = spans.members(text, path)
    begin, end = items[index][1], items[index][2]
    if len(items) >= 2:
        sep = text[items[0][2]:items[1][1]]
    else:
        line_start = text.rfind(b"\n", 0, begin) + 1
        indent = text[line_start:begin]
        sep = b",\n" + indent if not indent.strip() and line_start > 0 else b","
    if b"\n" in sep:
        indent = sep.rsplit(b"\n", 1)[1]
        encoded = json.dumps(value, ensure_ascii=False, indent=2).encode().replace(
            b"\n", b"\n" + indent)
    else:
        encoded = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    return text[:end] + sep + encoded + text[end:]


_EDIT = st.tuples(st.sampled_from(["delete", "insert"]), st.integers(0, 20))
_GAP = st.sampled_from(["", " ", "\n  ", "\n"])
_SEP = st.sampled_from([",", ", ", ",\n  ", " ,\n", ",\n"])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_VALUE, _SEP), max_size=6), _GAP, _GAP, st.booleans(),
       st.lists(_EDIT, max_size=8))
def test_an_array_edited_as_a_list_is_the_text_edited_in_place(
        items: list[tuple[Any, str]], lead: str, trail: str, nested: bool,
        edits: list[tuple[str, int]]) -> None:
    # the same deletes and inserts, made on the text one at a time and on the list of
    # members joined once, give the same bytes, whatever space and commas join the members
    body = "".join(json.dumps(value) + (sep if k + 1 < len(items) else "")
                   for k, (value, sep) in enumerate(items))
    array_text = f"[{lead}{body}{trail}]"
    text = (f'{{"model": "m",\n "input": {array_text}}}' if nested else array_text).encode()
    path = ["input"] if nested else []
    array = spans.ArrayText(text, path)
    assert array.render() == text
    for op, at in edits:
        count = len(spans.members(text, path))
        if not count:
            break
        index = at % count
        if op == "delete":
            text = spans.delete(text, path, index)
            array.delete(index)
        else:
            note = {"type": "message", "role": "user", "n": at}
            text = _inserted(text, path, index, note)
            array.insert_after(index, note)
        assert array.render() == text
        assert len(array) == len(spans.members(text, path))


def test_an_array_refuses_an_index_it_does_not_hold() -> None:
    array = spans.ArrayText(b"[1, 2]", [])
    with pytest.raises(IndexError):
        array.delete(2)
    array.delete(1)
    array.delete(0)
    assert array.render() == b"[]"
    with pytest.raises(IndexError):
        array.insert_after(0, 3)
    with pytest.raises(spans.SpanError):
        spans.ArrayText(b'{"input": "text"}', ["input"])
