"""The pixel limit in the validators: each provider's validator names an image whose header
gives more pixels per side than its row takes for that request's image count (the rule
`image_limits.pixel_limit` states for the build too), every body the build makes passes it,
a history checked at its tail gets the same verdict, and the proxy repairs such a request
before sending it (prevents Anthropic "At least one of the image dimensions exceed max allowed
size: 8000 pixels", docs/provider-rules.md §1.5)."""

from __future__ import annotations

import base64
import io
import json
import struct
import sys
import zlib
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionctx.changes import ChangeKind
from sessionctx.providers import PROVIDERS, BuildRequestOptions, build_from_messages, validate
from sessionctx.providers import images as img
from sessionctx.providers.registry import provider as registered
from sessionctx.providers.wire import violations
from sessionctx.providers.wire_tail import extends, tally
from tests.proxy_thread import post, running_proxy
from tests.strict_stub import serve
from tests.stub_servers import anthropic_problem
from tests.test_providers_rules import png

Msg = dict[str, Any]
PLACEHOLDERS = BuildRequestOptions(placeholder_tools=True)


def header(width: int, height: int) -> str:
    """A PNG of that size by its header (IHDR, one empty IDAT, IEND): the validators read only
    the header, so no pixels are needed."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    raw = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", b"") + chunk(b"IEND", b"")
    return base64.b64encode(raw).decode()


def image(data: str, mime: str = "image/png") -> Msg:
    return {"type": "image", "data": data, "mimeType": mime}


def naive(provider: str, *pics: str, model: str | None = None) -> list[str]:
    """The validator's messages for a body that sends `pics` in one user message as they are."""
    from sessionctx.providers import naive_request
    body = naive_request([{"role": "user", "content": [{"type": "text", "text": "see"},
                                                       *map(image, pics)]}], provider,
                         model).body
    return [v.message for v in validate(body, provider, model)]


# ---------------------------------------------------------------- each validator

@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_an_image_just_over_8000_px_a_side_is_named(provider: str) -> None:
    assert naive(provider, header(8000, 10), header(10, 8000)) == []
    found = naive(provider, header(8001, 10))
    assert found == [f"image of 8001x10 px is over {provider}'s limit of 8000 px per side"]
    assert naive(provider, header(10, 8001)) == [
        f"image of 10x8001 px is over {provider}'s limit of 8000 px per side"]


def test_more_than_20_images_lower_anthropics_limit_to_2000_px() -> None:
    at_limit = [header(2000, 10)] * 21
    assert naive("anthropic", *at_limit) == []
    assert naive("anthropic", *[header(2001, 10)] * 20) == []  # 20 images: 8000 px
    found = naive("anthropic", *at_limit[:20], header(2001, 10))
    assert found == ["image of 2001x10 px is over anthropic's limit of 2000 px per side"]


def test_an_image_in_a_tool_result_counts_and_is_checked() -> None:
    body = {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shot",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": header(9000, 10)}}]}]}]}
    found = registered("anthropic").validate(body, registered("anthropic").capability(None)[0])
    assert [(v.path, v.message) for v in found] == [
        ("messages[2].content[0].content[0].source.data",
         "image of 9000x10 px is over anthropic's limit of 8000 px per side")]


@pytest.mark.parametrize("provider", ["openai-chat", "openai-responses", "gemini"])
def test_a_row_with_a_pixel_limit_is_held_to_it(provider: str) -> None:
    """These APIs scale images themselves (no limit in their rows); a row that names one is
    checked by the same rule, data URLs included."""
    assert naive(provider, header(9000, 10)) == []
    spec = registered(provider)
    body = build_from_messages([{"role": "user", "content": [
        {"type": "text", "text": "see"}, image(header(9000, 10)), image(header(10, 10))]}],
        None, provider).body
    cap = replace(spec.capability(None)[0], max_image_px=8000)
    assert [v.message for v in spec.validate(body, cap)] == [
        f"image of 9000x10 px is over {provider}'s limit of 8000 px per side"]
    assert spec.validate(body, replace(cap, many_images=1, many_image_px=9000)) == []


def test_a_jpeg_is_read_past_its_metadata_decoding_only_its_segments_headers() -> None:
    """60 KB of EXIF and a 200 KB colour profile (four segments) before the frame header: the
    walk decodes a few characters at each segment, not the metadata."""
    import os
    import tracemalloc

    from PIL import Image
    out = io.BytesIO()
    Image.new("RGB", (8100, 8)).save(out, format="JPEG", exif=b"Exif\0\0" + b"\0" * 60000,
                                     icc_profile=os.urandom(200_000))
    data = base64.b64encode(out.getvalue()).decode()
    tracemalloc.start()
    try:
        assert img.stored_dimensions(data) == (8100, 8)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024
    assert naive("anthropic", data) == [
        "image of 8100x8 px is over anthropic's limit of 8000 px per side"]


def test_data_that_is_not_an_image_is_not_a_pixel_problem() -> None:
    assert naive("anthropic", "aGVsbG8=", "A" * 5000, header(10, 10)[:40]) == []


# ---------------------------------------------------------------- every build passes

SIDES = st.sampled_from([10, 1999, 2000, 2001, 7999, 8000, 8001, 9000])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(SIDES, st.booleans()), min_size=1, max_size=24), st.booleans())
def test_every_body_the_build_makes_with_images_passes_its_validator(
        sides: list[tuple[int, bool]], in_results: bool) -> None:
    """Images about the limits (1 to 24 of them, wide or tall) in a user message or a tool
    result: the build downscales those over the limit for their count, and the body passes the
    validator, whose limit is the one the build applies."""
    pics = [image(png(side, 10) if wide else png(10, side)) for side, wide in sides]
    messages: list[Msg] = [{"role": "user", "content": [{"type": "text", "text": "look"}]}]
    if in_results:
        messages += [{"role": "assistant", "content": [{"type": "toolCall", "id": "t1",
                                                        "name": "shot", "arguments": {}}],
                      "api": "x", "model": "m"},
                     {"role": "toolResult", "toolCallId": "t1", "toolName": "shot",
                      "content": pics, "isError": False}]
    else:
        messages[0]["content"] += pics
    for provider in PROVIDERS:
        assert validate(build_from_messages(messages, None, provider, options=PLACEHOLDERS).body,
                        provider) == [], provider


def test_without_pillow_an_image_over_the_limit_becomes_a_note_the_validator_passes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)
    messages = [{"role": "user", "content": [{"type": "text", "text": "see"},
                                             image(header(8001, 10))]}]
    for provider in ("anthropic", "bedrock"):
        req = build_from_messages(messages, None, provider)
        assert validate(req.body, provider) == []
        assert "8001x10 px" in json.dumps(req.body)
        assert ChangeKind.IMAGE_OMITTED in [c.kind for c in req.changes]


# ---------------------------------------------------------------- the tail check

def _block(data: str) -> Msg:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                        "data": data}}


def _history(*turns: list[Msg]) -> list[Msg]:
    out: list[Msg] = []
    for blocks in turns:
        out += [{"role": "user", "content": [{"type": "text", "text": "see"}, *blocks]},
                {"role": "assistant", "content": "ok"}]
    return out[:-1]


@pytest.mark.parametrize("earlier, window, ok, by_tail", [
    # the window takes the request over 20 images: the earlier images, checked against 8000
    # px, are checked again (a 2001 px one is now too wide)
    ([_block(header(2001, 10))] * 18, [_block(header(10, 10))] * 3, False, False),
    ([_block(header(2000, 10))] * 18, [_block(header(10, 10))] * 3, True, False),
    # over 20 images before the window already: the window's image is held to 2000 px
    ([_block(header(10, 10))] * 21, [_block(header(2001, 10))], False, False),
    ([_block(header(10, 10))] * 21, [_block(header(2000, 10))], True, True),
    ([_block(header(10, 10))] * 2, [_block(header(8001, 10))], False, False),
    ([_block(header(10, 10))] * 2, [_block(header(8000, 10))], True, True),
])
def test_a_history_checked_at_its_tail_is_held_to_the_limit_of_its_whole_count(
        earlier: list[Msg], window: list[Msg], ok: bool, by_tail: bool) -> None:
    """`by_tail`: the tail check finds it valid; otherwise it leaves it to the whole check."""
    old: dict[str, Any] = {"model": "claude-sonnet-4-5", "messages": _history(earlier, [])}
    assert violations("anthropic", old, None) == ()
    counted = tally("anthropic", old["messages"])
    assert counted is not None
    new = [*old["messages"], {"role": "assistant", "content": "ok"},
           {"role": "user", "content": [{"type": "text", "text": "more"}, *window]}]
    at = counted.window(len(old["messages"]))
    assert at is not None
    assert (violations("anthropic", {**old, "messages": new}, None) == ()) is ok
    others = {"model": "claude-sonnet-4-5"}
    assert (extends("anthropic", None, others, new[at:], at, counted) is not None) is by_tail


# ---------------------------------------------------------------- the strict stub, the proxy

def test_the_strict_stub_refuses_an_image_over_the_limit_as_the_api_does() -> None:
    def body(*pics: str) -> dict[str, Any]:
        return {"messages": [{"role": "user", "content": [_block(p) for p in pics]}]}
    assert anthropic_problem(body(header(8000, 10))) is None
    assert anthropic_problem(body(header(10, 8001))) == (
        "messages.0.content.0.image.source.base64.data: At least one of the image dimensions "
        "exceed max allowed size: 8000 pixels")
    assert anthropic_problem(body(*[header(10, 10)] * 20, header(2001, 10))) == (
        "messages.0.content.20.image.source.base64.data: At least one of the image dimensions "
        "exceed max allowed size for many-image requests: 2000 pixels")


def _wide_request() -> bytes:
    return json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "see"},
                                     _block(png(8001, 10))]}]}).encode()


def test_the_proxy_downscales_an_over_wide_image_before_sending() -> None:
    with serve([{"text": "seen"}]) as up, running_proxy(up.url) as proxy:
        status, headers, _ = post(proxy.url, "/v1/messages", _wide_request())
        assert status == 200 and [r["status"] for r in up.requests] == [200]
        assert up.refused() == [] and proxy.totals.retried == 0
    data = up.requests[0]["body"]["messages"][0]["content"][1]["source"]["data"]
    size = img.dimensions(base64.b64decode(data))
    assert size is not None and max(size) <= 8000
    assert headers["x-sessionctx-changes"] == "1"


def test_without_pillow_the_proxy_sends_the_image_as_a_note(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The upstream would refuse the image on every turn; the note says what it was."""
    wide = _wide_request()
    monkeypatch.setitem(sys.modules, "PIL", None)
    with serve([{"text": "seen"}]) as up, running_proxy(up.url) as proxy:
        status, _, _ = post(proxy.url, "/v1/messages", wide)
        assert status == 200 and [r["status"] for r in up.requests] == [200]
        assert proxy.totals.retried == 0
    sent = up.requests[0]["body"]["messages"][0]["content"]
    assert sent[0] == {"type": "text", "text": "see"}
    assert "8001x10 px is over the 8000 px limit" in sent[1]["text"]
