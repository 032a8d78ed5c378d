"""Collectors: turn a node into typed facts through the command seam."""
