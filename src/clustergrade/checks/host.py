"""Checks: host (to be written)."""
