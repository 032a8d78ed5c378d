"""Judge the k8s check cases directly on K8sFacts (and through the engine
once the registry knows k8s cluster facts)."""

from __future__ import annotations

from datetime import date

import pytest

from clustergrade.checks.k8s import JUDGES
from clustergrade.checks.registry import CLUSTER_SECTIONS
from clustergrade.results import Finding, Status
from tests.helpers import Case, judge, kb
from tests.k8s.cases_k8s import CASES

TODAY = date(2026, 12, 2)


def _findings(case: Case) -> list[Finding]:
    got = JUDGES[case.check_id](case.facts.k8s(), kb(), TODAY)
    return [got] if isinstance(got, Finding) else list(got)


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c.check_id}-{c.expect.value}-{i}" for i, c in enumerate(CASES)]
)
def test_case(case: Case) -> None:
    got = {f.status for f in _findings(case)}
    assert case.expect in got, (case.origin, [f.message for f in _findings(case)])
    if case.expect is Status.PASS:
        assert got == {Status.PASS}


def test_every_k8s_check_has_pass_and_fail_cases() -> None:
    for cid in JUDGES:
        seen = {c.expect for c in CASES if c.check_id == cid}
        assert Status.PASS in seen and seen & {Status.FAIL, Status.WARN}, cid


@pytest.mark.skipif("k8s" not in CLUSTER_SECTIONS, reason="registry has no k8s cluster facts yet")
def test_cases_through_engine() -> None:
    import clustergrade.checks.k8s  # noqa: F401

    for case in CASES:
        got = {r.status for r in judge(case.check_id, case.facts())}
        assert case.expect in got, case.origin


def test_identity_is_stated() -> None:
    f = _findings(
        next(c for c in CASES if c.check_id == "k8s.identity" and c.expect is Status.PASS)
    )[0]
    assert "system:serviceaccount:team-a:default" in f.message


def test_version_skew_says_kubernetes_is_not_in_kb() -> None:
    assert kb().component("kubernetes") is None
    f = _findings(next(c for c in CASES if c.check_id == "k8s.version-skew"))[0]
    assert "no kubernetes component" in f.message
