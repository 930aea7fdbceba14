"""Image limits (docs/provider-rules.md §1.5, §2, §4, §5): images where the provider takes none,
over its count per request, of a type it does not accept, not valid base64, or over its pixel limit
or its limit on one image's base64 text (downscaled when Pillow is installed) become notes
saying so.

Providers reject such an image, and it then stays in history and fails every later turn.
"""

from __future__ import annotations

import base64
from typing import Any

from sessionctx.changes import ChangeKind
from sessionctx.messages import ImageBlock
from sessionctx.providers import images
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.ids import Results, sent
from sessionctx.providers.policies.turns import Notes, Prepared, ResultBlock
from sessionctx.providers.violations import Violation

# every image read, oldest first: the image, its message index, the result it belongs to, and
# whether an assistant message holds it
ReadImage = tuple[ImageBlock, int, ResultBlock | None, bool]
_SMALLEST = 64  # px a side: an image that does not fit the byte limit by then becomes a note


def limit_images(prep: Prepared, read: list[ReadImage], results: Results,
                 cap: Capability) -> None:
    """Images where the provider takes none become notes; over the count limit the oldest
    images become notes; the rest are checked one by one. The images of results that were
    dropped do not count. Image blocks are the reader's own copies, so a downscaled one is
    rewritten in place; a note takes an image's place in its turn."""
    notes = Notes()
    found: list[ReadImage] = []
    for image in read:
        _, _, result, assistant = image
        if assistant and not cap.assistant_images:
            _omit(prep, notes, image, f"[image omitted: {cap.provider} does not accept images "
                  "in assistant messages]", ChangeKind.IMAGE_OMITTED,
                  "'image' blocks are not permitted within assistant turns")
        elif result is None or sent(results, result):
            found.append(image)
    limit = cap.max_images
    over = len(found) - limit if limit is not None and len(found) > limit else 0
    for image in found[:over]:
        _omit(prep, notes, image, f"[image omitted: the request is over {cap.provider}'s limit "
              f"of {limit} images]", ChangeKind.IMAGE_OVER_LIMIT,
              f"more than {limit} images per request; the oldest were replaced by a note")
    px = pixel_limit(cap, len(found) - over)
    for image in found[over:]:
        _check_image(prep, notes, image, cap, px)
    notes.put(prep)


def pixel_limit(cap: Capability, count: int) -> int | None:
    """The most pixels per side an image may have in a request holding `count` images."""
    if cap.many_images is not None and count > cap.many_images and cap.many_image_px:
        return cap.many_image_px
    return cap.max_image_px


def oversized(found: list[tuple[str, Any]], cap: Capability,
              count: int | None = None) -> list[Violation]:
    """Each of the images of one request (`found`: the path and base64 data, or data URL, of
    every image it holds; `count`: the request's images when `found` is only some of them)
    whose header gives more pixels per side than `cap` takes for that many images. Only the
    header is decoded, so a validator can afford it on every request."""
    px = pixel_limit(cap, len(found) if count is None else count)
    out: list[Violation] = []
    if px is None:
        return out
    for path, data in found:
        if not isinstance(data, str):
            continue
        if data.startswith("data:"):
            data = data[data.find(",") + 1:]
        size = images.stored_dimensions(data)
        if size is not None and max(size) > px:
            out.append(Violation(path, f"image of {size[0]}x{size[1]} px is over "
                                 f"{cap.provider}'s limit of {px} px per side"))
    return out


def _omit(prep: Prepared, notes: Notes, read: ReadImage, note: str, kind: ChangeKind,
          reason: str) -> None:
    """A note in place of the image, and the change logged."""
    image, index, result, _ = read
    notes.add(image, index, result, {"type": "text", "text": note})
    prep.log(kind, reason, index, block=image)


def _check_image(prep: Prepared, notes: Notes, read: ReadImage, cap: Capability,
                 px: int | None) -> None:
    image, index = read[0], read[1]
    mime = image["mimeType"]
    if mime not in cap.image_types:
        _omit(prep, notes, read, f"[image omitted: type {mime} is not accepted]",
              ChangeKind.IMAGE_OMITTED, f"image type not accepted by {cap.provider}")
        return
    raw = images.decode(image["data"])
    if raw is None:
        _omit(prep, notes, read, "[image omitted: the stored data is not valid base64]",
              ChangeKind.IMAGE_OMITTED, "image data is not valid base64")
        return
    limited = px is not None or cap.max_image_base64 is not None
    size = images.dimensions(raw) if limited else None
    if px is not None and size is not None and max(size) > px:
        smaller = images.downscale(raw, mime, px, size)
        if isinstance(smaller, str):  # why it could not be
            _omit(prep, notes, read,
                  f"[image omitted: {size[0]}x{size[1]} px is over the {px} px limit]",
                  ChangeKind.IMAGE_OMITTED, f"image of {size[0]}x{size[1]} px is over the "
                  f"{px} px limit and {smaller}")
            return
        image["data"] = base64.b64encode(smaller).decode()
        prep.log(ChangeKind.IMAGE_DOWNSCALED,
                 f"image of {size[0]}x{size[1]} px is over the {px} px limit",
                 index, block=image, width=size[0], height=size[1], limit=px)
        raw, size = smaller, images.dimensions(smaller)
    if cap.max_image_base64 is not None and len(image["data"]) > cap.max_image_base64:
        _fit_bytes(prep, notes, read, raw, size, cap.max_image_base64)


def _fit_bytes(prep: Prepared, notes: Notes, read: ReadImage, raw: bytes,
               size: tuple[int, int] | None, limit: int) -> None:
    """An image whose base64 text is over `limit` bytes, downscaled by a quarter a side at a
    time until it fits, or a note when it cannot be."""
    image, index = read[0], read[1]
    over = len(image["data"])
    why = "cannot be read"
    px = max(size) if size is not None else 0
    while size is not None and px > _SMALLEST:
        px = px * 3 // 4
        smaller = images.downscale(raw, image["mimeType"], px, size)
        if isinstance(smaller, str):
            why = smaller
            break
        data = base64.b64encode(smaller).decode()
        if len(data) <= limit:
            image["data"] = data
            prep.log(ChangeKind.IMAGE_DOWNSCALED, f"image of {over} bytes of base64 is over "
                     f"the {limit} byte limit", index, block=image, bytes=over, limit=limit,
                     px=px)
            return
    else:
        why = "does not fit at any size" if size is not None else why
    _omit(prep, notes, read,
          f"[image omitted: {over} bytes of base64 is over the {limit} byte limit]",
          ChangeKind.IMAGE_OMITTED, f"image of {over} bytes of base64 is over the {limit} byte "
          f"limit and {why}")

