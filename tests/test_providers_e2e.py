"""The official SDK clients send a built body to a stub server on 127.0.0.1, which checks it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from sessionctx.context import build_context
from sessionctx.providers import build_request, validate
from tests.conftest import assistant, call, image, recs, result, text, user

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

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            state.received.append((self.path, json.loads(self.rfile.read(length))))
            data = json.dumps(state.reply).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def body(provider: str) -> dict[str, Any]:
    return build_request(build_context(recs(*HISTORY)), provider, system="be brief").body


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
    assert validate({"messages": sent["messages"]}, "anthropic") == []


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
