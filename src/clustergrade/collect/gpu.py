"""Collectors: gpu (to be written)."""
