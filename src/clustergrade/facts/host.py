"""Facts: host (placeholder shapes; the area's collector fills them in)."""

from __future__ import annotations

from clustergrade.facts.base import FactModel


class OsFacts(FactModel):
    """Placeholder."""


class KernelFacts(FactModel):
    """Placeholder."""


class CpuFacts(FactModel):
    """Placeholder."""


class MemoryFacts(FactModel):
    """Placeholder."""


class PciFacts(FactModel):
    """Placeholder."""
