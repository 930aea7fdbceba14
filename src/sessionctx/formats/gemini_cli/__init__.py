"""Gemini CLI sessions: one JSON document of user and gemini messages."""
