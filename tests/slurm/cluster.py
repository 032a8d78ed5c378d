"""Start and drive a throwaway local Slurm cluster (tools/slurm-local) from tests."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

LAUNCHER = Path(__file__).resolve().parents[2] / "tools" / "slurm-local" / "slurm-local"

# The launcher's "this machine cannot host a cluster" exit status (not root,
# packages missing and not installable): a skip, not a failure.
EX_ENV = 3

# Fast failure detection: slurmctld pings every SlurmdTimeout/3 and a dead
# slurmd's port is retried for up to MessageTimeout, so both must be small for
# a stopped node to be marked DOWN within seconds (about 6 s here, ~25 s with
# SlurmdTimeout=5 and the default MessageTimeout=10).
FAST_DOWN_KNOBS: dict[str, str] = {
    "SLURM_LOCAL_SLURMD_TIMEOUT": "4",
    "SLURM_LOCAL_EXTRA_CONF": "MessageTimeout=3",
}

START_TIMEOUT_S = 600  # includes apt-get when the packages are missing
CMD_TIMEOUT_S = 60


@dataclass(frozen=True)
class SlurmCluster:
    """A running cluster: its directory and the environment its clients need."""

    directory: Path
    env: Mapping[str, str]

    @property
    def conf(self) -> Path:
        return self.directory / "slurm.conf"

    def run(
        self, argv: list[str], timeout: float = CMD_TIMEOUT_S, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run a Slurm client command against this cluster."""
        return subprocess.run(
            argv,
            env=dict(self.env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=check,
        )

    def launcher(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run a launcher subcommand (stop-node NODE, start-node NODE, status) on this cluster."""
        return subprocess.run(
            [str(LAUNCHER), *args, str(self.directory)],
            env=dict(self.env),
            capture_output=True,
            text=True,
            timeout=CMD_TIMEOUT_S,
            check=True,
        )

    def stop_node(self, node: str) -> None:
        self.launcher("stop-node", node)

    def start_node(self, node: str) -> None:
        self.launcher("start-node", node)

    def node_state(self, node: str) -> str:
        return self.run(["sinfo", "-h", "-n", node, "-o", "%T"]).stdout.strip()

    def wait_for(
        self, predicate: Callable[[], bool], timeout: float, interval: float = 0.25
    ) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(interval)
        return predicate()


def _parse_exports(stdout: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in stdout.splitlines():
        parts = shlex.split(line)
        if len(parts) == 2 and parts[0] == "export" and "=" in parts[1]:
            key, _, value = parts[1].partition("=")
            found[key] = value
    return found


@contextmanager
def launch_cluster(knobs: Mapping[str, str] | None = None) -> Iterator[SlurmCluster]:
    """Start a fresh cluster with launcher knobs (SLURM_LOCAL_*), stop it afterwards.

    Skips the calling test when the machine cannot host one (not root, packages
    not installable); any other start failure is a test error.
    """
    if os.name != "posix" or not hasattr(os, "geteuid"):
        pytest.skip("slurm-local needs Linux")
    if os.geteuid() != 0:
        pytest.skip("slurm-local needs root (starts slurmd in namespaces, may apt-get install)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SQUEUE_", "SINFO_"))}
    env.update(knobs or {})
    try:
        started = subprocess.run(
            [str(LAUNCHER), "start"],
            env=env,
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"slurm-local could not run: {exc}")
    if started.returncode == EX_ENV:
        pytest.skip(f"slurm-local cannot host a cluster here: {started.stderr.strip()[-500:]}")
    if started.returncode != 0:
        raise RuntimeError(f"slurm-local start failed (rc={started.returncode}):\n{started.stderr}")
    exports = _parse_exports(started.stdout)
    cluster = SlurmCluster(Path(exports["SLURM_LOCAL_DIR"]), {**env, **exports})
    try:
        yield cluster
    finally:
        subprocess.run(
            [str(LAUNCHER), "stop", str(cluster.directory)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
