"""The repair promise on every fixture and every fuzzed input of every format: after `repair`,
`check` reports nothing left to repair, or `repair` names each thing it left (its
`remaining`); a second `repair` changes nothing. An input repair cannot write is refused with
a clear error, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from sessionctx.cli import main
from sessionctx.errors import SessionctxError
from sessionctx.writeback.plan import plan_repair
from tests import fuzzing
from tests.test_fuzz import EXAMPLES, SEEDS

# what check says beside repairs: whether anything is sent at all, and images a provider
# refuses for their size, which repair does not touch
NOT_REPAIRS = frozenset({"nothing_sent", "image_too_large", "unlisted"})


def assert_repair_keeps_its_promise(raw: bytes, where: Path) -> None:
    try:
        plan = plan_repair(raw, str(where))
    except SessionctxError:
        return  # refused, with its message
    where.write_bytes(plan.after)
    # the format it was repaired in: a repaired list may also read as another format
    result = CliRunner().invoke(main, ["check", str(where), "--json", "--from", plan.format])
    assert result.exit_code in (0, 1), result.output
    left = [p for p in json.loads(result.output)["problems"] if p["kind"] not in NOT_REPAIRS]
    assert len(left) == len(plan.remaining), (left, plan.remaining)
    again = plan_repair(plan.after, str(where), plan.format)
    assert again.after == plan.after and again.fixes == [], [f.to_json() for f in again.fixes]


@pytest.mark.parametrize("seed", fuzzing.seed_files(), ids=lambda p: p.name)
def test_every_fixture(tmp_path: Path, seed: Path) -> None:
    assert_repair_keeps_its_promise(seed.read_bytes(), tmp_path / seed.name)


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(fuzzing.inputs(SEEDS))
def test_every_fuzzed_input(tmp_path_factory: pytest.TempPathFactory, raw: bytes) -> None:
    where = tmp_path_factory.mktemp("repair") / "input.jsonl"
    assert_repair_keeps_its_promise(raw, where)
