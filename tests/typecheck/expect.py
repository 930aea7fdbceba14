"""The expected-failure type check: mypy must reject tests/typecheck/misspelt_key.py, and for
the misspelt key only. Run by `make lint` (`python -m tests.typecheck.expect`) and by
tests/test_typecheck.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

FILE = Path(__file__).with_name("misspelt_key.py")
EXPECTED = 'TypedDict "CallBlock" has no key "nmae"  [typeddict-item]'


def problem() -> str | None:
    """None when mypy fails on FILE with exactly the expected error; else what went wrong."""
    root = FILE.parents[2]
    # this checkout's sources, whatever copy of sessionctx the interpreter has installed
    env = {**os.environ, "MYPYPATH": str(root / "src")}
    run = subprocess.run([sys.executable, "-m", "mypy", str(FILE.relative_to(root))],
                         cwd=root, env=env, capture_output=True, text=True, check=False)
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    if run.returncode != 1 or len(errors) != 1 or EXPECTED not in errors[0]:
        return (f"mypy should reject {FILE.name} with only {EXPECTED!r}; exit "
                f"{run.returncode}:\n{run.stdout}{run.stderr}")
    return None


if __name__ == "__main__":
    found = problem()
    if found:
        sys.exit(found)
    print(f"mypy rejects {FILE.name} as expected")
