"""Codex rollout JSONL: Responses items wrapped in typed lines with a payload."""
