"""Agents' own published session readers, run in Node on a session file.

`tests/node/package.json` and its lock pin the packages; the first use installs them with
`npm ci` into a cache folder keyed by the lock's hash (`$SESSIONCTX_NODE_CACHE`, default
`~/.cache/sessionctx/node-<hash>`), so later runs start at once. The tests that use them skip
only when `node` is not installed; `.ci/run` makes sure it is.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

NODE_DIR = Path(__file__).resolve().parent / "node"
SCRIPT = NODE_DIR / "readers.mjs"


def cache_folder(package_dir: Path, prefix: str) -> Path:
    """Where `package_dir`'s lock is (or would be) installed."""
    lock = (package_dir / "package-lock.json").read_bytes()
    digest = hashlib.sha256(lock + (package_dir / "package.json").read_bytes()).hexdigest()[:16]
    root = os.environ.get("SESSIONCTX_NODE_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "sessionctx")
    return Path(root) / f"{prefix}-{digest}"


def installed(package_dir: Path, prefix: str, npm_args: tuple[str, ...], timeout: int,
              then: tuple[str, ...] = ()) -> Path:
    """The node_modules folder of `package_dir`'s pinned packages, `npm ci`'d once into a
    cache folder keyed by its package.json and lock (`$SESSIONCTX_NODE_CACHE`, default
    `~/.cache/sessionctx/<prefix>-<hash>`), one installer at a time; `then` runs after the
    install, in the cache folder."""
    cache = cache_folder(package_dir, prefix)
    done = cache / "node_modules" / ".sessionctx-installed"
    if done.exists():
        return cache / "node_modules"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache.parent / f"{cache.name}.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if not done.exists():
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(package_dir / name, cache / name)
            subprocess.run(["npm", "ci", *npm_args, "--no-audit", "--no-fund",
                            "--loglevel=error"], cwd=cache, check=True, timeout=timeout)
            if then:
                subprocess.run(list(then), cwd=cache, check=True, timeout=300)
            done.write_text(f"installed from {package_dir.name}/package-lock.json\n")
    return cache / "node_modules"


def node_modules() -> Path:
    """The installed packages, installing them first if this lock was never installed."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed")
    return installed(NODE_DIR, "node", ("--ignore-scripts", "--omit=optional"), 900)


def read(reader: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """What the agent's reader gives for the session (see readers.mjs)."""
    modules = node_modules()
    out = subprocess.run(["node", str(SCRIPT), str(modules), reader, *args],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, **(env or {})})
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result
