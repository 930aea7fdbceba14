"""OpenAI chat message lists (SWE-agent trajectories, OpenHands and the like)."""
