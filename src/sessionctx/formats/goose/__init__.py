"""Goose sessions."""
