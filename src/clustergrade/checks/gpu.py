"""Checks: gpu (to be written)."""
