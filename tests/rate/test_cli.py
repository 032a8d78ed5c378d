"""`rate explain` on a report produced by the real audit on the project's VM
(tests/rate/data/PROVENANCE.md) plus the labelled test attestations."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from clustergrade.rate.cli import app

from .conftest import DATA

REPORT = str(DATA / "vm-report.json")
ATTEST = str(DATA / "test-attestations.yaml")


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["explain", *args])


def test_explain_text() -> None:
    r = run("--report", REPORT, "--attest", ATTEST)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("Example Test Cloud (TEST DATA) / test-cluster: Unable to rate")
    assert "TEST DATA" in r.output
    # the VM audit really passed these checks
    assert "reliability.gpu-errors" not in r.output.split("items not met")[-1]


def test_explain_json_is_byte_identical_twice() -> None:
    a = run("--report", REPORT, "--attest", ATTEST, "--json", "--profile", "pretraining")
    b = run("--report", REPORT, "--attest", ATTEST, "--json", "--profile", "pretraining")
    assert a.exit_code == 0 and a.output == b.output
    doc = json.loads(a.output)
    assert doc["profile"] == "pretraining" and doc["test_data"] is True
    assert doc["as_of"] == "2026-12-02"  # the audit's date, not the clock's
    items = {i["id"]: i for c in doc["criteria"] for i in c["items"]}
    assert items["reliability.gpu-errors"]["state"] == "met"
    assert items["security.userns-restricted"]["state"] == "partial"  # the VM WARNs
    assert items["reliability.node-sla"]["state"] == "partial"  # 99.5 tester-verified
    assert items["security.slurm-minimum"]["state"] == "unmet"  # version.slurm FAILs on the VM
    assert items["security.soc2-or-iso27001"]["state"] == "met"


def test_report_only() -> None:
    r = run("--report", REPORT)
    assert r.exit_code == 0 and "Unable to rate" in r.output


def test_errors_exit_3_with_the_problem(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "a.yaml"
    bad.write_text(
        "schema: clustergrade.attestations/1\nprovider: p\nattestations:\n  - {field: x.y, value: 1, verified_by: provider, source: {url: 'https://x.invalid'}, date: 2026-01-01}\n"
    )
    r = run("--report", REPORT, "--attest", str(bad))
    assert r.exit_code == 3 and "unknown field 'x.y'" in r.output
    r = run("--report", str(tmp_path / "none.json"))
    assert r.exit_code == 3
    r = run("--report", REPORT, "--profile", "nope")
    assert r.exit_code == 3 and "unknown profile" in r.output


def test_bad_inputs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    junk = tmp_path / "r.json"
    junk.write_text('{"not": "a report"}')
    assert run("--report", str(junk)).exit_code == 3
    r = run("--report", REPORT, "--as-of", "yesterday")
    assert r.exit_code == 3
    r = run("--report", REPORT, "--as-of", "2026-12-05", "--json")
    assert r.exit_code == 0 and '"as_of": "2026-12-05"' in r.output
