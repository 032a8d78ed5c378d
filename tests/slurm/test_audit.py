"""`clustergrade audit --slurm` end to end on a real local Slurm cluster
(tools/slurm-local: real slurmctld + one slurmd per node, each node in its own
UTS + mount namespace).  Skips when this machine cannot host the cluster
(not root, packages missing: the launcher's exit code 3).

How a node is made different from the others, honestly: in the launcher's
``ns`` mode every slurmd lives in its own mount namespace (propagation
private), and job steps inherit it.  Bind-mounting another os-release over
/etc/os-release *inside one node's namespace* (nsenter -t <slurmd pid> -m)
changes what that node's collector really reads, exactly as a drifted node
would, without any test hook in clustergrade; the host's file is untouched.
The replacement file is this machine's /etc/os-release with the version
fields changed to Debian 11.

A hung collector is a ``--node-python`` wrapper that sleeps on one node
(``hostname`` inside a step is the node's name) and execs the real Python on
the others.  A dead node is ``slurm-local stop-node`` (slurmd killed).

Clusters come from tests.slurm.cluster.launch_cluster (which skips when not
root or the packages cannot be had).  One at a time: the module's manager
stops the running cluster before starting one with other settings, and its
clusters are gone before the session-wide ``slurm_cluster`` of
test_launcher.py starts.  Their own node prefix (ca1..ca4) and auto-picked
ports keep them apart from any other launcher run.  The default
SlurmdTimeout (60 s) is kept on purpose: a stopped slurmd still looks IDLE
to the controller, so the audit itself must time the node out.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.slurm.cluster import launch_cluster

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "tools" / "slurm-local" / "slurm-local"
PREFIX = "ca"
NODES = [f"{PREFIX}{i}" for i in range(1, 5)]
NODE_TIMEOUT = 12
HARDENED = "accounts,jobs,usage,users"


class Cluster:
    """One running launcher cluster (tests.slurm.cluster) and how to audit it."""

    def __init__(self, stack: ExitStack, settings: dict[str, str]) -> None:
        self.settings = settings
        knobs = {"SLURM_LOCAL_NODES": str(len(NODES)), "SLURM_LOCAL_NODE_PREFIX": PREFIX}
        running = stack.enter_context(launch_cluster({**knobs, **settings}))
        self.env = dict(running.env)
        self.dir = running.directory

    def launcher(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(LAUNCHER), *args, str(self.dir)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def stop(self) -> None:
        self.launcher("stop")

    def slurmd_pid(self, node: str) -> int:
        for line in (self.dir / "pids").read_text().splitlines():
            name, _, pid = line.partition(" ")
            if name == f"slurmd:{node}":
                return int(pid)
        raise LookupError(node)

    def mode(self) -> str:
        env = (self.dir / "launcher.env").read_text()
        for line in env.splitlines():
            if line.startswith("mode="):
                return line.partition("=")[2].strip("'\"")
        return "unknown"

    def squeue_names(self, job_name: str) -> list[str]:
        out = subprocess.run(
            ["squeue", "-h", f"--name={job_name}", "-o", "%i %N %T"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return [line for line in out.stdout.splitlines() if line.strip()]

    def audit(self, tmp: Path, *args: str, timeout: float = 180) -> Audit:
        runs = tmp / "runs"
        argv = [sys.executable, "-m", "clustergrade.cli", "audit", "--slurm", "-f", "json"]
        argv += ["--runs-dir", str(runs), "--node-timeout", str(NODE_TIMEOUT), *args]
        t0 = time.monotonic()
        proc = subprocess.run(
            argv, env=self.env, capture_output=True, text=True, timeout=timeout, cwd=ROOT
        )
        return Audit(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - t0, runs)


class Audit:
    def __init__(self, rc: int, out: str, err: str, wall: float, runs: Path) -> None:
        self.rc, self.out, self.err, self.wall, self.runs = rc, out, err, wall, runs

    @property
    def report(self) -> dict[str, Any]:
        assert self.out.strip(), self.err[-2000:]
        data: dict[str, Any] = json.loads(self.out)
        return data

    def facts(self) -> dict[str, Any]:
        found = sorted(self.runs.glob("*/facts.json"))
        assert found, f"no facts.json under {self.runs}: {self.err[-1500:]}"
        data: dict[str, Any] = json.loads(found[-1].read_text())
        return data

    def results(self, check_id: str) -> list[dict[str, Any]]:
        return [r for r in self.report["results"] if r["check_id"] == check_id]

    def node_errors(self) -> dict[str, str]:
        return {
            r["node"]: r["message"]
            for r in self.results("node.collected")
            if r["status"] == "ERROR"
        }


class Manager:
    """Hands out a cluster with given settings, stopping the previous one first."""

    def __init__(self) -> None:
        self.current: Cluster | None = None
        self._stack = ExitStack()

    def get(self, **settings: str) -> Cluster:
        if self.current is not None and self.current.settings == settings:
            return self.current
        self.close()
        self.current = Cluster(self._stack, settings)
        return self.current

    def close(self) -> None:
        self.current = None
        self._stack.close()


@pytest.fixture(scope="module")
def clusters() -> Iterator[Manager]:
    mgr = Manager()
    try:
        yield mgr
    finally:
        mgr.close()


@pytest.fixture
def insecure(clusters: Manager) -> Cluster:
    # Short SlurmdTimeout is not set: a stopped slurmd must still look IDLE to
    # the controller, so the audit really has to time the node out itself.
    return clusters.get()


def _wrapper(tmp: Path, hang_on: str) -> Path:
    script = tmp / "node-python"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$(hostname)" = "{hang_on}" ]; then exec sleep 600; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    script.chmod(0o755)
    return script


def test_every_node_audited_and_drift_in_spread(insecure: Cluster, tmp_path: Path) -> None:
    if insecure.mode() == "dashN":
        pytest.skip("nodes share one mount namespace (dashN mode): no per-node os-release")
    drifted = NODES[2]
    release = tmp_path / "os-release"
    text = Path("/etc/os-release").read_text()
    lines = []
    for line in text.splitlines():
        key = line.partition("=")[0]
        lines.append(
            {
                "PRETTY_NAME": 'PRETTY_NAME="Debian GNU/Linux 11 (bullseye)"',
                "VERSION_ID": 'VERSION_ID="11"',
                "VERSION": 'VERSION="11 (bullseye)"',
                "VERSION_CODENAME": "VERSION_CODENAME=bullseye",
            }.get(key, line)
        )
    release.write_text("\n".join(lines) + "\n")
    pid = insecure.slurmd_pid(drifted)
    mount = ["nsenter", "-t", str(pid), "-m"]
    subprocess.run([*mount, "mount", "--bind", str(release), "/etc/os-release"], check=True)
    try:
        audit = insecure.audit(tmp_path, "--no-probes")
    finally:
        subprocess.run([*mount, "umount", "/etc/os-release"], check=False)
    assert Path("/etc/os-release").read_text() == text, "the host's os-release changed"
    assert audit.rc in (0, 1), audit.err[-2000:]
    facts = audit.facts()
    assert sorted(n["hostname"] for n in facts["nodes"]) == NODES
    assert all(n["failure"] is None for n in facts["nodes"]), facts["nodes"]
    assert audit.report["run"]["node_count"] == 4
    os_names = {n["hostname"]: n["os"]["pretty_name"] for n in facts["nodes"]}
    assert os_names[drifted] == "Debian GNU/Linux 11 (bullseye)"
    assert len({os_names[n] for n in NODES if n != drifted}) == 1
    spread = {s["check_id"]: s["values"] for s in audit.report["spread"]}
    assert "host.os-supported" in spread, spread
    assert spread["host.os-supported"]["Debian GNU/Linux 11 (bullseye)"] == [drifted]
    uniform = [r for r in audit.results("fleet.uniform") if r["subject"] == "operating system"]
    assert [r["status"] for r in uniform] == ["WARN"]
    assert drifted in uniform[0]["message"]


def test_insecure_config_fails_private_data(insecure: Cluster, tmp_path: Path) -> None:
    audit = insecure.audit(tmp_path, "--no-probes")
    assert [r["status"] for r in audit.results("slurm.private-data")] == ["FAIL"]
    assert [r["status"] for r in audit.results("isolation.slurm-jobs-visible")] == ["FAIL"]


def test_hung_collector_is_an_error_row(insecure: Cluster, tmp_path: Path) -> None:
    hung = NODES[1]
    audit = insecure.audit(tmp_path, "--no-probes", "--node-python", str(_wrapper(tmp_path, hung)))
    assert audit.wall <= NODE_TIMEOUT + 10, audit.wall
    errors = audit.node_errors()
    assert set(errors) == {hung}, errors
    assert "no answer within" in errors[hung]
    facts = audit.facts()
    ok = sorted(n["hostname"] for n in facts["nodes"] if n["failure"] is None)
    assert ok == [n for n in NODES if n != hung]
    job = audit.report["run"]["target"]["details"]["job_name"]
    _no_steps_left(insecure, job)


def test_ctrl_c_keeps_what_arrived(insecure: Cluster, tmp_path: Path) -> None:
    hung = NODES[0]
    runs = tmp_path / "runs"
    argv = [sys.executable, "-m", "clustergrade.cli", "audit", "--slurm", "-f", "json"]
    argv += ["--runs-dir", str(runs), "--node-timeout", "120", "--no-probes"]
    argv += ["--node-python", str(_wrapper(tmp_path, hung))]
    err_path = tmp_path / "stderr"
    with err_path.open("w") as err:
        proc = subprocess.Popen(
            argv, env=insecure.env, stdout=subprocess.PIPE, stderr=err, text=True, cwd=ROOT
        )
    try:
        job = _wait_for_job_name(err_path, proc)
        # Interrupt once only the hung node's step is left running.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            rows = insecure.squeue_names(job)
            if rows and all(hung in r for r in rows):
                break
            time.sleep(0.3)
        else:
            raise AssertionError(f"steps never narrowed to {hung}: {rows}")
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err_path.read_text()[-2000:]
    found = sorted(runs.glob("*/facts.json"))
    assert found, err_path.read_text()[-2000:]
    facts = json.loads(found[-1].read_text())
    assert facts["interrupted"] is True
    collected = sorted(n["hostname"] for n in facts["nodes"] if n["failure"] is None)
    assert collected == [n for n in NODES if n != hung]
    _no_steps_left(insecure, job)


def test_stopped_slurmd_is_an_error_row(insecure: Cluster, tmp_path: Path) -> None:
    dead = NODES[3]
    stopped = insecure.launcher("stop-node", dead)
    assert stopped.returncode == 0, stopped.stderr
    try:
        audit = insecure.audit(tmp_path, "--no-probes")
    finally:
        insecure.launcher("start-node", dead)
    assert audit.wall <= NODE_TIMEOUT + 10, audit.wall
    errors = audit.node_errors()
    assert set(errors) == {dead}, errors
    ok = sorted(n["hostname"] for n in audit.facts()["nodes"] if n["failure"] is None)
    assert ok == NODES[:3]


def test_hardened_config_passes_private_data(clusters: Manager, tmp_path: Path) -> None:
    hardened = clusters.get(SLURM_LOCAL_PRIVATE_DATA=HARDENED)
    audit = hardened.audit(tmp_path, "--no-probes")
    assert [r["status"] for r in audit.results("slurm.private-data")] == ["PASS"]
    assert [r["status"] for r in audit.results("isolation.slurm-jobs-visible")] == ["PASS"]


def _wait_for_job_name(err_path: Path, proc: subprocess.Popen[str]) -> str:
    import re

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        m = re.search(r"job name\s+(clustergrade-[0-9a-f]+)", err_path.read_text())
        if m:
            return m.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise AssertionError(f"no job name printed: {err_path.read_text()[-1500:]}")


def _no_steps_left(cluster: Cluster, job: str) -> None:
    # scancel is asynchronous: give the controller a moment to finish cancelling.
    deadline = time.monotonic() + 15
    rows = cluster.squeue_names(job)
    while rows and time.monotonic() < deadline:
        time.sleep(0.5)
        rows = cluster.squeue_names(job)
    assert rows == [], f"clustergrade job steps still queued/running: {rows}"
