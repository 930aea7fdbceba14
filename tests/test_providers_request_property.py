"""Property: with tool definitions (or tool turns as text, or placeholders), thinking on or off,
a prefill, cache breakpoints, many calls in one turn and documents, every provider's body
still passes our validator and the SDK's request types (botocore's Converse shape for
Bedrock), or the build refuses a setting the target does not take."""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionctx.context import build_context
from sessionctx.providers import PROVIDERS, BuildRequestOptions, build_request, tools, validate
from sessionctx.providers.policies.request_settings import RequestError
from tests.conftest import recs
from tests.sdk_types import sdk_check
from tests.test_providers_property import history

Msg = dict[str, Any]
PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF\n").decode()
DOCS = st.sampled_from([
    {"type": "document", "title": "a.pdf",
     "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}},
    {"type": "document", "text": "notes", "mimeType": "text/plain", "name": "n.txt"},
    {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF}",
                              "filename": "f.pdf"}},
    {"type": "document", "data": "%%%", "mimeType": "application/pdf"}])
MODELS = {"anthropic": ["claude-sonnet-4-5", "claude-opus-4-8"],
          "bedrock": ["anthropic.claude-3-7-sonnet", "anthropic.claude-opus-4-8"]}


@st.composite
def request_history(draw: st.DrawFn) -> list[Msg]:
    messages = [dict(m) for m in draw(history())]
    for m in messages:
        content = m.get("content")
        if m["role"] in ("user", "toolResult") and isinstance(content, list):
            content = list(content)
            if draw(st.integers(0, 3)) == 0:
                content.append(draw(DOCS))
            if content and content[0].get("type") == "text" and content[0].get("text", "").strip() \
                    and draw(st.booleans()):
                content[0] = {**content[0], "cache_control": {"type": "ephemeral"}}
            m["content"] = content
    if draw(st.integers(0, 6)) == 0:  # many calls in one turn, all answered
        n = draw(st.sampled_from([3, 129, 130]))
        messages.append({"role": "assistant", "content": [
            {"type": "toolCall", "id": f"m{i}", "name": "bash", "arguments": {}}
            for i in range(n)], "api": "anthropic-messages", "model": "claude-opus-4-8"})
        messages.extend({"role": "toolResult", "toolCallId": f"m{i}", "toolName": "bash",
                         "content": [{"type": "text", "text": "ok"}], "isError": False}
                        for i in range(n))
    if draw(st.booleans()):
        messages.append({"role": "user", "content": [{"type": "text", "text": "go on"}]})
    return messages


@st.composite
def definitions(draw: st.DrawFn) -> dict[str, Any]:
    """The tool options: definitions in a drawn shape (some called names left out), or the
    tool turns as text, or placeholders."""
    way = draw(st.sampled_from(["definitions", "as_text", "placeholders", "both"]))
    if way == "as_text":
        return {"tools_as_text": True}
    if way == "placeholders":
        return {"placeholder_tools": True}
    names = draw(st.lists(st.sampled_from(["bash", "mcp.x", "other"]), min_size=1,
                          unique=True))
    schema = {"type": "object", "properties": {"cmd": {"type": "string"}}}
    shape = draw(st.sampled_from(["openai", "anthropic", "mcp"]))
    entries = [{"type": "function", "function": {"name": n, "parameters": schema}}
               if shape == "openai" else {"name": n, "input_schema": schema}
               if shape == "anthropic" else {"name": n, "inputSchema": schema} for n in names]
    read, _ = tools.read_tools({"tools": entries})
    choice = draw(st.sampled_from([None, "auto", "any", read[0].name]))
    return {"tools": tuple(read), "tool_choice": choice, "placeholder_tools": way == "both"}


def _refused(provider: str, model: str | None, messages: list[Msg], thinking: bool | None,
             prefill: str | None, tool_choice: str | None = None) -> bool:
    """Whether the build is to refuse these settings (check_settings and add_prefill)."""
    from sessionctx.providers.capabilities import capability
    cap, _ = capability(provider, model)
    if (thinking is not None or prefill is not None) and not cap.thinking_rules:
        return True
    if thinking and not cap.forced_tool_thinking and tool_choice not in (None, "auto", "none"):
        return True
    return prefill is not None and (not cap.prefill or bool(thinking))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(request_history(), definitions(), st.sampled_from([None, True, False]),
       st.sampled_from([None, "[", "The answer is "]), st.data())
def test_every_request_body_passes_the_validators_and_sdk_types(
        messages: list[Msg], tool_options: dict[str, Any], thinking: bool | None,
        prefill: str | None, data: st.DataObject) -> None:
    ctx = build_context(recs(*messages))
    for provider in PROVIDERS:
        model = data.draw(st.sampled_from(MODELS[provider])) if provider in MODELS else None
        think = thinking if provider in MODELS else None
        fill = prefill if provider in MODELS else None
        options = BuildRequestOptions(thinking=think, prefill=fill, **tool_options)
        try:
            req = build_request(ctx, provider, model, "be brief", options)
        except RequestError as exc:
            choice = tool_options.get("tool_choice")
            assert _refused(provider, model, ctx.messages, think, fill, choice) or \
                "a prefill goes after a user message" in str(exc), (provider, exc)
            continue
        except tools.ToolsError as exc:
            assert "not 'none'" in str(exc) or "neither one of" in str(exc), exc
            continue
        assert not _refused(provider, model, ctx.messages, think, fill,
                            tool_options.get("tool_choice")), provider
        violations = validate(req.body, provider, req.model, thinking=think,
                              prefill=fill is not None)
        held = req.body.get("contents", req.body.get("input", req.body.get("messages")))
        if not held:  # nothing to send: the validator rightly names that, and only that
            assert violations and violations[0].message.endswith(
                "at least one message is required")
            violations = violations[1:]
        assert violations == [], (provider, violations)
        sdk_check(provider, req.body)
