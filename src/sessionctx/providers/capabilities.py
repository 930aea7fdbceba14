"""What each provider and model family accepts, in one table instead of constants in code.

A row is picked by provider and the longest model-family prefix that matches the model; every
provider has a default model, so `--model` is optional. Sources: provider-rules.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sessionctx.errors import BadArgument
from sessionctx.providers.names import (
    ANTHROPIC,
    BEDROCK,
    GEMINI,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    PROVIDERS,
)

SAFE_ID = r"^[a-zA-Z0-9_-]+$"
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


@dataclass(frozen=True, slots=True)
class Capability:
    """The limits of one provider and model family that a request body must respect: one flag
    per rule, each with the default most rows share (the section of provider-rules.md it comes
    from in brackets); a row names only where it differs."""

    provider: str
    family: str
    default_model: str
    # reading [1.3, 2, 3, 5]: call ids match `id_pattern` with at most `id_max_len` characters
    id_pattern: str = SAFE_ID
    id_max_len: int = 64
    # result placement [1.3, 4, 5]: the wire says a tool result is an error (Anthropic
    # is_error, Gemini's error key, Bedrock's status for Claude and Nova); elsewhere the
    # result's text has to say it
    error_flag: bool = True
    # reasoning replay [1.4, 3, 4, 5]: the `api` values of stored assistant messages whose
    # reasoning this provider can replay
    thinking_apis: frozenset[str] = frozenset()
    # reasoning replay [4]: Gemini 3: the first functionCall of each model turn must carry a
    # thought signature
    call_signature_required: bool = False
    # reasoning replay [5]: Bedrock: reasoning signatures are accepted only by Claude models
    reasoning_signature: bool = True
    # reasoning replay [4]: signatures are bytes sent as base64 (Gemini): one that does not
    # decode is corrupted
    base64_signatures: bool = False
    # image limits [1.5, 4, 5]: images per request, and pixels per side
    max_images: int | None = None
    max_image_px: int | None = None
    # image limits [1.5]: more than `many_images` images in one request lowers the pixel limit
    # to `many_image_px`
    many_images: int | None = None
    many_image_px: int | None = None
    # image limits [1.5, 4]: the media types accepted
    image_types: frozenset[str] = IMAGE_TYPES
    # image limits [2, 5]: images in an assistant (model) message; only Gemini models produce
    # and take them back
    assistant_images: bool = False
    # roles [1.1]: a system message right after a user turn (Claude Opus 4.8 and later)
    mid_system: bool = False
    # roles [2, 3]: system messages anywhere, as they are (OpenAI's system and developer roles)
    system_inline: bool = False
    # roles [1.1, 4, 5]: roles alternate, so consecutive turns of one role are joined (Bedrock
    # rejects them; Anthropic would join them itself, after the results placed first)
    merge_roles: bool = True
    # roles [4, 5]: the first message is a user message
    first_user: bool = True
    # request settings [1.1, 1.4]: the request's thinking switch and a final assistant prefill
    # follow Anthropic's rules (Anthropic, and Claude on Bedrock)
    thinking_rules: bool = False
    # request settings [1.1]: a final assistant message continues as a prefill (Claude 4.5 and
    # earlier; Claude 4.6 and later refuse it)
    prefill: bool = False
    # request settings [1.4]: with thinking on, a tool choice may force tool use (adaptive
    # thinking; manual extended thinking refuses it)
    forced_tool_thinking: bool = False
    # request settings [2]: tool calls in one assistant message (Chat: 128)
    max_tool_calls: int | None = None
    # request settings [1.6]: blocks with cache_control across tools, system and messages
    max_cache_breakpoints: int | None = None
    # documents [1.5, 4, 5]: documents per request, bytes per document, PDF pages per request
    # (None: no limit this table knows of)
    max_documents: int | None = None
    max_document_bytes: int | None = None
    max_pdf_pages: int | None = None


_ANT_APIS = frozenset({"anthropic-messages"})
_GEMINI_IMAGES = frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"})
_BEDROCK_APIS = frozenset({"bedrock-converse-stream", "bedrock-converse"})
# [1.5]: 32 MB per request, 100 PDF pages; [4]: PDFs inline up to 50 MB; [5]: five documents
# of at most 4.5 MB (Claude on Bedrock: 100 pages)
_MB = 1024 * 1024

_ROWS = (
    Capability(ANTHROPIC, "claude-", "claude-opus-4-8", max_images=100, max_image_px=8000,
               many_images=20, many_image_px=2000, thinking_apis=_ANT_APIS,
               thinking_rules=True, prefill=True, max_cache_breakpoints=4,
               max_document_bytes=32 * _MB, max_pdf_pages=100),
    # Claude 4.6 and later: adaptive thinking, no prefill
    *(Capability(ANTHROPIC, family, "claude-opus-4-8", max_images=100, max_image_px=8000,
                 many_images=20, many_image_px=2000, thinking_apis=_ANT_APIS,
                 thinking_rules=True, forced_tool_thinking=True, max_cache_breakpoints=4,
                 max_document_bytes=32 * _MB, max_pdf_pages=100)
      for family in ("claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-7",
                     "claude-sonnet-5", "claude-haiku-5")),
    Capability(ANTHROPIC, "claude-opus-4-8", "claude-opus-4-8", max_images=600,
               max_image_px=8000, many_images=20, many_image_px=2000,
               thinking_apis=_ANT_APIS, mid_system=True, thinking_rules=True,
               forced_tool_thinking=True, max_cache_breakpoints=4,
               max_document_bytes=32 * _MB, max_pdf_pages=100),
    Capability(ANTHROPIC, "claude-opus-5", "claude-opus-5", max_images=600, max_image_px=8000,
               many_images=20, many_image_px=2000, thinking_apis=_ANT_APIS, mid_system=True,
               thinking_rules=True, max_cache_breakpoints=4,
               max_document_bytes=32 * _MB, max_pdf_pages=100),
    Capability(OPENAI_CHAT, "", "gpt-5.1", id_max_len=40, error_flag=False, system_inline=True,
               merge_roles=False, first_user=False, max_tool_calls=128),
    Capability(OPENAI_RESPONSES, "", "gpt-5.1", error_flag=False,
               thinking_apis=frozenset({"openai-responses", "openai-codex-responses"}),
               system_inline=True, merge_roles=False, first_user=False),
    Capability(GEMINI, "", "gemini-3-pro", max_images=3000, image_types=_GEMINI_IMAGES,
               thinking_apis=frozenset({"google-generative-ai", "google-gemini-cli"}),
               call_signature_required=True, assistant_images=True, base64_signatures=True,
               max_document_bytes=50 * _MB),
    Capability(GEMINI, "gemini-2", "gemini-2.5-pro", max_images=3000, image_types=_GEMINI_IMAGES,
               thinking_apis=frozenset({"google-generative-ai", "google-gemini-cli"}),
               assistant_images=True, base64_signatures=True, max_document_bytes=50 * _MB),
    # Bedrock rows are matched without the cross-region prefix of an inference profile id
    Capability(BEDROCK, "", "anthropic.claude-opus-4-8", max_images=20, max_image_px=8000,
               thinking_apis=_BEDROCK_APIS, reasoning_signature=False, error_flag=False,
               max_documents=5, max_document_bytes=4_500_000),
    Capability(BEDROCK, "anthropic.claude", "anthropic.claude-opus-4-8", max_images=20,
               max_image_px=8000, thinking_apis=_BEDROCK_APIS, thinking_rules=True,
               forced_tool_thinking=True, max_documents=5, max_document_bytes=4_500_000,
               max_pdf_pages=100),
    Capability(BEDROCK, "anthropic.claude-3", "anthropic.claude-3-7-sonnet-20250219-v1:0",
               max_images=20, max_image_px=8000, thinking_apis=_BEDROCK_APIS,
               thinking_rules=True, prefill=True, max_documents=5,
               max_document_bytes=4_500_000, max_pdf_pages=100),
    Capability(BEDROCK, "amazon.nova", "amazon.nova-pro-v1:0", max_images=20,
               max_image_px=8000, thinking_apis=_BEDROCK_APIS, reasoning_signature=False,
               max_documents=5, max_document_bytes=4_500_000),
)
# us.anthropic.claude-..., global.amazon.nova-...: a cross-region inference profile of a model
_BEDROCK_REGION = re.compile(r"^(?:us|us-gov|eu|apac|jp|au|ca|global)\.")

DEFAULT_MODELS = {ANTHROPIC: "claude-opus-4-8", OPENAI_CHAT: "gpt-5.1",
                  OPENAI_RESPONSES: "gpt-5.1", GEMINI: "gemini-3-pro",
                  BEDROCK: "anthropic.claude-opus-4-8"}


# a model name's own prefix -> the maker, and the providers that serve that maker's models by
# that name (Bedrock names its models by maker: anthropic.claude-..., openai.gpt-oss-...)
_MAKERS = ((re.compile(r"^claude-"), "an Anthropic", (ANTHROPIC,)),
           (re.compile(r"^(?:gpt-|o[1-9]\b|o[1-9]-|chatgpt-)"), "an OpenAI",
            (OPENAI_CHAT, OPENAI_RESPONSES)),
           (re.compile(r"^gemini-"), "a Google", (GEMINI,)))


def _same_maker(provider: str, model: str) -> None:
    """Refuse a model another provider serves (`--provider anthropic --model gpt-5`): its
    request would be built by the wrong rules and refused by the provider."""
    for pattern, maker, serving in _MAKERS:
        if pattern.match(model) and provider not in serving:
            raise BadArgument(f"{model!r} is {maker} model, which {provider} does not serve "
                              f"by that name (its default: {DEFAULT_MODELS[provider]})")


def capability(provider: str, model: str | None = None) -> tuple[Capability, str]:
    """The row for `provider` and `model` (default model when None), and the model used."""
    if provider not in PROVIDERS:
        raise BadArgument(f"unknown provider {provider!r}; known: {', '.join(PROVIDERS)}")
    chosen = model or DEFAULT_MODELS[provider]
    _same_maker(provider, chosen)
    family = _BEDROCK_REGION.sub("", chosen) if provider == BEDROCK else chosen
    own = [r for r in _ROWS if r.provider == provider]
    rows = [r for r in own if family.startswith(r.family)]
    if not rows:
        return min(own, key=lambda r: len(r.family)), chosen
    return max(rows, key=lambda r: len(r.family)), chosen
