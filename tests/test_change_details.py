"""Every change's detail has the keys and value types change_details.DETAILS gives its kind."""

from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner

from sessionctx.change_details import DETAILS, NoDetail
from sessionctx.changes import ChangeKind, Source
from sessionctx.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
PROVIDERS = ["anthropic", "openai-chat", "openai-responses", "gemini", "bedrock"]
VARIANTS = [["--placeholder-tools"], ["--placeholder-tools", "--note-unpaired"],
            ["--tools-as-text", "--thinking-as-text"]]


def fixture_changes():
    """Every change `build --provider P --json` reports for every fixture, as JSON."""
    runner = CliRunner()
    files = sorted(p for p in FIXTURES.rglob("*") if p.is_file()
                   and not p.name.startswith("LICENSE") and p.suffix != ".md")
    for path in files:
        for provider in PROVIDERS:
            for extra in VARIANTS:
                run = runner.invoke(main, ["build", str(path), "--provider", provider,
                                           "--json", "--quiet", *extra])
                if run.exit_code != 0:
                    continue
                yield from msgspec.json.decode(run.output)["changes"]


def problem(kind: ChangeKind, detail: dict[str, Any]) -> str | None:
    """What is wrong with `detail` for a change of `kind`, None if nothing."""
    shape: Any = DETAILS[kind]  # a TypedDict class
    keys = set(detail)
    if not shape.__required_keys__ <= keys <= shape.__required_keys__ | shape.__optional_keys__:
        declared = sorted(shape.__annotations__)
        return f"{kind}: keys {sorted(keys)}, {shape.__name__} declares {declared}"
    try:
        msgspec.convert(detail, shape)
    except msgspec.ValidationError as e:
        return f"{kind}: {e}"
    return None


def test_every_kind_has_a_detail_shape():
    assert set(DETAILS) == set(ChangeKind)


def test_every_fixture_change_has_its_kinds_detail():
    seen = set()
    found = []
    for change in fixture_changes():
        kind = ChangeKind(change["kind"])
        seen.add(kind)
        wrong = problem(kind, change.get("detail") or {})
        if wrong:
            found.append(wrong)
    assert not found, found[:5]
    # the fixtures exercise kinds with a detail and kinds without one
    assert len([k for k in seen if DETAILS[k] is not NoDetail]) >= 10
    assert any(DETAILS[k] is NoDetail for k in seen)


@pytest.mark.parametrize(("kind", "detail"), [
    (ChangeKind.DROPPED_UNPAIRED_CALL, {"tool_call_id": "a"}),  # a key missing
    (ChangeKind.THINKING_DROPPED, {"count": "2"}),  # a value of the wrong type
    (ChangeKind.TURNS_MERGED, {"id": "a"}),  # a key the kind has none of
])
def test_a_detail_off_its_shape_is_found(kind, detail):
    assert problem(kind, detail) is not None


def test_detail_of_a_change_made_in_code_fits():
    from sessionctx.changes import Change
    change = Change(ChangeKind.IMAGE_DOWNSCALED, "r", Source(line=1), 0,
                    {"width": 3000, "height": 10, "limit": 2000})
    assert problem(change.kind, change.detail) is None
