"""Shared test helpers: where the real fixtures live, and small record builders."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sessionctx.records import Record, records_from_objects

# LiteLLM fetches its model cost map over the network when imported, unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
# Real transcripts travel with the project (licences and origins in fixtures/SOURCES.md).
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    assert FIXTURES.is_dir(), f"fixtures not found at {FIXTURES}"
    return FIXTURES


def recs(*objects: dict[str, Any]) -> list[Record]:
    return records_from_objects(list(objects))


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], **extra}


def assistant(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), **extra}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def call(cid: str, name: str = "bash", **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": cid, "name": name, "arguments": arguments}


def result(cid: str, body: str = "ok", name: str = "bash", *images: dict[str, Any],
           **extra: Any) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": body}, *images]
    return {"role": "toolResult", "toolCallId": cid, "toolName": name, "content": content,
            "isError": False, **extra}


def image(data: str = "aGVsbG8=", mime: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "data": data, "mimeType": mime}


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Any:
    """A 64 KiB tmpfs, when this machine lets us mount one."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                              capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        pytest.skip("mount is not available here")
    if done.returncode != 0:
        pytest.skip(f"a tmpfs cannot be mounted here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)
