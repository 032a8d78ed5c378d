"""Facts: software (placeholder shapes; the area's collector fills them in)."""

from __future__ import annotations

from clustergrade.facts.base import FactModel


class CudaStackFacts(FactModel):
    """Placeholder."""


class ContainerFacts(FactModel):
    """Placeholder."""


class DcgmFacts(FactModel):
    """Placeholder."""
