"""Anthropic's limit on one image's base64 text (5 MB, counted on the base64): an image over it
is refused ("image exceeds 5 MB maximum"), so the check names it, the build downscales it until
it fits (a note without Pillow), and the proxy sends the request repaired."""

from __future__ import annotations

import base64
import io
import json
import os
import sys

import pytest

from sessionctx.changes import ChangeKind
from sessionctx.providers import images as img
from sessionctx.providers.wire import repair_request
from tests.conftest import image, text, user
from tests.proxy_thread import post, running_proxy
from tests.strict_stub import serve
from tests.test_providers_rules import build, naive_errors

LIMIT = 5 * 1024 * 1024


def noise_png(side: int) -> str:
    """A PNG that does not compress: its base64 is about 4 * side * side bytes."""
    from PIL import Image
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


@pytest.fixture(scope="module")
def big() -> str:
    data = noise_png(1200)
    assert len(data) > LIMIT
    return data


def test_an_image_over_5_mb_of_base64_is_downscaled_to_fit(big):
    msgs = (user("q", content=[text("see"), image(big)]),)
    assert f"image exceeds {LIMIT} bytes of base64" in naive_errors("anthropic", *msgs)
    body, kinds = build("anthropic", *msgs)
    data = body["messages"][0]["content"][1]["source"]["data"]
    size = img.dimensions(base64.b64decode(data))
    assert len(data) <= LIMIT and size is not None and max(size) < 1200
    assert ChangeKind.IMAGE_DOWNSCALED in kinds


def test_an_image_over_5_mb_of_base64_is_a_note_without_pillow(big, monkeypatch):
    msgs = (user("q", content=[text("see"), image(big)]),)
    monkeypatch.setitem(sys.modules, "PIL", None)
    body, kinds = build("anthropic", *msgs)
    note = body["messages"][0]["content"][1]["text"]
    assert f"bytes of base64 is over the {LIMIT} byte limit" in note
    assert ChangeKind.IMAGE_OMITTED in kinds


def test_the_proxy_sends_such_an_image_within_the_limit(big):
    body = {"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "see"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": big}}]}]}
    with serve() as up, running_proxy(up.url) as proxy:
        status, headers, _ = post(proxy.url, "/v1/messages", json.dumps(body).encode())
        sent = up.requests[-1]["body"]
    assert status == 200 and headers["x-sessionctx-changes"] == "1"
    assert len(sent["messages"][0]["content"][1]["source"]["data"]) <= LIMIT
    assert sent == repair_request("anthropic", body).body  # the same repair each turn
