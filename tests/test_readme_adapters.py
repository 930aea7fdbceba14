"""The README's framework examples run as written, against local stub endpoints that refuse a
broken history as the OpenAI API does (so an example whose repair failed raises)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.stub_servers import serve

for module in ("pydantic_ai", "agents", "langchain", "litellm"):
    pytest.importorskip(module)

README = Path(__file__).resolve().parent.parent / "docs" / "frameworks.md"

# A deploy whose process died before the tool answered; the user came back later.
HISTORY = [
    {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "deploy it"}]},
    {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "deploy",
                                    "args": {"env": "prod"}, "tool_call_id": "call_1"}]},
    {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "well?"}]},
    {"kind": "response", "parts": [{"part_kind": "text", "content": "Checking."}]},
]


def adapter_blocks() -> dict[str, str]:
    text = README.read_text()
    out = {}
    for title, body in re.findall(r"## ([^\n]+)\n\n```python adapter\n(.*?)```", text, re.S):
        out[title] = body
    return out


def test_every_framework_has_an_example() -> None:
    assert set(adapter_blocks()) == {"pydantic-ai", "OpenAI Agents SDK", "LangChain",
                                     "LiteLLM"}


@pytest.mark.parametrize("title", ["pydantic-ai", "OpenAI Agents SDK", "LangChain", "LiteLLM"])
def test_the_example_runs_as_written(title: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    code = adapter_blocks()[title]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "history.json").write_text(json.dumps(HISTORY))
    monkeypatch.setenv("SESSIONCTX_STORE", f"sqlite:///{tmp_path / 'sessions.db'}")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    kind = "chat" if title in ("LiteLLM",) else "responses"
    with serve(kind) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.url)
        namespace: dict[str, object] = {}
        exec(compile(code, str(README), "exec"), namespace)  # the README's own code
        if title != "LangChain":
            assert stub.bodies and not stub.rejected
    if title == "LangChain":
        printed = capsys.readouterr().out
        assert "did it work?" in printed and "call_1" not in printed
    if title in ("OpenAI Agents SDK", "LangChain"):
        assert (tmp_path / "sessions.db").exists()
