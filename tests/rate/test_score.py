"""Table-driven tests of the formula: evidence states, gates, coverage,
profiles and tier boundaries."""

from __future__ import annotations

from datetime import date

import pytest

from clustergrade.rate.model import CriteriaFile, Requirement, State
from clustergrade.rate.score import (
    RatingInput,
    attestation_state,
    check_state,
    combine,
    explain,
    load_rules,
    rate,
    rating_json,
)
from clustergrade.results import Criterion, Severity, Status

from .conftest import AS_OF, att, res

P, W, F, S, E = Status.PASS, Status.WARN, Status.FAIL, Status.SKIP, Status.ERROR


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ({"a": P, "b": P}, State.MET),
        ({"a": P, "b": S}, State.MET),
        ({"a": S, "b": S}, State.NOT_APPLICABLE),
        ({"a": P, "b": W}, State.PARTIAL),
        ({"a": P, "b": F}, State.UNMET),
        ({"a": F, "b": E}, State.UNMET),
        ({"a": W, "b": E}, State.UNVERIFIED),
        ({"a": P, "b": E}, State.UNVERIFIED),
        ({"a": P}, State.UNVERIFIED),  # no result on node b
        ({}, State.UNVERIFIED),
    ],
)
def test_check_state(statuses: dict[str, Status], expected: State) -> None:
    inp = RatingInput(
        provider="t",
        as_of=AS_OF,
        nodes=("a", "b"),
        results=tuple(res("x.check", n, s) for n, s in statuses.items()),
        checks_run=frozenset({"x.check"}),
    )
    assert check_state("x.check", inp).state is expected


def test_cluster_scope_check_is_not_missing_on_nodes() -> None:
    inp = RatingInput(
        provider="t", as_of=AS_OF, nodes=("a", "b"), results=(res("c.x", "cluster:t", P),)
    )
    assert check_state("c.x", inp).state is State.MET


BOOL = Requirement(field="f", equals=True)
NUM = Requirement(field="f", min=99.9, partial_min=99.0)
LOW = Requirement(field="f", max=15, partial_max=60)


@pytest.mark.parametrize(
    ("req", "atts", "expected"),
    [
        (BOOL, [("f", True, "tester")], State.MET),
        (BOOL, [("f", False, "tester")], State.UNMET),
        (BOOL, [("f", True, "provider")], State.UNVERIFIED),  # a claim never scores as met
        (BOOL, [("f", False, "provider")], State.UNMET),  # an admission is taken at its word
        (BOOL, [("f", True, "provider"), ("f", False, "tester")], State.UNMET),
        (BOOL, [], State.UNVERIFIED),
        (NUM, [("f", 99.95, "tester")], State.MET),
        (NUM, [("f", 99.9, "tester")], State.MET),
        (NUM, [("f", 99.5, "tester")], State.PARTIAL),
        (NUM, [("f", 98.0, "tester")], State.UNMET),
        (LOW, [("f", 15, "tester")], State.MET),
        (LOW, [("f", 60, "tester")], State.PARTIAL),
        (LOW, [("f", 61, "tester")], State.UNMET),
        (
            Requirement(field="f", one_of=["vm", "bare_metal"]),
            [("f", "container", "tester")],
            State.UNMET,
        ),
    ],
)
def test_attestation_state(
    req: Requirement, atts: list[tuple[str, object, str]], expected: State
) -> None:
    inp = RatingInput(
        provider="t", as_of=AS_OF, attestations=tuple(att(f, v, w) for f, v, w in atts)
    )  # type: ignore[arg-type]
    assert attestation_state(req, inp, 365).state is expected


def test_newest_tester_attestation_wins_and_stale_or_future_ones_do_not_count() -> None:
    old, new = att("f", False, day=date(2026, 1, 1)), att("f", True, day=date(2026, 11, 1))
    assert (
        attestation_state(BOOL, RatingInput("t", AS_OF, attestations=(new, old)), 365).state
        is State.MET
    )
    stale = RatingInput("t", AS_OF, attestations=(att("f", True, day=date(2024, 1, 1)),))
    assert attestation_state(BOOL, stale, 365).state is State.UNVERIFIED
    future = RatingInput("t", AS_OF, attestations=(att("f", True, day=date(2027, 1, 1)),))
    assert attestation_state(BOOL, future, 365).state is State.UNVERIFIED


@pytest.mark.parametrize(
    ("states", "mode", "expected"),
    [
        ([State.MET, State.UNMET], "all", State.UNMET),
        ([State.MET, State.UNVERIFIED], "all", State.UNVERIFIED),
        ([State.MET, State.PARTIAL], "all", State.PARTIAL),
        ([State.MET, State.NOT_APPLICABLE], "all", State.MET),
        ([State.NOT_APPLICABLE], "all", State.NOT_APPLICABLE),
        ([State.UNMET, State.MET], "any", State.MET),
        ([State.UNMET, State.UNVERIFIED], "any", State.UNVERIFIED),
        ([State.UNMET, State.NOT_APPLICABLE], "any", State.UNMET),
    ],
)
def test_combine(states: list[State], mode: str, expected: State) -> None:
    assert combine(states, mode) is expected  # type: ignore[arg-type]


# A synthetic catalogue: ten criteria x 20 bool items, so scores move in steps of 5.
N = 20


def synthetic() -> CriteriaFile:
    crits = []
    fields = {}
    for c in Criterion:
        key = c.value.lower()
        items = []
        for i in range(N):
            fields[f"{key}.f{i}"] = {"type": "bool", "description": "test"}
            items.append(
                {
                    "id": f"{key}.i{i}",
                    "title": "t",
                    "sources": ["s"],
                    "evidence": {"attestations": [{"field": f"{key}.f{i}", "equals": True}]},
                }
            )
        crits.append({"name": c.value, "description": "t", "items": items})
    return CriteriaFile.model_validate(
        {
            "schema": "clustergrade.criteria/1",
            "version": "test",
            "sources": {
                "s": {"title": "t", "url": "https://example.invalid", "date": "2026-01-01"}
            },
            "fields": fields,
            "criteria": crits,
        }
    )


def evidence(met: dict[Criterion, int], unmet_rest: bool = True) -> RatingInput:
    """``met[c]`` items of criterion c are tester-verified met; the rest are
    verified unmet (or, with unmet_rest=False, left unverified)."""
    atts = []
    for c in Criterion:
        key = c.value.lower()
        for i in range(N):
            if i < met.get(c, N):
                atts.append(att(f"{key}.f{i}", True))
            elif unmet_rest:
                atts.append(att(f"{key}.f{i}", False))
    return RatingInput(provider="t", as_of=AS_OF, attestations=tuple(atts))


def no_gates():  # type: ignore[no-untyped-def]
    return load_rules().model_copy(update={"gates": []})


@pytest.mark.parametrize(
    ("all_met", "tier"),
    [
        (20, "Platinum"),
        (18, "Platinum"),  # 90 = the Platinum bar
        (17, "Gold"),
        (16, "Gold"),  # 85, 80
        (15, "Silver"),
        (13, "Silver"),  # 75, 65
        (12, "Bronze"),
        (10, "Bronze"),  # 60, 50
        (9, "Participation"),
        (7, "Participation"),  # 45, 35
        (6, "Underperforming"),
        (0, "Underperforming"),
    ],
)
def test_tier_boundaries(all_met: int, tier: str) -> None:
    r = rate(evidence({c: all_met for c in Criterion}), criteria=synthetic(), rules=no_gates())
    assert r.score == 100 * all_met / N
    assert r.coverage == 1.0
    assert r.tier == tier


def test_one_weak_criterion_caps_the_tier() -> None:
    met = {c: N for c in Criterion} | {Criterion.STORAGE: 14}  # 70 < Platinum's 75 per criterion
    r = rate(evidence(met), criteria=synthetic(), rules=no_gates())
    assert r.score == 97.0 and r.tier == "Gold"
    assert "Storage 70 < 75 needed for Platinum" in explain(r, no_gates())


def test_low_coverage_is_unable_to_rate_and_says_why() -> None:
    # 11 of 20 verified met, the rest unverified: coverage 55% < 60%.
    r = rate(
        evidence({c: 11 for c in Criterion}, unmet_rest=False),
        criteria=synthetic(),
        rules=no_gates(),
    )
    assert r.coverage == 0.55 and r.tier == "Unable to rate"
    assert "coverage 55% < 60% minimum" in r.reasons


def test_coverage_caps_tiers_above_the_minimum() -> None:
    # Everything verified is met, but only 85% verified: Platinum needs 90%.
    r = rate(
        evidence({c: 17 for c in Criterion}, unmet_rest=False),
        criteria=synthetic(),
        rules=no_gates(),
    )
    assert (r.score, r.coverage) == (85.0, 0.85)
    assert r.tier == "Gold"


def test_profile_weights_change_the_overall_score() -> None:
    met = {c: N for c in Criterion} | {Criterion.NETWORKING: 0, Criterion.PRICING: 0}
    inp = evidence(met)
    scores = {
        p: rate(inp, profile=p, criteria=synthetic(), rules=no_gates()).score
        for p in ("balanced", "pretraining", "inference", "rl")
    }
    assert scores["balanced"] == 80.0
    # pretraining weighs networking 2 and pricing 1 of 12: (12-3)/12
    assert scores["pretraining"] == 75.0
    # inference weighs networking 0.5 and pricing 2 of 11
    assert scores["inference"] == round(100 * (11 - 2.5) / 11, 2)
    with pytest.raises(ValueError, match="unknown profile"):
        rate(inp, profile="nope", criteria=synthetic(), rules=no_gates())


# ---- gates on the real catalogue


def full_marks() -> RatingInput:
    """Tester-verified 'met' for every attestation field of the real catalogue
    (TEST DATA) and PASS for every check on one node."""
    from clustergrade.rate.score import load_criteria

    c = load_criteria()
    atts = []
    checks = set()
    for _, it in c.items().values():
        checks |= set(it.evidence.checks)
        for r in it.evidence.attestations:
            v = (
                r.equals
                if r.equals is not None
                else r.one_of[0]
                if r.one_of
                else (r.min if r.min is not None else r.max)
            )
            atts.append(att(r.field, v))  # type: ignore[arg-type]
    results = tuple(res(ch, "n1", P) for ch in sorted(checks))
    return RatingInput(
        provider="t",
        as_of=AS_OF,
        nodes=("n1",),
        results=results,
        checks_run=frozenset(checks),
        attestations=tuple(atts),
    )


def test_full_marks_is_platinum() -> None:
    r = rate(full_marks())
    assert (r.tier, r.score, r.coverage) == ("Platinum", 100.0, 1.0)
    assert all(g.state == "cleared" for g in r.gates)


@pytest.mark.parametrize(
    ("field", "value", "gate"),
    [
        ("availability.h100_or_newer", False, "pre-h100-only"),
        ("networking.acs_disabled_gpu_nic", False, "acs-enabled"),
        ("pricing.bills_during_setup", True, "billing-during-setup"),
        ("pricing.bills_during_downtime", True, "billing-during-downtime"),
    ],
)
def test_item_gates(field: str, value: bool, gate: str) -> None:
    base = full_marks()
    inp = RatingInput(
        **{
            **base.__dict__,
            "attestations": tuple(a for a in base.attestations if a.field != field)
            + (att(field, value),),
        }
    )
    r = rate(inp)
    assert r.tier == "Underperforming"
    assert [g.id for g in r.gates if g.state == "triggered"] == [gate]
    assert r.score > 90  # the gate, not the score, decides
    assert f"hard gate {gate}" in explain(r)


def test_soc2_gate_needs_both_missing_and_a_claim_is_not_enough() -> None:
    base = full_marks()
    keep = tuple(
        a for a in base.attestations if a.field not in ("security.soc2_type2", "security.iso27001")
    )
    one = rate(
        RatingInput(**{**base.__dict__, "attestations": keep + (att("security.iso27001", True),)})
    )
    assert one.tier == "Platinum"
    none = rate(
        RatingInput(
            **{
                **base.__dict__,
                "attestations": keep
                + (att("security.soc2_type2", False), att("security.iso27001", False)),
            }
        )
    )
    assert none.tier == "Underperforming"
    claim = rate(
        RatingInput(
            **{
                **base.__dict__,
                "attestations": keep + (att("security.soc2_type2", True, who="provider"),),
            }
        )
    )
    assert claim.tier == "Unable to rate"
    assert any("no-soc2-iso27001 not verified" in x for x in claim.reasons)


def test_gpudirect_gate_from_the_audit_check() -> None:
    base = full_marks()
    results = tuple(r for r in base.results if r.check_id != "gpudirect.dmabuf") + (
        res("gpudirect.dmabuf", "n1", F),
    )
    atts = tuple(a for a in base.attestations if a.field != "networking.gpudirect_rdma_enabled")
    # The item takes either proof: a failed dma-buf check alone leaves room for
    # a measured RDMA run, so the gate stays open (unable to rate)...
    r = rate(RatingInput(**{**base.__dict__, "results": results, "attestations": atts}))
    assert [g.state for g in r.gates if g.id == "gpudirect-rdma-off"] == ["unverified"]
    assert r.tier == "Unable to rate"
    # ...and a tester who measured it off closes it.
    off = atts + (att("networking.gpudirect_rdma_enabled", False),)
    r2 = rate(RatingInput(**{**base.__dict__, "results": results, "attestations": off}))
    assert [g.id for g in r2.gates if g.state == "triggered"] == ["gpudirect-rdma-off"]


def test_open_critical_advisory_gate() -> None:
    base = full_marks()
    extra = (res("version.nvidia-driver", "n1", F, Severity.CRITICAL, ["CVE-2025-23266"]),)
    r = rate(RatingInput(**{**base.__dict__, "results": base.results + extra}))
    assert r.tier == "Underperforming"
    assert "open-critical-advisory" in r.reasons[0]
    high = (res("version.nvidia-driver", "n1", F, Severity.HIGH, ["CVE-2025-0001"]),)
    r2 = rate(RatingInput(**{**base.__dict__, "results": base.results + high}))
    assert r2.tier != "Underperforming"


def test_same_evidence_same_bytes() -> None:
    a, b = (
        rating_json(rate(full_marks(), profile="rl")),
        rating_json(rate(full_marks(), profile="rl")),
    )
    assert a == b and a.endswith("\n")


@pytest.mark.parametrize(
    ("all_met", "says"),
    [
        (20, "Platinum is the top tier."),
        (17, "not Platinum:\n  - score 85 < 90 needed for Platinum"),
        (6, "not Participation:\n  - score 30 < 35 needed for Participation"),
    ],
)
def test_explain_names_the_next_tier_and_the_items(all_met: int, says: str) -> None:
    rules = no_gates()
    text = explain(
        rate(evidence({c: all_met for c in Criterion}), criteria=synthetic(), rules=rules), rules
    )
    assert says in text
    if all_met < N:
        # every unmet item is listed with what meeting it would add
        assert f"+{100 / N / 10:g}" in text and "[unmet, weight 1]" in text
