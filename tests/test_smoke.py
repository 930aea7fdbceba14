from sessionctx import build_context, read_path
from tests.conftest import ROOT


def test_example_builds():
    loaded = read_path(str(ROOT / "examples" / "interrupted.jsonl"))
    ctx = build_context(loaded.records)
    assert [p.id for p in ctx.pending_calls] == ["patch-1"]
