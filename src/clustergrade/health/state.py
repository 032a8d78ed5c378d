"""The health state file: what the previous check saw.

It holds, per node and output mode, the kernel-log error summaries already
reported and the last reading of every error counter, so that the next check
reports only new Xids and judges counters by their rate.  It is the only
thing ``clustergrade health`` writes (besides a Prometheus textfile), and it
is written atomically: a check killed half-way leaves the previous state.

A missing, unreadable or foreign state file is not an error: the check runs
as a first check and says so.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

STATE_SCHEMA = "clustergrade.health-state/1"
#: A state file bigger than this is not ours (or is corrupt): start afresh.
MAX_STATE_BYTES = 4 * 1024 * 1024


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SeenLog(_Model):
    """One kernel-log summary (an Xid code on a GPU, an SXid on a switch)."""

    count: int
    last_seen: str | None = None


class CounterState(_Model):
    value: int
    #: Wall-clock seconds (time.time()) of the reading.
    at: float


class HealthState(_Model):
    schema_: Literal["clustergrade.health-state/1"] = Field(
        "clustergrade.health-state/1", alias="schema"
    )
    hostname: str
    #: /proc/sys/kernel/random/boot_id: a new boot means a new kernel log and
    #: reset counters.
    boot_id: str | None = None
    checked_at: float
    xids: dict[str, SeenLog] = Field(default_factory=dict)
    sxids: dict[str, SeenLog] = Field(default_factory=dict)
    fallen_off_bus: dict[str, SeenLog] = Field(default_factory=dict)
    counters: dict[str, CounterState] = Field(default_factory=dict)
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def default_state_dir() -> Path:
    """$CLUSTERGRADE_HEALTH_STATE_DIR, else /var/lib/clustergrade/health for
    root, else the user's XDG state directory."""
    env = os.environ.get("CLUSTERGRADE_HEALTH_STATE_DIR")
    if env:
        return Path(env)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return Path("/var/lib/clustergrade/health")
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(base) / "clustergrade" / "health"


_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def state_path(state_dir: Path, hostname: str, mode: str) -> Path:
    """One file per node and mode: node-problem-detector and Slurm checking
    the same node must not consume each other's new Xids."""
    name = _SAFE.sub("_", hostname)[:100] or "node"
    return state_dir / f"{name}.{_SAFE.sub('_', mode)}-state.json"


def load_state(path: Path) -> tuple[HealthState | None, str | None]:
    """(state, why it was not usable); (None, None) when there is none yet."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_STATE_BYTES + 1)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"state file {path} unreadable ({exc.strerror or exc}); starting afresh"
    if len(raw) > MAX_STATE_BYTES:
        return None, f"state file {path} too large; starting afresh"
    try:
        return HealthState.model_validate(json.loads(raw)), None
    except (ValueError, ValidationError, RecursionError):
        return None, f"state file {path} not a health state; starting afresh"


def save_state(path: Path, state: HealthState) -> None:
    """Write ``state`` atomically (temporary file + rename in the same directory).

    Raises OSError when the directory cannot be created or written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    data = state.model_dump_json(by_alias=True).encode()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
