"""Checks: network (to be written)."""
