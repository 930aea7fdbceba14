"""The names of the provider APIs sessionctx renders for, apart from what each accepts, so a
command can offer them without loading the capability table."""

from __future__ import annotations

ANTHROPIC = "anthropic"
OPENAI_CHAT = "openai-chat"
OPENAI_RESPONSES = "openai-responses"
GEMINI = "gemini"
BEDROCK = "bedrock"
PROVIDERS = (ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES, GEMINI, BEDROCK)
