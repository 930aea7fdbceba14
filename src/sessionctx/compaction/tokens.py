"""Token counts: a fast estimate everywhere, an exact OpenAI count that needs no download.

The estimate is what budgets use and checkpoints record: text length / 4, each image a fixed
amount, a small overhead per message. tiktoken fetches its encoding files from the network on
first use. The `tokens` extra also installs bpe-openai, which ships the o200k and cl100k files:
when tiktoken's cache lacks one, it is filled from there, once its sha256 matches the hash
tiktoken itself expects, so exact counts for those encodings work offline.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import zlib
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from sessionctx.errors import CompactionError
from sessionctx.files import write_atomically
from sessionctx.messages import Message

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1024
MESSAGE_OVERHEAD = 4
# An image counted as the characters of its fixed tokens: a whole number of tokens, so
# rounding the characters up gives the same total as adding IMAGE_TOKENS after rounding.
_IMAGE_CHARS = IMAGE_TOKENS * CHARS_PER_TOKEN

TokenCounter = Callable[[Message], int]

_encode = msgspec.json.encode
# A tuple, not messages.CALL_BLOCK_TYPES: a block whose type is a list or a dict is then
# counted as an unknown block instead of failing the set lookup.
_CALL_TYPES = ("toolCall", "tool_use", "tool_call")


class TokenizerUnavailable(CompactionError):
    """The exact tokenizer cannot be used here (not installed, or its encoding not cached)."""


def estimate_message(message: Message) -> int:
    """Characters that reach the model / 4, plus a fixed amount per image and per message.

    One function without helpers, text blocks tested first: it runs once for every message
    of a session each time a compaction is planned.
    """
    chars = 0
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                chars += len(str(block))
                continue
            btype = block.get("type")
            if btype == "text":
                text = block.get("text")
                if isinstance(text, str):
                    chars += len(text)
            elif btype == "image":
                chars += _IMAGE_CHARS
            elif btype == "thinking":
                thinking = block.get("thinking")
                if isinstance(thinking, str):
                    chars += len(thinking)
            elif btype in _CALL_TYPES:
                chars += len(str(block.get("name", "")))
                chars += len(_encode(block.get("arguments", block.get("input"))))
            else:
                chars += len(_encode(block))
    elif isinstance(content, str):
        chars = len(content)
    if "tool_calls" in message:  # rare: tested by membership, read only when there
        tool_calls = message["tool_calls"]
        if isinstance(tool_calls, list):
            chars += len(_encode(tool_calls))
    return -(-chars // CHARS_PER_TOKEN) + MESSAGE_OVERHEAD


def estimate_text(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def total(messages: Iterable[Message], counter: TokenCounter = estimate_message) -> int:
    return sum(counter(m) for m in messages)


# ---------------------------------------------------------------------------------------------
# Exact counts for OpenAI encodings

_MODEL_PREFIX_ENCODINGS = (("gpt-4o", "o200k_base"), ("gpt-4.1", "o200k_base"),
                           ("gpt-5", "o200k_base"), ("o1", "o200k_base"), ("o3", "o200k_base"),
                           ("o4", "o200k_base"), ("gpt-4", "cl100k_base"),
                           ("gpt-3.5", "cl100k_base"))


def encoding_for(name: str) -> str:
    """An encoding name for a model name (or the name itself when it is an encoding)."""
    for prefix, encoding in _MODEL_PREFIX_ENCODINGS:
        if name.startswith(prefix):
            return encoding
    return name


def _cache_dir() -> str | None:
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return os.environ[var] or None
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _blob_files(encoding: str) -> list[tuple[str, str | None]]:
    """The files tiktoken would fetch for `encoding` and the sha256 it expects of each, read
    from its own constructor's source (URLs and hashes appear there in the same order)."""
    import inspect
    import re

    from tiktoken_ext import openai_public  # type: ignore[import-untyped]

    constructor = openai_public.ENCODING_CONSTRUCTORS.get(encoding)
    if constructor is None:
        raise TokenizerUnavailable(f"unknown OpenAI encoding {encoding!r}")
    source = inspect.getsource(constructor)
    urls = re.findall(r'"(https://[^"]+)"', source)
    hashes = re.findall(r'"([0-9a-f]{64})"', source)
    return [(url, hashes[k] if len(hashes) == len(urls) else None)
            for k, url in enumerate(urls)]


def _bundled(url: str) -> bytes | None:
    """The file at `url` as bpe-openai ships it, when that package is installed and has it.
    The package is found, not imported: importing it loads its own tokenizers."""
    from importlib.util import find_spec

    spec = find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        return None
    packed = os.path.join(spec.submodule_search_locations[0], "data",
                          url.rsplit("/", 1)[-1] + ".gz")
    try:
        with open(packed, "rb") as f:
            return gzip.decompress(f.read())
    except (OSError, EOFError, zlib.error):
        return None


def _cached(cache: str | None, url: str, expected: str | None) -> bool:
    """Whether tiktoken's cache holds `url`, filled from the bundled copy when it did not."""
    if cache is None:
        return False
    path = os.path.join(cache, hashlib.sha1(url.encode()).hexdigest())
    return os.path.exists(path) or _fill_cache(cache, path, url, expected)


def _fill_cache(cache: str, path: str, url: str, expected: str | None) -> bool:
    """Writes the bundled copy of `url` where tiktoken caches it; False when there is none
    with the expected hash, or the cache cannot be written."""
    data = _bundled(url)
    if data is None or expected is None or hashlib.sha256(data).hexdigest() != expected:
        return False
    try:
        os.makedirs(cache, exist_ok=True)
        write_atomically(path, data, mode=0o644)  # whole or absent, as tiktoken writes it
    except OSError:
        return False
    return True


def exact_counter(name: str) -> TokenCounter:
    """An exact counter for an OpenAI model or encoding name that never downloads.

    Raises TokenizerUnavailable when tiktoken is missing, or when the encoding's files are
    neither in tiktoken's cache nor shipped by bpe-openai.
    """
    try:
        import tiktoken
    except ImportError as exc:
        raise TokenizerUnavailable("exact counts need the 'tokens' extra (tiktoken)") from exc
    encoding = encoding_for(name)
    cache = _cache_dir()
    if not all(_cached(cache, url, expected) for url, expected in _blob_files(encoding)):
        raise TokenizerUnavailable(
            f"tiktoken encoding {encoding!r} is not cached locally (in {cache or 'no cache'}), "
            "not shipped by the 'tokens' extra, and would need a download, so exact counts "
            "are unavailable here; use the estimate")
    try:
        return counter_for(tiktoken.get_encoding(encoding))
    except Exception as exc:  # a cached file that fails tiktoken's own hash check, and so on
        raise TokenizerUnavailable(f"tiktoken could not load {encoding!r}: {exc}") from exc


def counter_for(encoding: Any) -> TokenCounter:
    """A message counter from a tiktoken Encoding: text tokens plus the same fixed extras."""

    def count(message: Message) -> int:
        parts: list[str] = []
        images = 0
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                btype = block.get("type")
                if btype == "text" and isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif btype == "image":
                    images += 1
                elif btype == "thinking" and isinstance(block.get("thinking"), str):
                    parts.append(block["thinking"])
                elif btype in _CALL_TYPES:
                    parts.append(str(block.get("name", "")))
                    parts.append(_encode(block.get("arguments", block.get("input"))).decode())
                elif btype != "image":
                    parts.append(_encode(block).decode())
        tool_calls = message.get("tool_calls")
        if isinstance(tool_calls, list):
            parts.append(_encode(tool_calls).decode())
        tokens = sum(len(encoding.encode(p, disallowed_special=())) for p in parts)
        return tokens + images * IMAGE_TOKENS + MESSAGE_OVERHEAD

    return count
