"""Whether a line or document is made of OpenAI Responses items."""

from __future__ import annotations

from typing import Any

_SUFFIXES = ("_call", "_output", "_request", "_response", "_tools", "_reference")


def line(obj: dict[str, Any]) -> bool:
    """Whether a line is a Responses item; the reader's module, which says it exactly, is
    loaded only for a line shaped like one (a typed call, output or reasoning item, or a
    message with Responses parts), never for a native file's lines."""
    if "payload" in obj:
        return False
    kind = obj.get("type")
    content = obj.get("content")
    if isinstance(kind, str) and kind != "message":
        shaped = kind == "reasoning" or kind.endswith(_SUFFIXES) or (
            kind == "compaction" and "encrypted_content" in obj)
    else:
        shaped = isinstance(content, list) and any(
            isinstance(p, dict) and isinstance(p.get("type"), str)
            and p["type"].startswith(("input_", "output_", "refusal")) for p in content)
    if not shaped:
        return False
    from sessionctx.formats.openai_responses.read import is_responses_item

    return is_responses_item(obj)


def document(doc: Any) -> bool:
    """A one-line file, a request log (a model and an input list) or a list of items."""
    from sessionctx.formats.openai_responses.read import is_item_list

    if isinstance(doc, dict):
        request_input = doc.get("input")
        return line(doc) or ("model" in doc and isinstance(request_input, list) and (
            not request_input or is_item_list(request_input, evident=False)))
    return isinstance(doc, list) and is_item_list(doc)
