from __future__ import annotations

from datetime import date
from pathlib import Path

from clustergrade.rate.attest import Attestation, AttestSource
from clustergrade.results import Criterion, Result, Severity, Status

DATA = Path(__file__).parent / "data"
AS_OF = date(2026, 12, 1)


def att(
    field: str, value: bool | float | str, who: str = "tester", day: date = date(2026, 11, 1)
) -> Attestation:
    """A test attestation (labelled test data in its source)."""
    return Attestation(
        field=field,
        value=value,
        verified_by=who,  # type: ignore[arg-type]
        tester="test-tester" if who == "tester" else None,
        source=AttestSource(document="TEST DATA"),
        date=day,
    )


def res(
    check: str,
    node: str,
    status: Status,
    severity: Severity = Severity.MEDIUM,
    advisories: list[str] | None = None,
) -> Result:
    return Result(
        check_id=check,
        node=node,
        status=status,
        severity=severity,
        criterion=Criterion.SECURITY,
        message="test",
        advisories=advisories or [],
    )
