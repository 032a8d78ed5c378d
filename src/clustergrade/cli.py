"""Command-line interface.  The only module that prints for the user and the
only one that exits.

Exit codes (documented in README.md):
  0  success (no finding at or above --fail-on)
  1  findings at or above --fail-on
  2  usage error
  3  internal or input error (unreadable capture/snapshot/knowledge base)
  130 interrupted (what was collected is saved)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console

from clustergrade import __version__

if TYPE_CHECKING:
    from rich.progress import Progress

    from clustergrade.facts.node import CollectorRun, Snapshot
    from clustergrade.kb.model import KnowledgeBase
    from clustergrade.report.model import Report

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_ERROR = 3
EXIT_INTERRUPTED = 130

app = typer.Typer(
    name="clustergrade",
    help="Audit, benchmark, burn in and rate GPU clusters. Read-only unless a command says otherwise.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
runs_app = typer.Typer(help="Saved runs.", no_args_is_help=True)
checks_app = typer.Typer(help="The check catalogue.", no_args_is_help=True)
kb_app = typer.Typer(
    help="The knowledge base: what it knows and how old it is.", no_args_is_help=True
)
app.add_typer(runs_app, name="runs")
app.add_typer(checks_app, name="checks")
app.add_typer(kb_app, name="kb")


def _register_subcommands() -> None:
    # Each module imports only typer at load time, keeping the audit path light.
    from clustergrade.bench.cli import app as bench_app
    from clustergrade.health.cli import health as health_command

    app.command("health")(health_command)
    app.add_typer(bench_app, name="bench")
    from clustergrade.rate.cli import app as rate_app

    app.add_typer(rate_app, name="rate")


_register_subcommands()

err = Console(stderr=True)


class FailOn(StrEnum):
    NONE = "none"
    FAIL = "fail"
    ERROR = "error"
    WARN = "warn"


class OutFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    JUNIT = "junit"
    SARIF = "sarif"
    HTML = "html"


def _die(message: str, code: int = EXIT_ERROR) -> NoReturn:
    err.print(f"[bold red]error:[/] {message}", highlight=False, markup=True)
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        print(f"clustergrade {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """clustergrade."""


def _load_kb(kb_dir: Path | None) -> KnowledgeBase:
    from clustergrade.kb.loader import KBError, load

    try:
        return load(kb_dir)
    except KBError as exc:
        _die(f"knowledge base unusable:\n{exc}")


def _exit_code(counts: dict[str, int], fail_on: FailOn) -> int:
    from clustergrade.results import Status

    levels = {
        FailOn.NONE: (),
        FailOn.FAIL: (Status.FAIL,),
        FailOn.ERROR: (Status.FAIL, Status.ERROR),
        FailOn.WARN: (Status.FAIL, Status.ERROR, Status.WARN),
    }[fail_on]
    return EXIT_FINDINGS if any(counts.get(s, 0) for s in levels) else EXIT_OK


def _emit(report: Report, fmt: OutFormat, output: Path | None, verbose: int) -> None:
    from clustergrade.report.formats import Format, render
    from clustergrade.report.text import render_rich

    if output is None and fmt is OutFormat.TEXT and sys.stdout.isatty():
        render_rich(report, Console(), verbose)
        return
    text = render(report, Format(fmt.value), verbose)
    if output is None:
        sys.stdout.write(text)
    else:
        from clustergrade.runs import write_atomic

        write_atomic(output, text)
        err.print(f"wrote {output}", highlight=False)


def _progress_for_tty() -> tuple[Progress | None, Callable[[str, CollectorRun], None] | None]:
    """A collector-progress callback on a terminal, else None."""
    if not sys.stderr.isatty():
        return None, None
    from rich.progress import Progress, SpinnerColumn, TextColumn

    from clustergrade.facts.node import SECTIONS

    prog = Progress(
        SpinnerColumn(), TextColumn("collecting {task.description}"), console=err, transient=True
    )
    task = prog.add_task("", total=len(SECTIONS))

    def cb(name: str, run: CollectorRun) -> None:
        prog.update(task, advance=1, description=name)

    return prog, cb


@app.command()
def audit(
    fmt: Annotated[
        OutFormat, typer.Option("--format", "-f", help="Output format.")
    ] = OutFormat.TEXT,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report here.")
    ] = None,
    profile: Annotated[
        list[str] | None,
        typer.Option("--profile", "-p", help="Only checks of this profile (repeatable)."),
    ] = None,
    check: Annotated[
        list[str] | None,
        typer.Option("--check", help="Only this check id, or an id prefix ending in '.'."),
    ] = None,
    fail_on: Annotated[
        FailOn, typer.Option(help="Exit 1 when a result is at or above this.")
    ] = FailOn.NONE,
    from_capture: Annotated[
        Path | None,
        typer.Option("--from-capture", help="Judge a capture made with `clustergrade capture`."),
    ] = None,
    facts: Annotated[
        Path | None, typer.Option("--facts", help="Re-judge a saved facts snapshot offline.")
    ] = None,
    local: Annotated[bool, typer.Option("--local", help="Audit this machine only.")] = False,
    slurm: Annotated[
        bool, typer.Option("--slurm", help="Audit the Slurm cluster this login node belongs to.")
    ] = False,
    partition: Annotated[
        list[str] | None, typer.Option("--partition", help="Slurm: only nodes of this partition.")
    ] = None,
    nodelist: Annotated[
        list[str] | None,
        typer.Option("--nodelist", "-w", help="Slurm: only these nodes (hostlist)."),
    ] = None,
    account: Annotated[str | None, typer.Option(help="Slurm: account for the job steps.")] = None,
    qos: Annotated[str | None, typer.Option(help="Slurm: QOS for the job steps.")] = None,
    within_allocation: Annotated[
        bool, typer.Option(help="Slurm: run inside the current salloc/sbatch allocation.")
    ] = False,
    node_timeout: Annotated[
        float, typer.Option(help="Slurm: seconds a node may take before it is an ERROR row.")
    ] = 120.0,
    concurrency: Annotated[int, typer.Option(help="Slurm: nodes collected at once.")] = 32,
    node_python: Annotated[
        str | None, typer.Option(help="Slurm: python on the nodes that can import clustergrade.")
    ] = None,
    probes: Annotated[
        bool, typer.Option(help="Slurm: run the tenant-isolation probes (short jobs).")
    ] = True,
    k8s: Annotated[
        bool, typer.Option("--k8s", help="Audit a Kubernetes cluster through its API (read-only).")
    ] = False,
    kubeconfig: Annotated[
        str | None, typer.Option(help="Kubernetes: kubeconfig file (default as kubectl).")
    ] = None,
    context: Annotated[str | None, typer.Option(help="Kubernetes: kubeconfig context.")] = None,
    root: Annotated[
        Path, typer.Option(help="Read /sys, /proc, /etc and /dev under this directory.")
    ] = Path("/"),
    kb_dir: Annotated[
        Path | None, typer.Option("--kb", help="Use this knowledge-base directory.")
    ] = None,
    runs_dir: Annotated[Path | None, typer.Option(help="Where runs are saved.")] = None,
    save: Annotated[bool, typer.Option(help="Save the run (facts + report).")] = True,
    verbose: Annotated[
        int, typer.Option("--verbose", "-v", count=True, help="-v, -vv, -vvv: more detail.")
    ] = 0,
) -> None:
    """Audit a target (today: this machine, a capture or a saved snapshot), read-only."""
    from clustergrade import audit as steps
    from clustergrade.capture import CaptureError
    from clustergrade.capture import load as load_capture
    from clustergrade.checks.registry import PROFILES
    from clustergrade.facts.node import Target
    from clustergrade.runs import RunError, default_runs_dir, load_snapshot, new_run_id
    from clustergrade.runs import save_report as save_rep
    from clustergrade.runs import save_snapshot as save_snap
    from clustergrade.seam import Host, LocalHost, ReplayHost

    if sum(bool(x) for x in (from_capture, facts, local, slurm, k8s)) > 1:
        _die("--from-capture, --facts, --local, --slurm and --k8s exclude each other", EXIT_USAGE)
    for p in profile or []:
        if p not in PROFILES:
            _die(f"unknown profile {p!r}; known: {', '.join(PROFILES)}", EXIT_USAGE)
    started = datetime.now(UTC)
    kb = _load_kb(kb_dir)
    plan = steps.make_plan(kb, profile or (), check or ())
    if not plan.checks:
        _die("no check matches the given --profile/--check", EXIT_USAGE)

    use_slurm = slurm or (
        not (local or facts or from_capture or k8s)
        and root == Path("/")
        and steps.slurm_detected(LocalHost())
    )
    if facts is not None:
        try:
            snapshot = load_snapshot(facts)
        except RunError as exc:
            _die(str(exc))
        host_name = snapshot.target.name
    elif k8s:
        from clustergrade.k8s.client import K8sUnavailable
        from clustergrade.k8s.collect import collect_k8s_snapshot

        err.print("target: Kubernetes API (read-only; server-side dry runs only)", highlight=False)
        try:
            snapshot = collect_k8s_snapshot(kubeconfig, context)
        except K8sUnavailable as exc:
            _die(f"cannot audit Kubernetes: {exc}")
        host_name = snapshot.target.name
    elif use_slurm:
        from clustergrade.slurm.fanout import FanoutOptions

        opts = FanoutOptions(
            nodes=tuple(nodelist or ()),
            partitions=tuple(partition or ()),
            account=account,
            qos=qos,
            within_allocation=within_allocation,
            node_timeout_s=node_timeout,
            concurrency=max(1, concurrency),
            python=node_python or sys.executable,
            probes=probes,
        )
        err.print(
            f"target: Slurm cluster (login node {LocalHost().name}); one short job step per node"
            + (", plus isolation probe jobs" if probes else "")
            + f", job name {opts.job_name}",
            highlight=False,
        )
        try:
            snapshot = _slurm_with_progress(steps, opts, plan.sections)
        except steps.SlurmUnavailable as exc:
            _die(f"cannot audit Slurm from here: {exc}")
        host_name = snapshot.target.name
    else:
        host: Host
        if from_capture is not None:
            try:
                host = ReplayHost(load_capture(from_capture))
            except CaptureError as exc:
                _die(str(exc))
            target = steps.capture_target(from_capture)
        else:
            host = LocalHost(root)
            target = Target(kind="local", name=host.name)
        prog, cb = _progress_for_tty()
        if prog is not None:
            with prog:
                snapshot = steps.collect_snapshot(host, target, plan.sections, cb)
        else:
            snapshot = steps.collect_snapshot(host, target, plan.sections)
        host_name = host.name

    run_id = new_run_id(started, host_name)
    report = steps.judge(snapshot, kb, plan, run_id, started)
    if save:
        run_dir = (runs_dir or default_runs_dir()) / run_id
        try:
            save_snap(run_dir, snapshot)
            save_rep(run_dir, report)
        except OSError as exc:
            err.print(f"[yellow]warning:[/] could not save the run in {run_dir}: {exc}")
        else:
            if verbose or not sys.stdout.isatty():
                err.print(f"saved run {run_id} in {run_dir}", highlight=False)
    _emit(report, fmt, output, verbose)
    if snapshot.interrupted:
        err.print("[yellow]interrupted:[/] results cover what was collected before Ctrl-C")
        raise typer.Exit(EXIT_INTERRUPTED)
    raise typer.Exit(_exit_code({s.value: n for s, n in report.summary.counts.items()}, fail_on))


def _slurm_with_progress(steps: Any, opts: Any, sections: tuple[str, ...]) -> Snapshot:
    from clustergrade.seam import LocalHost

    host = LocalHost()
    if not sys.stderr.isatty():
        return steps.collect_slurm_snapshot(host, opts, sections)  # type: ignore[no-any-return]
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("nodes"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        console=err,
        transient=True,
    ) as prog:
        task = prog.add_task("", total=None)

        def cb(name: str, nf: Any) -> None:
            prog.update(task, advance=1, description=f"{name}: {'ERROR' if nf.failure else 'ok'}")

        return steps.collect_slurm_snapshot(host, opts, sections, cb)  # type: ignore[no-any-return]


@app.command("node-facts", hidden=True)
def node_facts(
    section: Annotated[list[str] | None, typer.Option("--section")] = None,
) -> None:
    """Collect this node and print its facts as one JSON line (the fan-out runs
    the lighter `python -m clustergrade.slurm.node_main`)."""
    from clustergrade.slurm.node_main import main as node_main

    args: list[str] = []
    for s in section or []:
        args += ["--section", s]
    raise typer.Exit(node_main(args))


class ProbeKind(StrEnum):
    TMP_MARK = "tmp-mark"
    TMP_CHECK = "tmp-check"
    GPUS = "gpus"


@app.command("node-probe", hidden=True)
def node_probe(
    kind: Annotated[ProbeKind, typer.Argument()],
    token: Annotated[str | None, typer.Argument()] = None,
) -> None:
    """The node side of an isolation probe (used by the Slurm audit)."""
    from clustergrade.slurm import node_probe as np

    if kind is ProbeKind.GPUS:
        print(np.gpus())
        return
    if token is None:
        _die("a token is required", EXIT_USAGE)
    try:
        print(np.tmp_mark(token) if kind is ProbeKind.TMP_MARK else np.tmp_check(token))
    except (ValueError, OSError) as exc:
        _die(str(exc))


@app.command()
def capture(
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Capture archive to write (.tar.gz).")
    ],
    root: Annotated[
        Path, typer.Option(help="Read /sys, /proc, /etc and /dev under this directory.")
    ] = Path("/"),
) -> None:
    """Capture this node's raw answers (no judging) for `audit --from-capture` elsewhere."""
    from clustergrade.capture import save as save_capture
    from clustergrade.collect.runner import Interrupted, collect_node
    from clustergrade.seam import LocalHost, RecordingHost

    rec = RecordingHost(LocalHost(root))
    interrupted = False
    try:
        collect_node(rec)
    except Interrupted:
        interrupted = True
    save_capture(rec.recording, output)
    r = rec.recording
    err.print(
        f"wrote {output}: {len(r.commands)} commands, {len(r.files)} files, "
        f"{len(r.dirs)} directories, {len(r.stats)} stats",
        highlight=False,
    )
    if interrupted:
        err.print("[yellow]interrupted:[/] the capture holds what was collected before Ctrl-C")
        raise typer.Exit(EXIT_INTERRUPTED)


@runs_app.command("list")
def runs_list(
    runs_dir: Annotated[Path | None, typer.Option(help="Where runs are saved.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List saved runs, newest first."""
    from clustergrade.runs import default_runs_dir, list_runs

    d = runs_dir or default_runs_dir()
    entries = list_runs(d)
    if as_json:
        rows = []
        for e in entries:
            row: dict[str, object] = {"id": e.id, "path": str(e.path), "problem": e.problem}
            if e.report is not None:
                row.update(
                    target=e.report.run.target.name,
                    kind=e.report.run.target.kind,
                    nodes=e.report.summary.nodes,
                    counts={k.value: v for k, v in e.report.summary.counts.items()},
                    kb_date=e.report.kb.date,
                )
            rows.append(row)
        print(json.dumps(rows, indent=2))
        return
    if not entries:
        err.print(f"no runs in {d}")
        return
    for e in entries:
        if e.report is None:
            print(f"{e.id}  ({e.problem})")
            continue
        c = e.report.summary.counts
        print(
            f"{e.id}  {e.report.run.target.kind}:{e.report.run.target.name}  "
            f"nodes={e.report.summary.nodes}  " + "  ".join(f"{k.value}={v}" for k, v in c.items())
        )


@app.command()
def report(
    run: Annotated[
        str, typer.Argument(help="Run id (or unique prefix), 'latest', or a run directory.")
    ],
    fmt: Annotated[OutFormat, typer.Option("--format", "-f")] = OutFormat.TEXT,
    output: Annotated[Path | None, typer.Option("--output", "-o")] = None,
    runs_dir: Annotated[Path | None, typer.Option(help="Where runs are saved.")] = None,
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True)] = 0,
) -> None:
    """Show a saved run's report in any format."""
    from clustergrade.runs import RunError, default_runs_dir, load_report, resolve_run

    try:
        d = resolve_run(runs_dir or default_runs_dir(), run)
        rep = load_report(d / "report.json")
    except RunError as exc:
        _die(str(exc))
    _emit(rep, fmt, output, verbose)


@checks_app.command("list")
def checks_list(
    profile: Annotated[list[str] | None, typer.Option("--profile", "-p")] = None,
    kb_dir: Annotated[Path | None, typer.Option("--kb")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="As docs/checks.md.")] = False,
) -> None:
    """The check catalogue with its metadata."""
    from clustergrade.checks.registry import registered, select
    from clustergrade.report.model import check_info

    kb = _load_kb(kb_dir)
    specs = select(registered(kb), profile or ())
    infos = [check_info(s) for s in specs.values()]
    if as_json:
        print(json.dumps([i.model_dump(mode="json") for i in infos], indent=2))
        return
    if markdown:
        from clustergrade.report.catalogue import markdown as md

        sys.stdout.write(md(infos))
        return
    for i in infos:
        print(
            f"{i.id:<44} {i.criterion.value:<13} {i.severity.value:<8} {','.join(i.profiles):<28} {i.title}"
        )
    print(f"\n{len(infos)} checks")


@kb_app.command("show")
def kb_show(
    kb_dir: Annotated[Path | None, typer.Option("--kb")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """What the knowledge base knows and how old it is."""
    from clustergrade.checks.versions import observers

    kb = _load_kb(kb_dir)
    obs = observers()
    today = datetime.now(UTC).date()
    age = (today - kb.meta.date).days
    comps: list[dict[str, object]] = []
    for name, c in sorted(kb.components.items()):
        comps.append(
            {
                "component": name,
                "title": c.title,
                "scheme": c.scheme,
                "advisories": len(c.advisories),
                "retrieved": c.retrieved.isoformat(),
                "observed_by_collectors": name in obs,
            }
        )
    gpu_ids = [g.id for g in kb.gpus.gpus]
    stale_kb = age > kb.meta.max_age_days
    info: dict[str, object] = {
        "edition": kb.meta.date.isoformat(),
        "age_days": age,
        "max_age_days": kb.meta.max_age_days,
        "stale": stale_kb,
        "grace_days": kb.meta.grace_days,
        "digest": kb.digest,
        "origin": kb.origin,
        "components": comps,
        "gpu_models": gpu_ids,
        "xid_codes": len(kb.xids.xids),
    }
    if as_json:
        print(json.dumps(info, indent=2))
        return
    stale = " — STALE, run `clustergrade kb update`" if stale_kb else ""
    print(f"knowledge base {info['edition']} ({age} days old, max {kb.meta.max_age_days}){stale}")
    print(f"digest {kb.digest}; from {kb.origin}; grace period {kb.meta.grace_days} days")
    for row in comps:
        flag = "" if row["observed_by_collectors"] else "  (no collector reads it yet)"
        print(
            f"  {row['component']!s:<26} {row['advisories']!s:>3} advisories  "
            f"scheme {row['scheme']!s:<9} retrieved {row['retrieved']}{flag}"
        )
    print(f"  GPU models: {', '.join(gpu_ids) or '-'}; XID codes: {len(kb.xids.xids)}")


@kb_app.command("update")
def kb_update(
    source: Annotated[
        Path, typer.Option("--from", help="Directory of saved feed files (CSAF, OSV).")
    ],
    dest: Annotated[
        Path | None, typer.Option(help="Where to write the updated knowledge base.")
    ] = None,
    kb_dir: Annotated[
        Path | None, typer.Option("--kb", help="Knowledge base to start from.")
    ] = None,
) -> None:
    """Merge public advisory feeds into the knowledge base. Fails closed; never lowers a minimum."""
    from clustergrade.kb import update as kb_update_mod
    from clustergrade.kb.loader import user_dir

    kb = _load_kb(kb_dir)
    target = dest or user_dir()
    try:
        result = kb_update_mod.update(source, target, kb)
    except kb_update_mod.UpdateError as exc:
        _die(f"kb update refused, nothing written:\n{exc}")
    print(f"wrote {result.dest}: edition {result.old_date} -> {result.new_date}")
    print(f"  read {len(result.documents)} feed documents; skipped {len(result.skipped)}")
    for label, items in (
        ("added", result.added),
        ("changed", result.changed),
        ("refused (would lower a minimum)", result.rejected),
        ("not for any known component", result.unmatched),
    ):
        print(f"  {label}: {len(items)}")
        for item in items[:50]:
            print(f"    {item}")


class SchemaKind(StrEnum):
    REPORT = "report"
    FACTS = "facts"


@app.command()
def schema(kind: Annotated[SchemaKind, typer.Argument(help="Which contract.")]) -> None:
    """Print the published JSON schema of the report or the facts snapshot."""
    from clustergrade.report.schema import facts_schema, report_schema

    doc = report_schema() if kind is SchemaKind.REPORT else facts_schema()
    print(json.dumps(doc, indent=2, sort_keys=True))


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    main()
