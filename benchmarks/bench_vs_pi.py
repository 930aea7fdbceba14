"""sessionctx against pi's own loader, on one real pi session replicated to 10, 30 and 100 MB.

pi's side is its published package (`@mariozechner/pi-coding-agent`, pinned in
benchmarks/pi/package.json + package-lock.json): `loadEntriesFromFile`, the version migration
its SessionManager runs, and `buildSessionContext` (benchmarks/pi/pi_context.mjs). Every ratio
is sessionctx over pi, measured in one run with the two sides taking turns:

1. whole process, `sessionctx build FILE --json` over pi printing its context as JSON
   (goal <= 0.7 at 30 and at 100 MB);
2. peak memory (max RSS) of those processes (goal at 100 MB: <= 1.0);
3. in process, read + build (what `build` does before printing) over pi's load +
   buildSessionContext (goal <= 0.5 at 30 MB); printed below it, labelled, the two floors
   any full read stands on, over the same pi time: msgspec decoding every line, and that
   decoding with the checks every read makes (nesting depth, duplicate keys);
4. CPU time (user + system) of `sessionctx build` on a one-message file over pi's process on
   the same file (goal <= 1.0).

Before timing, both sides' messages are compared on each file; the differences are the
documented ones (sessionctx drops assistant turns left empty by an abort and calls that never
got a result, and notes an interrupted call; pi keeps them as stored), and anything else fails
the run.

sessionctx runs as an installed package does, its bytecode compiled (the run compiles src/
first, as `make setup` does and as pip does on install).

Setup: (cd benchmarks/pi && npm ci)
Run:   .venv/bin/python benchmarks/bench_vs_pi.py [--sizes 10,30,100] [--rounds 5]
"""

from __future__ import annotations

import argparse
import compileall
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PI_DIR = ROOT / "benchmarks" / "pi"
PI_SCRIPT = PI_DIR / "pi_context.mjs"
FIXTURE_CANDIDATES = (ROOT / "tests" / "fixtures" / "pi" / "large-session.jsonl",
                      ROOT.parent / "shared" / "fixtures" / "pi" / "large-session.jsonl")
SESSIONCTX = str(Path(sys.executable).parent / "sessionctx")

Obj = dict[str, Any]


def fixture() -> Path:
    for path in FIXTURE_CANDIDATES:
        if path.is_file():
            return path
    raise SystemExit("the pi fixture large-session.jsonl was not found in tests/fixtures/pi")


def _entries(path: Path) -> list[Obj]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _renamed(entry: Obj, copy: int) -> Obj:
    """The entry with its call ids made unique to this copy (a session never reuses one)."""
    entry = json.loads(json.dumps(entry))
    message = entry.get("message")
    if not isinstance(message, dict):
        return entry
    if isinstance(message.get("toolCallId"), str):
        message["toolCallId"] = f"{message['toolCallId']}_{copy}"
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "toolCall" and \
                    isinstance(block.get("id"), str):
                block["id"] = f"{block['id']}_{copy}"
    return entry


def replicate(source: Path, out: Path, megabytes: float) -> int:
    """A version 3 pi session (ids and parent ids, one linear branch) holding whole copies of
    the source's entries until it reaches `megabytes`; returns the number of entries."""
    entries = _entries(source)
    header = next(e for e in entries if e.get("type") == "session")
    body = [e for e in entries if e.get("type") != "session"]
    target = int(megabytes * 1024 * 1024)
    count = 0
    parent: str | None = None
    with open(out, "w", encoding="utf-8") as f:
        written = f.write(json.dumps({**header, "version": 3}) + "\n")
        copy = 0
        while written < target:
            for entry in body:
                entry = _renamed(entry, copy)
                entry.pop("id", None)
                entry.pop("parentId", None)
                node_id = f"{count:08x}"
                line = json.dumps({"type": entry.pop("type"), "id": node_id, "parentId": parent,
                                   **entry}, ensure_ascii=False)
                written += f.write(line + "\n")
                parent = node_id
                count += 1
            copy += 1  # whole copies only: a copy cut short would end on an open call
    return count


def one_message(source: Path, out: Path) -> None:
    entries = _entries(source)
    header = next(e for e in entries if e.get("type") == "session")
    first = next(e for e in entries if e.get("type") == "message")
    with open(out, "w", encoding="utf-8") as f:
        f.write(json.dumps({**header, "version": 3}) + "\n")
        f.write(json.dumps({"type": "message", "id": "00000000", "parentId": None,
                            "timestamp": first.get("timestamp"),
                            "message": first["message"]}) + "\n")


# ------------------------------------------------------------------------------ the two sides

# Starts the measured process from a small process of its own: Linux counts the memory of the
# process that forks into the child's peak (ru_maxrss), and this benchmark's own heap, after
# the in-process runs, is larger than sessionctx's whole run at 30 MB.
_LAUNCHER = """
import json, os, subprocess, sys, time
with open(os.devnull, "wb") as sink:
    start = time.perf_counter()
    proc = subprocess.Popen(sys.argv[1:], stdout=sink, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
err = proc.stderr.read().decode() if proc.stderr else ""
print(json.dumps([wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024,
                  os.waitstatus_to_exitcode(status), err]))
"""


def run(argv: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and max RSS in bytes of one process whose
    output goes to /dev/null."""
    out = subprocess.run([sys.executable, "-c", _LAUNCHER, *argv], capture_output=True,
                         check=True).stdout
    wall, cpu, rss, code, err = json.loads(out)
    if code not in (0, 1):
        raise SystemExit(f"{argv[0]} failed ({code}): {err}")
    return wall, cpu, rss


def sessionctx_cmd(path: Path) -> list[str]:
    return [SESSIONCTX, "build", str(path), "--json"]


def pi_cmd(path: Path) -> list[str]:
    return ["node", str(PI_SCRIPT), "print", str(path)]


def sessionctx_in_process(path: Path) -> float:
    """Seconds to read and build, as `build` does before it prints."""
    from sessionctx.context import build_context
    from sessionctx.inputs import read_input
    from sessionctx.records import select_branch

    gc.collect()
    start = time.perf_counter()
    result = read_input(str(path))
    records, _ = select_branch(result.records)
    ctx = build_context(records)
    elapsed = time.perf_counter() - start
    del ctx, records, result
    return elapsed


def floors(path: Path) -> tuple[float, float]:
    """Seconds for what any full read pays before a record is made: msgspec decoding every
    line, and that decoding with the checks every read makes (nesting depth, duplicate keys),
    the file read included in both."""
    import msgspec

    from sessionctx import decoding

    gc.collect()
    start = time.perf_counter()
    raw = path.read_bytes()
    msgspec.json.Decoder().decode_lines(raw)
    decoded = time.perf_counter() - start
    gc.collect()
    start = time.perf_counter()
    raw = path.read_bytes()
    values = decoding.decode_lines(memoryview(raw), raw.count(b"\n"))
    checked = time.perf_counter() - start
    if values is None:
        raise SystemExit(f"{path.name}: a line the read would look at one by one")
    return decoded, checked


def pi_in_process(path: Path, n: int) -> list[float]:
    out = subprocess.run(["node", str(PI_SCRIPT), "time", str(path), str(n)],
                         capture_output=True, check=True)
    times: list[float] = json.loads(out.stdout)
    return times


# ------------------------------------------------------------------------------ agreement

def compare(path: Path) -> list[str]:
    """The differences between the two sides' messages, each explained; raises on any other."""
    from sessionctx.context import build_context
    from sessionctx.inputs import read_input
    from sessionctx.records import select_branch

    pi_messages: list[Obj] = json.loads(subprocess.run(
        ["node", str(PI_SCRIPT), "messages", str(path)], capture_output=True,
        check=True).stdout)
    records, _ = select_branch(read_input(str(path)).records)
    ctx = build_context(records)
    ours = ctx.messages
    kinds: dict[str, int] = {}
    for change in ctx.changes:
        kinds[str(change.kind)] = kinds.get(str(change.kind), 0) + 1
    j = 0
    dropped_empty = stripped = dropped_calls = notes = 0
    for theirs in pi_messages:
        mine = ours[j] if j < len(ours) else None
        if mine is not None and mine == theirs:
            j += 1
            continue
        if mine is not None and _without_unpaired_calls(theirs) == mine:
            stripped += 1
            j += 1
            continue
        if theirs.get("role") == "assistant" and not _has_content(theirs):
            dropped_empty += 1  # an empty aborted turn: sessionctx leaves it out
            continue
        if _without_unpaired_calls(theirs) is None:
            dropped_calls += 1  # nothing but calls without results
            continue
        raise SystemExit(f"{path.name}: the sides disagree at pi message "
                         f"{pi_messages.index(theirs)}: {json.dumps(theirs)[:300]} vs "
                         f"{json.dumps(mine)[:300]}")
    while j < len(ours) and _is_note(ours[j]):
        notes += 1
        j += 1
    extra = len(ours) - j
    if extra:
        raise SystemExit(f"{path.name}: sessionctx has {extra} message(s) pi does not")
    return [f"{len(pi_messages)} pi messages, {len(ours)} sessionctx messages, equal but for:",
            f"  {dropped_empty} empty aborted assistant turn(s) sessionctx drops",
            f"  {dropped_calls} assistant turn(s) of nothing but calls that never got a result, "
            "which sessionctx drops",
            f"  {stripped} assistant turn(s) sessionctx keeps without such calls",
            f"  {notes} note(s) sessionctx adds about an interrupted call",
            f"  change log kinds: {dict(sorted(kinds.items()))}"]


def _has_content(message: Obj) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    return any(not (b.get("type") == "text" and not str(b.get("text", "")).strip())
               for b in content or [] if isinstance(b, dict))


def _without_unpaired_calls(message: Obj) -> Obj | None:
    """An assistant message with its call blocks taken out; None when nothing is left."""
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return None
    rest = [b for b in content if not (isinstance(b, dict) and b.get("type") == "toolCall")]
    if len(rest) == len(content):
        return None
    stripped = {**message, "content": rest}
    return stripped if _has_content(stripped) else None


def _is_note(message: Obj) -> bool:
    content = message.get("content")
    text = content[0].get("text", "") if isinstance(content, list) and content else content
    return isinstance(text, str) and text.startswith("[Note from sessionctx")


# ------------------------------------------------------------------------------ the run

def _range(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} (range {min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,30,100", help="megabytes, comma-separated")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--in-process", type=int, default=3,
                        help="timed in-process runs per side per round (best one counts)")
    parser.add_argument("--in-process-at", default="10,30",
                        help="the sizes (of --sizes) the in-process ratio is taken at; pi's "
                             "walk is quadratic, so at 100 MB it alone takes minutes a round")
    args = parser.parse_args()
    if not (PI_DIR / "node_modules").is_dir():
        raise SystemExit("pi is not installed: (cd benchmarks/pi && npm ci)")
    # the program as installed runs it: its bytecode compiled (pip compiles a package as it
    # installs it; an editable install where PYTHONDONTWRITEBYTECODE is set has none)
    compileall.compile_dir(str(ROOT / "src"), quiet=1)
    sizes = [float(s) for s in args.sizes.split(",")]
    source = fixture()
    with tempfile.TemporaryDirectory() as tmp:
        files: dict[float, Path] = {}
        for mb in sizes:
            files[mb] = Path(tmp) / f"pi-{mb:g}mb.jsonl"
            count = replicate(source, files[mb], mb)
            print(f"{files[mb].name}: {count} entries, "
                  f"{files[mb].stat().st_size / 1048576:.1f} MiB, from {source.name}")
        tiny = Path(tmp) / "pi-one-message.jsonl"
        one_message(source, tiny)
        for path in [tiny, *files.values()][:2]:
            print(f"agreement on {path.name}:")
            for line in compare(path):
                print(f"  {line}")
        at = {float(x) for x in args.in_process_at.split(",") if x}
        _measure(files, tiny, args.rounds, args.in_process, at)


def _measure(files: dict[float, Path], tiny: Path, rounds: int, k: int,
             in_process_at: set[float]) -> None:
    whole: dict[float, list[float]] = {mb: [] for mb in files}
    memory: dict[float, list[float]] = {mb: [] for mb in files}
    rss: dict[float, list[tuple[int, int]]] = {mb: [] for mb in files}
    inproc: dict[float, list[float]] = {mb: [] for mb in files}
    floor: dict[float, list[tuple[float, float]]] = {mb: [] for mb in files}
    cpu: list[float] = []
    cpu_pairs: list[tuple[float, float]] = []
    for r in range(rounds):
        first_ours = r % 2 == 0  # who goes first alternates
        for mb, path in files.items():
            if first_ours:
                a, b = run(sessionctx_cmd(path)), run(pi_cmd(path))
            else:
                b, a = run(pi_cmd(path)), run(sessionctx_cmd(path))
            whole[mb].append(a[0] / b[0])
            memory[mb].append(a[2] / b[2])
            rss[mb].append((a[2], b[2]))
            if mb not in in_process_at:
                continue
            if first_ours:
                ours = min(sessionctx_in_process(path) for _ in range(k))
                theirs = min(pi_in_process(path, k))
            else:
                theirs = min(pi_in_process(path, k))
                ours = min(sessionctx_in_process(path) for _ in range(k))
            inproc[mb].append(ours / theirs)
            runs = [floors(path) for _ in range(k)]
            decoded, checked = min(d for d, _ in runs), min(c for _, c in runs)
            floor[mb].append((decoded / theirs, checked / theirs))
        a = run([SESSIONCTX, "build", str(tiny)])
        b = run(pi_cmd(tiny))
        cpu.append(a[1] / b[1])
        cpu_pairs.append((a[1], b[1]))
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)
    print(f"\n{rounds} rounds, the sides taking turns; ratios are sessionctx / pi")
    for mb in files:
        mib = [(x / 1048576, y / 1048576) for x, y in rss[mb]]
        print(f"{mb:g} MB:")
        print(f"  whole process build --json, wall:        {_range(whole[mb])}")
        print(f"  peak memory (max RSS):                   {_range(memory[mb])}  "
              f"[MiB sessionctx {min(m[0] for m in mib):.0f}-{max(m[0] for m in mib):.0f}, "
              f"pi {min(m[1] for m in mib):.0f}-{max(m[1] for m in mib):.0f}]")
        if inproc[mb]:
            print(f"  in process read + build, best of {k}:     {_range(inproc[mb])}")
            print(f"    floor: decode + the read's checks:     "
                  f"{_range([c for _, c in floor[mb]])}  (no record made, nothing built)")
            print(f"    floor: msgspec decode alone:           "
                  f"{_range([d for d, _ in floor[mb]])}")
    ms = [(x * 1000, y * 1000) for x, y in cpu_pairs]
    print(f"one-message file, build CPU time:          {_range(cpu)}  "
          f"[ms sessionctx {min(m[0] for m in ms):.0f}-{max(m[0] for m in ms):.0f}, "
          f"pi {min(m[1] for m in ms):.0f}-{max(m[1] for m in ms):.0f}]")


if __name__ == "__main__":
    main()
