"""The command line, run as a user runs it: a real process, real exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "clustergrade.cli"]


def cg(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture()
def runs(tmp_path: Path) -> Path:
    return tmp_path / "runs"


def test_audit_this_machine_saves_a_run_and_prints_plain_text(runs: Path) -> None:
    p = cg("audit", "--runs-dir", str(runs))
    assert p.returncode == 0, p.stderr
    assert "\x1b[" not in p.stdout  # a pipe gets plain text
    assert p.stdout.startswith("clustergrade ")
    (run_dir,) = list(runs.iterdir())
    assert (run_dir / "facts.json").is_file() and (run_dir / "report.json").is_file()
    listed = cg("runs", "list", "--runs-dir", str(runs), "--json")
    assert json.loads(listed.stdout)[0]["id"] == run_dir.name


@pytest.mark.parametrize("fmt", ["json", "junit", "sarif", "html", "text"])
def test_every_format_to_a_file(runs: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"report.{fmt}"
    p = cg("audit", "--runs-dir", str(runs), "--format", fmt, "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert out.stat().st_size > 200
    assert p.stdout == ""


def test_rejudge_saved_facts_offline_gives_the_same_results(runs: Path) -> None:
    assert cg("audit", "--runs-dir", str(runs)).returncode == 0
    (run_dir,) = list(runs.iterdir())
    first = json.loads((run_dir / "report.json").read_text())
    again = cg("audit", "--facts", str(run_dir / "facts.json"), "--no-save", "-f", "json")
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)

    def strip(rep: dict[str, list[dict[str, str]]]) -> list[tuple[str, ...]]:
        return [(r["check_id"], r["node"], r["status"], r["message"]) for r in rep["results"]]

    assert strip(first) == strip(second)


def test_capture_then_judge_elsewhere(runs: Path, tmp_path: Path) -> None:
    cap = tmp_path / "node.tar.gz"
    p = cg("capture", "-o", str(cap))
    assert p.returncode == 0, p.stderr
    assert "commands" in p.stderr
    live = json.loads(cg("audit", "--no-save", "-f", "json").stdout)
    replay = cg("audit", "--from-capture", str(cap), "--no-save", "-f", "json")
    assert replay.returncode == 0, replay.stderr
    rep = json.loads(replay.stdout)
    assert rep["run"]["target"]["kind"] == "capture"
    live_ids = {(r["check_id"], r["subject"]) for r in live["results"]}
    rep_ids = {(r["check_id"], r["subject"]) for r in rep["results"]}
    assert live_ids == rep_ids


def test_fail_on_policy(runs: Path, tmp_path: Path) -> None:
    # A snapshot of facts collected long after the knowledge base edition: kb.fresh warns.
    snap = {
        "schema": "clustergrade.facts/1",
        "tool_version": "0",
        "created_at": "2030-01-01T00:00:00Z",
        "target": {"kind": "local", "name": "n1"},
        "nodes": [{"hostname": "n1", "collected_at": "2030-01-01T00:00:00Z"}],
    }
    f = tmp_path / "facts.json"
    f.write_text(json.dumps(snap))
    base = ["audit", "--facts", str(f), "--no-save", "--check", "kb.fresh"]
    assert cg(*base).returncode == 0
    assert cg(*base, "--fail-on", "fail").returncode == 0
    assert cg(*base, "--fail-on", "warn").returncode == 1


@pytest.mark.parametrize(
    "args",
    [
        ["audit", "--profile", "nonsense"],
        ["audit", "--fail-on", "sometimes"],
        ["audit", "--local", "--facts", "x.json"],
        ["audit", "--check", "no.such-check"],
        ["no-such-command"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    p = cg(*args, "--runs-dir", "/nonexistent") if args[0] == "audit" else cg(*args)
    assert p.returncode == 2, (p.returncode, p.stderr)


@pytest.mark.parametrize("content", [b"", b"garbage", b"\x1f\x8b\x08\x00broken"])
def test_unreadable_capture_exits_3_with_a_reason(tmp_path: Path, content: bytes) -> None:
    cap = tmp_path / "bad.tar.gz"
    cap.write_bytes(content)
    p = cg("audit", "--from-capture", str(cap), "--no-save")
    assert p.returncode == 3
    assert "bad.tar.gz" in p.stderr


def test_corrupt_snapshot_exits_3(tmp_path: Path) -> None:
    f = tmp_path / "facts.json"
    f.write_text('{"schema": "clustergrade.facts/1", "nodes": [')
    p = cg("audit", "--facts", str(f), "--no-save")
    assert p.returncode == 3 and "not JSON" in p.stderr


def test_broken_knowledge_base_exits_3(tmp_path: Path) -> None:
    import shutil

    from clustergrade.kb.loader import shipped_dir

    kb = tmp_path / "kb"
    shutil.copytree(shipped_dir(), kb)
    (kb / "meta.yaml").write_text("schema: clustergrade.kb/1\ndate: not-a-date\n")
    p = cg("audit", "--kb", str(kb), "--no-save")
    assert p.returncode == 3 and "meta.yaml" in p.stderr


def test_report_of_a_saved_run(runs: Path, tmp_path: Path) -> None:
    assert cg("audit", "--runs-dir", str(runs)).returncode == 0
    out = tmp_path / "r.html"
    p = cg("report", "latest", "--runs-dir", str(runs), "-f", "html", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert "<html" in out.read_text()
    assert cg("report", "nope", "--runs-dir", str(runs)).returncode == 3


def test_checks_and_kb_listings() -> None:
    p = cg("checks", "list", "--json")
    checks = json.loads(p.stdout)
    assert all(c["rationale"] and c["remediation"] for c in checks)
    sec = json.loads(cg("checks", "list", "--json", "--profile", "security").stdout)
    assert 0 < len(sec) <= len(checks)
    info = json.loads(cg("kb", "show", "--json").stdout)
    assert info["edition"] and info["digest"]


def test_ctrl_c_mid_collection_keeps_what_was_collected(runs: Path, tmp_path: Path) -> None:
    # /etc/os-release under --root is a FIFO nobody writes: its reader hangs
    # like a read from a dead NFS mount would.
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    os.mkfifo(root / "etc" / "os-release")
    proc = subprocess.Popen(
        [*CLI, "audit", "--root", str(root), "--runs-dir", str(runs), "-f", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    out, errtext = proc.communicate(timeout=30)
    assert proc.returncode == 130, errtext
    rep = json.loads(out)
    assert rep["run"]["interrupted"] is True
    (run_dir,) = list(runs.iterdir())
    facts = json.loads((run_dir / "facts.json").read_text())
    assert facts["interrupted"] is True
    node = facts["nodes"][0]
    assert node["collectors"]["os"]["status"] == "skipped"
    assert any(run["status"] == "ok" for run in node["collectors"].values())


def test_check_catalogue_doc_is_current() -> None:
    doc = Path(__file__).parents[2] / "docs" / "checks.md"
    p = cg("checks", "list", "--markdown")
    assert p.returncode == 0
    assert doc.read_text() == p.stdout, (
        "docs/checks.md is stale: run `clustergrade checks list --markdown > docs/checks.md`"
    )
