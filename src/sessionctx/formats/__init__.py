"""One package per agent format: what sessionctx knows of each agent's own files."""
