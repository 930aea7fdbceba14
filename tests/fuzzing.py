"""Malformed inputs and the promises every command keeps on them.

Shared by the fuzz test (a few seconds), the long run (`python -m tests.fuzz_long`) and the
memory benchmark: the inputs are the real fixtures in every format and the regression corpus,
mutated (truncated, bytes flipped, fields given wrong types, nested deeply, duplicated keys,
non-UTF-8 and oversized text); the promises are those of docs/robustness.md: no exception escapes,
exit codes as documented, JSON output that is valid JSON (no NaN) and valid UTF-8.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import strategies as st

from sessionctx.cli import main
from sessionctx.context import build_context, display_messages
from sessionctx.inputs import FORMATS, read_raw
from sessionctx.providers import (
    PROVIDERS,
    BuildRequestOptions,
    build_request,
    naive_request,
    validate,
)
from sessionctx.records import MESSAGE, select_branch
from tests.conftest import FIXTURES, ROOT

__all__ = ["FORMATS", "Invocation", "Workdir", "check_input", "commands", "inputs", "run_cli",
           "run_library", "seeds", "strict_json"]

CORPUS = ROOT / "tests" / "robustness"
DEEP = 300  # beyond the nesting limit (256), below the decoder's own stack limit
VERY_DEEP = 5000  # beyond the decoder's stack limit


def seed_files() -> list[Path]:
    """The real fixtures in every format, the bundled example and the regression corpus."""
    files = [p for p in sorted(FIXTURES.rglob("*")) if p.is_file() and p.suffix in (
        ".jsonl", ".json", ".traj")]
    files.append(ROOT / "examples" / "interrupted.jsonl")
    if CORPUS.is_dir():
        files += sorted(p for p in CORPUS.iterdir() if p.is_file() and p.suffix != ".md")
    return files


def deep_value(depth: int) -> Any:
    value: Any = 1
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


def deep_text(depth: int) -> str:
    return "[" * depth + "]" * depth


WRONG: list[Any] = [
    None, True, False, 0, -1, 2**70, 1.5, 1e308, "", "x", " ", "\u0000", "\ud800",
    [], [None], [[]], {}, {"type": None}, {"type": {}}, {"role": []}, {"content": 3},
    [{"type": "text"}], [{"type": []}], {"": ""}, "NaN", '{"a": NaN}', '{"a": 1e999}',
    '{"a": Infinity, "b": -Infinity}', "[{'id': 'c', 'function': {'name': 'f'}}]",
    deep_text(DEEP), deep_text(VERY_DEEP), "\\ud800", "x" * 70_000,
]
WRONG_DEEP: list[Any] = [deep_value(DEEP), deep_value(255)]  # whole values, not text


def load_seed(raw: bytes) -> tuple[list[Any], bool] | None:
    """The objects of a JSONL or JSON seed, and whether it is JSONL; None when unreadable."""
    try:
        return [json.loads(raw)], False
    except (ValueError, RecursionError):
        pass
    try:
        return [json.loads(line) for line in raw.splitlines() if line.strip()], True
    except (ValueError, RecursionError):
        return None


def dump_seed(objs: list[Any], lines: bool) -> bytes:
    if lines:
        return b"".join(json.dumps(o).encode() + b"\n" for o in objs)
    return json.dumps(objs[0]).encode()


def field_paths(value: Any, prefix: tuple[Any, ...] = (), limit: int = 400
           ) -> list[tuple[Any, ...]]:
    out = [prefix]
    stack = [(value, prefix)]
    while stack and len(out) < limit:
        node, path = stack.pop()
        items = list(node.items()) if isinstance(node, dict) else list(
            enumerate(node[:8])) if isinstance(node, list) else []
        for key, child in items:
            out.append((*path, key))
            stack.append((child, (*path, key)))
    return out


def replace_at(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    node = value
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new
    return value


@st.composite
def wrong_type(draw: st.DrawFn, raw: bytes) -> bytes:
    """A seed with one field (anywhere) given a wrong type, a deep value or odd text."""
    loaded = load_seed(raw)
    if loaded is None or not loaded[0]:
        return raw
    objs, lines = loaded
    i = draw(st.integers(0, len(objs) - 1))
    path = draw(st.sampled_from(field_paths(objs[i])))
    new = draw(st.sampled_from(WRONG + WRONG_DEEP))
    objs[i] = replace_at(objs[i], path, new)
    return dump_seed(objs, lines)


@st.composite
def byte_mutation(draw: st.DrawFn, raw: bytes) -> bytes:
    """A seed truncated, with bytes flipped, inserted or removed, or lines shuffled."""
    kind = draw(st.sampled_from(["truncate", "flip", "insert", "lines", "bom", "dupkey"]))
    data = bytearray(raw)
    if kind == "truncate" and data:
        return bytes(data[:draw(st.integers(0, len(data) - 1))])
    if kind == "flip" and data:
        for _ in range(draw(st.integers(1, 8))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return bytes(data)
    if kind == "insert":
        at = draw(st.integers(0, len(data)))
        junk = draw(st.sampled_from([b"\xff\xfe", b"\x00", b"\n", b"{", b"]", b'"', b"\\",
                                     b'\\ud800"', b"NaN", b"\xed\xa0\x80", b"\r\n"]))
        return bytes(data[:at]) + junk + bytes(data[at:])
    if kind == "lines":
        lines = raw.split(b"\n")
        op = draw(st.sampled_from(["drop", "dup", "reverse", "garbage", "crlf", "noeol"]))
        if op == "drop" and lines:
            del lines[draw(st.integers(0, len(lines) - 1))]
        elif op == "dup" and lines:
            j = draw(st.integers(0, len(lines) - 1))
            lines.insert(j, lines[j])
        elif op == "reverse":
            lines.reverse()
        elif op == "garbage":
            lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(
                [b"[1,2,3]", b"null", b'"x"', b"{", b'{"a":1,"a":2}', b"{}",
                 b'{"role":{}}', b'{"type":[]}'])))
        elif op == "crlf":
            return b"\r\n".join(lines)
        else:
            return b"\n".join(lines).rstrip(b"\n")
        return b"\n".join(lines)
    if kind == "bom":
        return b"\xef\xbb\xbf" + raw
    return raw.replace(b'{"', b'{"type":"x","', 3)  # a key that may repeat a later one


SYNTHETIC: list[bytes] = [
    b"", b"   \n", b"[1,2,3]", b"null", b"{}", b"[]", b'"x"', b"\x00\x01", b"\xff\xfe{",
    b'{"role":"user","content":"hi"}', b'{"role":"user","content":"hi"}\n{',
    b'{"role":"user","content":"\\ud800"}\n', b'{"role":"user","content":"a","content":"b"}\n',
    b'[' * VERY_DEEP + b']' * VERY_DEEP, json.dumps(deep_value(DEEP)).encode(),
    json.dumps({"role": "user", "content": [{"type": "text", "text": "x"}],
                "deep": deep_value(DEEP)}).encode() + b"\n",
]


def inputs(seeds: list[bytes]) -> st.SearchStrategy[bytes]:
    """Every kind of malformed input, drawn from `seeds`."""
    seed = st.sampled_from(seeds)
    return st.one_of(
        seed,
        seed.flatmap(wrong_type),
        seed.flatmap(byte_mutation),
        seed.flatmap(wrong_type).flatmap(byte_mutation),
        st.sampled_from(SYNTHETIC),
        st.binary(max_size=64),
    )


# ---------------------------------------------------------------------------------------------
# The promises


def strict_json(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"output holds {name}, which is not JSON")

    return json.loads(text, parse_constant=refuse)


@dataclass(frozen=True)
class Invocation:
    args: tuple[str, ...]
    codes: frozenset[int]
    json_out: bool


def commands(path: str, work: str) -> list[Invocation]:
    """Every command on the input at `path`, with the exit codes docs/commands.md allows."""
    read = frozenset({0, 2})
    verdict = frozenset({0, 1, 2})
    store = f"sqlite:///{work}/s.db"
    out: list[Invocation] = []
    for fmt in FORMATS:
        f = ("--from", fmt)
        out += [
            Invocation(("build", path, *f), read, False),
            Invocation(("build", path, "--json", "--note-unpaired", *f), read, True),
            Invocation(("build", path, "--view", "display", "--json", *f), read, True),
            Invocation(("check", path, *f), verdict, False),
            Invocation(("check", path, "--json", *f), verdict, True),
            Invocation(("explain", path, *f), read, False),
            Invocation(("budget", path, "--window", "2000", "--json", *f), verdict, True),
            Invocation(("import", path, "--session", "s", "--store", store, *f), read, False),
            Invocation(("repair", path, "--dry-run", "--json", *f), verdict, True),
            Invocation(("repair", path, *f), verdict, False),
        ]
        for provider in PROVIDERS:
            out += [
                Invocation(("build", path, "--provider", provider, "--placeholder-tools", *f),
                           read, True),
                Invocation(("build", path, "--provider", provider, "--json", "--tools-as-text",
                            "--thinking-as-text", *f), read, True),
                Invocation(("check", path, "--provider", provider, "--placeholder-tools",
                            "--json", *f), verdict, True),
                Invocation(("check", path, "--provider", provider, "--json", *f), verdict,
                           True),
            ]
    out += [
        Invocation(("compact", path, "--dry-run", "--json"), verdict, True),
        Invocation(("compact", path, "--dry-run", "--keep-turns", "0", "--keep-tokens", "0",
                    "--force"), verdict, False),
        Invocation(("restore", path, "--before", "1"), verdict, False),
        Invocation(("report", path, "-o", f"{work}/report.html"), read, False),
        Invocation(("report", path, "--provider", "gemini", "-o", "-"), read, False),
        Invocation(("check", "--store", store, "--session", "s", "--json"), verdict, True),
        Invocation(("export", "s", "-o", f"{work}/out.jsonl", "--store", store), read, False),
    ]
    return out


def run_cli(invocation: Invocation) -> None:
    """Run one command in process; fail on an escaped exception, a wrong exit code, or
    output that is not valid UTF-8 (and, where JSON is printed, valid JSON)."""
    result = CliRunner().invoke(main, list(invocation.args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{invocation.args}: {type(result.exception).__name__}: "
                             f"{result.exception}") from result.exception
    assert result.exit_code in invocation.codes, (invocation.args, result.exit_code,
                                                  result.output[-500:])
    out = result.stdout_bytes.decode("utf-8")  # strict: a lone surrogate would fail here
    err = result.stderr_bytes.decode("utf-8") if result.stderr_bytes else ""
    assert "Traceback" not in err, err
    if invocation.json_out and result.exit_code in (0, 1) and out.strip():
        strict_json(out)


def run_library(raw: bytes, fmt: str = "auto") -> None:
    """The library on `raw`: read, branch, build, display, every provider's bodies (built and
    as stored), each validated and each valid JSON text."""
    result = read_raw(raw, "fuzz", fmt)
    assert result.records or result.fatal
    for problem in result.problems:
        str(problem).encode("utf-8")
    if result.fatal:
        return
    records, _ = select_branch(result.records)
    ctx = build_context(records)
    strict_json(json.dumps(ctx.to_json(), allow_nan=False))
    display_messages(records)
    stored = [r.view for r in records if r.kind == MESSAGE]
    for provider in PROVIDERS:
        for options in (BuildRequestOptions(placeholder_tools=True),
                        BuildRequestOptions(thinking_as_text=True, tools_as_text=True)):
            request = build_request(ctx, provider, options=options)
            assert not [v for v in validate(request.body, provider) if v.path == "$"], provider
            json.dumps(request.body, allow_nan=False, ensure_ascii=False).encode("utf-8")
        naive = naive_request(stored, provider).body
        validate(naive, provider)


class Workdir:
    """A private directory for one input: the input file, a store, an export."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="sessionctx-fuzz-")
        self.path = self._tmp.name

    def write(self, raw: bytes) -> str:
        target = os.path.join(self.path, "input.jsonl")
        with open(target, "wb") as f:
            f.write(raw)
        return target

    def close(self) -> None:
        self._tmp.cleanup()


def check_input(raw: bytes, pick: Callable[[list[Invocation]], list[Invocation]]) -> int:
    """Every promise on one input: the library in every format, and the commands `pick`
    chooses; the number of invocations run."""
    for fmt in FORMATS:
        run_library(raw, fmt)
    work = Workdir()
    try:
        path = work.write(raw)
        chosen = pick(commands(path, work.path))
        for invocation in chosen:
            work.write(raw)  # restore may have appended to it
            run_cli(invocation)
    finally:
        work.close()
    return len(FORMATS) + len(chosen)


def seeds() -> list[bytes]:
    return [p.read_bytes() for p in seed_files()] + [responses_seed()]


def responses_seed() -> bytes:
    """A Responses request log holding the real rollout's items (no real file of that shape
    is among the fixtures)."""
    rollout = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
    lines = [json.loads(x) for x in rollout.read_text().splitlines() if x.strip()]
    items = [o["payload"] for o in lines if o.get("type") == "response_item"]
    return json.dumps({"model": "gpt-5-codex", "instructions": "Be brief.",
                       "input": items}).encode()

