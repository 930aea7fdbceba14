"""Repair against build on the same large session, each as a whole process, in one run.

Three sessions, each about `--size` MB and each with hundreds of things to repair:

- pi: the real pi fixture replicated (as bench_vs_pi.py makes it): its copies hold empty
  aborted turns and calls that never got a result;
- claude-code: the real Claude Code fixture replicated into one chain, with every third result
  line left out, so the calls before them are unanswered;
- openai-chat: one JSON document (a message list, indented) of tool loops in which every other
  second call has no result and every seventh step holds a result that answers nothing.

The ratios are over `sessionctx build FILE --json` on the same file, the three commands taking
turns round by round:

1. `sessionctx repair COPY --no-backup`, written in place (goal <= 3.5 on pi: a repair reads
   the session, edits the objects the read decoded, and reads the repaired bytes back to check
   them, so two reads of the file are its floor);
2. `sessionctx repair FILE --dry-run`, which also prints the diff of every changed line.

Run: .venv/bin/python benchmarks/bench_repair.py [--size 30] [--rounds 3] [--formats pi,...]
"""

from __future__ import annotations

import argparse
import compileall
import json
import re
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the package
from benchmarks.bench_vs_pi import ROOT, SESSIONCTX, fixture, replicate, run

CLAUDE = ROOT / "tests" / "fixtures" / "claude-code" / "06381696-0074-49f8-863e-6ad4fac507f9.jsonl"


def claude_code(out: Path, megabytes: float) -> int:
    """The Claude Code fixture's lines copied until `megabytes`, each copy's ids made its own
    and its first line hung from the last line of the copy before; returns the line count."""
    entries = [json.loads(line) for line in CLAUDE.read_text().splitlines() if line.strip()]
    own_ids = re.compile(r'"((?:toolu_|msg_)[A-Za-z0-9]+)"')
    target = int(megabytes * 1024 * 1024)
    written = count = copy = 0
    last: str | None = None
    with open(out, "w", encoding="utf-8") as f:
        while written < target:
            for k, entry in enumerate(entries):
                text = json.dumps(entry)
                if entry.get("type") == "user" and "tool_result" in text and k % 3 == 0:
                    continue  # the result never written: its call is left unanswered
                if isinstance(entry.get("uuid"), str):
                    entry = {**entry, "uuid": f"{copy}-{entry['uuid']}", "parentUuid": (
                        f"{copy}-{entry['parentUuid']}" if entry.get("parentUuid") else last)}
                    last = entry["uuid"]
                    text = json.dumps(entry)
                text = own_ids.sub(rf'"\g<1>{copy}"', text)
                written += f.write(text + "\n")
                count += 1
            copy += 1
    return count


def openai_chat(out: Path, megabytes: float) -> int:
    """An indented OpenAI chat message list of tool loops; returns the message count."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You run commands."}]
    target = int(megabytes * 1024 * 1024)
    size = step = 0
    while size < target:
        calls = [{"id": f"call_{step}_{k}", "type": "function", "function": {
            "name": "bash", "arguments": json.dumps({"cmd": f"ls {step}"})}} for k in range(2)]
        loop: list[dict[str, Any]] = [
            {"role": "user", "content": f"step {step} " + "x" * 200},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": f"call_{step}_0", "content": "out " * 100}]
        if step % 2:
            loop.append({"role": "tool", "tool_call_id": f"call_{step}_1",
                         "content": "out " * 100})
        if step % 7 == 0:
            loop.append({"role": "tool", "tool_call_id": f"gone_{step}", "content": "late"})
        loop.append({"role": "assistant", "content": f"done {step}"})
        messages += loop
        size += sum(len(json.dumps(m)) for m in loop)
        step += 1
    out.write_text(json.dumps(messages, indent=1))
    return len(messages)


SESSIONS: dict[str, tuple[str, Callable[[Path, float], int]]] = {
    "pi": ("pi.jsonl", lambda out, mb: replicate(fixture(), out, mb)),
    "claude-code": ("claude.jsonl", claude_code),
    "openai-chat": ("chat.json", openai_chat),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=30, help="megabytes")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--formats", default=",".join(SESSIONS),
                        help="comma-separated, of: " + ", ".join(SESSIONS))
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "src"), quiet=1)  # as installed: bytecode compiled
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in args.formats.split(","):
            name, make = SESSIONS[fmt]
            session = Path(tmp) / name
            count = make(session, args.size)
            print(f"{fmt}: {session.name}, {count} entries, "
                  f"{session.stat().st_size / 1048576:.1f} MiB", file=sys.stderr)
            _measure(fmt, session, args.rounds)


def _measure(fmt: str, session: Path, rounds: int) -> None:
    copy = session.with_name("copy-" + session.name)
    written: list[float] = []
    dry: list[float] = []
    peaks: list[tuple[int, int, int]] = []
    for r in range(rounds):
        shutil.copyfile(session, copy)
        steps = [
            ("build", [SESSIONCTX, "build", str(session), "--json"]),
            ("repair", [SESSIONCTX, "repair", str(copy), "--no-backup"]),
            ("dry", [SESSIONCTX, "repair", str(session), "--dry-run"]),
        ]
        order = steps[r % 3:] + steps[:r % 3]  # who goes first turns round by round
        measured = {name: run(argv) for name, argv in order}
        build = measured["build"][0]
        written.append(measured["repair"][0] / build)
        dry.append(measured["dry"][0] / build)
        peaks.append((measured["build"][2], measured["repair"][2], measured["dry"][2]))
        print(f"{fmt}: round {r + 1}/{rounds} done", file=sys.stderr)
    mib = [[p / 1048576 for p in peak] for peak in peaks]
    goal = "  (goal <= 3.5)" if fmt == "pi" else ""
    print(f"\n{fmt}, {rounds} rounds, the commands taking turns; wall time over build --json")
    print(f"  repair, written in place:  {_range(written)}{goal}")
    print(f"  repair --dry-run:          {_range(dry)}")
    print(f"  peak MiB: build {max(m[0] for m in mib):.0f}, repair {max(m[1] for m in mib):.0f}, "
          f"repair --dry-run {max(m[2] for m in mib):.0f}")


def _range(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} (range {min(values):.2f}-{max(values):.2f})"


if __name__ == "__main__":
    main()
