"""Tool definitions: every accepted shape read, each provider's shape sent, and the rules about
a request whose history holds tool blocks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sessionctx.context import build_context
from sessionctx.providers import (
    PROVIDERS,
    BuildRequestOptions,
    ToolsError,
    as_text,
    build_request,
    tools,
    validate,
)
from tests.conftest import assistant, call, image, recs, result, text, user
from tests.sdk_types import sdk_check

SCHEMA = {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}
HISTORY = (user("go"), assistant(text("running"), call("c1", "bash", cmd="ls")),
           result("c1", "a.txt"), assistant(call("c2", "fs.read", path="a.txt")),
           result("c2", "hello", "fs.read"), assistant(text("done")), user("thanks"))

SHAPES: dict[str, Any] = {
    "openai-chat": [{"type": "function", "function": {"name": "bash", "description": "Run",
                                                      "parameters": SCHEMA}}],
    "openai-responses": {"tools": [{"type": "function", "name": "bash", "description": "Run",
                                    "parameters": SCHEMA, "strict": False}]},
    "anthropic": {"tools": [{"name": "bash", "description": "Run", "input_schema": SCHEMA}]},
    "mcp-result": {"tools": [{"name": "bash", "title": "Bash", "description": "Run",
                              "inputSchema": SCHEMA, "annotations": {"readOnlyHint": False}}]},
    "mcp-jsonrpc": {"jsonrpc": "2.0", "id": 1,
                    "result": {"tools": [{"name": "bash", "description": "Run",
                                          "inputSchema": SCHEMA}], "nextCursor": None}},
    "gemini": [{"functionDeclarations": [{"name": "bash", "description": "Run",
                                          "parametersJsonSchema": SCHEMA}]}],
    "bedrock": {"toolConfig": {"tools": [{"toolSpec": {"name": "bash", "description": "Run",
                                                       "inputSchema": {"json": SCHEMA}}}]}},
}


def defs(*names: str) -> tuple[tools.Tool, ...]:
    read, problems = tools.read_tools([{"name": n, "input_schema": SCHEMA} for n in names])
    assert problems == []
    return tuple(read)


def build(provider: str, opts: BuildRequestOptions, *messages: dict[str, Any],
          model: str | None = None) -> Any:
    req = build_request(build_context(recs(*messages)), provider, model, "be brief", opts)
    assert validate(req.body, provider, model) == [], provider
    sdk_check(provider, req.body)
    return req


@pytest.mark.parametrize("shape", SHAPES)
def test_every_definition_shape_is_read(shape: str) -> None:
    read, problems = tools.read_tools(SHAPES[shape])
    assert problems == []
    assert read == [tools.Tool("bash", "Run", SCHEMA)]


def test_definitions_that_are_not_function_tools_are_reported() -> None:
    read, problems = tools.read_tools({"tools": [
        {"type": "web_search_20250305", "name": "web_search"},
        {"type": "custom", "name": "patch", "format": {"type": "grammar"}},
        {"name": "bash", "input_schema": SCHEMA},
        {"name": "bash", "input_schema": {"type": "object"}},
        {"name": "bad", "input_schema": {"type": "string"}},
        {"description": "no name"}, 7]})
    assert [t.name for t in read] == ["bash"]
    assert len(problems) == 6
    assert "tools[0]" in problems[0] and "provider's own tool" in problems[0]
    assert "second definition" in problems[2]
    with pytest.raises(ToolsError, match="expected tool definitions"):
        tools.read_tools("bash")
    with pytest.raises(ToolsError, match="not JSON"):
        tools.load_tools("{", "tools.json")


def test_a_definition_without_a_schema_takes_an_empty_object() -> None:
    read, _ = tools.read_tools([{"type": "function", "function": {"name": "now"}}])
    assert read[0].schema == {"type": "object", "properties": {}}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_definitions_go_out_in_each_providers_shape(provider: str) -> None:
    req = build(provider, BuildRequestOptions(tools=defs("bash", "fs.read"), tool_choice="auto"),
                *HISTORY)
    body = json.dumps(req.body)
    assert '"fs_read"' in body and '"fs.read"' not in body  # renamed as its calls are
    assert req.undefined_calls == []
    kinds = [c.kind for c in req.changes]
    assert tools.DEFINITION_RENAMED in kinds
    key = {"anthropic": "tools", "openai-chat": "tools", "openai-responses": "tools",
           "gemini": "tools", "bedrock": "toolConfig"}[provider]
    assert key in req.body


def test_anthropic_requires_tools_when_the_history_holds_tool_blocks() -> None:
    # prevents: "Requests which include tool_use or tool_result blocks must define tools."
    # (anthropics/anthropic-sdk-python#494)
    body = build_request(build_context(recs(*HISTORY)), "anthropic").body
    messages = [v.message for v in validate(body, "anthropic")]
    assert any("must define tools" in m for m in messages)


def test_bedrock_requires_tool_config_when_the_history_holds_tool_blocks() -> None:
    # prevents: "The toolConfig field must be defined when using the toolUse and toolResult
    # content blocks" (langgenius/dify#17545, aws-samples/bedrock-access-gateway#239)
    body = build_request(build_context(recs(*HISTORY)), "bedrock").body
    assert any("toolConfig field must be defined" in v.message
               for v in validate(body, "bedrock"))
    for provider in ("openai-chat", "openai-responses", "gemini"):
        assert validate(build_request(build_context(recs(*HISTORY)), provider).body,
                        provider) == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_tools_as_text_sends_no_tool_blocks_and_loses_nothing(provider: str) -> None:
    history = (*HISTORY[:4], result("c2", "boom", "fs.read", image(), isError=True),
               *HISTORY[5:])
    req = build(provider, BuildRequestOptions(tools_as_text=True), *history)
    body = json.dumps(req.body)
    for marker in ('"tool_use"', '"toolUse"', '"function_call"', '"functionCall"',
                   '"tool_calls"', '"toolResult"', '"tool_result"', '"functionResponse"'):
        assert marker not in body
    assert "[called tool bash (call c1) with arguments {\\\"cmd\\\":\\\"ls\\\"}]" in body
    assert "[result of tool bash (call c1)]" in body and "a.txt" in body
    assert "[tool fs.read (call c2) reported an error]" in body and "boom" in body
    kinds = [c.kind for c in req.changes]
    assert kinds.count(as_text.CALL_AS_TEXT) == 2 and kinds.count(as_text.RESULT_AS_TEXT) == 2
    change = next(c for c in req.changes if c.kind == as_text.CALL_AS_TEXT)
    assert change.message_index == 1 and change.record is not None


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_placeholder_tools_only_when_asked_and_logged(provider: str) -> None:
    req = build(provider, BuildRequestOptions(placeholder_tools=True), *HISTORY)
    placed = [c for c in req.changes if c.kind == tools.PLACEHOLDER_ADDED]
    assert [c.detail["name"] for c in placed] == ["bash", "fs_read"]
    assert tools.PLACEHOLDER_DESCRIPTION in json.dumps(req.body)
    # with definitions, only the tools they lack get one
    req = build(provider, BuildRequestOptions(tools=defs("bash"), placeholder_tools=True),
                *HISTORY)
    assert [c.detail["name"] for c in req.changes if c.kind == tools.PLACEHOLDER_ADDED] == \
        ["fs_read"]
    assert req.undefined_calls == []


def test_a_call_to_an_undefined_tool_is_reported() -> None:
    req = build("anthropic", BuildRequestOptions(tools=defs("bash")), *HISTORY)
    assert [(c.name, c.id, c.message_index) for c in req.undefined_calls] == \
        [("fs_read", "c2", 3)]
    assert req.undefined_calls[0].to_json()["record"] == {"index": 3}
    # without definitions there is nothing to compare with
    assert build_request(build_context(recs(*HISTORY)), "gemini").undefined_calls == []


@pytest.mark.parametrize(("choice", "expected"), [
    ("auto", {"anthropic": {"type": "auto"}, "openai-chat": "auto", "openai-responses": "auto",
              "gemini": {"mode": "AUTO"}, "bedrock": {"auto": {}}}),
    ("any", {"anthropic": {"type": "any"}, "openai-chat": "required",
             "openai-responses": "required", "gemini": {"mode": "ANY"},
             "bedrock": {"any": {}}}),
    ("bash", {"anthropic": {"type": "tool", "name": "bash"},
              "openai-chat": {"type": "function", "function": {"name": "bash"}},
              "openai-responses": {"type": "function", "name": "bash"},
              "gemini": {"mode": "ANY", "allowedFunctionNames": ["bash"]},
              "bedrock": {"tool": {"name": "bash"}}}),
])
def test_tool_choice_in_each_providers_shape(choice: str, expected: dict[str, Any]) -> None:
    for provider in PROVIDERS:
        body = build(provider, BuildRequestOptions(tools=defs("bash", "fs.read"),
                                                   tool_choice=choice), *HISTORY).body
        if provider == "bedrock":
            got = body["toolConfig"]["toolChoice"]
        elif provider == "gemini":
            got = body["toolConfig"]["functionCallingConfig"]
        else:
            got = body["tool_choice"]
        assert got == expected[provider], provider


def test_a_tool_choice_must_name_a_defined_tool_or_a_mode() -> None:
    ctx = build_context(recs(*HISTORY))
    with pytest.raises(ToolsError, match="neither one of"):
        build_request(ctx, "anthropic", options=BuildRequestOptions(tools=defs("bash"),
                                                                    tool_choice="grep"))
    with pytest.raises(ToolsError, match="not 'none'"):
        build_request(ctx, "bedrock", options=BuildRequestOptions(tools=defs("bash"),
                                                                  tool_choice="none"))
    with pytest.raises(ToolsError, match="needs tool definitions"):
        build_request(ctx, "gemini", options=BuildRequestOptions(tool_choice="auto"))
    none = build("anthropic", BuildRequestOptions(tools=defs("bash", "fs.read"),
                                                  tool_choice="none"), *HISTORY)
    assert none.body["tool_choice"] == {"type": "none"}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_validator_checks_definitions(provider: str) -> None:
    body = build_request(build_context(recs(*HISTORY)), provider,
                         options=BuildRequestOptions(tools=defs("bash", "fs.read"),
                                                     tool_choice="bash")).body
    text_body = json.dumps(body).replace('"bash"', '"b a s h"')
    messages = " | ".join(v.message for v in validate(json.loads(text_body), provider))
    assert "tool name must match" in messages
    assert "not a defined tool" in messages
    twice = json.loads(json.dumps(body).replace('"fs_read"', '"bash"'))
    assert "must be unique" in " | ".join(v.message for v in validate(twice, provider))
