"""The long kill -9 run (benchmarks/kill9.py) in a few rounds: it runs, counts, and finds
nothing lost on every backend this machine has."""

from __future__ import annotations

import os

import pytest

from benchmarks import kill9


def test_a_short_kill9_run_loses_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    backends = ["--backend", "sqlite", "--backend", "jsonl"]
    if os.environ.get("SESSIONCTX_TEST_POSTGRES"):
        backends += ["--backend", "postgres"]
    assert kill9.main(["--rounds", "3", *backends]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(backends) // 2
    for line in lines:
        assert "kills 6, records acknowledged " in line
        assert "records lost 0, batches seen torn 0, sessions blocked 0, seq gaps 0" in line
