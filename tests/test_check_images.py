"""`check` reads a stored image's size from its header: an image too large to decode, or over
the provider's pixel limit, is not ready to send as stored."""

from __future__ import annotations

import base64
import json
import struct
import tracemalloc
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from sessionctx.cli import main
from sessionctx.providers import images
from tests.conftest import FIXTURES

CLAUDE_IMAGE = FIXTURES / "claude-code" / "user-image.jsonl"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width: int, height: int) -> bytes:
    """A real, valid PNG of `width` x `height` black 1-bit pixels, compressed row by row so
    neither the pixels nor the raw rows are ever held whole."""
    row = b"\x00" * (1 + (width + 7) // 8)
    packer = zlib.compressobj(9)
    parts = [packer.compress(row) for _ in range(height)]
    parts.append(packer.flush())
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", b"".join(parts))
            + _chunk(b"IEND", b""))


def _session(tmp_path: Path, width: int, height: int) -> Path:
    """The real Claude Code image session with its image replaced by a PNG of that size."""
    data = base64.b64encode(png(width, height)).decode()
    lines = []
    for line in CLAUDE_IMAGE.read_text().splitlines():
        entry = json.loads(line)
        for block in (entry.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("type") == "image":
                block["source"] = {"type": "base64", "media_type": "image/png", "data": data}
        lines.append(json.dumps(entry))
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _check(path: Path, *args: str) -> tuple[int, dict[str, object]]:
    out = CliRunner().invoke(main, ["check", str(path), "--json", *args])
    return out.exit_code, json.loads(out.stdout)


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _session(tmp_path_factory.mktemp("huge"), 20000, 20000)


def test_the_png_is_small_and_real(huge: Path) -> None:
    raw = png(20000, 20000)
    assert len(raw) < 200_000
    assert images.dimensions(raw) == (20000, 20000)
    assert huge.stat().st_size < 400_000


def test_an_image_too_large_to_decode_is_a_problem_as_stored(huge: Path) -> None:
    code, report = _check(huge)
    assert code == 1 and report["ok"] is False
    found = [p for p in report["problems"] if p["kind"] == "image_too_large"]  # type: ignore
    assert len(found) == 1
    assert "20000x20000 px is over 40,000,000 pixels" in found[0]["message"]
    line = next(i for i, text in enumerate(huge.read_text().splitlines(), 1)
                if '"image"' in text)
    assert found[0]["record"] == {"line": line}
    text = CliRunner().invoke(main, ["check", str(huge)]).output
    assert "ready to send" not in text and "image_too_large" in text


@pytest.mark.parametrize(("provider", "limit"), [("anthropic", 8000), ("bedrock", 8000)])
def test_an_image_over_the_provider_limit_is_a_problem_as_stored(
        tmp_path: Path, provider: str, limit: int) -> None:
    path = _session(tmp_path, 9000, 10)  # decodable, but over the provider's 8000 px a side
    assert _check(path)[0] == 0
    code, report = _check(path, "--provider", provider, "--placeholder-tools")
    assert code == 0  # the build downscales it: the body it sends is fine
    as_stored = [p for p in report["as_stored"]  # type: ignore[attr-defined]
                 if p["kind"] == f"{provider}: as stored"]
    assert [p["message"] for p in as_stored] == [
        f"image of 9000x10 px is over {provider}'s limit of {limit} px per side"]
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1)
                if '"image"' in text)
    assert as_stored[0]["record"] == {"line": line}
    assert _check(path, "--provider", "openai-chat")[0] == 0  # no pixel limit there


def test_the_size_is_read_without_decoding_the_image(huge: Path) -> None:
    data = base64.b64encode(png(20000, 20000)).decode()
    tracemalloc.start()
    try:
        assert images.stored_dimensions(data) == (20000, 20000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024
