"""The library examples of the README and of docs/ run as written, on a real session."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.test_compaction_checkpoint import write_summarizer

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# the pages whose Python examples work on `session.jsonl`, in the order they build on each other
PAGES = [ROOT / "docs" / "resume.md", ROOT / "docs" / "library.md"]


def python_blocks() -> list[str]:
    return [block for page in PAGES
            for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S)]


def test_the_readme_example_runs_as_written(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) == 1
    monkeypatch.chdir(ROOT)
    exec(compile(blocks[0], str(README), "exec"), {})  # the README's own code
    assert capsys.readouterr().out == (
        "6 ['dropped_unpaired_call', 'dropped_empty_message']\n['edit']\n")


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
        exec(compile(code, "docs", "exec"), namespace)  # the pages' own code
    assert namespace["written"].record["type"] == "compaction"  # type: ignore[attr-defined]
    assert session.stat().st_size > before


def test_the_docs_list_every_change_kind_with_its_step_and_whether_it_repairs():
    from sessionctx.changes import ChangeKind

    text = (ROOT / "docs" / "changes.md").read_text()
    section = text[text.index("## Change kinds"):]
    rows = re.findall(r"^\| `([a-z_]+)` \| (core|provider|repair|adapter) \| (yes|no) \|",
                      section, re.M)
    listed = {kind: (step, repair == "yes") for kind, step, repair in rows}
    assert len(rows) == len(listed)
    assert listed == {k.value: (k.step, k.is_repair) for k in ChangeKind}
