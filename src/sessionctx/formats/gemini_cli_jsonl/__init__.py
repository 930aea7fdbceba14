"""Gemini CLI chats stored as JSONL rows: a header, messages, `$set` and `$rewindTo` updates."""
