"""Structural checks of built bodies against the official SDK request types (test only)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

_ADAPTERS: dict[str, Any] = {}


def _adapter(provider: str) -> Any:
    if provider not in _ADAPTERS:
        if provider == "anthropic":
            from anthropic.types import MessageParam
            _ADAPTERS[provider] = TypeAdapter(list[MessageParam])
        elif provider == "openai-chat":
            from openai.types.chat import ChatCompletionMessageParam
            _ADAPTERS[provider] = TypeAdapter(list[ChatCompletionMessageParam])
        elif provider == "openai-responses":
            from openai.types.responses import ResponseInputParam
            _ADAPTERS[provider] = TypeAdapter(ResponseInputParam)
        elif provider == "gemini":
            from google.genai import types
            _ADAPTERS[provider] = TypeAdapter(list[types.Content])
    return _ADAPTERS.get(provider)


def sdk_check(provider: str, body: dict[str, Any]) -> None:
    """Raise when the body's history does not validate against the SDK's request types.

    The SDK TypedDicts declare content as Iterable, which pydantic validates lazily: the result
    is materialised so that nested blocks are checked too.
    """
    if provider == "bedrock":
        _botocore_check(body)
        return
    key = {"anthropic": "messages", "openai-chat": "messages", "openai-responses": "input",
           "gemini": "contents"}.get(provider)
    adapter = _adapter(provider)
    if key is None or adapter is None:
        return
    value = adapter.validate_python(body[key])
    json.loads(json.dumps(value, default=_materialise))
    if provider == "gemini" and "systemInstruction" in body:
        from google.genai import types
        types.Content.model_validate(body["systemInstruction"])


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
