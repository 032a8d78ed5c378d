"""Checks: pure functions of facts and the knowledge base."""
