"""What a provider and model family accepts: one flag per rule instead of constants in code.

Each provider module declares its rows (a base row, then model families written as the
differences from it with `dataclasses.replace`); `Provider.capability` picks the row of the
longest family that prefixes the model. The numbers in brackets below are the sections of
docs/provider-rules.md each flag comes from.
"""

from __future__ import annotations

from dataclasses import dataclass

SAFE_ID = r"^[a-zA-Z0-9_-]+$"
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


@dataclass(frozen=True, slots=True)
class Capability:
    """The limits of one provider and model family that a request body must respect: one flag
    per rule, each with the default most rows share (the section of docs/provider-rules.md it
    comes from in brackets); a row names only where it differs."""

    # the provider's name, for the messages of the change log
    provider: str
    # the model-id prefix the row applies to ("" for every model of the provider)
    family: str
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
    # reasoning replay [3]: a Responses turn goes back to the model that wrote it as its own
    # items (reasoning items and server-run items, each with its id)
    own_items: bool = False
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
    # image limits [1.5]: the base64 text of one image, in bytes
    max_image_base64: int | None = None
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


def capability(provider: str, model: str | None = None) -> tuple[Capability, str]:
    """The row for `provider` and `model` (default model when None), and the model used."""
    from sessionctx.providers.registry import provider as registered

    return registered(provider).capability(model)
