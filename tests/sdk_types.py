"""Structural checks of built bodies against the official SDK request types (test only)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

_ADAPTERS: dict[str, Any] = {}


def _adapter(provider: str) -> Any:
    """The SDK's type for a whole request of `provider`: history, system, tools, tool choice."""
    if provider not in _ADAPTERS:
        if provider == "anthropic":
            from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
            _ADAPTERS[provider] = TypeAdapter(MessageCreateParamsNonStreaming)
        elif provider == "openai-chat":
            from openai.types.chat.completion_create_params import (
                CompletionCreateParamsNonStreaming,
            )
            _ADAPTERS[provider] = TypeAdapter(CompletionCreateParamsNonStreaming)
        elif provider == "openai-responses":
            from openai.types.responses.response_create_params import (
                ResponseCreateParamsNonStreaming,
            )
            _ADAPTERS[provider] = TypeAdapter(ResponseCreateParamsNonStreaming)
    return _ADAPTERS.get(provider)


# what the SDK's request type needs beside a body, which holds the history part only
_REQUIRED: dict[str, dict[str, Any]] = {
    "anthropic": {"model": "m", "max_tokens": 16}, "openai-chat": {"model": "m"},
    "openai-responses": {"model": "m"}}


def sdk_check(provider: str, body: dict[str, Any]) -> None:
    """Raise when the body does not validate against the SDK's request types.

    The SDK TypedDicts declare content as Iterable, which pydantic validates lazily: the result
    is materialised so that nested blocks are checked too.
    """
    if provider == "bedrock":
        _botocore_check(body)
        return
    if provider == "gemini":
        _gemini_check(body)
        return
    value = _adapter(provider).validate_python({**_REQUIRED[provider], **body})
    json.loads(json.dumps(value, default=_materialise))


def _gemini_check(body: dict[str, Any]) -> None:
    """Contents as `types.Content` (extra keys forbidden), the rest as the request config."""
    from google.genai import types

    TypeAdapter(list[types.Content]).validate_python(body["contents"])
    config = {k: v for k, v in body.items() if k != "contents"}
    types.GenerateContentConfig.model_validate(config)


def _materialise(obj: Any) -> Any:
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_none=True)
    if isinstance(obj, bytes):
        return obj.decode("latin-1")
    return list(obj)


def _botocore_check(body: dict[str, Any]) -> None:
    """Bedrock Converse input checked against botocore's service model (image bytes decoded,
    as boto3 takes them)."""
    import base64

    import botocore.session  # type: ignore[import-untyped]
    from botocore.validate import ParamValidator  # type: ignore[import-untyped]

    if "bedrock" not in _ADAPTERS:
        model = botocore.session.get_session().get_service_model("bedrock-runtime")
        _ADAPTERS["bedrock"] = model.operation_model("Converse").input_shape
    params = json.loads(json.dumps(body))

    def decode(obj: Any) -> None:
        if isinstance(obj, dict):
            if "image" in obj and isinstance(obj["image"].get("source", {}).get("bytes"), str):
                obj["image"]["source"]["bytes"] = base64.b64decode(obj["image"]["source"]["bytes"])
            for value in obj.values():
                decode(value)
        elif isinstance(obj, list):
            for value in obj:
                decode(value)

    decode(params)
    report = ParamValidator().validate({"modelId": "m", **params}, _ADAPTERS["bedrock"])
    if report.has_errors():
        raise ValueError(report.generate_report())
