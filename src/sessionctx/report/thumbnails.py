"""Images in a report: each distinct picture once, downscaled, so a page of many screenshots
stays a small multiple of the session's text.

Pillow (the `images` extra) makes the thumbnails; without it a small image is shown as it is
and a large one as a labelled placeholder. An image that cannot be decoded is said to be so.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
from dataclasses import dataclass, field
from typing import Any

THUMB_BOX = (320, 200)
SMALL_ENOUGH = 24 * 1024  # base64 characters shown as they are when no thumbnail can be made
MAX_PIXELS = 40_000_000

_MAGIC = ((b"\x89PNG", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"),
          (b"RIFF", "image/webp"))


def sniff(head: bytes) -> str | None:
    """The image type of decoded bytes, by their first bytes."""
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            return "image/webp" if mime != "image/webp" or head[8:12] == b"WEBP" else mime
    return None


def sniff_base64(data: str | bytes) -> str | None:
    try:
        head = base64.b64decode(data[:24], validate=False)
    except (binascii.Error, ValueError):
        return None
    return sniff(head)


@dataclass(slots=True)
class Thumbnails:
    """The distinct images met so far, each as a data URL (or None with a note)."""

    items: list[dict[str, Any]] = field(default_factory=list)
    _seen: dict[bytes, int] = field(default_factory=dict)
    _pillow: Any = None
    _checked: bool = False

    def add(self, data: bytes, mime: str) -> int:
        digest = hashlib.blake2b(data, digest_size=16).digest()
        known = self._seen.get(digest)
        if known is not None:
            return known
        self.items.append(self._thumbnail(data, mime))
        self._seen[digest] = len(self.items) - 1
        return len(self.items) - 1

    def _image_module(self) -> Any:
        if not self._checked:
            self._checked = True
            try:
                from PIL import Image as pillow_image
            except ImportError:
                return None
            self._pillow = pillow_image
        return self._pillow

    def _thumbnail(self, data: bytes, mime: str) -> dict[str, Any]:
        size = len(data) * 3 // 4
        image_module = self._image_module()
        if image_module is None:
            if len(data) <= SMALL_ENOUGH:
                return {"url": f"data:{mime};base64,{data.decode('ascii')}", "bytes": size}
            return {"url": None, "bytes": size,
                    "note": "no preview: thumbnails need the images extra (Pillow)"}
        try:
            raw = base64.b64decode(data)
            with image_module.open(io.BytesIO(raw)) as img:
                width, height = img.size
                if width * height > MAX_PIXELS:
                    return {"url": None, "bytes": size, "w": width, "h": height,
                            "note": f"no preview: {width}×{height} is too large to decode"}
                img.draft("RGB", THUMB_BOX)
                img.thumbnail(THUMB_BOX)
                thumb = img.convert("RGB")
                out = io.BytesIO()
                thumb.save(out, "JPEG", quality=70)
        except Exception as exc:  # any decoder failure is a fact to show, not a crash
            return {"url": None, "bytes": size,
                    "note": f"no preview: the image could not be decoded ({type(exc).__name__})"}
        url = "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode("ascii")
        return {"url": url, "bytes": size, "w": width, "h": height}
