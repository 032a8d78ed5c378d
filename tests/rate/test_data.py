"""The criteria and tier data: complete, sourced, and pointing at real checks."""

from __future__ import annotations

from clustergrade.checks.registry import registered
from clustergrade.kb.loader import load as load_kb
from clustergrade.rate.model import FieldType
from clustergrade.rate.score import load_criteria, load_rules
from clustergrade.results import Criterion


def test_ten_criteria_and_at_least_100_items() -> None:
    c = load_criteria()
    assert [x.name for x in c.criteria] == list(Criterion)
    assert len(c.items()) >= 100


def test_every_referenced_check_exists_in_the_registry() -> None:
    known = set(registered(load_kb()))
    refs = {ch for _, it in load_criteria().items().values() for ch in it.evidence.checks}
    assert refs, "some items must be backed by audit checks"
    assert sorted(refs - known) == []


def test_every_item_has_a_resolvable_source() -> None:
    c = load_criteria()
    for _, it in c.items().values():
        assert it.sources
        for s in it.sources:
            assert c.sources[s].url.startswith("https://")


def test_every_declared_field_is_used_and_typed() -> None:
    c = load_criteria()
    used = {r.field for _, it in c.items().values() for r in it.evidence.attestations}
    assert set(c.fields) == used
    for name, f in c.fields.items():
        if f.type is FieldType.STRING:
            assert f.choices, name


def test_rules_profiles_and_gates() -> None:
    r = load_rules()
    assert set(r.profiles) >= {"balanced", "pretraining", "inference", "rl"}
    assert [t.name for t in r.tiers] == [
        "Platinum",
        "Gold",
        "Silver",
        "Bronze",
        "Participation",
        "Underperforming",
    ]
    items = load_criteria().items()
    for g in r.gates:
        if g.kind == "item":
            assert g.item in items
    assert {g.id for g in r.gates} >= {
        "pre-h100-only",
        "no-soc2-iso27001",
        "acs-enabled",
        "gpudirect-rdma-off",
        "open-critical-advisory",
        "billing-during-setup",
        "billing-during-downtime",
    }
