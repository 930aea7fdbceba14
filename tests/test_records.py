"""Reading records: every form, every bad input, nothing lost, nothing written."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionctx import records as r
from sessionctx import validity
from sessionctx.records import read_bytes, read_path, select_branch


def lines(*objs: object) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def test_jsonl_kinds_and_lines():
    res = read_bytes(lines({"role": "user", "content": "hi"}, {"kind": "context"},
                           {"role": "bashExecution", "command": "ls"},
                           {"role": "custom", "content": "x"}, {"type": "custom"},
                           {"role": "compactionSummary"}, {"type": "label"},
                           {"type": "compaction"}, {"type": "mystery"}), "f.jsonl")
    assert [x.kind for x in res.records] == [r.MESSAGE, r.CONTEXT, r.LOCAL_COMMAND,
                                             r.EXTENSION_MESSAGE, r.EXTENSION_STATE, r.SUMMARY,
                                             r.METADATA, r.CHECKPOINT, r.UNKNOWN]
    assert [x.source.line for x in res.records] == list(range(1, 10))
    assert res.problems == []


def test_bad_lines_are_reported_and_the_rest_is_read():
    raw = (lines({"role": "user", "content": "a"}) + b"not json\n" + b"[1,2]\n"
           + lines({"role": "user", "content": 5}) + lines({"role": 7})
           + lines({"role": "assistant", "content": [{"type": "text", "text": 1}]})
           + lines({"role": "user", "content": "b"}))
    res = read_bytes(raw, "s.jsonl")
    good = [x for x in res.records if x.kind == r.MESSAGE]
    assert [x.view["content"] for x in good] == ["a", "b"]
    assert [p.line for p in res.problems] == [2, 3, 4, 5, 6]
    text = [str(p) for p in res.problems]
    assert text[0].startswith("s.jsonl:2: not valid JSON")
    assert "expected a JSON object, got array" in text[1]
    assert "'content' must be a string or an array, got number" in text[2]
    assert "'role' must be a string" in text[3]
    assert "text block without a string 'text'" in text[4]
    assert not res.fatal


def test_torn_last_line_is_reported_as_such():
    raw = lines({"role": "user", "content": "a"}) + b'{"role": "assis'
    res = read_bytes(raw, "t.jsonl")
    assert len(res.records) == 1
    assert res.problems[0].line == 2 and "incomplete" in res.problems[0].message


def test_invalid_utf8_empty_binary_and_huge_line():
    bad_line = b'{"role": "user", "content": "\xff\xfe"}\n'
    bad = read_bytes(lines({"role": "user", "content": "a"}) + bad_line)
    assert "invalid UTF-8" in bad.problems[0].message and len(bad.records) == 1
    assert read_bytes(b"").fatal and "empty" in read_bytes(b"  \n").problems[0].message
    assert "binary" in read_bytes(b"\x89PNG\r\n\x1a\n\x00\x00").problems[0].message
    huge = b'{"role":"user","content":"' + b"x" * (100 * 1024 * 1024) + b'"}\n'
    res = read_bytes(lines({"role": "user", "content": "a"}) + huge)
    assert "100.0 MiB" in res.problems[0].message and len(res.records) == 1


def test_missing_file_and_directory(tmp_path: Path):
    assert "no such file" in read_path(str(tmp_path / "nope")).problems[0].message
    assert "directory" in read_path(str(tmp_path)).problems[0].message


def test_json_array_and_envelope():
    arr = read_bytes(json.dumps([{"role": "user", "content": "a"}, 3]).encode())
    assert len(arr.records) == 1 and arr.records[0].source.index == 0
    assert "item 1" in arr.problems[0].message
    env = {"type": "xopc_session_transcript", "version": 1, "id": "s",
           "messages": [{"role": "user", "content": "x"}, {"kind": "context"}]}
    res = read_bytes(json.dumps(env, indent=2).encode())
    assert [x.kind for x in res.records] == [r.MESSAGE, r.CONTEXT]
    single = read_bytes(json.dumps({"a": 1}, indent=2).encode())
    assert single.fatal and "single JSON object" in single.problems[0].message
    broken = read_bytes(b'[{"role": "user",\n "content": }]')
    assert broken.fatal and "line 2" in broken.problems[0].message


def test_unknown_fields_survive_a_round_trip():
    obj = {"role": "assistant", "content": [{"type": "text", "text": "x", "future": [1]}],
           "vendorField": {"nested": True}, "stopReason": "stop"}
    res = read_bytes(lines(obj))
    assert res.records[0].data == obj
    assert json.loads(json.dumps(res.records[0].data)) == obj


def test_pi_entries_and_branch_selection():
    entries: list[dict[str, Any]] = [
        {"type": "session", "id": "root-header", "cwd": "/x"},
        {"type": "message", "id": "a", "parentId": None,
         "message": {"role": "user", "content": "first"}},
        {"type": "message", "id": "b", "parentId": "a",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "old"}]}},
        {"type": "message", "id": "c", "parentId": "a",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "new"}]}},
    ]
    res = read_bytes(lines(*entries))
    assert res.records[1].view == entries[1]["message"]
    kept, off = select_branch(res.records)
    assert [x.data.get("id") for x in kept] == ["root-header", "a", "c"]
    assert [x.data["id"] for x in off] == ["b"]
    kept_b, _ = select_branch(res.records, "b")
    assert [x.data.get("id") for x in kept_b] == ["root-header", "a", "b"]


def test_reading_never_writes(tmp_path: Path, fixtures: Path):
    src = fixtures / "pi" / "large-session.jsonl"
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    mtime = os.stat(src).st_mtime_ns
    res = read_path(str(src))
    assert len(res.records) == 1019
    assert hashlib.sha256(src.read_bytes()).hexdigest() == digest
    assert os.stat(src).st_mtime_ns == mtime


def test_progress_reports_up_to_the_whole_file():
    seen: list[tuple[int, int]] = []
    raw = lines(*[{"role": "user", "content": str(i)} for i in range(10000)])
    read_bytes(raw, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (len(raw), len(raw))
    assert len(seen) > 1 and all(a <= b for (a, _), (b, _) in itertools.pairwise(seen))


def test_odd_values_where_names_are_expected_are_reported_not_raised():
    odd: list[dict[str, Any]] = [
        {"role": [], "content": ""}, {"role": {"a": 1}}, {"type": ["x"]}, {"type": {"k": 1}},
        {"kind": ["context"]}, {"type": "message", "message": {"role": ["user"]}},
        {"role": "assistant", "content": [{"type": ["toolCall"]}]},
        {"role": "assistant", "content": [{"type": "toolCall", "id": ["x"]}]},
    ]
    res = read_bytes(lines(*odd, {"role": "user", "content": "fine"}))
    assert res.records[-1].kind == r.MESSAGE
    assert [x.kind for x in res.records[:2]] == [r.INVALID, r.INVALID]
    assert len(res.problems) >= 4


def _walk_reference(records: list[r.Record]) -> list[int]:
    """Positions on the branch of the last tree entry, by the leaf-to-root walk."""
    nodes = [x for x in records if "parentId" in x.data and isinstance(x.data.get("id"), str)]
    if not nodes:
        return list(range(len(records)))
    by_id = {x.data["id"]: x for x in nodes}
    on_path: set[str] = set()
    current = nodes[-1].data["id"]
    while isinstance(current, str) and current in by_id and current not in on_path:
        on_path.add(current)
        current = by_id[current].data.get("parentId")
    return [i for i, x in enumerate(records)
            if not ("parentId" in x.data and isinstance(x.data.get("id"), str))
            or x.data["id"] in on_path]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["chain", "root", "back", "dup", "header", "plain"]),
                          st.integers(0, 30)), max_size=30))
def test_select_branch_with_or_without_the_chain_pass_agrees_with_the_walk(
        steps: list[tuple[str, int]]) -> None:
    # mostly linear chains (the one-pass case), with roots, branches back to an earlier entry,
    # repeated ids, headers and plain records mixed in (the index case)
    objects: list[dict[str, Any]] = []
    ids: list[str] = []
    for step, k in steps:
        if step == "header":
            objects.append({"type": "session", "id": f"h{k}"})
            continue
        if step == "plain":
            objects.append({"role": "user", "content": "x"})
            continue
        parent = None if step == "root" or not ids else \
            ids[-1] if step == "chain" else ids[k % len(ids)]
        node = ids[k % len(ids)] if step == "dup" and ids else f"n{len(objects)}"
        ids.append(node)
        objects.append({"type": "message", "id": node, "parentId": parent,
                        "message": {"role": "user", "content": node}})
    records = r.records_from_objects(objects)
    kept, off = select_branch(records)
    expected = _walk_reference(records)
    assert [records.index(x) for x in kept] == expected
    assert len(kept) + len(off) == len(records)


_BLOCKS = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(st.text(max_size=3),
                                                                      st.integers())}),
    st.fixed_dictionaries({"type": st.sampled_from(["toolCall", "tool_use", "image"]),
                           "id": st.one_of(st.just("c1"), st.integers()),
                           "name": st.one_of(st.just("bash"), st.none())}),
    st.fixed_dictionaries({"type": st.one_of(st.none(), st.integers(), st.lists(st.none()))}),
    st.just("loose text"), st.integers())


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["user", "assistant", "toolResult"]),
       st.one_of(st.lists(_BLOCKS, max_size=4), st.text(max_size=2), st.none(), st.integers()))
def test_message_problem_reads_common_content_inline_with_the_same_verdict(
        role: str, content: Any) -> None:
    message = {"role": role, "content": content}
    full = validity.content_problem(content, role == "assistant", "content", True)
    assert r.message_problem(message) == full


_KEYS = st.sampled_from(["a", "b", "c:d"])
_TEXTS = st.lists(st.sampled_from(["x", ":", "\\u003a", "\\u003A", "\\\\u003a", "\\\""]),
                  max_size=4).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.tuples(_KEYS, _TEXTS), min_size=1, max_size=4), min_size=1,
                max_size=6))
def test_a_repeated_key_is_reported_on_its_line_in_a_whole_chunk(
        lines: list[list[tuple[str, str]]]) -> None:
    """Lines read in one decode report a repeated key as reading each line alone does, even
    when an escaped colon in a string makes up for the colon of the key that was dropped."""
    raw = "".join("{" + ",".join(f'"{k}":"{v}"' for k, v in pairs) + "}\n"
                  for pairs in lines).encode()
    expected = [(n, sorted({k for k, _ in pairs if [p[0] for p in pairs].count(k) > 1}))
                for n, pairs in enumerate(lines, 1)]
    problems = read_bytes(raw).problems
    for n, keys in expected:
        named = [p.message for p in problems if p.line == n]
        if keys:
            assert len(named) == 1 and all(repr(k) in named[0] for k in keys), (n, named)
        else:
            assert not named, (n, named)
