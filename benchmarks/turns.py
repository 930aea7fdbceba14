"""Timing shared by the benchmarks whose ratio's two sides run in one process."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

REPEATS = 9
Step = tuple[Callable[[], object], Callable[[], object] | None]  # (what is timed, its setup)


def least(*steps: Step, rounds: int = REPEATS) -> list[float]:
    """The least CPU time of each step over `rounds` rounds in which every step takes its turn,
    so a busier moment of a shared machine falls on all of them alike. Before each step its
    setup runs, untimed, and then the collector, so the garbage one step leaves never falls on
    the next. CPU time: on a shared machine, time spent waiting for a core is not a step's
    cost."""
    times: list[list[float]] = [[] for _ in steps]
    for _ in range(rounds):
        for (fn, setup), spent in zip(steps, times, strict=True):
            if setup is not None:
                setup()
            gc.collect()
            start = time.process_time()
            fn()
            spent.append(time.process_time() - start)
    return [min(spent) for spent in times]
