"""Saved runs: each run is a directory holding its facts snapshot and report.

Layout: ``<runs_dir>/<run_id>/facts.json`` and ``report.json`` (plus any
rendered copies).  Files are written atomically, so a Ctrl-C or a crash never
leaves a half-written snapshot behind.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from clustergrade.facts.node import Snapshot
from clustergrade.report.model import Report


class RunError(Exception):
    """A run or snapshot that cannot be read; the message says why."""


def default_runs_dir() -> Path:
    env = os.environ.get("CLUSTERGRADE_RUNS_DIR")
    if env:
        return Path(env)
    home = os.environ.get("CLUSTERGRADE_HOME") or os.path.join(
        os.path.expanduser("~"), ".clustergrade"
    )
    return Path(home) / "runs"


def new_run_id(now: datetime | None = None, host: str | None = None) -> str:
    now = now or datetime.now(UTC)
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in (host or socket.gethostname()))
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{safe[:40]}-{secrets.token_hex(2)}"


def write_atomic(path: Path, data: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(data, encoding="utf-8")
    tmp.replace(path)


def save_snapshot(run_dir: Path, snapshot: Snapshot) -> Path:
    path = run_dir / "facts.json"
    write_atomic(path, snapshot.model_dump_json(indent=1, by_alias=True))
    return path


def save_report(run_dir: Path, report: Report) -> Path:
    path = run_dir / "report.json"
    write_atomic(path, report.model_dump_json(indent=1, by_alias=True))
    return path


def load_snapshot(path: Path) -> Snapshot:
    """Read a facts snapshot; a corrupt or foreign file raises RunError."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RunError(f"{path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise RunError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("schema") != "clustergrade.facts/1":
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise RunError(f"{path}: not a clustergrade facts snapshot (schema {found!r})")
    try:
        return Snapshot.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise RunError(
            f"{path}: invalid snapshot: {exc.error_count()} problem(s), first at {loc}: {first['msg']}"
        ) from exc


def load_report(path: Path) -> Report:
    try:
        return Report.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise RunError(f"{path}: {exc.strerror or exc}") from exc
    except ValidationError as exc:
        raise RunError(
            f"{path}: not a clustergrade report: {exc.error_count()} problem(s)"
        ) from exc


@dataclass(frozen=True)
class RunEntry:
    id: str
    path: Path
    report: Report | None
    problem: str | None


def list_runs(runs_dir: Path) -> list[RunEntry]:
    if not runs_dir.is_dir():
        return []
    out = []
    for d in sorted((p for p in runs_dir.iterdir() if p.is_dir()), reverse=True):
        rp = d / "report.json"
        if not rp.exists():
            if (d / "bench.json").exists():
                out.append(RunEntry(d.name, d, None, "bench run (bench.json, bench-results.json)"))
            else:
                out.append(RunEntry(d.name, d, None, "no report.json (collection interrupted?)"))
            continue
        try:
            out.append(RunEntry(d.name, d, load_report(rp), None))
        except RunError as exc:
            out.append(RunEntry(d.name, d, None, str(exc)))
    return out


def resolve_run(runs_dir: Path, ref: str) -> Path:
    """A run directory from an id, a unique id prefix, 'latest', or a path."""
    p = Path(ref)
    if p.is_dir():
        return p
    if p.is_file() and p.name in ("report.json", "facts.json"):
        return p.parent
    runs = [r for r in list_runs(runs_dir)]
    if ref == "latest":
        if not runs:
            raise RunError(f"no runs in {runs_dir}")
        return runs[0].path
    hits = [r for r in runs if r.id.startswith(ref)]
    if len(hits) == 1:
        return hits[0].path
    if not hits:
        raise RunError(f"no run {ref!r} in {runs_dir}")
    raise RunError(f"{ref!r} matches {len(hits)} runs; give more of the id")
