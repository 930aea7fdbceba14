"""Anthropic Messages lists, including Roo Code and Cline histories."""
