"""The report as one HTML file: the page's own CSS and script inline, the data embedded once.

Rows go out in chunks of JSON, each in its own inert script element, so the browser paints the
first screen while it is still reading the rest and the page decodes a chunk only when it is
shown or searched. Long base64 strings (images, signatures, encrypted reasoning) are found in the
encoded bytes: images become one thumbnail each, other blobs their length.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
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
    """Replaces long base64 strings in encoded JSON by references: an image by its thumbnail,
    other data by its place in one list the page reads only when a reader reveals it.

    A reference is an object whose one key is `marker`, a digest of the whole encoded data:
    the data cannot hold that key, since it would have to contain its own digest, so no
    record's object can pass for a reference (or one for another record's image)."""

    def __init__(self, thumbnails: Thumbnails, marker: str) -> None:
        self.thumbnails = thumbnails
        self.key = marker.encode("ascii")
        self.opaque: list[str] = []

    def __call__(self, match: re.Match[bytes]) -> bytes:
        prefix, mime, data = match.group(1), match.group(2), match.group(3)
        kind = mime.decode("ascii") if prefix else sniff_base64(data)
        if kind is not None:
            return b'{"%s":["img",%d]}' % (self.key, self.thumbnails.add(data, kind))
        self.opaque.append(data.decode("ascii"))
        return b'{"%s":["blob",%d,%d,"%s"]}' % (self.key, len(self.opaque) - 1, len(data),
                                                data[:24])


def marker_of(encoded: list[bytes]) -> str:
    """The key of the page's references: a digest of all the data it embeds."""
    digest = hashlib.blake2b(digest_size=12)
    for part in encoded:
        digest.update(part)
    return "sx:" + digest.hexdigest()


def _hash(script: bytes) -> str:
    """The CSP source that lets exactly this inline script run."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(script).digest()).decode() + "'"


def render(page: Page) -> bytes:
    """The whole page, UTF-8. Pure: the same page model gives the same bytes."""
    return b"".join(render_parts(page))


def _head(meta: dict[str, Any], page: Page) -> list[bytes]:
    """The page's head object (meta, changes, pending) as JSON in pieces: the changes are made
    and encoded a chunk at a time, never all at once. What msgspec will not write is written
    whole as `_encode` writes it, so the bytes are the same either way."""
    changes = page.changes
    try:
        parts = [b'{"meta":', _encoder.encode(meta), b',"changes":[']
        for at in range(0, len(changes), CHUNK_ROWS):
            part = _encoder.encode(changes[at:at + CHUNK_ROWS])[1:-1]
            parts.append(b"," + part if at else part)
        parts += [b'],"pending":', _encoder.encode(page.pending), b"}"]
    except (TypeError, ValueError, OverflowError):
        return [_encode({"meta": meta, "changes": list(changes), "pending": page.pending})]
    return parts


def render_parts(page: Page, *, release_rows: bool = False) -> list[bytes]:
    """The page as the pieces it is written in (joined: `render`), so it is never held whole
    a second time. With `release_rows`, each row of `page.rows` is let go (set to None) once
    its chunk is encoded: a caller that owns the page holds a row's dict or its JSON, not both.

    Only the page's own three scripts may run: the policy names each by its hash, so a
    script element that record text managed to open would not run."""
    thumbnails = Thumbnails()
    encoded_rows = []
    rows: list[Any] = page.rows
    for at in range(0, len(rows), CHUNK_ROWS):
        encoded_rows.append(_encode(rows[at:at + CHUNK_ROWS]))
        if release_rows:
            rows[at:at + CHUNK_ROWS] = [None] * len(rows[at:at + CHUNK_ROWS])
    encoded_turns = _encode(page.turns)
    marker = marker_of([*encoded_rows, encoded_turns])
    blobs = _Blobs(thumbnails, marker)
    row_chunks = [_script_json(_BLOB.sub(blobs, part)) for part in encoded_rows]
    turns = _script_json(_BLOB.sub(blobs, encoded_turns))
    meta = dict(page.meta)
    meta["rows"] = len(page.rows)
    meta["chunk"] = CHUNK_ROWS
    meta["marker"] = marker
    head = [_script_json(part) for part in _head(meta, page)]
    images = _script_json(_encode(thumbnails.items))
    opaque = _script_json(_encode(blobs.opaque))
    title = html.escape(f"sessionctx report: {meta.get('label', '')}")
    code = f"\n{_asset('page.js')}".encode("utf-8", "replace")
    start_code, loaded_code = b"sessionctxReport.start();", b"sessionctxReport.loaded();"
    policy = " ".join(_hash(s) for s in (code, start_code, loaded_code))
    start = b"<script>" + start_code + b"</script>\n"
    parts = [
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        f"img-src data:; style-src 'unsafe-inline'; script-src {policy}\">\n"
        f"<title>{title}</title>\n<style>\n{_asset('page.css')}</style>\n</head>\n<body>\n"
        f"{_asset('page.html')}<script>".encode("utf-8", "replace"), code, b"</script>\n",
        b'<script type="application/json" id="sx-head">', *head, b"</script>\n",
        b'<script type="application/json" id="sx-images">', images, b"</script>\n",
        b'<script type="application/json" id="sx-opaque">', opaque, b"</script>\n",
        b'<script type="application/json" id="sx-turns">', turns, b"</script>\n",
    ]
    for i, chunk in enumerate(row_chunks):
        parts += [b'<script type="application/json" class="sx-rows" data-chunk="%d">' % i,
                  chunk, b"</script>\n"]
        if i == 0:
            parts.append(start)
    if not row_chunks:
        parts.append(start)
    parts.append(b"<script>" + loaded_code + b"</script>\n</body>\n</html>\n")
    return parts
