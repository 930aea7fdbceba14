"""The peak memory of `check` (and of `check --json` and `report` on the worst input) stays
within the bound docs/robustness.md states: a multiple of the input size.

Each input is checked in a fresh process and the peak of what Python allocates while `check`
runs (tracemalloc) is divided by the input size: a ratio of sizes, not a timing, and the same
on every run of the same code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bench_memory import BOUNDS, grow, measure
from tests.conftest import FIXTURES, ROOT

# docs/robustness.md: peak memory of check, a multiple of the input size (plus a constant)
SESSION_BOUND = 15  # a session of ordinary messages
ANY_BOUND = BOUNDS["check"]  # any input at all
SIZE = 2 * 1024 * 1024


def _ratio(tmp_path: Path, raw: bytes, command: str = "check") -> float:
    path = tmp_path / "input"
    path.write_bytes(raw)
    measured = measure(str(path), None, command)
    assert not isinstance(measured, str), measured
    peak, code, ok = measured
    assert ok and code in (0, 1, 2)
    return peak / len(raw)


@pytest.mark.parametrize("fixture", [
    FIXTURES / "claude-code" / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl",
    next((FIXTURES / "codex").glob("rollout-*.jsonl")),
])
def test_a_real_session_grown_stays_within_the_session_bound(tmp_path: Path,
                                                             fixture: Path) -> None:
    assert _ratio(tmp_path, grow(fixture.read_bytes(), SIZE)) < SESSION_BOUND


SMALL = 256 * 1024  # inputs of tiny objects: enough of them for the ratio to settle


FIRST = b'{"role":"user","content":"hi"}\n'  # a message: the records after it are folded


@pytest.mark.parametrize("raw", [
    grow((ROOT / "tests" / "robustness" / "role-object.jsonl").read_bytes(), 2 * SMALL),
    b"{}\n" * (SMALL // 3),  # nothing but the smallest object: refused, no format known
    FIRST + b"{}\n" * (SMALL // 3),  # the worst input known: each a record and a change
    FIRST + b'{"a":1}\n' * (SMALL // 8),  # the smallest object with a field
    b'{"role":"user"}\n' * (SMALL // 16),  # a message with nothing in it, each a problem
], ids=["broken records", "empty objects", "empty objects after a message",
        "objects of one field after a message", "empty messages"])
def test_any_input_grown_stays_within_the_bound(tmp_path: Path, raw: bytes) -> None:
    assert _ratio(tmp_path, raw) < ANY_BOUND


@pytest.mark.parametrize("command", ["check --json", "report"])
def test_the_worst_input_stays_within_the_bound_of_each_command(tmp_path: Path,
                                                                command: str) -> None:
    # a record and a change per line, each in the output; 1 MB, for the part of the peak that
    # does not grow with the input (what the command imports) to weigh under 1x
    raw = FIRST + b"{}\n" * (4 * SMALL // 3)
    assert _ratio(tmp_path, raw, command) < BOUNDS[command]
