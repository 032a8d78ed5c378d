"""Runs every check case in tests/checks/cases_*.py, and requires that every
registered check has a case that passes and one that fails (or warns)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from clustergrade.checks.registry import registered
from clustergrade.results import Status
from tests.helpers import Case, judge, kb

_HERE = Path(__file__).parent


def _all_cases() -> list[Case]:
    cases: list[Case] = []
    for path in sorted(_HERE.glob("cases_*.py")):
        mod = importlib.import_module(f"tests.checks.{path.stem}")
        cases.extend(mod.CASES)
    return cases


CASES = _all_cases()


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c.check_id}-{c.expect.value}-{i}" for i, c in enumerate(CASES)]
)
def test_case(case: Case) -> None:
    results = judge(case.check_id, case.facts())
    if case.subject is not None:
        results = [r for r in results if r.subject == case.subject]
        assert results, f"no result for subject {case.subject!r}"
    got = {r.status for r in results}
    assert case.expect in got, (
        f"{case.check_id} on {case.origin}: expected {case.expect}, got "
        + "; ".join(f"{r.status} {r.subject or ''} {r.message}" for r in results)
    )
    if case.expect is Status.PASS:
        assert got == {Status.PASS}, [r.message for r in results]


def test_every_check_has_pass_and_fail_cases() -> None:
    have: dict[str, set[Status]] = {}
    for c in CASES:
        have.setdefault(c.check_id, set()).add(c.expect)
    missing = []
    for cid in registered(kb()):
        seen = have.get(cid, set())
        if Status.PASS not in seen or not seen & {Status.FAIL, Status.WARN}:
            missing.append(f"{cid} (has {sorted(s.value for s in seen)})")
    assert not missing, "checks without a PASS and a FAIL/WARN case:\n" + "\n".join(missing)
