"""Adding a provider is one module and one registry line: a toy provider registered that way
builds bodies its own validator accepts, through every policy of the provider step."""

from __future__ import annotations

import pytest

from sessionctx.changes import ChangeKind
from sessionctx.context import build_context
from sessionctx.errors import SessionctxError
from sessionctx.providers import BuildRequestOptions, build_request, registry, validate
from sessionctx.providers.tools import ToolsError, read_tools
from tests.conftest import assistant, call, image, recs, result, text, user


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.MODULES, "toy", "tests.toy_provider")  # the one line


def _context():
    return build_context(recs(
        user("list the files"), assistant(text("looking"), call("c1", "ls")),
        result("c1", "a.txt", "ls", image()), user("and again"), user("please"),
        assistant(call("c2", "ls")), user("never mind")))


def test_a_toy_provider_builds_a_body_its_validator_accepts(toy: None):
    req = build_request(_context(), "toy")
    assert req.model == "toy-1"
    assert validate(req.body, "toy") == []
    speakers = [t["speaker"] for t in req.body["turns"]]
    assert speakers == ["user", "assistant", "user"]  # c2 has no result, so its turn goes
    assert req.body["turns"][2]["lines"][0].startswith("result c1: a.txt [image omitted")
    assert req.body["turns"][2]["lines"][-3:] == ["and again", "please", "never mind"]
    kinds = {c.kind for c in req.changes}
    assert {ChangeKind.TURNS_MERGED, ChangeKind.IMAGE_OVER_LIMIT} <= kinds  # the toy row rules


def test_the_toy_validator_and_tool_shape_are_its_own(toy: None):
    tools, _ = read_tools([{"name": "ls", "input_schema": {"type": "object"}}])
    req = build_request(_context(), "toy", options=BuildRequestOptions(tools=tuple(tools),
                                                                     tool_choice="auto"))
    assert req.body["functions"] == [{"name": "ls", "schema": {"type": "object"}}]
    assert validate(req.body, "toy") == []
    broken = {"turns": [{"speaker": "assistant", "lines": [""]}], "functions": [{"name": "a b"}]}
    paths = [v.path for v in validate(broken, "toy")]
    assert paths == ["turns[0].speaker", "turns[0].lines", "functions[0].name", "functions[0]"]
    with pytest.raises(ToolsError, match="not 'none'"):
        build_request(_context(), "toy", options=BuildRequestOptions(tools=tuple(tools),
                                                                   tool_choice="none"))


def test_an_unknown_provider_is_a_sessionctx_error():
    with pytest.raises(SessionctxError, match="unknown provider 'toy'; known: anthropic"):
        build_request(_context(), "toy")
    with pytest.raises(SessionctxError, match="unknown provider"):
        validate({}, "nope")
