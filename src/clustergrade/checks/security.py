"""Checks: security (to be written)."""
