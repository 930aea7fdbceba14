"""GitHub Copilot CLI sessions: each session's events.jsonl under ~/.copilot/session-state/."""
