"""docs/frameworks.md's examples run as written, each on an interrupted history, against local
stub endpoints that refuse a broken history as the OpenAI APIs do: an example whose repair
failed raises. Each stub also shows that the model was told of the interrupted call (the note)
and that no result was made up for it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.stub_servers import serve

for module in ("pydantic_ai", "agents", "langchain", "langchain_openai", "litellm"):
    pytest.importorskip(module)

DOC = Path(__file__).resolve().parent.parent / "docs" / "frameworks.md"
TITLES = ["pydantic-ai", "OpenAI Agents SDK", "LangChain and LangGraph", "LiteLLM"]

# A deploy whose process died before the tool answered: the history ends on the call.
INTERRUPTED = [
    {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "deploy it"}]},
    {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "deploy",
                                    "args": {"env": "prod"}, "tool_call_id": "call_1"}]},
]


def examples() -> dict[str, str]:
    out = {}
    for section in DOC.read_text().split("\n## ")[1:]:
        title, _, body = section.partition("\n")
        found = re.search(r"```python adapter\n(.*?)```", body, re.S)
        if found:
            out[title] = found.group(1)
    return out


def test_every_framework_has_an_example() -> None:
    assert sorted(examples()) == sorted(TITLES)


def test_the_litellm_proxy_config_names_a_module_attribute() -> None:
    text = DOC.read_text()
    assert "litellm_settings:\n  callbacks: repair.sessionctx_logger" in text


@pytest.mark.parametrize("title", TITLES)
def test_the_example_runs_as_written_on_an_interrupted_history(
        title: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code = examples()[title]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "interrupted.json").write_text(json.dumps(INTERRUPTED))
    monkeypatch.setenv("SESSIONCTX_STORE", f"sqlite:///{tmp_path / 'sessions.db'}")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    kind = "chat" if title in ("LiteLLM", "LangChain and LangGraph") else "responses"
    with serve(kind) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.url)
        namespace: dict[str, object] = {}
        exec(compile(code, str(DOC), "exec"), namespace)  # the page's own code, as written
    assert stub.bodies and not stub.rejected, stub.rejected
    sent = json.dumps(stub.bodies[0])
    assert "interrupted before any result was recorded" in sent  # the note reached the model
    assert "call_1" in sent  # named in the note ...
    assert not _answers(stub.bodies[0], "call_1")  # ... and never answered
    if title in ("pydantic-ai", "OpenAI Agents SDK", "LiteLLM"):
        printed = capsys.readouterr().out
        assert "call_1" in printed  # the pending call reached the program


def _answers(body: dict[str, Any], call_id: str) -> bool:
    """Whether any result in the body answers `call_id` (a made-up one would)."""
    for item in body.get("input") or body.get("messages") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call_output" and item.get("call_id") == call_id:
            return True
        if item.get("role") == "tool" and item.get("tool_call_id") == call_id:
            return True
    return False
