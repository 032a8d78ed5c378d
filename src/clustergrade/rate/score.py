"""The published scoring formula (docs/rating.md).  Pure: evidence in, a
rating out; the same evidence gives the same bytes (``rating_json``)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict

from clustergrade.rate.attest import Attestation, AttestationFile
from clustergrade.rate.model import (
    STATE_VALUE,
    VERIFIED,
    CriteriaFile,
    Evidence,
    Item,
    Requirement,
    State,
    TierRules,
)
from clustergrade.results import SEVERITY_ORDER, Criterion, Result, Status

RATING_SCHEMA = "clustergrade.rating/1"
_DATA = Path(__file__).parent / "data"


@cache
def load_criteria(path: Path = _DATA / "criteria.yaml") -> CriteriaFile:
    return CriteriaFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


@cache
def load_rules(path: Path = _DATA / "tiers.yaml") -> TierRules:
    return TierRules.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


# ---------------------------------------------------------------- evidence


@dataclass(frozen=True)
class RatingInput:
    """Everything a rating is computed from."""

    provider: str
    as_of: date
    results: tuple[Result, ...] = ()
    #: The audited nodes: a node-scope check missing on one of them is unverified.
    nodes: tuple[str, ...] = ()
    #: Checks the audit ran (a criteria check it did not run is unverified).
    checks_run: frozenset[str] = frozenset()
    attestations: tuple[Attestation, ...] = ()
    cluster: str | None = None
    report_id: str | None = None
    test_data: bool = False
    notes: tuple[str, ...] = field(default=())


def input_from(
    report: object | None, attest: AttestationFile | None, as_of: date | None = None
) -> RatingInput:
    """Build the input from a saved report (``clustergrade.report.model.Report``)
    and an attestation file.  ``as_of`` defaults to the audit's finish date."""
    from clustergrade.report.model import Report

    results: tuple[Result, ...] = ()
    nodes: tuple[str, ...] = ()
    checks_run: frozenset[str] = frozenset()
    rid = None
    day = as_of
    if isinstance(report, Report):
        results = tuple(report.results)
        nodes = tuple(sorted({r.node for r in results if not r.node.startswith("cluster:")}))
        checks_run = frozenset(c.id for c in report.checks)
        rid = report.run.id
        day = day or report.run.finished_at.date()
    if day is None:
        raise ValueError("as_of is needed when there is no audit report")
    return RatingInput(
        provider=attest.provider
        if attest
        else (report.run.target.name if isinstance(report, Report) else "unknown"),
        cluster=attest.cluster if attest else None,
        as_of=day,
        results=results,
        nodes=nodes,
        checks_run=checks_run,
        attestations=tuple(attest.attestations) if attest else (),
        report_id=rid,
        test_data=bool(attest and attest.test_data),
    )


class EvidenceState(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["check", "attestation"]
    ref: str
    state: State
    detail: str


def check_state(check_id: str, inp: RatingInput) -> EvidenceState:
    """FAIL anywhere = unmet; then ERROR or a missing node = unverified; then
    WARN = partial; PASS (SKIP elsewhere) = met; SKIP everywhere = n/a.

    ERROR outranks WARN so that fixing one node never lowers a score: a node
    we could not judge may hide anything but a proven FAIL."""
    rs = [r for r in inp.results if r.check_id == check_id]
    if not rs:
        why = "not run by this audit" if check_id not in inp.checks_run else "no result"
        return EvidenceState(kind="check", ref=check_id, state=State.UNVERIFIED, detail=why)
    statuses = {r.status for r in rs}
    seen = {r.node for r in rs}
    cluster_scope = all(n.startswith("cluster:") for n in seen)
    missing = [] if cluster_scope else sorted(set(inp.nodes) - seen)

    def on(st: Status) -> str:
        return ", ".join(sorted({r.node for r in rs if r.status is st}))

    if Status.FAIL in statuses:
        return EvidenceState(
            kind="check", ref=check_id, state=State.UNMET, detail=f"FAIL on {on(Status.FAIL)}"
        )
    if Status.ERROR in statuses or missing:
        where = on(Status.ERROR) if Status.ERROR in statuses else ""
        detail = "; ".join(
            p
            for p in (
                f"ERROR on {where}" if where else "",
                f"no result on {', '.join(missing)}" if missing else "",
            )
            if p
        )
        return EvidenceState(kind="check", ref=check_id, state=State.UNVERIFIED, detail=detail)
    if Status.WARN in statuses:
        return EvidenceState(
            kind="check", ref=check_id, state=State.PARTIAL, detail=f"WARN on {on(Status.WARN)}"
        )
    if Status.PASS in statuses:
        n = len({r.node for r in rs if r.status is Status.PASS})
        return EvidenceState(
            kind="check", ref=check_id, state=State.MET, detail=f"PASS on {n} node(s)"
        )
    return EvidenceState(
        kind="check", ref=check_id, state=State.NOT_APPLICABLE, detail="SKIP everywhere"
    )


def _judge_value(req: Requirement, value: bool | int | float | str) -> State:
    if req.equals is not None:
        return State.MET if value == req.equals and type(value) is type(req.equals) else State.UNMET
    if req.one_of is not None:
        return State.MET if value in req.one_of else State.UNMET
    x = float(value)
    if req.min is not None:
        if x >= req.min:
            return State.MET
        return (
            State.PARTIAL if req.partial_min is not None and x >= req.partial_min else State.UNMET
        )
    assert req.max is not None
    if x <= req.max:
        return State.MET
    return State.PARTIAL if req.partial_max is not None and x <= req.partial_max else State.UNMET


def attestation_state(req: Requirement, inp: RatingInput, max_age_days: int) -> EvidenceState:
    """Tester-verified beats a provider claim; the newest wins within each.
    A provider claim that meets the bar stays unverified; one that admits a
    gap is taken at its word (unmet)."""

    def ev(state: State, detail: str) -> EvidenceState:
        return EvidenceState(kind="attestation", ref=req.field, state=state, detail=detail)

    dated = [
        (a.verified_by == "tester", a.date, i, a)
        for i, a in enumerate(inp.attestations)
        if a.field == req.field and a.date <= inp.as_of
    ]
    fresh = [d for d in dated if (inp.as_of - d[1]).days <= max_age_days]
    if not fresh:
        return ev(State.UNVERIFIED, "stale attestation" if dated else "no attestation")
    _, _, _, a = max(fresh, key=lambda d: (d[0], d[1], d[2]))
    state = _judge_value(req, a.value)
    who = f"tester {a.tester}" if a.verified_by == "tester" else "provider claim"
    detail = f"{a.value!r} ({who}, {a.date.isoformat()})"
    if a.verified_by == "provider" and state is not State.UNMET:
        return ev(State.UNVERIFIED, detail + ": not verified by a tester")
    return ev(state, detail)


def combine(states: Iterable[State], mode: Literal["all", "any"]) -> State:
    s = set(states)
    order = (
        (State.UNMET, State.UNVERIFIED, State.PARTIAL, State.MET)
        if mode == "all"
        else (State.MET, State.PARTIAL, State.UNVERIFIED, State.UNMET)
    )
    for st in order:
        if st in s:
            return st
    return State.NOT_APPLICABLE


def item_evidence(ev: Evidence, inp: RatingInput, max_age_days: int) -> list[EvidenceState]:
    return [check_state(c, inp) for c in ev.checks] + [
        attestation_state(r, inp, max_age_days) for r in ev.attestations
    ]


# ---------------------------------------------------------------- the rating


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ItemRating(_Out):
    id: str
    title: str
    weight: int
    state: State
    evidence: list[EvidenceState]


class CriterionRating(_Out):
    name: Criterion
    profile_weight: float
    #: 0-100 over applicable items; None when no item applies.
    score: float | None
    #: Share (0-1) of applicable items with verified evidence.
    coverage: float | None
    items: list[ItemRating]


class GateRating(_Out):
    id: str
    description: str
    state: Literal["cleared", "triggered", "unverified"]
    detail: str


class Rating(_Out):
    schema_: str = RATING_SCHEMA
    provider: str
    cluster: str | None
    profile: str
    as_of: date
    report_id: str | None
    test_data: bool
    criteria_version: str
    rules_version: str
    tier: str
    score: float
    coverage: float
    reasons: list[str]
    gates: list[GateRating]
    criteria: list[CriterionRating]


def _round(x: float) -> float:
    return round(x, 2)


def _criterion(
    name: Criterion, items: list[Item], inp: RatingInput, weight: float, max_age: int
) -> CriterionRating:
    rated = []
    for it in items:
        evs = item_evidence(it.evidence, inp, max_age)
        rated.append(
            ItemRating(
                id=it.id,
                title=it.title,
                weight=it.weight,
                state=combine((e.state for e in evs), it.evidence.combine),
                evidence=evs,
            )
        )
    app = [r for r in rated if r.state is not State.NOT_APPLICABLE]
    if not app:
        return CriterionRating(
            name=name, profile_weight=weight, score=None, coverage=None, items=rated
        )
    total = sum(r.weight for r in app)
    got = sum(r.weight * STATE_VALUE[r.state] for r in app)
    cov = sum(1 for r in app if r.state in VERIFIED) / len(app)
    return CriterionRating(
        name=name,
        profile_weight=weight,
        score=_round(100 * got / total),
        coverage=_round(cov),
        items=rated,
    )


def _gates(rules: TierRules, items: dict[str, ItemRating], inp: RatingInput) -> list[GateRating]:
    out = []
    for g in rules.gates:
        if g.kind == "item":
            assert g.item is not None
            it = items[g.item]
            state: Literal["cleared", "triggered", "unverified"] = (
                "triggered"
                if it.state is State.UNMET
                else "unverified"
                if it.state is State.UNVERIFIED
                else "cleared"
            )
            detail = f"{g.item}: {it.state.value}"
        else:
            assert g.min_severity is not None
            bar = SEVERITY_ORDER[g.min_severity]
            hits = sorted(
                {
                    f"{r.check_id} on {r.node} ({', '.join(r.advisories)})"
                    for r in inp.results
                    if r.status is Status.FAIL
                    and r.advisories
                    and SEVERITY_ORDER[r.severity] <= bar
                }
            )
            state = "triggered" if hits else "cleared"
            detail = (
                "; ".join(hits) if hits else f"no FAIL citing a {g.min_severity.value} advisory"
            )
        out.append(GateRating(id=g.id, description=g.description, state=state, detail=detail))
    return out


def _overall(crits: list[CriterionRating]) -> tuple[float, float]:
    scored = [c for c in crits if c.score is not None and c.profile_weight > 0]
    wsum = sum(c.profile_weight for c in scored)
    if not wsum:
        return 0.0, 0.0
    score = sum(c.profile_weight * (c.score or 0) for c in scored) / wsum
    cov = sum(c.profile_weight * (c.coverage or 0) for c in scored) / wsum
    return _round(score), _round(cov)


def tier_failures(
    tier_index: int, rules: TierRules, score: float, coverage: float, crits: list[CriterionRating]
) -> list[str]:
    """What keeps the scores from tier ``tier_index`` (empty: it is reached)."""
    t = rules.tiers[tier_index]
    out = []
    if score < t.min_score:
        out.append(f"score {score:g} < {t.min_score:g} needed for {t.name}")
    if coverage < t.min_coverage:
        out.append(f"coverage {coverage:.0%} < {t.min_coverage:.0%} needed for {t.name}")
    for c in crits:
        if c.score is not None and c.profile_weight > 0 and c.score < t.min_criterion_score:
            out.append(
                f"{c.name.value} {c.score:g} < {t.min_criterion_score:g} needed for {t.name}"
            )
    return out


def rate(
    inp: RatingInput,
    profile: str = "balanced",
    criteria: CriteriaFile | None = None,
    rules: TierRules | None = None,
) -> Rating:
    criteria = criteria or load_criteria()
    rules = rules or load_rules()
    if profile not in rules.profiles:
        raise ValueError(f"unknown profile {profile!r}; known: {', '.join(sorted(rules.profiles))}")
    weights = rules.profiles[profile].weights
    crits = [
        _criterion(c.name, c.items, inp, weights[c.name], rules.attestation_max_age_days)
        for c in criteria.criteria
    ]
    items = {it.id: it for c in crits for it in c.items}
    gates = _gates(rules, items, inp)
    score, coverage = _overall(crits)

    triggered = [g for g in gates if g.state == "triggered"]
    open_gates = [g for g in gates if g.state == "unverified"]
    reasons: list[str]
    if triggered:
        tier = rules.gated_tier
        reasons = [f"hard gate {g.id}: {g.description} ({g.detail})" for g in triggered]
    elif coverage < rules.min_coverage or open_gates:
        tier = rules.unable_tier
        reasons = []
        if coverage < rules.min_coverage:
            reasons.append(f"coverage {coverage:.0%} < {rules.min_coverage:.0%} minimum")
        reasons += [f"hard gate {g.id} not verified ({g.detail})" for g in open_gates]
    else:
        tier = rules.tiers[-1].name
        reasons = []
        for i, t in enumerate(rules.tiers):
            if not tier_failures(i, rules, score, coverage, crits):
                tier = t.name
                reasons = [f"reaches every bar of {t.name}"]
                break
    if inp.test_data:
        reasons.append("TEST DATA: attestations are labelled test data; not a real rating")
    return Rating(
        provider=inp.provider,
        cluster=inp.cluster,
        profile=profile,
        as_of=inp.as_of,
        report_id=inp.report_id,
        test_data=inp.test_data,
        criteria_version=criteria.version,
        rules_version=rules.version,
        tier=tier,
        score=score,
        coverage=coverage,
        reasons=reasons,
        gates=gates,
        criteria=crits,
    )


def rating_json(r: Rating) -> str:
    """Canonical JSON: sorted keys, fixed separators, trailing newline."""
    return (
        json.dumps(r.model_dump(mode="json"), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    )


# ---------------------------------------------------------------- explain


def item_gains(r: Rating) -> list[tuple[float, Criterion, ItemRating]]:
    """Overall points each not-met item would add if it were met, best first."""
    scored = [c for c in r.criteria if c.score is not None and c.profile_weight > 0]
    wsum = sum(c.profile_weight for c in scored)
    out = []
    for c in scored:
        app = [i for i in c.items if i.state is not State.NOT_APPLICABLE]
        total = sum(i.weight for i in app)
        for i in app:
            if i.state is not State.MET:
                gain = 100 * c.profile_weight / wsum * i.weight * (1 - STATE_VALUE[i.state]) / total
                out.append((_round(gain), c.name, i))
    return sorted(out, key=lambda g: (-g[0], g[2].id))


def _item_line(i: ItemRating) -> str:
    ev = "; ".join(f"{e.ref}: {e.state.value} ({e.detail})" for e in i.evidence)
    return f"{i.id} [{i.state.value}, weight {i.weight}] {i.title} <- {ev}"


def explain(r: Rating, rules: TierRules | None = None, limit: int = 30) -> str:
    """Why ``r`` got its tier and not the next one up, item by item."""
    rules = rules or load_rules()
    lines = [
        f"{r.provider}{f' / {r.cluster}' if r.cluster else ''}: {r.tier} "
        f"(profile {r.profile}, score {r.score:g}, coverage {r.coverage:.0%}, as of {r.as_of.isoformat()})",
    ]
    lines += [f"  because: {x}" for x in r.reasons]
    lines.append("criteria:")
    for c in r.criteria:
        s = "n/a" if c.score is None else f"{c.score:g}"
        cv = "n/a" if c.coverage is None else f"{c.coverage:.0%}"
        lines.append(
            f"  {c.name.value:<14} score {s:>6}  coverage {cv:>5}  weight {c.profile_weight:g}"
        )
    names = [t.name for t in rules.tiers]
    blockers: list[str] = []
    if r.tier == rules.unable_tier or (
        r.tier == rules.gated_tier and any(g.state == "triggered" for g in r.gates)
    ):
        nxt = "a scored tier"
        blockers = [x for x in r.reasons if not x.startswith("TEST DATA")]
        unverified = [i for c in r.criteria for i in c.items if i.state is State.UNVERIFIED]
        gate_items = {g.id for g in r.gates if g.state != "cleared"}
        if gate_items:
            blockers.append("gates to clear: " + ", ".join(sorted(gate_items)))
        if r.tier == rules.unable_tier and unverified:
            blockers.append("unverified items (verify to raise coverage), heaviest first:")
            for i in sorted(unverified, key=lambda i: (-i.weight, i.id))[:limit]:
                blockers.append("  " + _item_line(i))
    else:
        idx = names.index(r.tier)
        if idx == 0:
            lines.append(f"{r.tier} is the top tier.")
            return "\n".join(lines) + "\n"
        nxt = names[idx - 1]
        blockers = tier_failures(idx - 1, rules, r.score, r.coverage, r.criteria)
    lines.append(f"not {nxt}:")
    lines += [f"  - {b}" for b in blockers]
    gains = item_gains(r)
    if gains:
        lines.append("items not met, by overall points they would add if met:")
        for gain, crit, i in gains[:limit]:
            lines.append(f"  +{gain:<5g} {crit.value}: {_item_line(i)}")
        if len(gains) > limit:
            lines.append(f"  ... and {len(gains) - limit} more (see the rating JSON)")
    return "\n".join(lines) + "\n"


def states_by_criterion(r: Rating) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for c in r.criteria:
        for i in c.items:
            out[c.name.value][i.state.value] = out[c.name.value].get(i.state.value, 0) + 1
    return dict(out)
