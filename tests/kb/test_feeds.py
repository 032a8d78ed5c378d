"""Feed parsers on real saved documents, and on hostile input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clustergrade.kb.feeds import FeedError, cvss3_score, parse_date
from clustergrade.kb.feeds.csaf import _bounds, parse_csaf
from clustergrade.kb.feeds.osv import parse_osv

FEEDS = Path(__file__).parent.parent / "fixtures" / "feeds"
CSAF_5659 = FEEDS / "nvidia" / "5659.json"


def test_csaf_5659_gives_the_toolkit_fix() -> None:
    advs = parse_csaf(CSAF_5659.read_bytes(), "5659.json")
    by = {(a.component, a.id): a for a in advs}
    ctk = by[("nvidia-container-toolkit", "CVE-2025-23266")]
    assert [(r.introduced, r.fixed, r.last_affected) for r in ctk.ranges] == [("0", "1.17.8", None)]
    assert ctk.cvss is not None and ctk.cvss.score == 9.0
    assert ctk.cvss.vector == "CVSS:3.1/AV:A/AC:L/PR:L/UI:N/S:C/C:H/I:H/A:H"
    assert ctk.condition == "CDI mode only for versions prior to 1.17.5"
    assert str(ctk.published) == "2025-07-15"
    assert "NVIDIA-5659" in ctk.aliases
    assert by[("gpu-operator", "CVE-2025-23267")].ranges[0].fixed == "25.3.2"
    assert by[("k8s-device-plugin", "CVE-2025-23266")].ranges[0].fixed == "0.17.3"
    assert by[("nvidia-container-toolkit", "CVE-2025-23267")].cvss.score == 8.5  # type: ignore[union-attr]
    # MIG Manager is not a component here: reported, not guessed.
    assert "NVIDIA MIG Manager" in ctk.unmatched


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Product-name prose as NVIDIA writes it (research notes, §1.1).
        ("all driver versions prior to 580.159.03", ("580.159.03", None, None, None)),
        (
            "All versions up to and including 1.17.7 (CDI mode only for versions prior to 1.17.5)",
            (None, "1.17.7", None, "CDI mode only for versions prior to 1.17.5"),
        ),
        ("1.17.8", (None, None, "1.17.8", None)),
        ("all_driver_versions_prior_to_580_159_03", (None, None, None, None)),
    ],
)
def test_csaf_version_prose(text: str, expected: tuple[object, ...]) -> None:
    assert _bounds(text) == expected


def test_csaf_driver_branch_is_the_range_start() -> None:
    # Derived from the real 5659 document: the toolkit row is moved to the
    # driver product layout NVIDIA uses (product Tesla, platform Linux(R580)).
    doc = json.loads(CSAF_5659.read_bytes())
    fam = doc["product_tree"]["branches"][0]["branches"]
    fam[1] = {
        "category": "product_name",
        "name": "Tesla",
        "branches": [
            {
                "category": "platform",
                "name": "Linux(R580)",
                "branches": [
                    {
                        "category": "product_version",
                        "name": "all driver versions prior to 580.159.03",
                        "product": {
                            "name": "all driver versions prior to 580.159.03",
                            "product_id": "linuxr580_tesla_all_driver_versions_prior_to_580_159_03",
                        },
                    },
                    {
                        "category": "product_version",
                        "name": "580.159.03",
                        "product": {
                            "name": "580.159.03",
                            "product_id": "linuxr580_tesla_580_159_03",
                        },
                    },
                ],
            }
        ],
    }
    del fam[2]
    v = doc["vulnerabilities"][0]
    v["product_status"] = {
        "known_affected": ["linuxr580_tesla_all_driver_versions_prior_to_580_159_03"],
        "fixed": ["linuxr580_tesla_580_159_03"],
    }
    v["scores"][0]["products"] = ["linuxr580_tesla_all_driver_versions_prior_to_580_159_03"]
    doc["vulnerabilities"] = [v]
    (adv,) = parse_csaf(json.dumps(doc).encode(), "derived.json")
    assert adv.component == "nvidia-driver"
    assert [(r.introduced, r.fixed) for r in adv.ranges] == [("580", "580.159.03")]


def test_osv_runc_records_give_per_line_fixes() -> None:
    (leaky,) = parse_osv((FEEDS / "osv" / "GHSA-xr7r-f8xq-vfvv.json").read_bytes(), "x")
    assert leaky.component == "runc" and leaky.id == "CVE-2024-21626"
    assert leaky.aliases == ("GHSA-xr7r-f8xq-vfvv",)
    assert [(r.introduced, r.fixed) for r in leaky.ranges] == [("1.0.0-rc93", "1.1.12")]
    assert leaky.cvss is not None and leaky.cvss.score == 8.6
    (console,) = parse_osv((FEEDS / "osv" / "GHSA-qw9x-cqr3-wc7r.json").read_bytes(), "y")
    assert [r.fixed for r in console.ranges] == ["1.2.8", "1.3.3", "1.4.0-rc.3"]
    assert console.cvss is None  # CVSS 4.0 only: no score computed


def test_osv_go_vulndb_custom_ranges() -> None:
    advs = parse_osv((FEEDS / "osv" / "GO-2025-3992.json").read_bytes(), "z")
    by = {a.component: a for a in advs}
    assert set(by) == {"gpu-operator", "k8s-device-plugin", "nvidia-container-toolkit"}
    assert by["gpu-operator"].ranges[0].fixed == "25.3.2"
    assert by["nvidia-container-toolkit"].ranges[0].fixed == "1.17.8"
    assert by["nvidia-container-toolkit"].published is None  # Go DB writes the zero date
    assert "github.com/NVIDIA/mig-parted" in by["gpu-operator"].unmatched


def test_cvss3_scores() -> None:
    assert cvss3_score("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H") == 9.8
    assert cvss3_score("CVSS:3.1/AV:N/AC:L/PR:L/UI:R/S:C/C:H/I:H/A:H") == 9.0
    assert cvss3_score("CVSS:3.1/AV:N/AC:H/PR:L/S:C/C:H/I:H/A:H") is None  # UI missing
    assert cvss3_score("CVSS:4.0/AV:L") is None
    assert parse_date("0001-01-01T00:00:00Z") is None
    assert str(parse_date("2025-07-15T00:00:00Z")) == "2025-07-15"


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400))
def test_hostile_bytes_raise_only_feed_error(raw: bytes) -> None:
    for parser in (parse_csaf, parse_osv):
        try:
            parser(raw, "hostile.json")
        except FeedError:
            pass


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=12), c, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(_json)
def test_hostile_json_raises_only_feed_error(doc: object) -> None:
    raw = json.dumps(doc).encode()
    for parser in (parse_csaf, parse_osv):
        try:
            parser(raw, "hostile.json")
        except FeedError:
            pass


def test_truncated_real_documents_are_refused() -> None:
    for path in (CSAF_5659, FEEDS / "osv" / "GHSA-qw9x-cqr3-wc7r.json"):
        raw = path.read_bytes()
        with pytest.raises(FeedError, match="hostile"):
            (parse_csaf if path == CSAF_5659 else parse_osv)(raw[: len(raw) // 2], "hostile")


def _paths(obj: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


_REAL = [CSAF_5659, FEEDS / "osv" / "GHSA-qw9x-cqr3-wc7r.json", FEEDS / "osv" / "GO-2025-3992.json"]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_REAL), st.data(), _json)
def test_mutated_real_documents_raise_only_feed_error(
    path: Path, data: st.DataObject, value: object
) -> None:
    # Derived from the real fixtures: one node anywhere in the tree replaced.
    doc = json.loads(path.read_bytes())
    where = data.draw(st.sampled_from(_paths(doc)[1:]))
    node = doc
    for k in where[:-1]:
        node = node[k]  # type: ignore[index]
    node[where[-1]] = value  # type: ignore[index]
    parser = parse_csaf if path == CSAF_5659 else parse_osv
    try:
        parser(json.dumps(doc).encode(), "mutated.json")
    except FeedError:
        pass
