"""The official SDK clients send a built body to a stub server on 127.0.0.1, which checks it."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from sessionctx.context import build_context
from sessionctx.providers import PROVIDERS, BuildRequestOptions, build_request, tools, validate
from tests.conftest import assistant, call, image, recs, result, text, user
from tests.stub_servers import json_server

HISTORY = (user("look", content=[text("look"), image()]), assistant(call("fs.read:1")),
           result("fs.read:1", "file body", "bash", image()), assistant(text("seen")),
           user("next"))

ANTHROPIC_REPLY = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                   "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                   "stop_sequence": None,
                   "usage": {"input_tokens": 1, "output_tokens": 1}}
CHAT_REPLY = {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
              "choices": [{"index": 0, "finish_reason": "stop",
                           "message": {"role": "assistant", "content": "ok"}}]}
RESPONSES_REPLY = {"id": "resp_1", "object": "response", "created_at": 0, "model": "m",
                   "status": "completed", "output": [], "parallel_tool_calls": True,
                   "tool_choice": "auto", "tools": []}
GEMINI_REPLY = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]},
                                "finishReason": "STOP"}]}


class Stub:
    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.reply: dict[str, Any] = {}


@pytest.fixture
def stub() -> Iterator[tuple[Stub, str]]:
    state = Stub()

    def answer(path: str, body: Any) -> tuple[int, Any]:
        state.received.append((path, body))
        return 200, state.reply

    with json_server(answer) as url:
        yield state, url


BEDROCK_REPLY = {"output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
                 "stopReason": "end_turn",
                 "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                 "metrics": {"latencyMs": 1}}
TOOLS = tools.read_tools({"tools": [
    {"name": "bash", "description": "Run a shell command",
     "inputSchema": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
    {"name": "fs.read", "inputSchema": {"type": "object"}}]})[0]


def body(provider: str, options: BuildRequestOptions | None = None) -> dict[str, Any]:
    return build_request(build_context(recs(*HISTORY)), provider, system="be brief",
                         options=options).body


def send(provider: str, b: dict[str, Any], url: str) -> None:
    """The body sent through the provider's official client, each key as the client takes it."""
    if provider == "anthropic":
        import anthropic
        anthropic.Anthropic(api_key="test", base_url=url, max_retries=0).messages.create(
            model="claude-opus-4-8", max_tokens=16, **b)
    elif provider == "openai-chat":
        import openai
        openai.OpenAI(api_key="test", base_url=url + "/v1", max_retries=0
                      ).chat.completions.create(model="gpt-5.1", **b)
    elif provider == "openai-responses":
        import openai
        openai.OpenAI(api_key="test", base_url=url + "/v1", max_retries=0
                      ).responses.create(model="gpt-5.1", **b)
    elif provider == "gemini":
        from google import genai
        from google.genai import types
        client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=url))
        config = types.GenerateContentConfig.model_validate(
            {k: v for k, v in b.items() if k != "contents"})
        client.models.generate_content(
            model="gemini-3-pro", config=config,
            contents=[types.Content.model_validate(c) for c in b["contents"]])
    else:
        import boto3  # type: ignore[import-untyped]
        bedrock = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url,
                              aws_access_key_id="test", aws_secret_access_key="test")
        bedrock.converse(modelId="anthropic.claude-opus-4-8", **_bytes(copy.deepcopy(b)))


def _bytes(obj: Any) -> Any:
    """Bedrock's image and document bytes as boto3 takes them (it base64-encodes them again)."""
    if isinstance(obj, dict):
        for key in ("image", "document"):
            source = obj.get(key, {}).get("source") if isinstance(obj.get(key), dict) else None
            if isinstance(source, dict) and isinstance(source.get("bytes"), str):
                source["bytes"] = base64.b64decode(source["bytes"])
        for value in obj.values():
            _bytes(value)
    elif isinstance(obj, list):
        for value in obj:
            _bytes(value)
    return obj


def _same(provider: str, key: str, sent: Any, built: Any) -> bool:
    """Whether the client sent the value as built; google-genai re-spells some keys of what it
    is given as objects (snake_case is valid JSON for that API too), so Gemini's values are
    compared as the SDK reads them."""
    if provider == "gemini":
        from google.genai import types
        from pydantic import TypeAdapter

        kind = {"contents": list[types.Content], "systemInstruction": types.Content,
                "tools": list[types.Tool], "toolConfig": types.ToolConfig}[key]
        adapter: TypeAdapter[Any] = TypeAdapter(kind)
        return bool(adapter.dump_python(adapter.validate_python(sent), exclude_none=True) ==
                    adapter.dump_python(adapter.validate_python(built), exclude_none=True))
    return bool(sent == built)


REPLIES: dict[str, dict[str, Any]] = {"anthropic": ANTHROPIC_REPLY, "openai-chat": CHAT_REPLY,
           "openai-responses": RESPONSES_REPLY, "gemini": GEMINI_REPLY,
           "bedrock": BEDROCK_REPLY}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_body_with_tools_goes_through_the_official_client(stub: tuple[Stub, str],
                                                            provider: str) -> None:
    state, url = stub
    state.reply = REPLIES[provider]
    b = body(provider, BuildRequestOptions(tools=tuple(TOOLS), tool_choice="auto"))
    send(provider, b, url)
    _, sent = state.received[0]
    for key, value in b.items():
        assert _same(provider, key, sent[key], value), (provider, key)
    assert validate(sent, provider) == []
    assert "fs_read" in json.dumps(sent["toolConfig" if provider == "bedrock" else "tools"])




def test_anthropic_client_sends_the_body(stub: tuple[Stub, str]) -> None:
    import anthropic
    state, url = stub
    state.reply = ANTHROPIC_REPLY
    b = body("anthropic")
    client = anthropic.Anthropic(api_key="test", base_url=url, max_retries=0)
    client.messages.create(model="claude-opus-4-8", max_tokens=16, messages=b["messages"],
                           system=b["system"])
    path, sent = state.received[0]
    assert path == "/v1/messages"
    assert sent["messages"] == b["messages"] and sent["system"] == "be brief"
    assert validate({"messages": sent["messages"]}, "anthropic") != []  # no tools defined


def test_openai_chat_client_sends_the_body(stub: tuple[Stub, str]) -> None:
    import openai
    state, url = stub
    state.reply = CHAT_REPLY
    b = body("openai-chat")
    client = openai.OpenAI(api_key="test", base_url=url + "/v1", max_retries=0)
    client.chat.completions.create(model="gpt-5.1", messages=b["messages"])
    path, sent = state.received[0]
    assert path == "/v1/chat/completions"
    assert sent["messages"] == b["messages"]
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "tool",
                                                     "user", "assistant", "user"]
    assert validate({"messages": sent["messages"]}, "openai-chat") == []


def test_openai_responses_client_sends_the_body(stub: tuple[Stub, str]) -> None:
    import openai
    state, url = stub
    state.reply = RESPONSES_REPLY
    b = body("openai-responses")
    client = openai.OpenAI(api_key="test", base_url=url + "/v1", max_retries=0)
    client.responses.create(model="gpt-5.1", input=b["input"], instructions=b["instructions"])
    path, sent = state.received[0]
    assert path == "/v1/responses"
    assert sent["input"] == b["input"] and sent["instructions"] == "be brief"
    assert validate({"input": sent["input"]}, "openai-responses") == []


def test_gemini_client_sends_the_body(stub: tuple[Stub, str]) -> None:
    from google import genai
    from google.genai import types
    state, url = stub
    state.reply = GEMINI_REPLY
    b = body("gemini")
    client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=url))
    contents = [types.Content.model_validate(c) for c in b["contents"]]
    config = types.GenerateContentConfig(
        system_instruction=types.Content.model_validate(b["systemInstruction"]))
    client.models.generate_content(model="gemini-3-pro", contents=contents, config=config)
    path, sent = state.received[0]
    assert path.endswith("models/gemini-3-pro:generateContent")
    assert validate({"contents": sent["contents"]}, "gemini") == []
    calls = [p for c in sent["contents"] for p in c["parts"] if "functionCall" in p]
    assert calls and calls[0]["functionCall"]["name"] == "bash"
    assert sent["systemInstruction"]["parts"] == [{"text": "be brief"}]


PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF\n").decode()
DOCUMENTS = (user("read", content=[text("summarize the report"),
                                   {"type": "document", "title": "report.pdf",
                                    "source": {"type": "base64", "media_type": "application/pdf",
                                               "data": PDF}}]),
             assistant(call("c1", "read")),
             result("c1", "notes", "read"), assistant(text("ok")), user("next"))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_body_with_a_document_goes_through_the_official_client(stub: tuple[Stub, str],
                                                                 provider: str) -> None:
    state, url = stub
    state.reply = REPLIES[provider]
    b = build_request(build_context(recs(*DOCUMENTS)), provider, system="be brief",
                      options=BuildRequestOptions(placeholder_tools=True)).body
    send(provider, b, url)
    _, sent = state.received[0]
    for key, value in b.items():
        assert _same(provider, key, sent[key], value), (provider, key)
    assert validate(sent, provider) == []
    # google-genai sends the bytes it decoded in the URL-safe base64 alphabet
    assert PDF in json.dumps(sent) or PDF.replace("+", "-").replace("/", "_") in json.dumps(sent)
