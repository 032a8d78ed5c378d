"""``clustergrade health``: the command and :func:`health_main`, which the
command, the Slurm end-to-end test and other callers share.

Imports stay light at module level (the main CLI registers this command on
every start); the check itself is imported when it runs.
"""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

if TYPE_CHECKING:
    from clustergrade.health.evaluate import HealthOptions, NvmlCounters
    from clustergrade.health.report import HealthReport
    from clustergrade.seam import Host


class Mode(StrEnum):
    SLURM = "slurm"
    NPD = "npd"
    PROMETHEUS = "prometheus"
    JSON = "json"


def _node_name(opts: HealthOptions, report: HealthReport) -> str:
    # slurmd exports SLURMD_NODENAME to HealthCheckProgram and prologs; it is
    # the NodeName, which need not be the host name.
    return opts.node_name or os.environ.get("SLURMD_NODENAME") or report.hostname.split(".")[0]


def _failed_report(host: Host | None, reason: str) -> HealthReport:
    import time

    from clustergrade.health.report import HealthItem, HealthReport
    from clustergrade.results import Status

    name = host.name if host is not None else os.uname().nodename
    return HealthReport(
        hostname=name,
        checked_at=time.time(),
        items=[HealthItem("health.run", Status.ERROR, reason, short=reason[:70])],
    )


def health_main(
    opts: HealthOptions,
    host: Host | None = None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    now: float | None = None,
    nvml: NvmlCounters | None = None,
) -> int:
    """Run one check, print it in ``opts.mode``, drain when asked; the exit code.

    Never raises for anything the node or the state file does: a failure of
    the check itself is an "unknown" verdict (exit 2).
    """
    from clustergrade.health import output
    from clustergrade.health.evaluate import run_health

    out = out or sys.stdout
    err = err or sys.stderr
    try:
        kw = {} if nvml is None else {"nvml": nvml}
        report = run_health(opts, host, now=now, **kw)
    except Exception as exc:  # a broken KB or thresholds file, or a bug
        report = _failed_report(host, f"health check failed: {type(exc).__name__}: {exc}")
    code = output.exit_code(report)
    mode = opts.mode
    if mode == Mode.NPD:
        print(output.npd_message(report), file=out)
    elif mode == Mode.JSON:
        print(output.json_text(report), file=out)
    elif mode == Mode.PROMETHEUS:
        text = output.prometheus_text(report)
        if opts.textfile_dir is None:
            out.write(text)
        else:
            try:
                output.write_textfile(opts.textfile_dir, text)
            except OSError as exc:
                print(
                    f"clustergrade health: cannot write {opts.textfile_dir}: {exc.strerror or exc}",
                    file=err,
                )
                return output.EXIT_TEXTFILE
    else:
        lines = output.slurm_lines(report)
        print(lines[0], file=out)
        if report.verdict == "unhealthy" and opts.drain:
            code = _drain(opts, report, host, out, err)
        for line in lines[1:]:
            print(line, file=out)
    return code


def _drain(
    opts: HealthOptions, report: HealthReport, host: Host | None, out: TextIO, err: TextIO
) -> int:
    from clustergrade.health import output
    from clustergrade.seam import LocalHost

    node = _node_name(opts, report)
    argv = output.drain_argv(node, output.drain_reason(report))
    # Said before it is done: the one write this command makes to the cluster.
    print(f"clustergrade health: draining {node}: {' '.join(argv)}", file=out)
    res = (host or LocalHost()).run(argv, timeout=15.0)
    if not res.ok:
        print(f"clustergrade health: drain failed: {res.describe()}", file=err)
    return output.EXIT_UNHEALTHY


def health(
    mode: Annotated[Mode, typer.Option("--mode", help="Output convention.")] = Mode.SLURM,
    expect_gpus: Annotated[
        int | None, typer.Option("--expect-gpus", min=0, help="GPUs the node must have.")
    ] = None,
    gres: Annotated[
        str | None,
        typer.Option(
            "--gres", help="The node's Slurm Gres (gpu:h100:8); its GPU count is expected."
        ),
    ] = None,
    require_mount: Annotated[
        list[str] | None,
        typer.Option("--require-mount", help="A path that must be a mount point (repeatable)."),
    ] = None,
    state_dir: Annotated[
        Path | None,
        typer.Option("--state-dir", help="Where the last check's state is kept."),
    ] = None,
    no_state: Annotated[
        bool, typer.Option("--no-state", help="Neither read nor write state (no rates).")
    ] = False,
    textfile_dir: Annotated[
        Path | None,
        typer.Option("--textfile-dir", help="prometheus: node_exporter's textfile directory."),
    ] = None,
    drain: Annotated[
        bool,
        typer.Option("--drain", help="slurm: drain this node with scontrol when unhealthy."),
    ] = False,
    node_name: Annotated[
        str | None, typer.Option("--node-name", help="slurm: the Slurm NodeName to drain.")
    ] = None,
    kb: Annotated[Path | None, typer.Option("--kb", help="Knowledge-base directory.")] = None,
    thresholds: Annotated[
        Path | None, typer.Option("--thresholds", help="A thresholds.yaml to use instead.")
    ] = None,
) -> None:
    """Fast passive health check of this node (exit 0 healthy, 1 unhealthy, 2 unknown)."""
    from clustergrade.health.evaluate import HealthOptions

    if drain and mode is not Mode.SLURM:
        raise typer.BadParameter("--drain only with --mode slurm", param_hint="--drain")
    opts = HealthOptions(
        mode=mode.value,
        expect_gpus=expect_gpus,
        gres=gres,
        require_mounts=tuple(require_mount or ()),
        state_dir=state_dir,
        use_state=not no_state,
        textfile_dir=textfile_dir,
        drain=drain,
        node_name=node_name,
        kb_dir=kb,
        thresholds_path=thresholds,
    )
    raise typer.Exit(health_main(opts))


#: For running it alone (``python -m clustergrade.health.cli``) and for tests.
app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command()(health)

if __name__ == "__main__":
    app()
