"""Cline, Roo Code and Kilo Code task histories: what their code writes beside Anthropic's."""
