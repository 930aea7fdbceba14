"""The provider refusals a repair can answer: a 400 whose message names a history error. The
proxy rebuilds the request once for those and for nothing else."""

from __future__ import annotations

from dataclasses import dataclass

# lower-case fragments of the providers' own error messages
_HISTORY = (
    "tool_use` ids were found without `tool_result`",  # Anthropic: an unanswered call
    "tool_use ids were found without tool_result",
    "unexpected `tool_use_id`",  # Anthropic: a result without its call
    "unexpected tool_use_id",
    "tool_result` block(s)",
    "no tool output found for",  # Responses: an unanswered call
    "no tool call found for function call output",  # Responses: an orphan output
    "without its required following item",  # Responses: reasoning alone
    "must be followed by tool messages",  # Chat: an unanswered call
    "must be a response to a preceeding message with 'tool_calls'",  # Chat (sic)
    "must be a response to a preceding message with 'tool_calls'",
    "function response turn comes immediately after a function call turn",  # Gemini
    "function call turn comes immediately after a user turn",
    "number of function response parts is equal to the number of function call parts",
    "tool use concurrency",
    "ids must be unique",  # Anthropic: two calls with one id
    "toolconfig",  # Bedrock: tool blocks without a toolConfig
    "image exceeds", "image dimensions exceed", "images in a request",  # image limits
    "roles must alternate",
    "first message must use the",
)
_SIGNATURE = ("invalid `signature` in `thinking` block", "invalid signature in thinking block",
              "thinking.signature", "thought_signature", "encrypted content",
              "could not be verified", "invalid_encrypted_content")


@dataclass(frozen=True, slots=True)
class Refusal:
    """A refusal a rebuild answers; `signatures`: the reasoning's signatures were refused."""

    message: str
    signatures: bool


def refusal(status: int, body: bytes) -> Refusal | None:
    """The history error a 400 names, or None for any other answer."""
    if status != 400 or len(body) > 65536:
        return None
    text = body.decode("utf-8", "replace")
    low = text.lower()
    if any(s in low for s in _SIGNATURE):
        return Refusal(text[:500], True)
    if any(s in low for s in _HISTORY):
        return Refusal(text[:500], False)
    return None
