"""Importers never raise: odd values anywhere in a real file give records or problems.

Each importer is named explicitly: pi files and undetected files go through the core reader,
which is tested on its own.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from sessionctx.inputs import read_raw
from tests.conftest import FIXTURES

ODD: list[Any] = [None, 0, -1, 1.5, True, "", "x", [], [None], {}, {"type": None},
                  [{"type": "text"}], {"content": 3}]
FILES = {
    "claude-code": FIXTURES / "claude-code" / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl",
    "codex": next((FIXTURES / "codex").glob("rollout-*.jsonl")),
    "gemini-cli": FIXTURES / "gemini-cli" / "tool-result-cancelled.json",
    "openai-chat": FIXTURES / "swe-agent" / "function_calling_simple.traj",
}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:5]):
            out += _paths(v, (*prefix, i))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    value[path[0]] = _replace(value[path[0]], path[1:], new)
    return value


def _load(path: Path) -> tuple[list[Any], bool]:
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.loads(x) for x in text.splitlines() if x.strip()], True
    return [json.loads(text)], False


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_odd_values_never_raise(fmt: str) -> None:
    rng = random.Random(fmt)
    objs, is_lines = _load(FILES[fmt])
    for _ in range(150):
        variant = json.loads(json.dumps(objs))
        i = rng.randrange(len(variant))
        target = rng.choice(_paths(variant[i])[1:] or [()])
        variant[i] = _replace(variant[i], target, rng.choice(ODD))
        raw = (b"".join(json.dumps(o).encode() + b"\n" for o in variant) if is_lines
               else json.dumps(variant[0]).encode())
        result = read_raw(raw, "odd", fmt)
        assert result.records or result.fatal
