"""Collectors: software (to be written)."""
