"""The expected-failure type checks: mypy must reject each file of CASES, and for its misspelt
key only (a renderer's and a policy pass's reading of a turn's blocks). Run by `make lint`
(`python -m tests.typecheck.expect`) and by tests/test_typecheck.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
# each file that must fail mypy, with the one error it must fail with
CASES = {
    HERE / "misspelt_key.py": 'TypedDict "TurnCall" has no key "nmae"  [typeddict-item]',
    HERE / "misspelt_key_policy.py":
        'TypedDict "ResultBlock" has no key "isEror"  [typeddict-item]',
}


def problems() -> dict[str, str]:
    """What went wrong, by file name: empty when mypy fails on every file of CASES with
    exactly its expected error."""
    root = HERE.parents[1]
    # this checkout's sources, whatever copy of sessionctx the interpreter has installed
    env = {**os.environ, "MYPYPATH": str(root / "src")}
    files = [str(path.relative_to(root)) for path in CASES]
    run = subprocess.run([sys.executable, "-m", "mypy", *files], cwd=root, env=env,
                         capture_output=True, text=True, check=False)
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    found: dict[str, str] = {}
    for (path, expected), name in zip(CASES.items(), files, strict=True):
        mine = [line for line in errors if line.startswith(f"{name}:")]
        if run.returncode != 1 or len(mine) != 1 or expected not in mine[0]:
            found[path.name] = (f"mypy should reject {path.name} with only {expected!r}; exit "
                                f"{run.returncode}:\n{run.stdout}{run.stderr}")
    return found


if __name__ == "__main__":
    wrong = problems()
    if wrong:
        sys.exit("\n".join(wrong.values()))
    print("mypy rejects " + ", ".join(path.name for path in CASES) + " as expected")
