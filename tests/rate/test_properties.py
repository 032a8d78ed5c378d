"""Properties of the formula on random evidence over the real catalogue."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from clustergrade.rate.model import Requirement
from clustergrade.rate.score import RatingInput, load_criteria, rate, rating_json
from clustergrade.results import Status

from .conftest import AS_OF, att, res

CRIT = load_criteria()
CHECKS = sorted({c for _, it in CRIT.items().values() for c in it.evidence.checks})
REQS: dict[str, Requirement] = {
    r.field: r for _, it in CRIT.items().values() for r in it.evidence.attestations
}
FIELDS = sorted(REQS)
NODES = ("n1", "n2", "n3")


def _value(field: str) -> st.SearchStrategy[object]:
    f = CRIT.fields[field]
    if f.type.value == "bool":
        return st.booleans()
    if f.type.value == "number":
        return st.floats(min_value=0, max_value=20000, allow_nan=False)
    return st.sampled_from(f.choices or ["x"])


results_st = st.lists(
    st.tuples(st.sampled_from(CHECKS), st.sampled_from(NODES), st.sampled_from(list(Status))),
    max_size=60,
)
atts_st = st.lists(
    st.sampled_from(FIELDS).flatmap(
        lambda f: st.tuples(st.just(f), _value(f), st.sampled_from(["tester", "provider"]))
    ),
    max_size=40,
)


def build(
    results: list[tuple[str, str, Status]], atts: list[tuple[str, object, str]]
) -> RatingInput:
    return RatingInput(
        provider="t",
        as_of=AS_OF,
        nodes=NODES,
        results=tuple(res(c, n, s) for c, n, s in results),
        checks_run=frozenset(CHECKS),
        attestations=tuple(att(f, v, w) for f, v, w in atts),  # type: ignore[arg-type]
    )


def meeting(req: Requirement) -> object:
    if req.equals is not None:
        return req.equals
    if req.one_of is not None:
        return req.one_of[0]
    return req.min if req.min is not None else req.max


def scores(inp: RatingInput, profile: str) -> tuple[float, dict[str, float | None]]:
    r = rate(inp, profile=profile)
    return r.score, {c.name.value: c.score for c in r.criteria}


def coverages(inp: RatingInput) -> tuple[float, dict[str, float | None]]:
    r = rate(inp)
    return r.coverage, {c.name.value: c.coverage for c in r.criteria}


def not_lower(
    before: tuple[float, dict[str, float | None]], after: tuple[float, dict[str, float | None]]
) -> None:
    assert after[0] >= before[0]
    for k, v in before[1].items():
        if v is not None:
            assert after[1][k] is not None and after[1][k] >= v, k  # type: ignore[operator]


PROFILES = st.sampled_from(["balanced", "pretraining", "inference", "rl"])


@settings(max_examples=60, deadline=None)
@given(results_st, atts_st, st.sampled_from(FIELDS), PROFILES)
def test_a_verified_met_attestation_never_lowers_a_score(results, atts, field, profile) -> None:  # type: ignore[no-untyped-def]
    before = build(results, atts)
    after = replace(before, attestations=before.attestations + (att(field, meeting(REQS[field])),))  # type: ignore[arg-type]
    not_lower(scores(before, profile), scores(after, profile))


@settings(max_examples=60, deadline=None)
@given(results_st, atts_st, st.data(), PROFILES)
def test_a_result_turned_pass_never_lowers_a_score(results, atts, data, profile) -> None:  # type: ignore[no-untyped-def]
    if not results:
        results = [(CHECKS[0], "n1", Status.ERROR)]
    i = data.draw(st.integers(0, len(results) - 1))
    better = list(results)
    better[i] = (results[i][0], results[i][1], Status.PASS)
    not_lower(scores(build(results, atts), profile), scores(build(better, atts), profile))


@settings(max_examples=60, deadline=None)
@given(results_st, atts_st, st.data())
def test_removing_evidence_never_raises_coverage(results, atts, data) -> None:  # type: ignore[no-untyped-def]
    before = coverages(build(results, atts))
    if results and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(results) - 1))
        results = results[:i] + results[i + 1 :]
    elif atts:
        i = data.draw(st.integers(0, len(atts) - 1))
        atts = atts[:i] + atts[i + 1 :]
    after = coverages(build(results, atts))
    assert after[0] <= before[0]
    for k, v in after[1].items():
        if v is not None and before[1][k] is not None:
            assert v <= before[1][k], k  # type: ignore[operator]


@settings(max_examples=30, deadline=None)
@given(results_st, atts_st, PROFILES)
def test_same_evidence_gives_byte_identical_json(results, atts, profile) -> None:  # type: ignore[no-untyped-def]
    assert rating_json(rate(build(results, atts), profile=profile)) == rating_json(
        rate(build(results, atts), profile=profile)
    )
