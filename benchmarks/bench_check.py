"""The check of a valid request body, per API, against decoding the same body.

A proxy checks every body of a conversation it has not seen before with
`repair_request(api, body, from_text=True)`: the provider's validator over the whole body, which
finds nothing on a valid one. That check is most of what a proxy adds to such a request, so
its time is printed beside msgspec's decode of the same bytes, the two taking turns each
round: the ratio holds on a busy machine where milliseconds do not. The times are the best of
the rounds (what each costs when the machine lets it run), the last column the ratio of the
medians.

Each body is a valid conversation of about `--size` bytes with tool calls and their results:
Anthropic Messages (string content, tool_use/tool_result blocks, images; and one of string
messages only, as benchmarks/bench_proxy.py sends), OpenAI Chat (tool_calls and tool messages),
OpenAI Responses (messages, function calls and their outputs) and Gemini (functionCall and
functionResponse parts).

Run: .venv/bin/python benchmarks/bench_check.py [--size 1000000] [--rounds 30]
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import statistics
import struct
import sys
import time
import zlib
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # run as a script
from sessionctx.providers.wire import repair_request

TEXT = "é word " * 40
ARGS = {"path": "src/app.py", "limit": 200}


def _png(width: int, height: int) -> str:
    """The base64 of a small PNG: a real header, so the pixel check reads it."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x80" * (3 * width) for _ in range(height))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                             0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


IMAGE = _png(16, 16)


def _grown(first: list[Any], step: Callable[[int], list[Any]], size: int) -> list[Any]:
    """`first` and then steps until its JSON text is about `size` bytes."""
    items = list(first)
    per = len(json.dumps(step(0), ensure_ascii=False)) - 1
    length, n = len(json.dumps(items, ensure_ascii=False)), 0
    while length < size:
        items += step(n)
        n, length = n + 1, length + per
    return items


def anthropic(size: int) -> dict[str, Any]:
    def step(i: int) -> list[Any]:
        cid = f"toolu_{i:08d}"
        result: Any = TEXT if i % 2 else [{"type": "text", "text": TEXT}]
        user: list[Any] = [{"type": "tool_result", "tool_use_id": cid, "content": result}]
        if i % 40 == 0:  # an image now and then (at most 100 a request)
            user.append({"type": "image", "source": {"type": "base64", "media_type":
                                                     "image/png", "data": IMAGE}})
        return [{"role": "assistant", "content": [{"type": "text", "text": "reading"},
                                                  {"type": "tool_use", "id": cid,
                                                   "name": "read", "input": ARGS}]},
                {"role": "user", "content": user},
                {"role": "assistant", "content": TEXT},
                {"role": "user", "content": TEXT}]
    messages = _grown([{"role": "user", "content": TEXT}], step, size)
    return {"model": "claude-sonnet-4-5", "max_tokens": 16, "system": "You are a coding agent.",
            "messages": messages, "tools": [{"name": "read", "input_schema": {"type": "object"}}]}


def anthropic_text(size: int) -> dict[str, Any]:
    """Pairs of string messages and one tool: a proxy benchmark's body."""
    def step(i: int) -> list[Any]:
        return [{"role": "user", "content": TEXT}, {"role": "assistant", "content": TEXT}]
    messages = [*_grown([], step, size), {"role": "user", "content": "go on"}]
    return {"model": "claude-sonnet-4-5", "max_tokens": 16, "messages": messages,
            "tools": [{"name": "ls", "input_schema": {"type": "object"}}]}


def openai_chat(size: int) -> dict[str, Any]:
    def step(i: int) -> list[Any]:
        cid = f"call_{i:08d}"
        return [{"role": "assistant", "content": None, "tool_calls": [
                    {"id": cid, "type": "function",
                     "function": {"name": "read", "arguments": json.dumps(ARGS)}}]},
                {"role": "tool", "tool_call_id": cid, "content": TEXT},
                {"role": "assistant", "content": TEXT},
                {"role": "user", "content": TEXT}]
    messages = _grown([{"role": "system", "content": "You are a coding agent."},
                       {"role": "user", "content": TEXT}], step, size)
    return {"model": "gpt-4.1", "messages": messages,
            "tools": [{"type": "function", "function": {"name": "read", "parameters": {
                "type": "object"}}}]}


def openai_responses(size: int) -> dict[str, Any]:
    def step(i: int) -> list[Any]:
        cid = f"call_{i:08d}"
        return [{"type": "reasoning", "id": f"rs_{i}", "summary": [],
                 "encrypted_content": "enc" * 20},
                {"type": "function_call", "id": f"fc_{i}", "call_id": cid, "name": "read",
                 "arguments": json.dumps(ARGS)},
                {"type": "function_call_output", "call_id": cid, "output": TEXT},
                {"role": "assistant", "content": TEXT},
                {"role": "user", "content": TEXT}]
    items = _grown([{"role": "user", "content": TEXT}], step, size)
    return {"model": "gpt-5.1", "instructions": "You are a coding agent.", "input": items,
            "store": False, "include": ["reasoning.encrypted_content"],
            "tools": [{"type": "function", "name": "read", "parameters": {"type": "object"}}]}


def gemini(size: int) -> dict[str, Any]:
    def step(i: int) -> list[Any]:
        return [{"role": "model", "parts": [{"functionCall": {"name": "read", "args": ARGS},
                                             "thoughtSignature": "c2ln"}]},
                {"role": "user", "parts": [{"functionResponse": {
                    "name": "read", "response": {"output": TEXT}}}]},
                {"role": "model", "parts": [{"text": TEXT}]},
                {"role": "user", "parts": [{"text": TEXT}]}]
    contents = _grown([{"role": "user", "parts": [{"text": TEXT}]}], step, size)
    return {"contents": contents, "tools": [{"functionDeclarations": [
        {"name": "read", "parameters": {"type": "object"}}]}]}


# label: (API, body)
BODIES: dict[str, tuple[str, Callable[[int], dict[str, Any]]]] = {
    "anthropic": ("anthropic", anthropic), "anthropic (text)": ("anthropic", anthropic_text),
    "openai-chat": ("openai-chat", openai_chat),
    "openai-responses": ("openai-responses", openai_responses), "gemini": ("gemini", gemini)}


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    print(f"{'body':<18}{'bytes':>10}{'decode ms':>11}{'check ms':>10}{'check/decode':>14}"
          f"{'(median)':>10}")
    for label, (api, make) in BODIES.items():
        data = json.dumps(make(args.size), ensure_ascii=False).encode()
        body = msgspec.json.decode(data)
        found = repair_request(api, body, from_text=True)
        if found.violations:
            raise SystemExit(f"{api}: the benchmark body is not valid: {found.violations[:3]}")
        decode: list[float] = []
        check: list[float] = []
        gc.collect()
        gc.disable()  # a collection landing in one side's turn would blur the ratio
        for r in range(args.rounds):  # the two take turns, the first of them turning too
            sides = [(decode, partial(msgspec.json.decode, data)),
                     (check, partial(repair_request, api, body, from_text=True))]
            for times, fn in sides if r % 2 else reversed(sides):
                times.append(_timed(fn))
        gc.enable()
        d, c = min(decode), min(check)
        med = statistics.median(check) / statistics.median(decode)
        print(f"{label:<18}{len(data):>10}{d:>11.2f}{c:>10.2f}{c / d:>14.2f}{med:>10.2f}")


if __name__ == "__main__":
    main()
