"""Image sizes read from file headers, and downscaling when Pillow is installed.

Providers reject images over a pixel limit, and the image then stays in history and fails every
later turn; reading the header is enough to know, without decoding the image.
"""

from __future__ import annotations

import base64
import binascii
import io
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any


def decode(data: str) -> bytes | None:
    """The bytes of a base64 image, or None when it is not valid base64."""
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


HEAD_CHARS = 64
"""Base64 characters decoded to find an image's size: PNG, GIF and WebP give it in their first
30 bytes (48 characters); a JPEG's segments are walked from there, each decoded only where its
header is."""


def stored_dimensions(data: str) -> tuple[int, int] | None:
    """(width, height) of a base64 image from its header, without decoding the image: its
    first HEAD_CHARS characters, and for a JPEG the few characters of each segment's header.
    A validator reads it for every image of every request."""
    head = decode(data[:HEAD_CHARS]) if len(data) > HEAD_CHARS else decode(data)
    if head is None:  # not valid base64
        return None
    if head[:2] == b"\xff\xd8" and len(data) > HEAD_CHARS:
        return _jpeg(_base64_bytes(data), len(data) // 4 * 3)
    return dimensions(head)


def stored_images(messages: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, int, str]]:
    """(message index, block index, base64 data) of each image block of `messages`."""
    for i, message in enumerate(messages):
        content = message.get("content")
        if isinstance(content, list):
            for j, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "image" and isinstance(
                        block.get("data"), str):
                    yield i, j, block["data"]


def decode_pixels(size: tuple[int, int]) -> bool:
    """Whether an image of `size` is small enough to decode safely."""
    return size[0] * size[1] <= MAX_DECODE_PIXELS


def dimensions(raw: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, WebP or JPEG header; None for anything else."""
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and len(raw) >= 24:
        w, h = struct.unpack(">II", raw[16:24])
        return int(w), int(h)
    if raw[:6] in (b"GIF87a", b"GIF89a") and len(raw) >= 10:
        w, h = struct.unpack("<HH", raw[6:10])
        return int(w), int(h)
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return _webp(raw)
    if raw[:2] == b"\xff\xd8":
        return _jpeg(lambda start, end: raw[start:end], len(raw))
    return None


def _webp(raw: bytes) -> tuple[int, int] | None:
    chunk = raw[12:16]
    if chunk == b"VP8X" and len(raw) >= 30:
        w = int.from_bytes(raw[24:27], "little") + 1
        h = int.from_bytes(raw[27:30], "little") + 1
        return w, h
    if chunk == b"VP8L" and len(raw) >= 25:
        bits = int.from_bytes(raw[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(raw) >= 30:
        w, h = struct.unpack("<HH", raw[26:30])
        return int(w) & 0x3FFF, int(h) & 0x3FFF
    return None


def _jpeg(read: Callable[[int, int], bytes], size: int) -> tuple[int, int] | None:
    """The size in a JPEG's frame header, found by walking its segments; `read(start, end)`
    gives bytes of the file (`size` bytes long), so that only the segments' headers need
    decoding from base64, never the metadata between them."""
    i = 2
    while i + 9 < size:
        head = read(i, i + 9)
        if len(head) < 9:
            return None
        if head[0] != 0xFF:  # not at a marker: on to the next 0xFF
            block = read(i, min(i + 4096, size))
            at = block.find(0xFF)
            i += at if at > 0 else max(len(block), 1)
            continue
        marker = head[1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            i += 1 if marker == 0xFF else 2
            continue
        length = int.from_bytes(head[2:4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", head[5:9])
            return int(w), int(h)
        i += 2 + length
    return None


def _base64_bytes(data: str) -> Callable[[int, int], bytes]:
    """Bytes `start` to `end` of the file whose base64 text is `data`, decoding only the
    characters that hold them (b"" where they do not decode)."""
    def read(start: int, end: int) -> bytes:
        first = start // 3 * 4
        chunk = decode(data[first:-(-end // 3) * 4]) or b""
        return chunk[start - first // 4 * 3:end - first // 4 * 3]
    return read


MAX_DECODE_PIXELS = 40_000_000
"""Larger images are not decoded to be downscaled: decoding one takes gigabytes."""


def downscale(raw: bytes, mime: str, limit: int, size: tuple[int, int]) -> bytes | str:
    """The image (of `size` by its header) shrunk to fit `limit` px on each side, or why it
    could not be: text that completes "... and ..."."""
    if not decode_pixels(size):
        return f"is too large to decode safely (over {MAX_DECODE_PIXELS:,} pixels)"
    try:
        from PIL import Image
    except ImportError:
        return "Pillow is not installed to downscale it"
    try:
        with Image.open(io.BytesIO(raw)) as img:
            img.thumbnail((limit, limit))
            out = io.BytesIO()
            fmt = {"image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}.get(mime, "PNG")
            img.save(out, format=fmt)
            return out.getvalue()
    except Exception as exc:  # a decoder of untrusted bytes: any failure means "cannot"
        return f"Pillow cannot decode it ({type(exc).__name__})"
