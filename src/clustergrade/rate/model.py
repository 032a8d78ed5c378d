"""Schemas of the rating data: criteria and their items, attestation fields,
buyer profiles and tier rules.  All of it is data (``rate/data/*.yaml``), so
the formula in ``score.py`` stays small and the rules can be read and argued
with without reading code."""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clustergrade.results import Criterion, Severity


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class State(StrEnum):
    """What the evidence says about one item."""

    MET = "met"
    PARTIAL = "partial"
    UNMET = "unmet"
    UNVERIFIED = "unverified"
    NOT_APPLICABLE = "not_applicable"


#: Score value of each state; not applicable is left out of the sums.
STATE_VALUE: dict[State, float] = {
    State.MET: 1.0,
    State.PARTIAL: 0.5,
    State.UNMET: 0.0,
    State.UNVERIFIED: 0.0,
}

#: States backed by evidence someone checked.
VERIFIED = frozenset({State.MET, State.PARTIAL, State.UNMET})


class Source(_Model):
    title: str
    url: str
    date: date


class FieldType(StrEnum):
    BOOL = "bool"
    NUMBER = "number"
    STRING = "string"


class AttestField(_Model):
    """One thing a tester or provider can attest (what tests cannot see)."""

    type: FieldType
    description: str
    unit: str | None = None
    #: For strings: the only values accepted.
    choices: list[str] | None = None


class Requirement(_Model):
    """What an attested value must be for the item to be met.

    Numbers: ``min``/``max`` for met, ``partial_min``/``partial_max`` for
    partial (the band between).  Bool/string: ``equals`` or ``one_of``."""

    field: str
    equals: bool | str | None = None
    one_of: list[str] | None = None
    min: float | None = None
    max: float | None = None
    partial_min: float | None = None
    partial_max: float | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Requirement:
        kinds = [
            self.equals is not None,
            self.one_of is not None,
            self.min is not None or self.max is not None,
        ]
        if sum(kinds) != 1:
            raise ValueError(
                f"requirement on {self.field!r}: give exactly one of equals, one_of, min/max"
            )
        if self.partial_min is not None and (self.min is None or self.partial_min > self.min):
            raise ValueError(f"requirement on {self.field!r}: partial_min needs min >= it")
        if self.partial_max is not None and (self.max is None or self.partial_max < self.max):
            raise ValueError(f"requirement on {self.field!r}: partial_max needs max <= it")
        return self


class Evidence(_Model):
    """Where an item's answer comes from: audit checks and/or attestations.

    ``all``: every piece must hold (the worst verified piece decides; an
    unknown piece keeps the item unverified).  ``any``: alternative proofs
    (the best piece decides)."""

    checks: list[str] = Field(default_factory=list)
    attestations: list[Requirement] = Field(default_factory=list)
    combine: Literal["all", "any"] = "all"

    @model_validator(mode="after")
    def _non_empty(self) -> Evidence:
        if not self.checks and not self.attestations:
            raise ValueError("an item needs at least one check or attestation")
        return self


class Item(_Model):
    id: str = Field(pattern=r"^[a-z]+\.[a-z0-9][a-z0-9-]*$")
    title: str
    #: Keys into ``CriteriaFile.sources``.
    sources: list[str] = Field(min_length=1)
    weight: int = Field(1, ge=1, le=3)
    evidence: Evidence
    note: str | None = None


class CriterionSpec(_Model):
    name: Criterion
    description: str
    items: list[Item] = Field(min_length=1)


class CriteriaFile(_Model):
    schema_: Literal["clustergrade.criteria/1"] = Field(alias="schema")
    version: str
    sources: dict[str, Source]
    fields: dict[str, AttestField]
    criteria: list[CriterionSpec]

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @model_validator(mode="after")
    def _consistent(self) -> CriteriaFile:
        names = [c.name for c in self.criteria]
        if sorted(names) != sorted(Criterion) or len(set(names)) != len(names):
            raise ValueError("criteria must list each of the ten criteria exactly once")
        seen: set[str] = set()
        for c in self.criteria:
            for it in c.items:
                if it.id in seen:
                    raise ValueError(f"item id {it.id!r} used twice")
                seen.add(it.id)
                missing = [s for s in it.sources if s not in self.sources]
                if missing:
                    raise ValueError(f"item {it.id}: unknown sources {missing}")
                for req in it.evidence.attestations:
                    f = self.fields.get(req.field)
                    if f is None:
                        raise ValueError(f"item {it.id}: unknown attestation field {req.field!r}")
                    numeric = req.min is not None or req.max is not None
                    if numeric != (f.type is FieldType.NUMBER):
                        raise ValueError(f"item {it.id}: requirement kind does not fit {req.field}")
                    if f.type is FieldType.BOOL and not isinstance(req.equals, bool):
                        raise ValueError(f"item {it.id}: {req.field} is compared with true/false")
                    if req.one_of is not None and not set(req.one_of) <= set(f.choices or ()):
                        raise ValueError(f"item {it.id}: {req.field} one_of outside its choices")
        return self

    def items(self) -> dict[str, tuple[Criterion, Item]]:
        return {it.id: (c.name, it) for c in self.criteria for it in c.items}


class Profile(_Model):
    description: str
    weights: dict[Criterion, float]

    @model_validator(mode="after")
    def _all_ten(self) -> Profile:
        if set(self.weights) != set(Criterion):
            raise ValueError("a profile weighs every one of the ten criteria")
        if any(w < 0 for w in self.weights.values()) or sum(self.weights.values()) <= 0:
            raise ValueError("profile weights are >= 0 and not all zero")
        return self


class Gate(_Model):
    """A hard gate: one failure caps the tier whatever the score.

    ``item``: triggered when the item is unmet; an unverified item keeps the
    gate open (the provider cannot be rated).  ``advisory``: triggered by any
    FAIL result citing an advisory at ``min_severity`` or worse."""

    id: str
    description: str
    kind: Literal["item", "advisory"]
    item: str | None = None
    min_severity: Severity | None = None

    @model_validator(mode="after")
    def _fits_kind(self) -> Gate:
        if (self.kind == "item") != (self.item is not None):
            raise ValueError(f"gate {self.id}: 'item' goes with kind 'item' only")
        if (self.kind == "advisory") != (self.min_severity is not None):
            raise ValueError(f"gate {self.id}: 'min_severity' goes with kind 'advisory' only")
        return self


class Tier(_Model):
    name: str
    #: Overall (profile-weighted) score needed, 0-100.
    min_score: float = Field(ge=0, le=100)
    #: Every criterion's score must reach this (no hiding a gap behind strengths).
    min_criterion_score: float = Field(0, ge=0, le=100)
    #: Overall coverage (0-1) needed for this tier.
    min_coverage: float = Field(0, ge=0, le=1)


class TierRules(_Model):
    schema_: Literal["clustergrade.tiers/1"] = Field(alias="schema")
    version: str
    #: Below this overall coverage (0-1) the answer is "Unable to rate".
    min_coverage: float = Field(ge=0, le=1)
    #: Attestations older than this (relative to the rating date) are stale.
    attestation_max_age_days: int = Field(gt=0)
    #: Best first; the last one has min_score 0 and catches the rest.
    tiers: list[Tier] = Field(min_length=2)
    gated_tier: str
    unable_tier: str
    gates: list[Gate]
    profiles: dict[str, Profile]

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @model_validator(mode="after")
    def _ordered(self) -> TierRules:
        scores = [t.min_score for t in self.tiers]
        if scores != sorted(scores, reverse=True) or scores[-1] != 0:
            raise ValueError("tiers go best first and the last has min_score 0")
        names = {t.name for t in self.tiers}
        if self.gated_tier not in names:
            raise ValueError(f"gated_tier {self.gated_tier!r} is not a tier")
        if self.unable_tier in names:
            raise ValueError("unable_tier is not a scored tier")
        return self
