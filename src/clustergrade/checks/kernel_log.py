"""Checks: kernel_log (to be written)."""
