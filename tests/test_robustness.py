"""The regression corpus (tests/robustness/): each malformed input once found to end in a
traceback or in output no provider accepts, with what sessionctx must say about it instead."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionctx import decoding
from sessionctx.cli import main
from sessionctx.formats.pyliteral import read_literal
from sessionctx.inputs import FORMATS, read_raw
from sessionctx.records import DEFAULT_MAX_LINE_BYTES, read_bytes
from tests import fuzzing

CASES: list[dict[str, Any]] = json.loads((fuzzing.CORPUS / "cases.json").read_text())
FILES = sorted(p for p in fuzzing.CORPUS.iterdir() if p.suffix in (".json", ".jsonl")
               and p.name != "cases.json")


def _args(case: dict[str, Any], tmp_path: Path) -> list[str]:
    store = f"sqlite:///{tmp_path}/s.db"
    return [str(fuzzing.CORPUS / a) if (fuzzing.CORPUS / a).is_file() else
            a.replace("{store}", store) for a in case["args"]]


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_case_says_what_is_wrong(case: dict[str, Any], tmp_path: Path) -> None:
    result = CliRunner().invoke(main, _args(case, tmp_path))
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    assert result.exit_code == case["exit"], result.output
    if "says" in case:
        assert case["says"] in result.output, result.output
    if "warns" in case:
        assert case["warns"] in result.stderr, result.stderr
    out = result.stdout
    if "--json" in case["args"] and result.exit_code in (0, 1):
        fuzzing.strict_json(out)


def test_every_case_file_is_used() -> None:
    used = {a for c in CASES for a in c["args"]}
    assert {p.name for p in FILES} <= used


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_corpus_file_keeps_every_promise(path: Path) -> None:
    """Each file through the library in every format and the commands on it: no exception,
    exit codes as documented, JSON output valid."""
    raw = path.read_bytes()
    for fmt in FORMATS:
        fuzzing.run_library(raw, fmt)
    work = fuzzing.Workdir()
    try:
        target = work.write(raw)
        for invocation in fuzzing.commands(target, work.path):
            if invocation.args[-2:] == ("--from", "auto") or "--from" not in invocation.args:
                work.write(raw)
                fuzzing.run_cli(invocation)
    finally:
        work.close()


def test_a_document_over_the_size_limit_is_refused_like_a_line() -> None:
    item = b'{"role":"user","content":"' + b"x" * 1000 + b'"},'
    raw = b"[" + item * (DEFAULT_MAX_LINE_BYTES // len(item) + 1) + b'{"role":"user"}]'
    result = read_bytes(raw, "big.json")
    assert result.fatal and "over the 64 MiB limit for one document" in str(result.problems[0])
    for fmt in ("auto", "openai-chat", "gemini-cli"):
        assert read_raw(raw, "big.json", fmt).fatal


def test_pretty_printed_document_over_the_size_limit_is_refused() -> None:
    raw = b"{\n" + b'  "messages": [' + b'{"role": "user", "content": "x"},\n' * (
        DEFAULT_MAX_LINE_BYTES // 30) + b'{"role": "user", "content": "x"}]\n}\n'
    result = read_raw(raw, "big.json")
    assert result.fatal and "limit for one document" in str(result.problems[0])


def test_nesting_limit_is_exact() -> None:
    at_limit = json.dumps(fuzzing.deep_value(decoding.MAX_DEPTH)).encode()
    assert decoding.nesting(at_limit) == decoding.MAX_DEPTH
    assert decoding.decode(at_limit) is not None
    over = json.dumps(fuzzing.deep_value(decoding.MAX_DEPTH + 1)).encode()
    with pytest.raises(decoding.Malformed, match="deeper than 256"):
        decoding.decode(over)
    # brackets inside strings, escaped quotes and backslashes are not nesting
    tricky = json.dumps({"a": "[[[{{" * 200 + '\\"' + "]]"}).encode()
    assert decoding.nesting(tricky) == 1


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


_JSON = st.recursive(
    st.none() | st.integers() | st.text(alphabet='[]{}"\\ax', max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(alphabet='[]{}"\\ax', max_size=4), inner, max_size=4), max_leaves=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(_JSON, max_size=6), st.integers(1, 40))
def test_nesting_is_the_depth_of_the_value_whatever_the_pieces_it_is_counted_in(
        values: list[Any], piece: int) -> None:
    # the text is counted a piece at a time; pieces a few bytes long end everywhere, inside
    # strings of brackets and escaped quotes too, and the depth is still the value's
    raw = json.dumps(values).encode()
    with patch.object(decoding, "_PIECE", piece):
        assert decoding.nesting(raw) == _depth(values)


def test_a_document_of_tiny_values_is_measured_in_little_more_than_its_size() -> None:
    raw = json.dumps([{"type": "user", "content": "x"}] * 100_000).encode()
    tracemalloc.start()
    try:
        assert decoding.nesting(raw) == 2
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * len(raw)


def test_a_record_at_the_nesting_limit_goes_through_every_command(tmp_path: Path) -> None:
    args = json.dumps(fuzzing.deep_value(decoding.MAX_DEPTH - 6))
    lines = [{"role": "user", "content": "go"},
             {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "f",
                                                "arguments": json.loads(args)}]},
             {"role": "assistant", "content": [{"type": "toolCall", "id": "d", "name": "f",
                                                "arguments": args}]}]
    raw = "".join(json.dumps(o) + "\n" for o in lines).encode()
    assert not read_raw(raw, "deep").problems
    fuzzing.run_library(raw)
    path = tmp_path / "deep.jsonl"
    path.write_bytes(raw)
    for invocation in fuzzing.commands(str(path), str(tmp_path)):
        if "--from" not in invocation.args or invocation.args[-1] == "auto":
            path.write_bytes(raw)
            fuzzing.run_cli(invocation)


def test_duplicate_keys_are_found_wherever_they_are() -> None:
    raw = b'{"a":{"b":1,"c":{"d":2,"d":3}},"e":"x:y"}'
    assert decoding.duplicate_keys_possible(raw, decoding.decode(raw))
    assert decoding.duplicate_keys(raw) == ["d"]
    clean = b'{"a":"x:y","b":"\\u003a"}'
    assert decoding.duplicate_keys(clean) == []


def test_python_text_reader_takes_literals_only() -> None:
    assert read_literal("[{'a': 'b\\'c', 'n': -1.5e3, 't': (True, None)}]") == [
        {"a": "b'c", "n": -1500.0, "t": [True, None]}]
    for text in ("__import__('os')", "[1, 2", "{[]: 1}", "[" * 300 + "]" * 300, "'\\ud800'",
                 "[1] [2]", "f'x'"):
        assert read_literal(text) is None


def test_millions_of_bad_lines_list_a_thousand_and_count_the_rest() -> None:
    from sessionctx.records import MAX_LISTED_PROBLEMS

    raw = b'{"role":"user","content":"x"}\n' + b"{bad\n" * (MAX_LISTED_PROBLEMS + 500) + \
        b'{"role":"user","content":"y"}\n'
    result = read_bytes(raw, "bad.jsonl")
    assert len(result.records) == 2 and not result.fatal
    assert len(result.problems) == MAX_LISTED_PROBLEMS + 1
    assert str(result.problems[-1]) == (
        "bad.jsonl: ... and 500 more problem(s) like these, not listed")


def test_json_lines_are_measured_for_nesting_one_line_at_a_time() -> None:
    # many lines, together far over the limit in brackets, none nesting deeper than it
    wide = {"role": "user", "content": [{"type": "text", "text": "[{" * 200}] * 3}
    deep = {"role": "user", "content": "x", "extra": fuzzing.deep_value(decoding.MAX_DEPTH - 2)}
    lines = [wide] * 50 + [deep] * 3 + [wide] * 50
    raw = "".join(json.dumps(o) + "\n" for o in lines).encode()
    result = read_bytes(raw, "wide.jsonl")
    assert not result.problems and len(result.records) == len(lines)
    # one line over the limit among them is refused on its own line, the others are read
    lines[60] = {"role": "user", "content": "x",
                 "extra": fuzzing.deep_value(decoding.MAX_DEPTH + 1)}
    raw = "".join(json.dumps(o) + "\n" for o in lines).encode()
    result = read_bytes(raw, "deep.jsonl")
    assert [(p.line, "deeper than 256" in p.message) for p in result.problems] == [(61, True)]
    assert len(result.records) == len(lines) - 1


@pytest.mark.parametrize("depth", [decoding.MAX_DEPTH - 1, decoding.MAX_DEPTH,
                                   decoding.MAX_DEPTH + 1, 2 * decoding.MAX_DEPTH])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_json_lines_are_refused_exactly_past_the_nesting_limit(depth: int, where: str) -> None:
    # every line has more opening brackets than the limit, most of them inside strings and
    # escaped quotes, so each line's value is measured; only the deep one nests past it
    wide: dict[str, Any] = {"text": '[{"' * 300, "list": [[{"a": "]}"}]] * 3}
    deep = {"text": "[{" * 300, "value": fuzzing.deep_value(depth - 1)}
    lines = [wide] * 5
    lines.insert({"first": 0, "middle": 2, "last": 5}[where], deep)
    raw = "".join(json.dumps(o) + "\n" for o in lines).encode()
    assert decoding.nesting(json.dumps(deep).encode()) == depth
    values = decoding.decode_lines(memoryview(raw), len(lines))
    assert (values is None) == (depth > decoding.MAX_DEPTH)
    result = read_bytes(raw, "lines.jsonl")
    assert len(result.records) == len(lines) - (depth > decoding.MAX_DEPTH)
    assert all("deeper than 256" in p.message for p in result.problems)


@settings(max_examples=200, deadline=None)
@given(st.lists(_JSON, min_size=1, max_size=6), st.integers(0, 3))
def test_lines_nest_too_deep_as_their_text_measures(values: list[Any], extra: int) -> None:
    # the values, each wrapped `extra` + the limit deep, against the text's own measure
    wrapped = [fuzzing.deep_value(0) if i % 2 else _wrap(v, decoding.MAX_DEPTH - 2 + extra)
               for i, v in enumerate(values)]
    raw = "".join(json.dumps({"v": w}) + "\n" for w in wrapped).encode()
    too_deep = any(decoding.nesting(json.dumps({"v": w}).encode()) > decoding.MAX_DEPTH
                   for w in wrapped)
    assert (decoding.decode_lines(memoryview(raw), len(wrapped)) is None) == too_deep


def _wrap(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


def test_a_file_that_is_not_one_json_text_is_told_apart_without_a_reason() -> None:
    assert decoding.decode_or_none(b'{"a": 1}\n{"b": 2}\n') is None
    assert decoding.decode_or_none(b'{"a": NaN}') is None
    assert decoding.decode_or_none(
        json.dumps(fuzzing.deep_value(decoding.MAX_DEPTH + 1)).encode()) is None
    assert decoding.decode_or_none(b'[{"a": 1}]') == [{"a": 1}]
