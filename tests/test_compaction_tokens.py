"""Token estimates, the offline exact counter and the budget verdict."""

from __future__ import annotations

import hashlib

import msgspec
import pytest
import tiktoken

from sessionctx.compaction import tokens
from sessionctx.compaction.budget import CANNOT_FIT, COMPACT, FITS, Budget, assess
from tests.conftest import assistant, call, image, text, user


def test_estimate_counts_text_calls_and_images_by_fixed_amount() -> None:
    plain = tokens.estimate_message(user("x" * 400))
    assert plain == 100 + tokens.MESSAGE_OVERHEAD
    with_image = tokens.estimate_message({"role": "user", "content": [text("x" * 400),
                                                                      image("A" * 90_000)]})
    assert with_image == plain + tokens.IMAGE_TOKENS  # the image data length does not count
    called = tokens.estimate_message(assistant(call("c1", "bash", cmd="ls -la")))
    assert called > tokens.MESSAGE_OVERHEAD
    assert tokens.total([user("abcd"), user("abcdefgh")]) == 1 + 2 + 2 * tokens.MESSAGE_OVERHEAD


def test_exact_counter_is_unavailable_without_a_cached_or_shipped_encoding(
        tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tokens, "_bundled", lambda url: None)  # as without bpe-openai
    with pytest.raises(tokens.TokenizerUnavailable, match="not cached locally"):
        tokens.exact_counter("gpt-4o")
    with pytest.raises(tokens.TokenizerUnavailable, match="unknown OpenAI encoding"):
        tokens.exact_counter("no-such-encoding")
    assert list(tmp_path.iterdir()) == []


def test_an_encoding_the_extra_does_not_ship_stays_unavailable(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(tokens.TokenizerUnavailable, match="would need a download"):
        tokens.exact_counter("r50k_base")


def _no_download(monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken.load

    def refuse(blobpath: str) -> bytes:
        raise AssertionError(f"tried to fetch {blobpath}")

    monkeypatch.setattr(tiktoken.load, "read_file", refuse)


@pytest.mark.parametrize(("model", "encoding"), [("gpt-4o", "o200k_base"),
                                                 ("gpt-4", "cl100k_base")])
def test_exact_counter_works_offline_from_the_shipped_encoding(
        tmp_path, monkeypatch, model: str, encoding: str) -> None:
    # An empty cache and no network: the file comes from bpe-openai, checked against the
    # sha256 tiktoken expects, and tiktoken loads it from its own cache.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    _no_download(monkeypatch)
    tiktoken.registry.ENCODINGS.pop(encoding, None)  # loaded afresh, not from memory
    counter = tokens.exact_counter(model)
    assert counter(user("hello world")) == 2 + tokens.MESSAGE_OVERHEAD
    [(url, expected)] = tokens._blob_files(encoding)
    cached = tmp_path / "cache" / hashlib.sha1(url.encode()).hexdigest()
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == expected


def test_a_shipped_file_with_the_wrong_hash_is_not_used(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tokens, "_bundled", lambda url: b"not the encoding")
    with pytest.raises(tokens.TokenizerUnavailable, match="not cached locally"):
        tokens.exact_counter("gpt-4o")
    assert list(tmp_path.iterdir()) == []


def test_exact_counter_uses_a_cached_encoding_offline(tmp_path, monkeypatch) -> None:
    from tiktoken_ext import openai_public  # type: ignore[import-untyped]

    # A cached file is found by the hash of its URL, so the check needs no network.
    files = tokens._blob_files("o200k_base")
    assert files and all(u.startswith("https://") and h for u, h in files)
    assert "o200k_base" in openai_public.ENCODING_CONSTRUCTORS
    for url, _ in files:
        (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    calls_made: list[str] = []

    def get_encoding(name: str) -> tiktoken.Encoding:
        calls_made.append(name)
        return _bytes

    monkeypatch.setattr(tiktoken, "get_encoding", get_encoding)
    counter = tokens.exact_counter("gpt-4o-mini")
    assert calls_made == ["o200k_base"]
    assert counter(user("hello")) == 5 + tokens.MESSAGE_OVERHEAD


# A real tiktoken Encoding (one token per byte), so the counting code runs on tiktoken itself.
_bytes = tiktoken.Encoding("bytes", pat_str=r"[\s\S]", mergeable_ranks={bytes([i]): i
                                                                         for i in range(256)},
                           special_tokens={})


def test_counter_for_counts_with_a_tiktoken_encoding() -> None:
    count = tokens.counter_for(_bytes)
    message = {"role": "user", "content": [text("abc"), image(), {"type": "thinking",
                                                                 "thinking": "zz"}]}
    assert count(message) == 3 + 2 + tokens.IMAGE_TOKENS + tokens.MESSAGE_OVERHEAD
    assert count(assistant(call("c", "ls"))) == 2 + 2 + tokens.MESSAGE_OVERHEAD  # "ls" + "{}"


def test_budget_verdicts_with_numbers() -> None:
    budget = Budget(window=100_000, reserve=8192, threshold=0.8)
    assert budget.trigger == 80_000 and budget.hard_limit == 91_808
    assert assess(50_000, budget).verdict == FITS
    v = assess(85_000, budget, minimum_after=30_000)
    assert v.verdict == COMPACT and v.to_json()["trigger"] == 80_000
    assert assess(120_000, budget, minimum_after=95_000).verdict == CANNOT_FIT
    with pytest.raises(ValueError):
        Budget(window=100, reserve=100)
    with pytest.raises(ValueError):
        Budget(window=100, threshold=0)


def test_estimate_counts_a_block_of_unhashable_type_as_an_unknown_block() -> None:
    block = {"type": ["toolCall"], "text": "x" * 40}
    chars = len(msgspec.json.encode(block))
    assert tokens.estimate_message({"role": "assistant", "content": [block]}) == \
        -(-chars // tokens.CHARS_PER_TOKEN) + tokens.MESSAGE_OVERHEAD


def test_images_add_their_tokens_after_the_text_is_rounded_up() -> None:
    message = {"role": "user", "content": [text("x" * 401), image(), image()]}
    assert tokens.estimate_message(message) == \
        101 + 2 * tokens.IMAGE_TOKENS + tokens.MESSAGE_OVERHEAD


def test_an_unwritable_cache_leaves_the_counter_unavailable(tmp_path, monkeypatch) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(blocked / "cache"))
    with pytest.raises(tokens.TokenizerUnavailable, match="not cached locally"):
        tokens.exact_counter("gpt-4o")
    assert [p.name for p in tmp_path.iterdir()] == ["file-not-dir"]
