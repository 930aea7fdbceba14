"""pi sessions: JSONL entries in a tree of id and parentId, messages in pi's own shape."""
