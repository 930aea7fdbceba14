"""Inputs that grow in one pathological direction, and how a command's time grows with them.

Each shape makes a session of size `n` in one direction a small file can grow in: many
consecutive messages of one role, one message with many unanswered calls (native, pi, Claude
Code, Gemini CLI, Responses), a long run of Codex reasoning items, one message streamed over
many lines, a long chain of compactions, one message of many results, many empty records, one
huge argument string. The fuzz corpus (tests/robustness) holds each of them at a fixed size;
here they scale.

`ratios` times a command at n, 2n and 4n, the sizes taking turns round after round, and
returns the two doubling ratios: every command should stay linear (about 2 per doubling).
Shared by tests/test_scaling.py (small n) and benchmarks/bench_scaling.py (large n).
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from sessionctx.cli import main

Shape = Callable[[int], tuple[str, bytes]]


def _lines(objects: list[Any]) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objects).encode()


def _call(i: int) -> dict[str, Any]:
    return {"type": "toolCall", "id": f"c{i}", "name": "bash", "arguments": {"command": f"ls {i}"}}


def same_role(n: int) -> tuple[str, bytes]:
    """n user messages in a row: every provider that wants roles to alternate joins them."""
    return "jsonl", _lines([{"role": "user", "content": f"message {i}"} for i in range(n)])


def native_calls(n: int) -> tuple[str, bytes]:
    """One native assistant message calling n tools, none answered."""
    return "jsonl", _lines([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [_call(i) for i in range(n)]},
        {"role": "user", "content": "and then?"}])


def pi_calls(n: int) -> tuple[str, bytes]:
    """One pi message entry calling n tools, none answered."""
    def entry(i: int, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
        return {"type": "message", "id": f"e{i}", "parentId": parent,
                "timestamp": "2025-01-01T00:00:00Z", "message": message}
    return "jsonl", _lines([
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/"},
        entry(1, None, {"role": "user", "content": [{"type": "text", "text": "go"}]}),
        entry(2, "e1", {"role": "assistant", "content": [_call(i) for i in range(n)]}),
        entry(3, "e2", {"role": "user", "content": [{"type": "text", "text": "and?"}]})])


def claude_calls(n: int) -> tuple[str, bytes]:
    """One Claude Code assistant line with n tool_use blocks, none answered."""
    def line(i: int, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
        kind = message["role"]
        return {"type": kind, "uuid": f"u{i}", "parentUuid": parent, "sessionId": "s",
                "timestamp": "2025-01-01T00:00:00Z", "message": message}
    uses = [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": f"ls {i}"}}
            for i in range(n)]
    return "jsonl", _lines([
        line(1, None, {"role": "user", "content": "go"}),
        line(2, "u1", {"role": "assistant", "id": "m1", "content": uses}),
        line(3, "u2", {"role": "user", "content": "and?"})])


def claude_streamed(n: int) -> tuple[str, bytes]:
    """One Claude Code message streamed over n lines, a call on each, none answered."""
    lines: list[Any] = [{"type": "user", "uuid": "u0", "parentUuid": None, "sessionId": "s",
                         "message": {"role": "user", "content": "go"}}]
    for i in range(n):
        lines.append({"type": "assistant", "uuid": f"u{i + 1}", "parentUuid": f"u{i}",
                      "sessionId": "s", "message": {
                          "role": "assistant", "id": "m1", "content": [
                              {"type": "tool_use", "id": f"t{i}", "name": "Bash",
                               "input": {"command": f"ls {i}"}}]}})
    return "jsonl", _lines(lines)


def gemini_calls(n: int) -> tuple[str, bytes]:
    """One Gemini CLI message calling n tools, none answered."""
    calls = [{"id": f"g{i}", "name": "run_shell_command", "args": {"command": f"ls {i}"},
              "status": "executing"} for i in range(n)]
    doc = {"sessionId": "s", "messages": [
        {"id": "1", "type": "user", "content": "go"},
        {"id": "2", "type": "gemini", "content": "", "toolCalls": calls}]}
    return "json", json.dumps(doc).encode()


def _codex(items: list[dict[str, Any]]) -> bytes:
    head = {"type": "session_meta", "timestamp": "2025-01-01T00:00:00Z",
            "payload": {"id": "s", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/"}}
    return _lines([head] + [{"type": "response_item", "timestamp": "2025-01-01T00:00:00Z",
                             "payload": item} for item in items])


def _user_item(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def codex_reasoning(n: int) -> tuple[str, bytes]:
    """A Codex turn of n reasoning items, each before a call left unanswered."""
    items = [_user_item("go")]
    for i in range(n):
        items.append({"type": "reasoning", "summary": [
            {"type": "summary_text", "text": f"step {i}"}], "content": None,
            "encrypted_content": f"enc{i}"})
        if i % 2:
            items.append({"type": "function_call", "name": "shell", "call_id": f"k{i}",
                          "arguments": json.dumps({"command": ["ls", str(i)]})})
    items.append(_user_item("and?"))
    return "jsonl", _codex(items)


def codex_calls(n: int) -> tuple[str, bytes]:
    """A Codex turn of n function calls, none answered."""
    items = [_user_item("go")] + [
        {"type": "function_call", "name": "shell", "call_id": f"k{i}",
         "arguments": json.dumps({"command": ["ls", str(i)]})} for i in range(n)]
    return "jsonl", _codex([*items, _user_item("and?")])


def pi_compactions(n: int) -> tuple[str, bytes]:
    """A pi chain of n turns, each followed by a compaction keeping from the turn before."""
    out: list[Any] = [{"type": "session", "version": 3, "id": "s",
                       "timestamp": "2025-01-01T00:00:00Z", "cwd": "/"}]
    parent: str | None = None
    for i in range(n):
        out.append({"type": "message", "id": f"m{i}", "parentId": parent,
                    "timestamp": "2025-01-01T00:00:00Z",
                    "message": {"role": "user", "content": [{"type": "text", "text": f"{i}"}]}})
        out.append({"type": "compaction", "id": f"c{i}", "parentId": f"m{i}",
                    "timestamp": "2025-01-01T00:00:00Z", "summary": f"up to {i}",
                    "firstKeptEntryId": f"m{max(i - 1, 0)}", "tokensBefore": 10})
        parent = f"c{i}"
    return "jsonl", _lines(out)


def anthropic_results(n: int) -> tuple[str, bytes]:
    """An Anthropic request whose one user message holds n tool results."""
    uses = [{"type": "tool_use", "id": f"t{i}", "name": "bash", "input": {}} for i in range(n)]
    results = [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}
               for i in range(n)]
    doc = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [
        {"role": "user", "content": "go"}, {"role": "assistant", "content": uses},
        {"role": "user", "content": results}]}
    return "json", json.dumps(doc).encode()


def empty_records(n: int) -> tuple[str, bytes]:
    """n lines of `{}`: records nothing can read."""
    return "jsonl", b"{}\n" * n


def long_argument(n: int) -> tuple[str, bytes]:
    """One call whose argument is a string of 64·n characters, base64-like."""
    blob = ("QUJDRGVmZ2g" * (6 * n))[:64 * n]
    return "jsonl", _lines([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "bash",
                                           "arguments": {"data": blob}}]},
        {"role": "toolResult", "toolCallId": "c", "toolName": "bash",
         "content": [{"type": "text", "text": blob}], "isError": False}])


SHAPES: dict[str, Shape] = {f.__name__: f for f in (
    same_role, native_calls, pi_calls, claude_calls, claude_streamed, gemini_calls,
    codex_reasoning, codex_calls, pi_compactions, anthropic_results, empty_records,
    long_argument)}

UNREADABLE = {"empty_records"}  # shapes a command may refuse (exit 2) after reading them

# Every command that reads a whole session, with the options that take the long paths.
COMMANDS: dict[str, tuple[str, ...]] = {
    "build": ("build", "{path}", "--note-unpaired", "--json"),
    "build-anthropic": ("build", "{path}", "--provider", "anthropic", "--placeholder-tools"),
    "build-gemini": ("build", "{path}", "--provider", "gemini", "--placeholder-tools"),
    "build-bedrock": ("build", "{path}", "--provider", "bedrock", "--placeholder-tools"),
    "build-responses": ("build", "{path}", "--provider", "openai-responses", "--placeholder-tools"),
    "check-anthropic": ("check", "{path}", "--provider", "anthropic", "--placeholder-tools",
                        "--json"),
    "explain": ("explain", "{path}"),
    "budget": ("budget", "{path}", "--window", "200000", "--json"),
    "repair": ("repair", "{path}", "--dry-run", "--json"),
    "repair-notes": ("repair", "{path}", "--dry-run", "--note-unpaired"),
    "compact": ("compact", "{path}", "--dry-run", "--json", "--keep-turns", "0",
                "--keep-tokens", "0", "--force"),
    "report": ("report", "{path}", "-o", "{out}"),
    "report-anthropic": ("report", "{path}", "--provider", "anthropic", "-o", "{out}"),
}


def write(shape: str, n: int, folder: Path) -> Path:
    ext, raw = SHAPES[shape](n)
    path = folder / f"{shape}-{n}.{ext}"
    path.write_bytes(raw)
    return path


def run(command: str, path: Path) -> float:
    """CPU seconds one in-process run of `command` on `path` takes (the collector paused, as
    the CLI pauses it)."""
    args = [a.format(path=path, out=path.with_suffix(".html")) for a in COMMANDS[command]]
    runner = CliRunner()
    # no full collection first: in a test process holding a large heap one costs a second,
    # more than the run it would prepare, and the run is timed with the collector paused
    gc.collect(0)
    gc.disable()
    try:
        started = time.process_time()
        result = runner.invoke(main, args)
        took = time.process_time() - started
    finally:
        gc.enable()
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args}: {result.exception!r}") from result.exception
    refused = command == "compact" and "Import it into a store" in result.output
    # (compact names the route for a format with no compaction of its own; that read is timed)
    if result.exit_code not in (0, 1) and path.name.split("-")[0] not in UNREADABLE \
            and not refused:
        raise AssertionError(f"{args}: exit {result.exit_code}: {result.output[-300:]}")
    return took


def ratios(command: str, shape: str, n: int, folder: Path, rounds: int = 3
           ) -> tuple[float, float, list[float]]:
    """t(2n)/t(n) and t(4n)/t(2n), each time the least of `rounds` runs taken in turn."""
    paths = [write(shape, n * k, folder) for k in (1, 2, 4)]
    best = [float("inf")] * 3
    for _ in range(rounds):
        for i, path in enumerate(paths):
            best[i] = min(best[i], run(command, path))
    return best[1] / best[0], best[2] / best[1], best
