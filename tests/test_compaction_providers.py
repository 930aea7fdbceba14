"""A compacted large session still passes every provider's validator."""

from __future__ import annotations

import shutil

from sessionctx import providers
from sessionctx.compaction.checkpoint import compact
from sessionctx.compaction.target import FileTarget
from sessionctx.context import build_context
from sessionctx.records import read_path
from tests.conftest import FIXTURES
from tests.test_compaction_checkpoint import summarizer, write_summarizer


def test_compacted_large_fixture_passes_every_provider_validator(tmp_path) -> None:
    path = tmp_path / "large-session.jsonl"
    shutil.copyfile(FIXTURES / "pi" / "large-session.jsonl", path)
    compact(FileTarget(str(path)), summarizer(write_summarizer(tmp_path)))
    ctx = build_context(read_path(str(path)).records)
    for provider in providers.PROVIDERS:
        request = providers.build_request(
            ctx, provider, options=providers.BuildRequestOptions(placeholder_tools=True))
        assert providers.validate(request.body, provider) == [], provider
