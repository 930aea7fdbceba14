"""Gemini generateContent (docs/provider-rules.md §4): `{"contents", "systemInstruction"?}`
with user and model turns, its function declarations and calling config, its validator and its
rows of the capability table."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.providers import documents, tools
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.image_limits import oversized
from sessionctx.providers.policies.turns import Block, Prepared, Turn, raw
from sessionctx.providers.provider import Provider
from sessionctx.providers.violations import Violation, history

SKIP_SIGNATURE = "skip_thought_signature_validator"
CALL_SIGNATURE_ADDED = ChangeKind.CALL_SIGNATURE_ADDED

# Gemini 3: the first call of each model turn carries a thought signature; images in model
# turns; signatures are base64 bytes; 3,000 images and 50 MB documents inline
BASE = Capability("gemini", "", max_images=3000,
                  image_types=frozenset({"image/png", "image/jpeg", "image/webp", "image/heic",
                                         "image/heif"}),
                  thinking_apis=frozenset({"google-generative-ai", "google-gemini-cli"}),
                  call_signature_required=True, assistant_images=True, base64_signatures=True,
                  max_document_bytes=50 * 1024 * 1024)
# Gemini 2: no signature required on calls
ROWS = (BASE, replace(BASE, family="gemini-2", call_signature_required=False))


def render(prep: Prepared, cap: Capability) -> dict[str, Any]:
    contents = [_content(t, prep, cap) for t in prep.turns]
    body: dict[str, Any] = {"contents": contents}
    system = prep.system_text()
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    return body


def _content(turn: Turn, prep: Prepared, cap: Capability) -> dict[str, Any]:
    role, blocks, index = turn
    parts: list[dict[str, Any]] = []
    trailing: list[dict[str, Any]] | None = None  # made only for a result with images
    placeholder = cap.call_signature_required  # until the turn's first call is rendered
    for block in blocks:
        if block["type"] == "text":
            parts.append({"text": block["text"]})
        elif block["type"] == "toolCall":
            call = {"id": block["id"], "name": block["name"], "args": block["arguments"]}
            sig = block.get("thoughtSignature")
            if sig:
                parts.append({"functionCall": call, "thoughtSignature": sig})
            elif placeholder:
                prep.log_one((CALL_SIGNATURE_ADDED, "Gemini 3 requires a thought signature on "
                              "the first functionCall of each step; this call has none it "
                              "can replay", index, None, {"id": block["id"]}))
                parts.append({"functionCall": call, "thoughtSignature": SKIP_SIGNATURE})
            else:
                parts.append({"functionCall": call})
            placeholder = False
        elif block["type"] == "toolResult":
            content = block["content"]
            if len(content) == 1 and content[0]["type"] == "text":  # the common result
                output = content[0]["text"]
            else:
                texts, files = documents.result_texts_and_files(content)
                if files:
                    if trailing is None:
                        trailing = []
                    trailing.extend(_part(held) for held in files)
                output = "\n".join(texts)
            parts.append({"functionResponse": {
                "id": block["id"], "name": block["name"],
                "response": {"error" if block["isError"] else "output": output}}})
        else:
            parts.append(_part(block))
    if trailing:  # a result's images follow all the function responses
        parts.extend(trailing)
    return {"role": "model" if role == "assistant" else "user", "parts": parts}


def _part(block: Block) -> dict[str, Any]:
    if block["type"] == "text":
        return {"text": block["text"]}
    if block["type"] == "image":
        return {"inlineData": {"mimeType": block["mimeType"], "data": block["data"]}}
    if block["type"] == "document":  # a PDF as inline data; a text document as text
        if "text" in block:
            return {"text": documents.text_part(block)}
        return {"inlineData": {"mimeType": block["mimeType"], "data": block["data"]}}
    if block["type"] == "thinking":
        out: dict[str, Any] = {"text": block["thinking"], "thought": True}
        if block["thinkingSignature"]:
            out["thoughtSignature"] = block["thinkingSignature"]
        return out
    return raw(block)


def validate(body: dict[str, Any], cap: Capability) -> list[Violation]:
    contents, out = history(body, "contents")
    if contents is None:
        return out
    prev_calls: list[dict[str, Any]] = []
    prev_kind = None
    pics: list[tuple[str, Any]] = []  # each image's path and data
    for i, c in enumerate(contents):  # a path is written only for a violation
        role = c.get("role")
        parts = c.get("parts")
        if role not in ("user", "model"):
            out.append(Violation(f"contents[{i}].role", "Please use a valid role: user, model."))
        if i == 0 and role != "user":
            out.append(Violation(f"contents[{i}]", "the first content must be a user turn"))
        if not isinstance(parts, list) or not parts:
            out.append(Violation(f"contents[{i}].parts", "parts must not be empty"))
            parts = []
        calls: list[Any] = []
        responses: list[Any] = []
        first: Any = None  # the first part with a call
        for p in parts:  # one pass gathers both
            if "functionCall" in p:
                if not calls:
                    first = p
                calls.append(p["functionCall"])
            if "functionResponse" in p:
                responses.append(p["functionResponse"])
        if calls and prev_kind not in ("user", "response"):
            out.append(Violation(f"contents[{i}]", "Please ensure that function call turn comes "
                                 "immediately after a user turn or after a function response "
                                 "turn."))
        if prev_calls:
            if len(responses) != len(prev_calls) or not _same_ids(responses, prev_calls):
                out.append(Violation(f"contents[{i}]", "Please ensure that the number of "
                                     "function response parts is equal to the number of "
                                     "function call parts of the function call turn."))
        elif responses:
            out.append(Violation(f"contents[{i}]", "Please ensure that function response turn "
                                 "comes immediately after a function call turn"))
        names = {str(c.get("id")): c.get("name") for c in prev_calls} if prev_calls else {}
        for r in responses:
            name = r.get("name")
            if not isinstance(name, str) or not name:
                out.append(Violation(f"contents[{i}]", "functionResponse.name must be the "
                                     "called function's name"))
            elif str(r.get("id")) in names and names[str(r.get("id"))] != name:
                out.append(Violation(f"contents[{i}]", f"functionResponse {name!r} does not "
                                     f"match its call {names[str(r.get('id'))]!r}"))
        if calls and cap.call_signature_required and not first.get("thoughtSignature"):
            out.append(Violation(f"contents[{i}]", "Function call is missing a "
                                 "thought_signature in functionCall parts"))
        _check_parts(parts, i, role, cap, out, pics)
        prev_calls = calls
        prev_kind = "response" if responses else ("user" if role == "user" else "model")
    out.extend(oversized(pics, cap))
    return out


def _same_ids(responses: list[Any], calls: list[Any]) -> bool:
    """Whether the responses answer the ids of as many calls, in any order."""
    if len(calls) == 1:  # the common turn: no list to sort
        return str(responses[0].get("id")) == str(calls[0].get("id"))
    return sorted(str(r.get("id")) for r in responses) == sorted(str(x.get("id")) for x in calls)


_PART_KINDS = ("text", "inlineData", "functionCall", "functionResponse")


def _check_parts(parts: list[Any], i: int, role: Any, cap: Capability,
                 out: list[Violation], pics: list[tuple[str, Any]]) -> None:
    """The rules of each part of contents[i]; its path is written only for a violation."""
    for j, p in enumerate(parts):
        if ("text" in p) + ("inlineData" in p) + ("functionCall" in p) + \
                ("functionResponse" in p) != 1:
            keys = [k for k in _PART_KINDS if k in p]
            out.append(Violation(f"contents[{i}].parts[{j}]", "a part holds exactly one kind "
                                 f"of data, found {keys}"))
        elif "text" in p:
            text = p["text"]  # blank without the copy strip makes
            blank = (not text or text.isspace()) if isinstance(text, str) else \
                not str(text).strip()
            if blank and not (p.get("thought") is True and bool(p.get("thoughtSignature"))):
                out.append(Violation(f"contents[{i}].parts[{j}]", "empty text part"))
        elif "inlineData" in p:
            inline = p["inlineData"]
            mime = inline.get("mimeType", inline.get("mime_type"))
            if mime not in cap.image_types and mime != documents.PDF:
                out.append(Violation(f"contents[{i}].parts[{j}]", "unsupported inline data "
                                     "type"))
            elif mime != documents.PDF:
                pics.append((f"contents[{i}].parts[{j}].inlineData.data", inline.get("data")))
        elif "functionCall" in p:
            if role != "model":
                out.append(Violation(f"contents[{i}].parts[{j}]", "function calls belong to "
                                     "model turns"))
            elif not isinstance(p["functionCall"].get("args"), dict):
                out.append(Violation(f"contents[{i}].parts[{j}]", "functionCall.args must be "
                                     "an object"))
        elif role != "user":
            out.append(Violation(f"contents[{i}].parts[{j}]", "function responses belong to "
                                 "user turns"))


# ---------------------------------------------------------------- tools

def render_tools(defined: list[tools.Tool], choice: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": [{"functionDeclarations": [
        tools.definition(t, "parametersJsonSchema") for t in defined]}]}
    if choice is not None:
        out["toolConfig"] = {"functionCallingConfig": _choice(choice)}
    return out


def _choice(choice: str) -> dict[str, Any]:
    if choice in ("any", "required"):
        return {"mode": "ANY"}
    if choice in ("auto", "none"):
        return {"mode": choice.upper()}
    return {"mode": "ANY", "allowedFunctionNames": [choice]}


def tool_violations(body: dict[str, Any]) -> list[Violation]:
    config = body.get("toolConfig", {}).get("functionCallingConfig", {})
    return tools.checked(body, _found, list(config.get("allowedFunctionNames") or []), [])


def _found(entries: list[tuple[str, Any]], out: list[Violation]) -> list[tuple[str, Any, Any]]:
    declared = [(f"{path}.functionDeclarations[{j}]", d) for path, t in entries
                if isinstance(t, dict) for j, d in enumerate(t.get("functionDeclarations") or [])]
    found = []
    for path, d in tools.objects(declared, out):
        # the API takes either spelling, or an OpenAPI schema (its type in capitals)
        schema = next((d[k] for k in ("parametersJsonSchema", "parameters_json_schema",
                                      "parameters") if k in d), None)
        if isinstance(schema, dict) and str(schema.get("type")).lower() == "object":
            schema = {**schema, "type": "object"}
        found.append((path, d.get("name"), schema))
    return found


PROVIDER = Provider("gemini", "gemini-3-pro", ROWS, render, validate, render_tools,
                    tool_violations, maker="Google")
