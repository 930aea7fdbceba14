"""aider chat histories: the `.aider.chat.history.md` aider appends to in each repository."""
