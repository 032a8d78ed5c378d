"""Version schemes: ordering per scheme, and garbage is None (UNKNOWN), never
a version that could pass."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clustergrade.versions import SCHEMES, parse

ORDERED = {
    "nvdriver": ["535.309.01", "570.211.01", "580.95.05", "580.126.09", "580.159.03", "595.71.05"],
    "slurm": ["22.05.8", "22.05.11", "23.11.0rc1", "23.11.0", "23.11.1", "24.05.8", "25.11.8"],
    "mlnxfw": ["28.35.4030", "28.39.3560", "28.39.5050", "28.43.3608"],
    "semver": [
        "1.1.11",
        "1.1.12",
        "1.2.8",
        "1.3.0-rc.1",
        "1.3.3",
        "1.4.0-rc.2",
        "1.4.0-rc.3",
        "1.4.3",
    ],
    "dpkg": ["0.5.15-4", "0.5.15-4ubuntu0.1", "0.5.18-1", "1:0.1-1"],
    "rpm": ["0.5.15-1.el9", "0.5.18-1.el9"],
    "numeric": ["12.4", "12.4.131", "13.0", "13.1"],
}


@pytest.mark.parametrize("scheme", sorted(ORDERED))
def test_ordering(scheme: str) -> None:
    vs = [parse(scheme, t) for t in ORDERED[scheme]]
    assert all(v is not None for v in vs), ORDERED[scheme]
    for a, b in zip(vs, vs[1:], strict=False):
        assert a is not None and b is not None
        assert a < b, f"{a} < {b}"


def test_lines() -> None:
    assert parse("nvdriver", "580.126.09").line == "580"  # type: ignore[union-attr]
    assert parse("slurm", "24.05.8").line == "24.05"  # type: ignore[union-attr]
    fw = parse("mlnxfw", "28.39.3560")
    assert fw is not None and fw.line == "39" and fw.family == 28
    assert parse("mlnxfw", "xx.39.3560") == fw  # bulletins omit the family


@pytest.mark.parametrize(
    ("scheme", "text"),
    [
        ("nvdriver", "N/A"),
        ("nvdriver", "580.x"),
        ("slurm", "latest"),
        ("semver", "1.2.3.4.5"),
        ("numeric", "13.1-beta"),
        ("mlnxfw", "28.39"),
        ("dpkg", ""),
        ("nvdriver", "9" * 200),
    ],
)
def test_garbage_is_unknown(scheme: str, text: str) -> None:
    assert parse(scheme, text) is None


def test_tolerated_spellings() -> None:
    assert parse("semver", "v1.31.2") == parse("semver", "1.31.2")
    assert parse("semver", "27.1.1+incompatible") is not None
    assert parse("slurm", "slurm 22.05.8") == parse("slurm", "22.05.8")
    assert parse("slurm", "22.05.8-4+deb12u3") is not None


def test_unknown_scheme_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        parse("calver", "2026.1")


@pytest.mark.parametrize("scheme", SCHEMES)
@given(text=st.text(max_size=60))
def test_never_raises(scheme: str, text: str) -> None:
    v = parse(scheme, text)
    if v is not None:
        assert v == parse(scheme, text)


@given(
    a=st.lists(st.integers(0, 999), min_size=2, max_size=3),
    b=st.lists(st.integers(0, 999), min_size=2, max_size=3),
)
def test_numeric_matches_integer_tuples(a: list[int], b: list[int]) -> None:
    va = parse("numeric", ".".join(map(str, a)))
    vb = parse("numeric", ".".join(map(str, b)))
    assert va is not None and vb is not None
    pad = lambda t: tuple(t) + (0,) * (6 - len(t))  # noqa: E731
    assert (va < vb) == (pad(a) < pad(b))
