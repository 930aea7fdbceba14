"""The cost of the pixel check in the validators: each provider's own `validate` (no JSON-text
walk) on a body of about 1 MB holding four images (~190 KB of base64 each: PNG by default,
`--jpeg` for JPEGs with 5 KB of metadata, whose size is read further in) and 80 text turns.

    PYTHONPATH=src:. python benchmarks/bench_image_pixels.py [--jpeg] [--calls 2000]

prints the median and least microseconds a call per provider. To compare with a tree without
the check, run it with PYTHONPATH pointing at that tree's src, alternating the two.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import statistics
import time
from typing import Any

from sessionctx.providers import build_from_messages
from sessionctx.providers.registry import provider as registered

PROVIDERS = ("anthropic", "bedrock", "gemini", "openai-chat", "openai-responses")


def picture(jpeg: bool) -> tuple[str, str]:
    """Base64 noise of 300x200 px (noise does not compress: a large image), and its type."""
    from PIL import Image
    img = Image.frombytes("RGB", (300, 200), os.urandom(300 * 200 * 3))
    out = io.BytesIO()
    if jpeg:
        img.save(out, format="JPEG", quality=100, exif=b"Exif\0\0" + b"\0" * 5000)
    else:
        img.save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode(), "image/jpeg" if jpeg else "image/png"


def history(data: str, mime: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k in range(40):
        content: list[dict[str, Any]] = [{"type": "text", "text": "x" * 5000}]
        if k % 10 == 0:
            content.append({"type": "image", "data": data, "mimeType": mime})
        out.append({"role": "user", "content": content})
        out.append({"role": "assistant", "content": [{"type": "text", "text": "y" * 1000}],
                    "api": "x", "model": "m"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jpeg", action="store_true")
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    messages = history(*picture(args.jpeg))
    for name in PROVIDERS:
        spec = registered(name)
        cap, _ = spec.capability(None)
        body = build_from_messages(messages, None, name).body
        assert spec.validate(body, cap) == []
        times = []
        for _ in range(args.calls):
            start = time.perf_counter()
            spec.validate(body, cap)
            times.append(time.perf_counter() - start)
        size = len(json.dumps(body)) / 1e6
        print(f"{name:17s} {size:.2f} MB  median {statistics.median(times) * 1e6:7.1f} us  "
              f"least {min(times) * 1e6:7.1f} us")


if __name__ == "__main__":
    main()
