"""Collectors: kernel_log (to be written)."""
