"""The diff a repair prints: unified, no context lines, every changed line shown."""

from __future__ import annotations

import difflib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionctx.writeback import repair
from sessionctx.writeback.edits import unified_diff
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


@settings(max_examples=300, deadline=None)
@given(_LINES, _LINES, st.booleans(), st.booleans())
def test_the_diff_is_the_unified_diff_of_the_lines(old: list[str], new: list[str],
                                                   old_ends: bool, new_ends: bool) -> None:
    before = "\n".join(old) + ("\n" if old_ends else "")
    after = "\n".join(new) + ("\n" if new_ends else "")
    got = unified_diff(before.encode(), after.encode(), "s.jsonl")
    assert got == _reference(before, after, "s.jsonl")


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
