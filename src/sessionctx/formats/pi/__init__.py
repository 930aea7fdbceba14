"""pi sessions (the JSONL tree pi-coding-agent writes)."""
