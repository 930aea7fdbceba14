"""Import throughput of each importer, as a ratio to the core build on the same history.

For each format a synthetic history of about `--mb` MB is written in that format (turns of user
text, assistant text with a tool call, and a tool result). It is imported (read_raw with the
format named), and the imported records are written as native JSONL (messages bare, without
the copy of the source kept under `raw`) and read and built by the
core (read_bytes + build_context). Printed: MB/s of each, and import MB/s / core MB/s.

    PYTHONPATH=src python benchmarks/bench_importers.py [--mb 30]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from sessionctx.context import build_context
from sessionctx.inputs import read_raw
from sessionctx.records import MESSAGE, Record, read_bytes

Obj = dict[str, Any]
OUTPUT = "line of tool output " * 100  # about 2 KB per result


def _claude(i: int) -> list[Obj]:
    base = {"sessionId": "s", "isSidechain": False, "userType": "external", "cwd": "/w"}
    cid, mid = f"toolu_{i:08d}", f"msg_{i:08d}"
    prev = f"r{i - 1}" if i else None
    return [
        {**base, "type": "user", "uuid": f"u{i}", "parentUuid": prev,
         "message": {"role": "user", "content": f"please do step {i}"}},
        {**base, "type": "assistant", "uuid": f"a{i}", "parentUuid": f"u{i}",
         "message": {"id": mid, "role": "assistant", "model": "claude-x",
                     "content": [{"type": "text", "text": f"doing step {i}"}]}},
        {**base, "type": "assistant", "uuid": f"b{i}", "parentUuid": f"a{i}",
         "message": {"id": mid, "role": "assistant", "model": "claude-x", "stop_reason":
                     "tool_use", "content": [{"type": "tool_use", "id": cid, "name": "Bash",
                                              "input": {"command": f"run {i}"}}]}},
        {**base, "type": "user", "uuid": f"r{i}", "parentUuid": f"b{i}",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": cid, "content": OUTPUT}]}},
    ]


def _codex(i: int) -> list[Obj]:
    def line(kind: str, payload: Obj) -> Obj:
        return {"timestamp": "2025-01-01T00:00:00Z", "type": kind, "payload": payload}
    cid = f"call_{i:08d}"
    return [
        line("response_item", {"type": "message", "role": "user",
                               "content": [{"type": "input_text", "text": f"step {i}"}]}),
        line("turn_context", {"model": "gpt-5-codex", "cwd": "/w"}),
        line("response_item", {"type": "reasoning", "summary": [
            {"type": "summary_text", "text": f"thinking {i}"}], "encrypted_content": "g" * 800}),
        line("response_item", {"type": "function_call", "name": "shell", "call_id": cid,
                               "arguments": json.dumps({"command": ["ls", str(i)]})}),
        line("response_item", {"type": "function_call_output", "call_id": cid,
                               "output": OUTPUT}),
        line("event_msg", {"type": "token_count", "info": None}),
    ]


def _pi(i: int) -> list[Obj]:
    def entry(n: int, message: Obj) -> Obj:
        return {"type": "message", "id": f"{4 * i + n:08x}",
                "parentId": f"{4 * i + n - 1:08x}" if i or n else None, "message": message}
    cid = f"toolu_{i:08d}"
    return [
        entry(0, {"role": "user", "content": [{"type": "text", "text": f"step {i}"}]}),
        entry(1, {"role": "assistant", "api": "anthropic-messages", "provider": "anthropic",
                  "model": "m", "stopReason": "toolUse", "content": [
                      {"type": "text", "text": f"doing {i}"},
                      {"type": "toolCall", "id": cid, "name": "bash",
                       "arguments": {"command": f"run {i}"}}]}),
        entry(2, {"role": "toolResult", "toolCallId": cid, "toolName": "bash",
                  "content": [{"type": "text", "text": OUTPUT}], "isError": False}),
        {"type": "custom", "id": f"{4 * i + 3:08x}", "parentId": f"{4 * i + 2:08x}",
         "customType": "ext", "data": {}},
    ]


def _gemini(i: int) -> list[Obj]:
    cid = f"run_shell_command-{i}"
    return [
        {"id": f"u{i}", "type": "user", "content": f"step {i}"},
        {"id": f"g{i}", "type": "gemini", "content": f"doing {i}", "model": "gemini-2.5-pro",
         "thoughts": [{"subject": "plan", "description": f"think {i}"}],
         "toolCalls": [{"id": cid, "name": "run_shell_command", "args": {"command": "ls"},
                        "status": "success", "result": [{"functionResponse": {
                            "id": cid, "name": "run_shell_command",
                            "response": {"output": OUTPUT}}}]}]},
    ]


def _chat(i: int) -> list[Obj]:
    cid = f"call_{i:08d}"
    return [
        {"role": "user", "content": f"step {i}"},
        {"role": "assistant", "content": f"doing {i}", "tool_calls": [
            {"id": cid, "type": "function",
             "function": {"name": "bash", "arguments": json.dumps({"command": "ls"})}}]},
        {"role": "tool", "tool_call_id": cid, "name": "bash", "content": OUTPUT},
    ]


def _jsonl(objs: list[Obj]) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


def _session(header: Obj | None, turns: Callable[[int], list[Obj]], n: int) -> list[Obj]:
    return ([header] if header else []) + [o for i in range(n) for o in turns(i)]


FORMATS: dict[str, Callable[[int], bytes]] = {
    "claude-code": lambda n: _jsonl(_session(None, _claude, n)),
    "codex": lambda n: _jsonl(_session({"timestamp": "t", "type": "session_meta",
                                        "payload": {"id": "s"}}, _codex, n)),
    "pi": lambda n: _jsonl(_session({"type": "session", "version": 3, "id": "s",
                                     "cwd": "/w"}, _pi, n)),
    "gemini-cli": lambda n: json.dumps({"sessionId": "s", "messages": _session(
        None, _gemini, n)}).encode(),
    "openai-chat": lambda n: json.dumps(_session(None, _chat, n)).encode(),
    "openai-responses": lambda n: json.dumps({"model": "gpt-5-codex", "input": [
        o["payload"] for o in _session(None, _codex, n) if o["type"] == "response_item"]}
    ).encode(),
}


def _native(record: Record) -> Obj:
    """The record as sessionctx would store it natively: the message itself, no source copy."""
    if record.kind == MESSAGE:
        return record.view
    return {k: v for k, v in record.data.items() if k != "raw"}


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mb", type=float, default=30.0, help="size of each history in MB")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'format':<16} {'size MB':>8} {'import MB/s':>12} {'core MB/s':>10} {'ratio':>7}")
    for fmt, make in FORMATS.items():
        probe = len(make(50)) / 50
        raw = make(max(1, int(args.mb * 1e6 / probe)))
        t_import, result = _best(lambda: read_raw(raw, "bench", fmt), args.repeat)  # noqa: B023
        assert not result.fatal, result.problems[:3]
        native = _jsonl([_native(r) for r in result.records])
        t_core, _ = _best(lambda: build_context(read_bytes(native, "native").records),  # noqa: B023
                          args.repeat)
        mb = len(raw) / 1e6
        import_rate, core_rate = mb / t_import, len(native) / 1e6 / t_core
        print(f"{fmt:<16} {mb:>8.1f} {import_rate:>12.1f} {core_rate:>10.1f} "
              f"{import_rate / core_rate:>7.2f}")


if __name__ == "__main__":
    main()
