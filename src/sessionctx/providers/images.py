"""Image sizes read from file headers, and downscaling when Pillow is installed.

Providers reject images over a pixel limit, and the image then stays in history and fails every
later turn; reading the header is enough to know, without decoding the image.
"""

from __future__ import annotations

import base64
import binascii
import io
import struct
from collections.abc import Iterator, Mapping, Sequence
from typing import Any


def decode(data: str) -> bytes | None:
    """The bytes of a base64 image, or None when it is not valid base64."""
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


HEAD_CHARS = 64 * 1024
"""Base64 characters decoded at most to find an image's size but for a JPEG whose metadata
segments run longer (decoded whole then)."""
_HEADS = (64, 4096, HEAD_CHARS)
"""The lengths of base64 decoded in turn: PNG, GIF and WebP give their size in their first 30
bytes (48 characters), a JPEG after its metadata segments, most often short."""


def stored_dimensions(data: str) -> tuple[int, int] | None:
    """(width, height) of a base64 image from its header, without decoding the image or, for
    all but a JPEG, more than its first 64 characters of base64: a validator reads it for every
    image of every request."""
    for chars in _HEADS:
        if len(data) <= chars:
            break
        head = decode(data[:chars])
        if head is None:  # not valid base64: the whole does not decode either
            return None
        size = dimensions(head)
        if size is not None or head[:2] != b"\xff\xd8":
            return size
    whole = decode(data)
    return dimensions(whole) if whole is not None else None


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
        return _jpeg(raw)
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


def _jpeg(raw: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(raw):
        if raw[i] != 0xFF:
            i += 1
            continue
        marker = raw[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            i += 1 if marker == 0xFF else 2
            continue
        length = int.from_bytes(raw[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", raw[i + 5:i + 9])
            return int(w), int(h)
        i += 2 + length
    return None


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
