"""OpenAI Responses input items: a JSON list, JSONL, or a request log."""
