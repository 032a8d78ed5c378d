"""Collectors: host (to be written)."""
