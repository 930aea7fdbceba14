"""Agent formats, one package each; `registry.py` lists them."""
