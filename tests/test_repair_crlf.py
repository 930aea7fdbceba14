"""A note repair inserts takes the line ending of the file it goes into: a CRLF file stays
CRLF, an LF file LF."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionctx.writeback import repair

LINES = [b'{"role":"user","content":"list the files"}',
         b'{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"ls",'
         b'"arguments":{}}]}',
         b'{"role":"user","content":"never mind"}',
         b'{"role":"assistant","content":"ok"}']


@pytest.mark.parametrize("eol", [b"\r\n", b"\n"])
def test_the_note_has_the_files_line_ending(tmp_path: Path, eol: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(eol.join(LINES) + eol)
    result = repair(str(path), note_unpaired=True, backup=False)
    assert result.written and any(f.action == "inserted" for f in result.fixes)
    after = path.read_bytes()
    assert after.count(b"\n") == after.count(eol) == len(after.splitlines())
    assert b"interrupted" in after
