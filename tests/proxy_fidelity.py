"""Valid requests of each API, generated from a seed, in many spellings (key order, spacing,
escaped or raw non-ASCII, unknown keys), and a check that each reaches the upstream as the same
bytes and its answer (JSON or SSE) comes back as the same bytes. Used by the suite with a few
dozen seeds and by benchmarks/proxy_fidelity.py with thousands."""

from __future__ import annotations

import http.client
import json
import random
from typing import Any

from tests.strict_stub import StrictStub

PATHS = {"anthropic": "/v1/messages?beta=true", "openai-chat": "/v1/chat/completions",
         "openai-responses": "/v1/responses",
         "gemini": "/v1beta/models/gemini-2.5-flash:generateContent"}
_WORDS = ["ls", "é", "日本", "\u2028", "\"q\"", "\\", "tab\t", "emoji 🙂", "</script>", "0"]


def _text(rng: random.Random) -> str:
    return "w " + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 6)))


def _extra(rng: random.Random) -> dict[str, Any]:
    return {f"x_{rng.randint(0, 99)}": rng.choice([None, 1.5, _text(rng), [1, {"a": "é"}]])
            for _ in range(rng.randint(0, 2))}


def valid_body(api: str, rng: random.Random) -> dict[str, Any]:
    """A request `api` accepts: turns that alternate, every call answered next."""
    turns = rng.randint(1, 4)
    if api == "anthropic":
        messages: list[Any] = []
        for t in range(turns):
            cid = f"toolu_{t}"
            messages.append({"role": "user", "content": _text(rng)})
            if rng.random() < 0.5:
                messages.append({"role": "assistant", "content": [
                    {"type": "text", "text": _text(rng)},
                    {"type": "tool_use", "id": cid, "name": "bash", "input": {"c": _text(rng)}}]})
                messages.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": cid, "content": _text(rng)},
                    {"type": "text", "text": _text(rng)}]})
            messages.append({"role": "assistant", "content": _text(rng)})
        messages.append({"role": "user", "content": [{"type": "text", "text": _text(rng),
                                                      "cache_control": {"type": "ephemeral"}}]})
        body = {"model": "claude-sonnet-4-5", "max_tokens": rng.randint(1, 9000),
                "system": [{"type": "text", "text": _text(rng)}], "messages": messages,
                "tools": [{"name": "bash", "input_schema": {"type": "object"}}],
                "metadata": {"user_id": _text(rng)}}
    elif api == "openai-chat":
        messages = [{"role": "system", "content": _text(rng)}]
        for t in range(turns):
            messages.append({"role": "user", "content": _text(rng)})
            if rng.random() < 0.5:
                messages.append({"role": "assistant", "content": None, "tool_calls": [
                    {"id": f"call_{t}", "type": "function",
                     "function": {"name": "ls", "arguments": json.dumps({"p": _text(rng)})}}]})
                messages.append({"role": "tool", "tool_call_id": f"call_{t}",
                                 "content": _text(rng)})
            messages.append({"role": "assistant", "content": _text(rng)})
        messages.append({"role": "user", "content": _text(rng)})
        body = {"model": "gpt-4o", "messages": messages, "temperature": rng.random()}
    elif api == "openai-responses":
        items: list[Any] = []
        for t in range(turns):
            items.append({"role": "user", "content": _text(rng)})
            if rng.random() < 0.5:
                items.append({"type": "function_call", "call_id": f"call_{t}", "name": "ls",
                              "arguments": "{}"})
                items.append({"type": "function_call_output", "call_id": f"call_{t}",
                              "output": _text(rng)})
            items.append({"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": _text(rng)}]})
        items.append({"role": "user", "content": [{"type": "input_text", "text": _text(rng)}]})
        body = {"model": "gpt-5", "instructions": _text(rng), "input": items, "store": False,
                "include": ["reasoning.encrypted_content"]}
    else:
        contents: list[Any] = []
        for _ in range(turns):
            contents.append({"role": "user", "parts": [{"text": _text(rng)}]})
            if rng.random() < 0.5:
                contents.append({"role": "model", "parts": [
                    {"functionCall": {"name": "ls", "args": {"p": _text(rng)}}}]})
                contents.append({"role": "user", "parts": [
                    {"functionResponse": {"name": "ls", "response": {"output": _text(rng)}}}]})
            contents.append({"role": "model", "parts": [{"text": _text(rng)}]})
        contents.append({"role": "user", "parts": [{"text": _text(rng)}]})
        body = {"contents": contents, "generationConfig": {"temperature": rng.random()}}
    body.update(_extra(rng))
    if api != "gemini" and rng.random() < 0.5:
        body["stream"] = True
    keys = list(body)
    rng.shuffle(keys)
    return {k: body[k] for k in keys}


def spelt(body: dict[str, Any], rng: random.Random) -> bytes:
    """One of the many byte spellings of `body`."""
    return json.dumps(body, ensure_ascii=rng.random() < 0.5,
                      indent=rng.choice([None, None, 1, 2]),
                      separators=rng.choice([(",", ":"), (", ", ": "), (",", ": ")])
                      ).encode("utf-8")


def request(api: str, stream: bool) -> tuple[str, dict[str, str]]:
    path = PATHS[api]
    if api == "gemini" and stream:
        path = path.replace(":generateContent", ":streamGenerateContent") + "?alt=sse"
    return path, {"content-type": "application/json", "x-api-key": "k"}


def check_one(proxy_url: str, up: StrictStub, api: str, seed: int,
              conn: http.client.HTTPConnection) -> None:
    """Sends the request of `seed` through the proxy: the same bytes upstream, and back."""
    rng = random.Random(f"{api}-{seed}")
    body = valid_body(api, rng)
    raw = spelt(body, rng)
    stream = body.get("stream") is True or (api == "gemini" and rng.random() < 0.5)
    path, headers = request(api, stream)
    before = len(up.requests)
    conn.request("POST", path, body=raw, headers=headers)
    response = conn.getresponse()
    got = response.read()
    assert response.status == 200, (api, seed, got[:300])
    assert len(up.requests) == before + 1 and up.raw() == raw, (api, seed)
    assert got == up.answers[-1], (api, seed)
    assert "x-sessionctx-changes" not in {k.lower() for k, _ in response.getheaders()}
