"""The SDK summarizers end to end against a local HTTP stub, and the summarizer spec parser."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sessionctx.compaction.checkpoint import compact
from sessionctx.compaction.summarizers import (
    AnthropicSummarizer,
    CommandSummarizer,
    OpenAISummarizer,
    SummarizerError,
    parse_summarizer,
)
from sessionctx.compaction.target import FileTarget
from tests.stub_servers import json_server
from tests.test_compaction_checkpoint import (
    SMALL,
    SUMMARY_FUNCS,
    checkpoints,
    history,
    write_session,
)

_ns: dict[str, Any] = {}
exec(SUMMARY_FUNCS, _ns)
summary_for = _ns["summary_for"]


class Stub:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.headers: list[dict[str, str]] = []
        self.status = 200
        self.url = ""

    def answer(self, path: str, body: Any) -> tuple[int, dict[str, Any]]:
        self.requests.append((path, self.headers[-1], body))
        if self.status != 200:
            return self.status, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "stub refuses"}}
        if path.endswith("/messages"):
            return 200, {"id": "msg_1", "type": "message", "role": "assistant",
                         "model": body["model"], "stop_reason": "end_turn",
                         "stop_sequence": None,
                         "content": [{"type": "text",
                                      "text": summary_for(body["messages"][0]["content"])}],
                         "usage": {"input_tokens": 1, "output_tokens": 1}}
        return 200, {"id": "c1", "object": "chat.completion", "created": 0,
                     "model": body["model"], "choices": [{
                         "index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant",
                                     "content": summary_for(body["messages"][-1]["content"])}}],
                     "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


@pytest.fixture
def stub() -> Iterator[Stub]:
    s = Stub()
    with json_server(s.answer, s.headers) as url:
        s.url = url
        yield s


def test_anthropic_summarizer_end_to_end(tmp_path, stub, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-a")
    monkeypatch.setenv("SESSIONCTX_ANTHROPIC_BASE_URL", stub.url)
    path = tmp_path / "s.jsonl"
    write_session(path, history(0, 6))
    written = compact(FileTarget(str(path)), AnthropicSummarizer("claude-test", timeout=10),
                      SMALL)
    assert written.record["summaryModelRef"] == "anthropic:claude-test"
    (route, headers, body), = stub.requests
    assert route == "/v1/messages", sorted(headers)
    assert "test-key-a" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
    assert "untrusted data" in body["system"] and body["model"] == "claude-test"
    assert "/srv/app/mod0.py" in written.summary
    assert len(checkpoints(path)) == 1


def test_openai_summarizer_end_to_end(tmp_path, stub, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-o")
    monkeypatch.setenv("SESSIONCTX_OPENAI_BASE_URL", stub.url + "/v1")
    path = tmp_path / "s.jsonl"
    write_session(path, history(0, 6))
    written = compact(FileTarget(str(path)), OpenAISummarizer("gpt-test", timeout=10), SMALL)
    assert written.record["summaryModelRef"] == "openai:gpt-test"
    (route, headers, body), = stub.requests
    assert route == "/v1/chat/completions"
    assert headers["authorization"] == "Bearer test-key-o"
    assert body["messages"][0]["role"] == "system"
    assert len(checkpoints(path)) == 1


@pytest.mark.parametrize("make, key, env", [
    (lambda: AnthropicSummarizer("m", timeout=10), "ANTHROPIC_API_KEY",
     "SESSIONCTX_ANTHROPIC_BASE_URL"),
    (lambda: OpenAISummarizer("m", timeout=10), "OPENAI_API_KEY", "SESSIONCTX_OPENAI_BASE_URL"),
])
def test_provider_error_leaves_the_session_unchanged(tmp_path, stub, monkeypatch, make, key,
                                                      env) -> None:
    stub.status = 400
    monkeypatch.setenv(key, "k")
    monkeypatch.setenv(env, stub.url + ("/v1" if key.startswith("OPENAI") else ""))
    path = tmp_path / "s.jsonl"
    write_session(path, history(0, 6))
    before = path.read_bytes()
    with pytest.raises(SummarizerError, match="failed"):
        compact(FileTarget(str(path)), make(), SMALL)
    assert path.read_bytes() == before


def test_missing_key_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(SummarizerError, match="ANTHROPIC_API_KEY is not set"):
        AnthropicSummarizer("m").summarize("x")
    with pytest.raises(SummarizerError, match="OPENAI_API_KEY is not set"):
        OpenAISummarizer("m").summarize("x")


def test_parse_summarizer_specs() -> None:
    assert isinstance(parse_summarizer("command:cat"), CommandSummarizer)
    assert parse_summarizer("anthropic:claude-x").ref == "anthropic:claude-x"
    assert parse_summarizer("openai:gpt-x").ref == "openai:gpt-x"
    for bad in ("cat", "command:", "gemini:x"):
        with pytest.raises(ValueError):
            parse_summarizer(bad)
    with pytest.raises(SummarizerError, match="cannot run summarizer"):
        CommandSummarizer("/no/such/program").summarize("x")
