"""A JSONL file as repair sees it: each line's object, however the lines around it are broken."""

from __future__ import annotations

import json
from typing import Any
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionctx import decoding, records
from sessionctx.inputs import read_raw
from sessionctx.records import object_chunks
from sessionctx.writeback.edits import Lines
from sessionctx.writeback.links import LinkKeys, Links
from sessionctx.writeback.plan import _decoded

_LINE = st.one_of(
    st.dictionaries(st.sampled_from(["role", "id", "x"]), st.integers() | st.text(max_size=3),
                    max_size=3).map(json.dumps),
    st.sampled_from(['[1, 2]', '"text"', '{"torn": ', '', '   ', '{"a": 1} {"b": 2}',
                     '{"a": 1, "a": 2}', '{"n": NaN}', '\ufeff{"bom": 1}', '{"deep": ' +
                     '[' * 300 + ']' * 300 + '}', '{"s": "\\ud800"}',
                     '{"type": "session", "id": "s", "version": 3}',
                     '{"type": "message", "id": "m", "parentId": null, "message": '
                     '{"role": "user", "content": "hi"}}',
                     '{"type": "compaction", "id": "c", "parentId": "m", "summary": "s", '
                     '"firstKeptEntryId": "m", "tokensBefore": 1}',
                     '{"type": "branch_summary", "id": "b", "parentId": "m", "summary": "s"}']))


def _reference(line: bytes) -> Any:
    try:
        value = decoding.decode(line)
    except decoding.Malformed:
        return None
    return value if isinstance(value, dict) else None


@settings(max_examples=500, deadline=None)
@given(st.lists(_LINE, max_size=12), st.booleans(), st.booleans(), st.integers(1, 64))
def test_each_line_holds_the_object_it_holds_alone(lines: list[str], ends: bool, bom: bool,
                                                   chunk: int) -> None:
    body = "\n".join(lines) + ("\n" if ends and lines else "")
    raw = (b"\xef\xbb\xbf" if bom else b"") + body.encode()
    edited = Lines(raw)
    if len(edited):
        edited.put(1, b'{"edited": true}')
    # chunks of a line or two: every kind of chunk boundary
    with patch.object(records, "_CHUNK_BYTES", chunk):
        # and the objects the reader decoded, as a repair hands them over (pi's reader
        # converts its compactions and branch summaries: the lines still hold the entries)
        shared = [Lines(raw, _decoded(read_raw(raw, None, fmt))) for fmt in ("native", "pi")]
        for held in (Lines(raw), edited, *shared):
            for n in held.numbers():
                want = {"edited": True} if held is edited and n == 1 else _reference(
                    held.original[n - 1])
                assert held.obj(n) == want, (n, held.original[n - 1])


def test_chunks_of_object_lines_decode_in_one_go() -> None:
    raw = b"".join(json.dumps({"i": i}).encode() + b"\n" for i in range(30_000))
    chunks = list(object_chunks(raw))
    assert len(chunks) > 1 and all(objects is not None for _, _, objects in chunks)
    assert [o for _, _, objects in chunks for o in objects or []] == [
        {"i": i} for i in range(30_000)]


def _walked(parent_of: dict[str, str | None], uid: str | None) -> str | None:
    """The nearest ancestor that stays, walked afresh every time."""
    seen: set[str] = set()
    while uid is not None and uid in parent_of and uid not in seen:
        seen.add(uid)
        uid = parent_of[uid]
    return uid


_IDS = st.sampled_from([f"e{k}" for k in range(12)])


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_IDS, st.none() | _IDS, max_size=12), st.lists(st.none() | _IDS))
def test_a_removed_entry_hangs_from_the_same_ancestor_however_often_asked(
        parent_of: dict[str, str | None], asked: list[str | None]) -> None:
    # removed entries in runs, chains and cycles: the answers kept along the way never
    # change an answer, in whatever order the ids are asked about
    links = Links(Lines(b""), [], LinkKeys("id", "parentId"))
    links.parent_of = parent_of
    for uid in [*asked, *parent_of]:
        assert links.surviving(uid) == _walked(parent_of, uid), uid
