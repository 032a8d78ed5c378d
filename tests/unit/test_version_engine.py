"""The version-rule engine on a small component defined here (a unit test of
the engine's semantics, not knowledge-base data)."""

from __future__ import annotations

from datetime import date

from clustergrade.checks.versions import Observed, affecting, judge
from clustergrade.kb.model import Component
from clustergrade.results import Severity, Status
from clustergrade.versions import parse

COMP = Component.model_validate(
    {
        "schema": "clustergrade.kb.component/1",
        "component": "demo-driver",
        "title": "Demo driver",
        "scheme": "nvdriver",
        "retrieved": "2026-08-18",
        "remediation": "upgrade",
        "lines": {"supported": ["580", "595"], "unsupported": ["570"]},
        "policy_minimum": {
            "version": "580.100",
            "reason": "policy",
            "sources": ["https://example.org/p"],
        },
        "advisories": [
            {
                "id": "CVE-2026-0001",
                "title": "older bug",
                "published": "2026-01-10",
                "cvss": {"score": 7.8},
                "affected": [{"introduced": "580", "fixed": "580.126.09"}],
                "sources": ["https://example.org/a"],
            },
            {
                "id": "CVE-2026-0002",
                "title": "newer bug",
                "published": "2026-05-20",
                "cvss": {"score": 8.8},
                "affected": [
                    {"introduced": "580", "fixed": "580.159.03"},
                    {"introduced": "595", "fixed": "595.71.05"},
                ],
                "condition": "only with MIG enabled",
                "sources": ["https://example.org/b"],
            },
        ],
    }
)

LATE = date(2026, 9, 1)


def test_old_version_fails_with_every_advisory_and_the_highest_fix() -> None:
    f = judge(COMP, Observed("580.95.05"), LATE, 3)
    assert f.status is Status.FAIL
    assert f.advisories == ["CVE-2026-0001", "CVE-2026-0002"]
    assert f.expected == ">= 580.159.03"
    assert f.severity is Severity.HIGH
    assert "only with MIG enabled" in str(f.evidence["conditions"])


def test_fixed_version_passes() -> None:
    assert judge(COMP, Observed("580.159.03"), LATE, 3).status is Status.PASS
    assert judge(COMP, Observed("595.71.05"), LATE, 3).status is Status.PASS


def test_unsupported_line_fails_even_without_a_listed_advisory() -> None:
    f = judge(COMP, Observed("570.211.01"), LATE, 3)
    assert f.status is Status.FAIL and "out of support" in f.message


def test_unknown_line_warns() -> None:
    assert judge(COMP, Observed("600.1.1"), LATE, 3).status is Status.WARN


def test_grace_period_warns_then_fails() -> None:
    inside = judge(COMP, Observed("580.126.09"), date(2026, 5, 21), 3)
    assert inside.status is Status.WARN and "grace" in inside.message
    after = judge(COMP, Observed("580.126.09"), date(2026, 5, 24), 3)
    assert after.status is Status.FAIL


def test_unparseable_is_error_never_pass() -> None:
    for text in ("N/A", "", "580.x", None):
        assert judge(COMP, Observed(text), LATE, 3).status is Status.ERROR


def test_not_installed_is_skip() -> None:
    assert judge(COMP, Observed(None, installed=False), LATE, 3).status is Status.SKIP


def test_affecting_respects_range_ends() -> None:
    v = parse("nvdriver", "580.126.09")
    assert v is not None
    assert [a.id for a, _ in affecting(COMP, v)] == ["CVE-2026-0002"]
