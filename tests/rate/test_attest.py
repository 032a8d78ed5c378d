"""The attestation file format: valid files load, bad ones fail with every
problem named."""

from __future__ import annotations

import pytest

from clustergrade.rate.attest import AttestError, load_attestations, parse_attestations
from clustergrade.rate.score import load_criteria

from .conftest import DATA

FIELDS = load_criteria().fields
HEAD = (
    "schema: clustergrade.attestations/1\nprovider: P (TEST DATA)\ntest_data: true\nattestations:\n"
)


def test_the_example_file_loads_and_is_labelled_test_data() -> None:
    doc = load_attestations(DATA / "test-attestations.yaml", FIELDS)
    assert doc.test_data and "TEST DATA" in doc.provider
    assert {a.verified_by for a in doc.attestations} == {"tester", "provider"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "  - {field: security.nope, value: true, verified_by: tester, tester: t, source: {url: 'https://x.invalid'}, date: 2026-01-01}\n",
            "unknown field 'security.nope'",
        ),
        (
            "  - {field: security.soc2_type2, value: 'yes', verified_by: tester, tester: t, source: {url: 'https://x.invalid'}, date: 2026-01-01}\n",
            "expects true or false",
        ),
        (
            "  - {field: reliability.node_sla_pct, value: true, verified_by: tester, tester: t, source: {url: 'https://x.invalid'}, date: 2026-01-01}\n",
            "expects a number in %",
        ),
        (
            "  - {field: security.tenancy_model, value: shared, verified_by: tester, tester: t, source: {url: 'https://x.invalid'}, date: 2026-01-01}\n",
            "expects one of",
        ),
        (
            "  - {field: security.soc2_type2, value: true, verified_by: tester, source: {url: 'https://x.invalid'}, date: 2026-01-01}\n",
            "names the tester",
        ),
        (
            "  - {field: security.soc2_type2, value: true, verified_by: provider, source: {}, date: 2026-01-01}\n",
            "url or a document",
        ),
        (
            "  - {field: security.soc2_type2, value: true, verified_by: provider, source: {url: 'ftp://x'}, date: 2026-01-01}\n",
            "attestations[0].source.url",
        ),
        (
            "  - {field: security.soc2_type2, value: true, verified_by: provider, source: {url: 'https://x.invalid'}}\n",
            "attestations[0].date: Field required",
        ),
        (
            "  - {field: security.soc2_type2, value: true, verified_by: someone, source: {url: 'https://x.invalid'}, date: 2026-01-01}\n",
            "attestations[0].verified_by",
        ),
        (
            "  - {field: security.soc2_type2, value: true, value: false, verified_by: provider, source: {url: 'https://x.invalid'}, date: 2026-01-01}\n",
            "duplicate key 'value'",
        ),
        ("  - [unclosed\n", "not valid YAML"),
    ],
)
def test_bad_files_say_what_is_wrong(body: str, message: str) -> None:
    with pytest.raises(AttestError) as exc:
        parse_attestations(HEAD + body, FIELDS, where="t.yaml")
    assert message in str(exc.value)
    assert str(exc.value).startswith("t.yaml: ")


def test_every_problem_is_listed_at_once() -> None:
    body = (
        "  - {field: a.b, value: 1, verified_by: provider, source: {url: 'https://x.invalid'}, date: 2026-01-01}\n"
        "  - {field: security.soc2_type2, value: 3, verified_by: provider, source: {url: 'https://x.invalid'}, date: 2026-01-01}\n"
    )
    with pytest.raises(AttestError) as exc:
        parse_attestations(HEAD + body, FIELDS)
    assert len(exc.value.problems) == 2


@pytest.mark.parametrize(
    "text", ["", "[]", "42", "schema: other/1\nprovider: p\nattestations: []\n", "\xff\xfe"]
)
def test_not_an_attestation_file(text: str) -> None:
    with pytest.raises(AttestError):
        parse_attestations(text, FIELDS)


def test_unreadable_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "bad.yaml"
    p.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(AttestError, match="cannot read"):
        load_attestations(p, FIELDS)
    with pytest.raises(AttestError, match="cannot read"):
        load_attestations(tmp_path / "missing.yaml", FIELDS)
