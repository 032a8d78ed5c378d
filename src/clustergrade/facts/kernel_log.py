"""Facts: kernel_log (placeholder shapes; the area's collector fills them in)."""

from __future__ import annotations

from clustergrade.facts.base import FactModel


class KernelLogFacts(FactModel):
    """Placeholder."""
