"""Checks: software (to be written)."""
