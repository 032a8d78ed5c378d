"""Collectors: security (to be written)."""
