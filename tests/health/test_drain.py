"""--drain runs exactly one scontrol argv through the command seam, says so
first, and never runs without --drain or on a healthy node."""

from __future__ import annotations

import io

import pytest

from clustergrade.health.cli import health_main
from clustergrade.health.evaluate import HealthOptions
from clustergrade.seam import CommandResult, RecordingHost
from tests.health.nodes import node, xid79_log

REASON = "reason=clustergrade: Xid 79 on GPU 0000:91:00: RESTART_BM (+3 more)"


def scontrol(name: str) -> tuple[str, ...]:
    return ("scontrol", "update", f"nodename={name}", "state=drain", REASON)


def recorded(host: RecordingHost) -> list[tuple[str, ...]]:
    return [argv for argv in host.recording.commands if argv[0] == "scontrol"]


def run(
    dmesg: bytes | None, drain: bool, name: str | None = "gpu-node-01", ok: bool = True
) -> tuple[int, str, str, RecordingHost]:
    argv = scontrol(name or "gpu-node-01")
    answer = CommandResult(
        argv,
        0 if ok else 1,
        stderr=b"" if ok else b"slurm_update error: Invalid node name specified\n",
    )
    host = RecordingHost(node(dmesg=dmesg, commands={argv: answer}))
    out, err = io.StringIO(), io.StringIO()
    code = health_main(
        HealthOptions(mode="slurm", use_state=False, drain=drain, node_name=name),
        host,
        out=out,
        err=err,
    )
    return code, out.getvalue(), err.getvalue(), host


def test_drain_runs_the_exact_scontrol_argv_and_says_so_first() -> None:
    code, out, _, host = run(xid79_log(), drain=True)
    assert code == 1
    assert recorded(host) == [scontrol("gpu-node-01")]
    lines = out.splitlines()
    assert lines[0].startswith("clustergrade health: UNHEALTHY: Xid 79")
    assert lines[1] == "clustergrade health: draining gpu-node-01: " + " ".join(
        scontrol("gpu-node-01")
    )
    assert lines[2].startswith("  FAIL health.xid-new")


def test_no_drain_without_the_flag() -> None:
    code, out, _, host = run(xid79_log(), drain=False)
    assert code == 1
    assert recorded(host) == []
    assert "draining" not in out


def test_no_drain_when_healthy() -> None:
    code, out, _, host = run(None, drain=True)
    assert code == 0
    assert recorded(host) == []


def test_node_name_from_slurmd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURMD_NODENAME", "gpu-node-01")
    code, _, _, host = run(xid79_log(), drain=True, name=None)
    assert recorded(host) == [scontrol("gpu-node-01")]


def test_failed_drain_is_reported_and_still_unhealthy() -> None:
    code, _, err, host = run(xid79_log(), drain=True, ok=False)
    assert code == 1
    assert "drain failed" in err and "Invalid node name" in err


def test_healthcheck_wrapper_script(tmp_path: object) -> None:
    import os
    import subprocess
    from pathlib import Path

    from clustergrade.health.slurm import healthcheck_script

    text = healthcheck_script(["/bin/echo", "it's"], ["--mode", "slurm", "--node-name", "gpu 01"])
    assert text.startswith("#!/bin/sh\n")
    script = Path(str(tmp_path)) / "hc"
    script.write_text(text)
    os.chmod(script, 0o755)
    out = subprocess.run([str(script), "--extra"], capture_output=True, text=True, timeout=10)
    assert out.stdout == "it's --mode slurm --node-name gpu 01 --extra\n"
    with pytest.raises(ValueError):
        healthcheck_script([])
