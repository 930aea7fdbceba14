"""Every command stays linear on every pathological shape: its time at n, 2n and 4n grows by
at most 2.5 per doubling (tests/scaling.py makes the shapes; benchmarks/bench_scaling.py runs
them at sizes where a square shows plainly).

Sizes are small so each case takes well under a second; a case over the bound is measured
again with more rounds before it fails, as a loaded machine can slow one run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import scaling

N = 150
BOUND = 2.5


@pytest.mark.parametrize("command", sorted(scaling.COMMANDS))
@pytest.mark.parametrize("shape", sorted(scaling.SHAPES))
def test_each_doubling_costs_at_most_two_and_a_half_times(shape: str, command: str,
                                                         tmp_path: Path) -> None:
    first, second, times = scaling.ratios(command, shape, N, tmp_path, rounds=1)
    if max(first, second) > BOUND:
        first, second, times = scaling.ratios(command, shape, N, tmp_path, rounds=5)
    assert max(first, second) <= BOUND, (shape, command, times)


def test_a_square_is_caught(tmp_path: Path) -> None:
    """The measure itself: a command whose work grows with the square fails the bound."""
    real = scaling.SHAPES["same_role"]
    # a session of n² messages for size n, as a path that reads it all per item would cost
    scaling.SHAPES["squared"] = lambda n: real(n * n // 10)
    try:
        first, second, _ = scaling.ratios("build", "squared", 100, tmp_path, rounds=2)
    finally:
        del scaling.SHAPES["squared"]
    assert first * second > BOUND ** 2
