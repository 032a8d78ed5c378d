"""The four output modes: Slurm lines, node-problem-detector's one line,
node_exporter textfile metrics, and JSON.  Exit codes are the same in every
mode: 0 healthy, 1 unhealthy, 2 unknown (3: the textfile could not be written)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from clustergrade.health.report import HealthReport
from clustergrade.results import Status

EXIT_HEALTHY = 0
EXIT_UNHEALTHY = 1
EXIT_UNKNOWN = 2
EXIT_TEXTFILE = 3

EXIT_CODES = {"healthy": EXIT_HEALTHY, "unhealthy": EXIT_UNHEALTHY, "unknown": EXIT_UNKNOWN}

#: node-problem-detector's custom plugins cut status messages at 80 characters
#: by default (max_output_length).
NPD_MAX = 80
#: Keep the Slurm drain reason readable in sinfo -R.
REASON_MAX = 120
TEXTFILE_NAME = "clustergrade_health.prom"

#: Gauge value per status: > 1 is a failure or an unknown.
STATUS_VALUE = {Status.SKIP: -1, Status.PASS: 0, Status.WARN: 1, Status.FAIL: 2, Status.ERROR: 3}


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def exit_code(report: HealthReport) -> int:
    return EXIT_CODES[report.verdict]


# -- Slurm ---------------------------------------------------------------


def slurm_lines(report: HealthReport) -> list[str]:
    v = report.verdict
    lines = [f"clustergrade health: {v.upper()}: {_one_line(report.headline(), 200)}"]
    for i in report.problems + report.unknowns:
        lines.append("  " + _one_line(i.line(), 400))
    for i in report.items:
        if i.status is Status.WARN:
            lines.append("  " + _one_line(i.line(), 400))
    for n in report.notes:
        lines.append(f"  note: {_one_line(n, 300)}")
    return lines


def drain_reason(report: HealthReport) -> str:
    return _one_line(f"clustergrade: {report.headline()}", REASON_MAX)


def drain_argv(node: str, reason: str) -> list[str]:
    return ["scontrol", "update", f"nodename={node}", "state=drain", f"reason={reason}"]


# -- node-problem-detector --------------------------------------------------


def npd_message(report: HealthReport) -> str:
    v = report.verdict
    if v == "healthy":
        return "OK"
    return _one_line(report.headline(), NPD_MAX)


# -- Prometheus textfile -------------------------------------------------


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prometheus_text(report: HealthReport) -> str:
    v = report.verdict
    host = _label(report.hostname)
    out = [
        "# HELP clustergrade_health_ok 1 when the last health check found the node healthy.",
        "# TYPE clustergrade_health_ok gauge",
        f'clustergrade_health_ok{{node="{host}"}} {1 if v == "healthy" else 0}',
        "# HELP clustergrade_health_unknown 1 when the last health check could not tell.",
        "# TYPE clustergrade_health_unknown gauge",
        f'clustergrade_health_unknown{{node="{host}"}} {1 if v == "unknown" else 0}',
        "# HELP clustergrade_health_check_status Per check: -1 skipped, 0 pass, 1 warn, "
        "2 fail, 3 error (unknown).",
        "# TYPE clustergrade_health_check_status gauge",
    ]
    for check, status in report.check_status().items():
        out.append(
            f'clustergrade_health_check_status{{node="{host}",check="{_label(check)}"}} '
            f"{STATUS_VALUE[status]}"
        )
    if report.counters:
        out += [
            "# HELP clustergrade_health_error_counter Error counters as read (cumulative).",
            "# TYPE clustergrade_health_error_counter gauge",
        ]
        for r in report.counters:
            out.append(
                f'clustergrade_health_error_counter{{node="{host}",counter="{_label(r.kind)}",'
                f'subject="{_label(r.subject)}"}} {r.value}'
            )
    out += [
        "# HELP clustergrade_health_last_run_timestamp_seconds When the check ran.",
        "# TYPE clustergrade_health_last_run_timestamp_seconds gauge",
        f'clustergrade_health_last_run_timestamp_seconds{{node="{host}"}} {report.checked_at:.3f}',
        "# HELP clustergrade_health_duration_seconds How long the check took.",
        "# TYPE clustergrade_health_duration_seconds gauge",
        f'clustergrade_health_duration_seconds{{node="{host}"}} {report.duration_s:.4f}',
    ]
    return "\n".join(out) + "\n"


def write_textfile(directory: Path, text: str) -> Path:
    """Write atomically: node_exporter reads only ``*.prom``, so the
    temporary file is invisible to it until the rename."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / TEXTFILE_NAME
    fd, tmp = tempfile.mkstemp(prefix=".clustergrade_health.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return target


# -- JSON ----------------------------------------------------------------


def json_doc(report: HealthReport) -> dict[str, Any]:
    return {
        "schema": "clustergrade.health/1",
        "node": report.hostname,
        "verdict": report.verdict,
        "headline": report.headline(),
        "checked_at": report.checked_at,
        "duration_s": report.duration_s,
        "checks": {k: v.value for k, v in report.check_status().items()},
        "items": [
            {
                "check": i.check,
                "status": i.status.value,
                "subject": i.subject,
                "message": i.message,
            }
            for i in report.items
        ],
        "counters": [
            {"counter": r.kind, "subject": r.subject, "id": r.ident, "value": r.value}
            for r in report.counters
        ],
        "notes": report.notes,
        "state_file": report.state_file,
    }


def json_text(report: HealthReport) -> str:
    return json.dumps(json_doc(report), indent=2, sort_keys=False)
