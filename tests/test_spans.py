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
