"""No input, however malformed, reaches a user as a traceback or as output that is not JSON.

Inputs are the real fixtures in every format and the regression corpus, mutated (see
tests/fuzzing.py). A few seconds by default; SESSIONCTX_FUZZ_EXAMPLES=N runs N inputs per
test (each through the library in every format and a sample of the commands), and
`python -m tests.fuzz_long --minutes 10` runs for a fixed time and reports what it tried.
"""

from __future__ import annotations

import copy
import os
import random
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import fuzzing

ROOT = Path(__file__).resolve().parents[1]

EXAMPLES = int(os.environ.get("SESSIONCTX_FUZZ_EXAMPLES", "25"))
SEEDS = fuzzing.seeds()
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


@FUZZ
@given(fuzzing.inputs(SEEDS), st.sampled_from(fuzzing.FORMATS))
def test_library_never_raises(raw: bytes, fmt: str) -> None:
    fuzzing.run_library(raw, fmt)


@FUZZ
@given(fuzzing.inputs(SEEDS), st.randoms(use_true_random=False))
def test_commands_keep_their_promises(raw: bytes, rnd: random.Random) -> None:
    fuzzing.check_input(raw, lambda invocations: rnd.sample(invocations, 4))


# The seeds that hold JSON objects, each with the fields a wrong type can be given to.
LOADED = [found for found in map(fuzzing.load_seed, SEEDS) if found is not None and found[0]]


def test_most_seeds_hold_objects_to_mistype() -> None:
    assert len(LOADED) >= len(SEEDS) // 2 and all(fuzzing.field_paths(objs[0])
                                                   for objs, _ in LOADED)


@FUZZ
@given(st.sampled_from(LOADED), st.sampled_from(fuzzing.WRONG + fuzzing.WRONG_DEEP),
       st.data())
def test_every_field_given_a_wrong_type(loaded: tuple[list[object], bool], wrong: object,
                                        data: st.DataObject) -> None:
    objs, lines = [copy.deepcopy(o) for o in loaded[0]], loaded[1]
    i = data.draw(st.integers(0, len(objs) - 1))
    path = data.draw(st.sampled_from(fuzzing.field_paths(objs[i])))
    objs[i] = fuzzing.replace_at(objs[i], path, wrong)
    raw = fuzzing.dump_seed(objs, lines)
    for fmt in fuzzing.FORMATS:
        fuzzing.run_library(raw, fmt)


def test_the_long_run_counts_a_slow_input_as_a_failure() -> None:
    # a few seconds of the long run: with no time allowed, every input it tries is too slow
    def long_run(slow: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tests.fuzz_long", "--minutes", "0.02",
                               "--batch", "3", "--commands", "1", "--slow", slow,
                               "--skip-special"],
                              capture_output=True, text=True, timeout=300, cwd=ROOT)

    failed = long_run("0")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "distinct failures: 1" in failed.stdout and "--- slow input\n" in failed.stdout
    passed = long_run("1000")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "distinct failures: 0" in passed.stdout and "slow: " in passed.stdout
