"""Facts: gpu (placeholder shapes; the area's collector fills them in)."""

from __future__ import annotations

from clustergrade.facts.base import FactModel


class NvidiaFacts(FactModel):
    """Placeholder."""


class AmdFacts(FactModel):
    """Placeholder."""
