"""Facts: security (placeholder shapes; the area's collector fills them in)."""

from __future__ import annotations

from clustergrade.facts.base import FactModel


class HostSecurityFacts(FactModel):
    """Placeholder."""


class ImexFacts(FactModel):
    """Placeholder."""


class GpuDirectFacts(FactModel):
    """Placeholder."""
