"""sessionctx's own records: JSONL, a JSON array, or an xopc envelope."""
