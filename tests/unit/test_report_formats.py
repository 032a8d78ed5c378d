"""Renderers: every format derives from the same Report, stamps versions,
and escapes hostile strings."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest

from clustergrade.audit import make_plan, snapshot_of
from clustergrade.facts.node import NodeFacts, Target
from clustergrade.kb.loader import load
from clustergrade.report.formats import Format, render
from clustergrade.report.model import Report, build_report
from clustergrade.results import Criterion, Result, Severity, Status

HOSTILE = '<script>alert("x")</script> & \' " \u202e'
SCHEMA = Path(__file__).parents[2] / "docs" / "report.schema.json"


def _report() -> Report:
    kb = load()
    plan = make_plan(kb)
    t = datetime(2026, 11, 2, tzinfo=UTC)
    nodes = [NodeFacts(hostname=f"gpu-{i}", collected_at=t) for i in (1, 2)]
    snap = snapshot_of(nodes, Target(kind="local", name=HOSTILE))
    results = [
        Result(
            check_id="kb.fresh",
            node="gpu-1",
            status=s,
            severity=Severity.HIGH,
            criterion=Criterion.SECURITY,
            message=f"{s.value} {HOSTILE}",
            subject=HOSTILE,
            observed="580.126.09" if s is Status.FAIL else "580.159.03",
            expected=">= 580.159.03",
            advisories=["CVE-2026-24187"] if s is Status.FAIL else [],
        )
        for s in Status
    ] + [
        Result(
            check_id="kb.fresh",
            node="gpu-2",
            status=Status.PASS,
            severity=Severity.HIGH,
            criterion=Criterion.SECURITY,
            message="ok",
            observed="580.159.03",
        )
    ]
    return build_report(
        run_id="r1",
        snapshot=snap,
        results=results,
        checks=plan.checks,
        kb=kb,
        profiles=[],
        started_at=t,
        finished_at=t,
    )


def test_json_matches_published_schema() -> None:
    doc = json.loads(render(_report(), Format.JSON))
    assert doc["schema"] == "clustergrade.report/1"
    assert doc["tool"]["version"] and doc["kb"]["digest"]
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))


def test_published_schema_is_current() -> None:
    from clustergrade.report.schema import report_schema

    assert json.loads(SCHEMA.read_text()) == report_schema(), (
        "docs/report.schema.json is stale: run `clustergrade schema report > docs/report.schema.json`"
    )


def test_json_round_trips_into_the_model() -> None:
    rep = _report()
    assert Report.model_validate_json(render(rep, Format.JSON)) == rep


def test_summary_and_spread() -> None:
    rep = _report()
    assert rep.summary.counts[Status.FAIL] == 1 and rep.summary.counts[Status.PASS] == 2
    assert rep.summary.worst is Status.FAIL
    spread = {s.check_id: s.values for s in rep.spread}
    assert spread["kb.fresh"]["580.159.03"] == ["gpu-1", "gpu-2"]
    assert rep.results[0].status is Status.FAIL  # worst first


def test_junit_is_valid_xml_with_the_right_counts() -> None:
    root = ET.fromstring(render(_report(), Format.JUNIT))
    assert root.tag == "testsuites"
    assert root.get("failures") == "1" and root.get("errors") == "1" and root.get("skipped") == "1"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"gpu-1", "gpu-2"}
    cases = suites["gpu-1"].findall("testcase")
    assert len(cases) == 5
    assert any(c.find("failure") is not None for c in cases)
    assert any((c.findtext("system-out") or "").startswith("WARN") for c in cases)
    props = {p.get("name"): p.get("value") for p in suites["gpu-1"].iter("property")}
    assert props["schema"] == "clustergrade.report/1"


def test_sarif_structure() -> None:
    doc = json.loads(render(_report(), Format.SARIF))
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    assert run["tool"]["driver"]["name"] == "clustergrade"
    rule_ids = {r["id"] for r in run["tool"]["driver"]["rules"]}
    kinds = {r["properties"]["status"]: r["kind"] for r in run["results"]}
    assert kinds == {
        "PASS": "pass",
        "SKIP": "notApplicable",
        "ERROR": "open",
        "FAIL": "fail",
        "WARN": "fail",
    }
    for r in run["results"]:
        assert r["ruleId"] in rule_ids
        assert r["level"] in ("none", "note", "warning", "error")
        assert run["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] == r["ruleId"]


def test_html_escapes_everything_and_needs_no_network() -> None:
    html = render(_report(), Format.HTML)
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert" in html
    assert "http://" not in html.replace("http://www.w3.org", "")
    assert "src=" not in html and "<link" not in html
    assert "clustergrade.report/1" in html


@pytest.mark.parametrize("verbosity", [0, 1, 2, 3])
def test_plain_text_levels(verbosity: int) -> None:
    text = render(_report(), Format.TEXT, verbosity)
    assert "FAIL" in text and "kb.fresh" in text
    assert any(line.startswith("SKIP ") for line in text.splitlines()) == (verbosity >= 1)
    assert ("fix:" in text) == (verbosity >= 2)
    assert ("why:" in text) == (verbosity >= 3)
    assert "\x1b[" not in text  # plain: no terminal escapes
