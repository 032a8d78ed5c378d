"""The node side of the isolation probes (``clustergrade node-probe``), run
inside a job step.  Each prints one line."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

MARK_DIR = Path("/tmp")


def _marker(token: str) -> Path:
    if not re.fullmatch(r"[0-9a-f]{8,64}", token):
        raise ValueError("token must be hex")
    return MARK_DIR / f"clustergrade-probe-{token}"


def tmp_mark(token: str) -> str:
    _marker(token).write_text("clustergrade isolation probe; safe to delete\n")
    return "marked"


def tmp_check(token: str) -> str:
    p = _marker(token)
    if p.exists():
        p.unlink(missing_ok=True)
        return "present"
    return "absent"


def gpus() -> str:
    dev = Path("/dev")
    devices = sorted(p for p in dev.glob("nvidia*") if re.fullmatch(r"nvidia\d+", p.name))
    openable = 0
    for p in devices:
        try:
            fd = os.open(p, os.O_RDWR)
        except OSError:
            continue
        os.close(fd)
        openable += 1
    return json.dumps(
        {
            "devices": len(devices),
            "openable": openable,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "slurm_job_gpus": os.environ.get("SLURM_JOB_GPUS") or os.environ.get("SLURM_STEP_GPUS"),
        }
    )
