"""Collectors: network (to be written)."""
