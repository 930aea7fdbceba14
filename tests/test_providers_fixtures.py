"""Every real transcript the core can read gives a valid body for all five providers."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionctx.context import build_context
from sessionctx.inputs import read_input
from sessionctx.providers import PROVIDERS, BuildRequestOptions, build_request, validate
from tests.conftest import FIXTURES
from tests.sdk_types import sdk_check

SDK_MAX_BYTES = 100_000  # the SDK type check is slow on the large session; ours runs on all


def _readable() -> list[Path]:
    paths = sorted(p for p in FIXTURES.rglob("*") if p.is_file()
                   and not p.name.startswith(("LICENSE", "SOURCES")))
    return [p for p in paths if not read_input(str(p)).fatal and read_input(str(p)).records]


@pytest.mark.parametrize("path", _readable(), ids=lambda p: p.name)
def test_fixture_bodies_are_valid(path: Path) -> None:
    ctx = build_context(read_input(str(path)).records)
    for provider in PROVIDERS:
        body = build_request(ctx, provider,
                             options=BuildRequestOptions(placeholder_tools=True)).body
        assert validate(body, provider) == [], (path.name, provider)
        if path.stat().st_size <= SDK_MAX_BYTES:
            sdk_check(provider, body)


def test_some_fixtures_are_readable() -> None:
    assert _readable()
