"""Peak memory of `sessionctx check` (or `check --json`, `report`) over input size, on the fuzz
corpus scaled up, against the bound docs/robustness.md states for that command.

Each input of the fuzz corpus (the real fixtures, the regression corpus and malformed inputs
drawn from them with a fixed seed) is grown to about --mb MB (lines repeated, a document's
items repeated, other bytes repeated), with the regression cases that once took gigabytes
beside them (a 16 MB tool_calls text, deep nesting on every line, one huge line) and files of
the smallest records (the worst inputs known). Each is checked in a fresh process, the command
as a user runs it (with --provider when --provider is given), its output going to /dev/null as
it would to a pipe or a file, and the peak of the memory Python and msgspec allocate while it
runs (tracemalloc: the file's bytes, the decoded records, the context, what is built for the
output) is divided by the input size. Prints every ratio and the worst beside the command's
bound (BOUNDS), and exits 1 when an input is over it or a process failed.

Run: .venv/bin/python benchmarks/bench_memory.py [--mb 8] [--inputs 24] [--provider anthropic]
     [--command check|'check --json'|report] [--smallest-only]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = """
import os, sys, tracemalloc
report = os.fdopen(os.dup(1), "w")
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the output goes out, as to a pipe or a file
from sessionctx.cli import main
tracemalloc.start()
ok = True
try:
    main(sys.argv[1:], prog_name="sessionctx")
    code = 0
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
except BaseException:
    code, ok = -1, False
peak = tracemalloc.get_traced_memory()[1]
print(peak, code, ok, file=report)
"""

def grow(raw: bytes, size: int) -> bytes:
    """`raw` grown to about `size` bytes in its own shape."""
    if not raw:
        return raw
    try:
        doc: Any = json.loads(raw)
    except (ValueError, RecursionError):
        doc = None
    if isinstance(doc, list) and doc:
        times = max(1, size // len(raw))
        return json.dumps(doc * times).encode()
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list) and doc["messages"]:
        times = max(1, size // len(raw))
        return json.dumps({**doc, "messages": doc["messages"] * times}).encode()
    body = raw if raw.endswith(b"\n") else raw + b"\n"
    return body * max(1, size // len(body))


def adversarial(size: int) -> dict[str, bytes]:
    user = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    calls = "[" + ", ".join(f"{{'id': 'c{i}', 'type': 'function', 'function': {{'name': 'f', "
                            f"'arguments': '{{}}'}}}}" for i in range(size // 80)) + "]"
    deep = '{"role":"user","content":"x","deep":' + '{"a":' * 3000 + "1" + "}" * 3000 + "}\n"
    huge = json.dumps({"role": "user", "content": "x" * size}).encode() + b"\n"
    return {
        "tool_calls as Python text": json.dumps(
            [user, {"role": "assistant", "content": None, "tool_calls": calls}]).encode(),
        "deep nesting on every line": deep.encode() * (size // len(deep)),
        "one huge line": huge,
        # the smallest records: each costs a dict, a record and a change, whatever its size
        "lines of {} after a message": b'{"role":"user","content":"hi"}\n' + b"{}\n" * (
            size // 3),
        'lines of {"role":"user"}': b'{"role":"user"}\n' * (size // 16),
    }


def corpus(count: int) -> dict[str, bytes]:
    from hypothesis import HealthCheck, given, seed, settings

    from tests import fuzzing

    seeds = fuzzing.seeds()
    names = [path.name for path in fuzzing.seed_files()] + ["Responses request log"]
    out = dict(zip(names, seeds, strict=True))
    drawn: list[bytes] = []

    @seed(18)
    @settings(max_examples=count, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(fuzzing.inputs(seeds))
    def collect(raw: bytes) -> None:
        drawn.append(raw)

    collect()
    for i, raw in enumerate(drawn):
        out[f"fuzz input {i}"] = raw
    return out


# docs/robustness.md: each command's peak memory is at most this multiple of the input size,
# plus the interpreter and its libraries, for any input at all (the worst: files of `{}`)
BOUNDS = {"check": 100, "check --json": 100, "report": 360}

COMMANDS = {"check": ["check"], "check --json": ["check", "--json"],
            "report": ["report", "-o", os.devnull]}


def measure(path: str, provider: str | None, command: str = "check"
            ) -> tuple[int, int, bool] | str:
    name, *rest = COMMANDS[command]
    args = [name, path, *rest, *(["--provider", provider] if provider else [])]
    proc = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True,
                          check=False, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              (str(ROOT / "src"), str(ROOT)))})
    try:
        peak, code, ok = proc.stdout.split()
    except ValueError:
        return proc.stderr[-600:] or f"exit status {proc.returncode}"
    return int(peak), int(code), ok == "True"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=8)
    parser.add_argument("--inputs", type=int, default=24)
    parser.add_argument("--provider", default=None)
    parser.add_argument("--command", choices=sorted(COMMANDS), default="check",
                        help="what runs on each input (check, check --json, report)")
    parser.add_argument("--smallest-only", action="store_true",
                        help="only the regression cases and files of the smallest records")
    args = parser.parse_args()
    size = int(args.mb * 1024 * 1024)
    inputs = {} if args.smallest_only else {
        name: grow(raw, size) for name, raw in corpus(args.inputs).items()}
    inputs.update(adversarial(size))
    worst: tuple[float, str] = (0.0, "")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, raw in inputs.items():
            if len(raw) < size // 4:
                continue  # could not be grown (empty, or one short value)
            path = os.path.join(tmp, "input")
            Path(path).write_bytes(raw)
            measured = measure(path, args.provider, args.command)
            if isinstance(measured, str):
                print(f"  FAILED  {len(raw) / 1048576:6.1f} MB  {name}: {measured}")
                failed += 1
                continue
            peak, code, ok = measured
            ratio = peak / len(raw)
            bound = BOUNDS[args.command]
            print(f"{ratio:6.2f}x  {len(raw) / 1048576:6.1f} MB  exit {code}"
                  f"{'' if ok else ' EXCEPTION'}{'' if ratio <= bound else ' OVER THE BOUND'}"
                  f"  {name}")
            worst = max(worst, (ratio, name))
            failed += not ok
    bound = BOUNDS[args.command]
    verdict = "within" if worst[0] <= bound else "OVER"
    print(f"worst peak-memory ratio of {args.command} (peak allocated / input size): "
          f"{worst[0]:.2f}x ({worst[1]}); bound {bound}x (docs/robustness.md): {verdict}; "
          f"processes that failed: {failed}")
    sys.exit(0 if verdict == "within" and not failed else 1)


if __name__ == "__main__":
    main()
