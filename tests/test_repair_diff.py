"""The diff a repair prints: unified, no context lines, every changed line shown."""

from __future__ import annotations

import difflib
from pathlib import Path
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionctx.writeback import edits, repair
from sessionctx.writeback.edits import _changed_runs, unified_diff
from tests.test_repair_formats import CLAUDE

_LINES = st.lists(st.text(alphabet="ab{}é\"", max_size=6), max_size=12)


def _reference(before: str, after: str, path: str) -> str:
    """difflib's own unified diff over the decoded lines."""
    def lines(text: str) -> list[str]:
        out = [line + "\n" for line in text.split("\n")]
        if out[-1] == "\n":
            out.pop()
        return out

    return "".join(difflib.unified_diff(lines(before), lines(after), f"{path} (stored)",
                                        f"{path} (repaired)", n=0))


_EDITS = st.lists(st.sampled_from(["keep", "drop", "change", "add"]), max_size=30)


@settings(max_examples=300, deadline=None)
@given(_EDITS, st.booleans(), st.booleans())
def test_a_repairs_edits_diff_as_difflib_diffs_them(edits: list[str], old_ends: bool,
                                                     new_ends: bool) -> None:
    # a session's lines are unique; a repair keeps, drops, rewrites or adds lines in order
    old: list[str] = []
    new: list[str] = []
    for n, edit in enumerate(edits):
        if edit != "add":
            old.append(f'{{"id":"{n}"}}')
        if edit in ("keep", "add"):
            new.append(old[-1] if edit == "keep" else f'{{"note":"{n}"}}')
        elif edit == "change":
            new.append(f'{{"id":"{n}","fixed":true}}')
    before = "\n".join(old) + ("\n" if old_ends and old else "")
    after = "\n".join(new) + ("\n" if new_ends and new else "")
    got = unified_diff(before.encode(), after.encode(), "s.jsonl")
    assert got == _reference(before, after, "s.jsonl")


@settings(max_examples=500, deadline=None)
@given(_LINES, _LINES, st.sampled_from([0, 4, edits._GAP_PAIRS]))
def test_the_changed_runs_turn_any_lines_into_any_others(old: list[str], new: list[str],
                                                         cap: int) -> None:
    # repeated lines included, and gaps too large for difflib shown whole: the runs are
    # ordered, each changes something, and applying them to the old lines gives the new ones
    old_lines, new_lines = [x.encode() for x in old], [x.encode() for x in new]
    out: list[bytes] = []
    at = 0
    with patch.object(edits, "_GAP_PAIRS", cap):
        runs = list(_changed_runs(old_lines, new_lines))
    for i1, i2, j1, j2 in runs:
        assert at <= i1 <= i2 and (i2 > i1 or j2 > j1)
        out += old_lines[at:i1]
        assert len(out) == j1
        out += new_lines[j1:j2]
        at = i2
    assert out + old_lines[at:] == new_lines


def test_a_line_among_many_equal_ones_is_found_at_once() -> None:
    # no line is unique: the equal lines at either end of the gap match as they stand, so
    # the diff is the one added line, not a match of 20,000 lines against 20,000
    old = b'{"a":1}\n' * 20000
    new = b'{"a":1}\n' * 10000 + b'{"b":2}\n' + b'{"a":1}\n' * 10000
    diff = unified_diff(old, new, "s.jsonl")
    assert diff.splitlines()[2:] == ["@@ -10000,0 +10001 @@", '+{"b":2}']


def test_a_gap_too_large_to_match_is_shown_whole() -> None:
    # two kinds of line shuffled differently on each side: past the cap, the gap between
    # the equal first and last lines is one run, every line of it shown
    old = [b"start", *[b"{}" if k % 3 else b"[]" for k in range(1500)], b"end"]
    new = [b"start", *[b"[]" if k % 3 else b"{}" for k in range(1500)], b"end"]
    assert list(_changed_runs(old, new)) == [(1, 1501, 1, 1501)]


def test_the_diff_of_many_edits_to_a_long_session_is_exact() -> None:
    # every tenth line of 20,000 rewritten: each hunk is that one line
    old = [f'{{"id":"{n}"}}' for n in range(20000)]
    new = [line + " " if n % 10 == 0 else line for n, line in enumerate(old)]
    before, after = "\n".join(old) + "\n", "\n".join(new) + "\n"
    got = unified_diff(before.encode(), after.encode(), "s.jsonl")
    assert got == _reference(before, after, "s.jsonl")
    assert got.count("@@ -") == 2000


def test_a_change_past_the_cut_of_a_long_line_still_shows_its_line() -> None:
    # a link rewritten to an id of the same length, after a long message: the two lines are
    # the same up to the cut and as long as each other
    head = '{"message":{"role":"user","content":"' + "x" * 3000 + '"}'
    old, new = head + ',"parentId":"a1b2c3d4"}', head + ',"parentId":"e5f6a7b8"}'
    diff = unified_diff(f"{old}\n".encode(), f"{new}\n".encode(), "s.jsonl", width=100)
    cut = f"{head[:100]}... ({len(old) - 100} more characters)"
    assert diff.splitlines()[2:] == ["@@ -1 +1 @@", f"-{cut}", f"+{cut}"]


def test_bytes_that_are_not_utf8_are_compared_as_stored_and_shown_replaced() -> None:
    diff = unified_diff(b'{"a":"\xff"}\n', b'{"a":"\xfe"}\n', "s.jsonl")
    assert diff.splitlines()[2:] == ["@@ -1 +1 @@", '-{"a":"\ufffd"}', '+{"a":"\ufffd"}']


def test_a_written_repair_still_gives_its_diff(tmp_path: Path, fixtures: Path) -> None:
    path = tmp_path / "session.jsonl"
    original = (fixtures / CLAUDE).read_bytes()
    path.write_bytes(original)
    result = repair(str(path))
    assert result.written
    assert result.diff == unified_diff(original, path.read_bytes(), str(path))
    assert result.diff.startswith(f"--- {path} (stored)\n")
    assert repair(str(path)).diff == ""  # nothing left to repair
