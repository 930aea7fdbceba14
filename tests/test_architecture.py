"""docs/architecture.md names real homes: every module it cites exists, and every function or
class it names after a module is found in that module."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from sessionctx.changes import ChangeKind

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "src" / "sessionctx"
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _module_name(path: str) -> str:
    name = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return "sessionctx" if name == "__init__" else f"sessionctx.{name}"


def _cited() -> list[tuple[int, str, str]]:
    """(line number, module path, name) for each name cited after a module on a line."""
    cited = []
    for number, line in enumerate(DOC.read_text().splitlines(), 1):
        module = None
        for span in re.findall(r"`([^`]+)`", line):
            if span.endswith(".py") and "<" not in span:
                module = span
            elif module is not None and IDENTIFIER.match(span) and span not in set(ChangeKind):
                cited.append((number, module, span))
    return cited


def test_every_module_the_map_cites_exists():
    for line in DOC.read_text().splitlines():
        for span in re.findall(r"`([^`]+\.py)`", line):
            if "<" in span:
                continue
            where = ROOT / span if span.startswith("tests/") else PACKAGE / span
            assert where.is_file(), f"docs/architecture.md cites {span}, which does not exist"


def test_every_name_the_map_cites_is_in_its_module():
    cited = [c for c in _cited() if not c[1].startswith("tests/")]
    assert len(cited) > 60
    for number, path, name in cited:
        value: object = importlib.import_module(_module_name(path))
        for part in name.split("."):
            assert hasattr(value, part), f"docs/architecture.md:{number}: {path} has no {name}"
            value = getattr(value, part)
