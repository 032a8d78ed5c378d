"""What one health check concluded: items, the verdict, and the lines the
output modes print."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from clustergrade.health.counters import CounterReading
from clustergrade.results import STATUS_ORDER, Status

Verdict = Literal["healthy", "unhealthy", "unknown"]


@dataclass(frozen=True)
class HealthItem:
    """One finding: a reused audit check's result or a health-specific one."""

    check: str
    status: Status
    message: str
    subject: str | None = None
    #: A short form for a drain reason or an 80-character NPD message.
    short: str | None = None

    def line(self) -> str:
        where = f" [{self.subject}]" if self.subject else ""
        return f"{self.status.value} {self.check}{where}: {self.message}"

    def brief(self) -> str:
        if self.short:
            return self.short
        where = f" {self.subject}" if self.subject else ""
        return f"{self.check}{where}: {self.message}"


@dataclass
class HealthReport:
    hostname: str
    #: Wall-clock seconds of the check.
    checked_at: float
    duration_s: float = 0.0
    items: list[HealthItem] = field(default_factory=list)
    #: Things worth saying that are not findings (first check, new boot).
    notes: list[str] = field(default_factory=list)
    state_file: str | None = None
    counters: list[CounterReading] = field(default_factory=list)

    @property
    def problems(self) -> list[HealthItem]:
        return [i for i in self.items if i.status is Status.FAIL]

    @property
    def unknowns(self) -> list[HealthItem]:
        return [i for i in self.items if i.status is Status.ERROR]

    @property
    def verdict(self) -> Verdict:
        """A FAIL anywhere is unhealthy; otherwise an ERROR (something that
        could not be found out) is unknown, never healthy."""
        if self.problems:
            return "unhealthy"
        if self.unknowns:
            return "unknown"
        return "healthy"

    def check_status(self) -> dict[str, Status]:
        """The worst status of each check."""
        out: dict[str, Status] = {}
        for i in self.items:
            cur = out.get(i.check)
            if cur is None or STATUS_ORDER[i.status] < STATUS_ORDER[cur]:
                out[i.check] = i.status
        return dict(sorted(out.items()))

    def headline(self) -> str:
        """The one finding that explains the verdict."""
        v = self.verdict
        if v == "unhealthy":
            first = self.problems[0].brief()
            more = len(self.problems) - 1
            return first + (f" (+{more} more)" if more else "")
        if v == "unknown":
            return "unknown: " + self.unknowns[0].brief()
        judged = sum(1 for s in self.check_status().values() if s is not Status.SKIP)
        return f"healthy ({judged} checks judged)"
