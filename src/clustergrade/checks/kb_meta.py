"""Checks: kb_meta (to be written)."""
