"""The report as one HTML file: the page's own CSS and script inline, the data embedded once.

Rows go out in chunks of JSON, each in its own inert script element, so the browser paints the
first screen while it is still reading the rest and the page decodes a chunk only when it is
shown or searched. Long base64 strings (images, signatures, encrypted reasoning) are found in the
encoded bytes: images become one thumbnail each, other blobs their length.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from importlib import resources
from typing import Any

import msgspec

from sessionctx.report.model import Page
from sessionctx.report.thumbnails import Thumbnails, sniff_base64

CHUNK_ROWS = 200
# the lookahead lets the engine give up on most strings at their first character
_BLOB = re.compile(
    rb'"(?=[A-Za-z0-9+/d])(data:(image/[A-Za-z0-9.+-]+);base64,)?([A-Za-z0-9+/]{1024,}={0,2})"')
_encoder = msgspec.json.Encoder()


def _asset(name: str) -> str:
    return resources.files("sessionctx.report").joinpath(name).read_text("utf-8")


def _script_json(data: bytes) -> bytes:
    """JSON that cannot end its script element: `<` only ever stands inside a JSON string."""
    return data.replace(b"<", b"\\u003c")


def _encode(value: Any) -> bytes:
    try:
        return _encoder.encode(value)
    except (TypeError, ValueError, OverflowError):
        # what msgspec will not write (a lone surrogate, an int past 64 bits) is written with
        # \\uXXXX escapes, which JSON.parse reads back as the same text
        import json

        return json.dumps(value, default=str).encode("ascii")


class _Blobs:
    """Replaces long base64 strings in encoded JSON by references."""

    def __init__(self, thumbnails: Thumbnails) -> None:
        self.thumbnails = thumbnails

    def __call__(self, match: re.Match[bytes]) -> bytes:
        prefix, mime, data = match.group(1), match.group(2), match.group(3)
        kind = mime.decode("ascii") if prefix else sniff_base64(data)
        if kind is not None:
            return b'{"$img":%d}' % self.thumbnails.add(data, kind)
        return b'{"$blob":%d,"head":"%s"}' % (len(data), data[:24])


def chunks(page: Page, thumbnails: Thumbnails) -> Iterator[bytes]:
    """The rows, CHUNK_ROWS at a time, as script-safe JSON with blobs replaced."""
    blobs = _Blobs(thumbnails)
    rows = page.rows
    for start in range(0, len(rows), CHUNK_ROWS):
        encoded = _encode(rows[start:start + CHUNK_ROWS])
        yield _script_json(_BLOB.sub(blobs, encoded))


def render(page: Page) -> bytes:
    """The whole page, UTF-8. Pure: the same page model gives the same bytes."""
    thumbnails = Thumbnails()
    row_chunks = list(chunks(page, thumbnails))
    turns = _script_json(_BLOB.sub(_Blobs(thumbnails), _encode(page.turns)))
    meta = dict(page.meta)
    meta["rows"] = len(page.rows)
    meta["chunk"] = CHUNK_ROWS
    head = _script_json(_encode({"meta": meta, "changes": page.changes,
                                 "pending": page.pending}))
    images = _script_json(_encode(thumbnails.items))
    title = html.escape(f"sessionctx report: {meta.get('label', '')}")
    start = b"<script>sessionctxReport.start();</script>\n"
    parts = [
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
        f"<title>{title}</title>\n<style>\n{_asset('page.css')}</style>\n</head>\n<body>\n"
        f"{_asset('page.html')}<script>\n{_asset('page.js')}</script>\n".encode(
            "utf-8", "replace"),
        b'<script type="application/json" id="sx-head">', head, b"</script>\n",
        b'<script type="application/json" id="sx-images">', images, b"</script>\n",
        b'<script type="application/json" id="sx-turns">', turns, b"</script>\n",
    ]
    for i, chunk in enumerate(row_chunks):
        parts += [b'<script type="application/json" class="sx-rows" data-chunk="%d">' % i,
                  chunk, b"</script>\n"]
        if i == 0:
            parts.append(start)
    if not row_chunks:
        parts.append(start)
    parts.append(b"<script>sessionctxReport.loaded();</script>\n</body>\n</html>\n")
    return b"".join(parts)
