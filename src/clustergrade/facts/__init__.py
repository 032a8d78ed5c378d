"""Typed facts: what collectors saw, never what it means."""
