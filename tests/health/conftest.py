from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_slurm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # A test run inside a Slurm job must not drain under the job's node name.
    monkeypatch.delenv("SLURMD_NODENAME", raising=False)
    monkeypatch.delenv("CLUSTERGRADE_HEALTH_STATE_DIR", raising=False)
