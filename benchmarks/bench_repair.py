"""Repair against build on the same large session, each as a whole process, in one run.

The session is the real pi fixture replicated to the given size (as bench_vs_pi.py makes it):
its copies hold empty aborted turns and calls that never got a result, so repair has hundreds
of lines to edit or take out. The ratios are over `sessionctx build FILE --json` on the same
file, the three commands taking turns round by round:

1. `sessionctx repair COPY --no-backup`, written in place (goal <= 3.5: a repair reads the
   session, edits the objects the read decoded, and reads the repaired bytes back to check
   them, so two reads of the file are its floor);
2. `sessionctx repair FILE --dry-run`, which also prints the diff of every changed line.

Run: .venv/bin/python benchmarks/bench_repair.py [--size 30] [--rounds 5]
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the package
from benchmarks.bench_vs_pi import ROOT, SESSIONCTX, fixture, replicate, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=30, help="megabytes")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "src"), quiet=1)  # as installed: bytecode compiled
    with tempfile.TemporaryDirectory() as tmp:
        session = Path(tmp) / "pi.jsonl"
        count = replicate(fixture(), session, args.size)
        print(f"{session.name}: {count} entries, {session.stat().st_size / 1048576:.1f} MiB")
        copy = Path(tmp) / "copy.jsonl"
        written: list[float] = []
        dry: list[float] = []
        peaks: list[tuple[int, int, int]] = []
        for r in range(args.rounds):
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
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    mib = [[p / 1048576 for p in peak] for peak in peaks]
    print(f"\n{args.rounds} rounds, the commands taking turns; wall time over build --json")
    print(f"  repair, written in place:  {_range(written)}  (goal <= 3.5)")
    print(f"  repair --dry-run:          {_range(dry)}")
    print(f"  peak MiB: build {max(m[0] for m in mib):.0f}, repair {max(m[1] for m in mib):.0f}, "
          f"repair --dry-run {max(m[2] for m in mib):.0f}")


def _range(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} (range {min(values):.2f}-{max(values):.2f})"


if __name__ == "__main__":
    main()
