"""The README's library examples run as written, on a real session."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.test_compaction_checkpoint import write_summarizer

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_library_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = python_blocks()
    assert len(blocks) >= 3
    session = tmp_path / "session.jsonl"
    shutil.copyfile(FIXTURES / "pi" / "large-session.jsonl", session)
    session.chmod(0o644)
    before = session.stat().st_size
    script = write_summarizer(tmp_path)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for block in blocks:
        code = block.replace("my-summarizer --stdin", f"{sys.executable} {script}")
        exec(compile(code, str(README), "exec"), namespace)  # the README's own code
    assert namespace["written"].record["type"] == "compaction"  # type: ignore[attr-defined]
    assert session.stat().st_size > before


def test_readme_lists_every_change_kind_with_its_step_and_whether_it_repairs():
    from sessionctx.changes import ChangeKind

    text = README.read_text()
    section = text[text.index("### Change kinds"):]
    section = section[:section.index("\n## ")]
    rows = re.findall(r"^\| `([a-z_]+)` \| (core|provider|repair|adapter) \| (yes|no) \|",
                      section, re.M)
    listed = {kind: (step, repair == "yes") for kind, step, repair in rows}
    assert len(rows) == len(listed)
    assert listed == {k.value: (k.step, k.is_repair) for k in ChangeKind}
