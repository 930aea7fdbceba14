"""How each command's time grows on each pathological shape, at sizes where a square shows.

Run: .venv/bin/python -m benchmarks.bench_scaling [--n 4000] [--shapes a,b] [--commands x,y]
     [--rounds 2]

For every shape of tests/scaling.py and every command it times n, 2n and 4n (CPU seconds,
the least of --rounds runs, the sizes taking turns) and prints both doubling ratios; a ratio
over 2.5 is marked and makes the exit status 1. tests/test_scaling.py runs the same at a
small n.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tests import scaling

BOUND = 2.5


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--shapes", default=",".join(scaling.SHAPES))
    parser.add_argument("--commands", default=",".join(scaling.COMMANDS))
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    over = 0
    with tempfile.TemporaryDirectory() as folder:
        for shape in args.shapes.split(","):
            for command in args.commands.split(","):
                first, second, times = scaling.ratios(command, shape, args.n, Path(folder),
                                                      args.rounds)
                mark = "  OVER" if max(first, second) > BOUND else ""
                over += bool(mark)
                print(f"{shape:18} {command:17} n={args.n}: "
                      f"{' '.join(f'{t:7.3f}' for t in times)} s  "
                      f"x{first:.2f} x{second:.2f}{mark}", flush=True)
    print(f"{over} case(s) over x{BOUND} per doubling")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
