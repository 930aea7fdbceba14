"""opencode sessions."""
