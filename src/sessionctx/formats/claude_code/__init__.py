"""Claude Code session JSONL: the parentUuid chain of user and assistant entries."""
