"""``clustergrade bench``: run performance probes, save and judge what they measured.

``clustergrade bench`` runs the default suite; ``clustergrade bench gemm``
(memory, nccl, ib, storage, lifecycle) runs one probe; ``bench all`` the
suite with options. Exit codes as for ``audit``: 0 fine, 1 a result at or
above --fail-on, 2 usage, 3 input error.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from clustergrade.bench.names import PROBES
from clustergrade.results import STATUS_ORDER, Status

if TYPE_CHECKING:
    from clustergrade.bench.model import BenchRun, ProbeOutcome
    from clustergrade.results import Result

app = typer.Typer(
    help="Performance probes (GEMM, memory, collectives, RDMA, storage, job start-up), judged against the knowledge base.",
    invoke_without_command=True,
    no_args_is_help=False,
)

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


class Device(StrEnum):
    AUTO = "auto"
    CPU = "cpu"
    CUDA = "cuda"


class Fmt(StrEnum):
    TEXT = "text"
    JSON = "json"


class FailOn(StrEnum):
    NONE = "none"
    FAIL = "fail"
    ERROR = "error"
    WARN = "warn"


DeviceOpt = Annotated[
    Device, typer.Option(help="Where to run: a GPU when there is one (auto), or force cpu/cuda.")
]
QuickOpt = Annotated[bool, typer.Option("--quick", help="Small sizes, few repeats: a smoke run.")]
IbPeerOpt = Annotated[
    str | None, typer.Option(help="ib probe: host running the ib_write_bw server.")
]
PullOpt = Annotated[str | None, typer.Option(help="lifecycle probe: image to time a pull of.")]
WorkdirOpt = Annotated[
    Path | None, typer.Option(help="Scratch directory (storage is measured here).")
]
KbOpt = Annotated[Path | None, typer.Option("--kb", help="Use this knowledge-base directory.")]
RunsOpt = Annotated[Path | None, typer.Option(help="Where runs are saved.")]
SaveOpt = Annotated[bool, typer.Option(help="Save the run (bench.json + bench-results.json).")]
FmtOpt = Annotated[Fmt, typer.Option("--format", "-f", help="Output format.")]
FailOpt = Annotated[FailOn, typer.Option(help="Exit 1 when a result is at or above this.")]


def _threshold(fail_on: FailOn) -> set[Status]:
    return {
        FailOn.NONE: set(),
        FailOn.FAIL: {Status.FAIL},
        FailOn.ERROR: {Status.FAIL, Status.ERROR},
        FailOn.WARN: {Status.FAIL, Status.ERROR, Status.WARN},
    }[fail_on]


def _progress(name: str, outcome: ProbeOutcome | None) -> None:
    if outcome is None:
        err.print(f"[dim]bench {name} ...[/]", highlight=False)
    else:
        why = f": {outcome.reason}" if outcome.reason else ""
        err.print(
            f"[dim]bench {name}: {outcome.status} ({outcome.duration_s:.1f}s){why}[/]",
            highlight=False,
        )


def _context(m: Any) -> str:
    keep = ("dtype", "shape", "m", "n", "k", "size_bytes", "world_size", "backend", "hca", "job")
    bits = [f"{k}={m.params[k]}" for k in keep if m.params.get(k) is not None]
    where = f"GPU {m.gpu_index} {m.gpu_model}" if m.gpu_index is not None else m.device
    return f"{where} {' '.join(bits)}".strip()


def _render_text(bench: BenchRun, results: list[Result]) -> None:
    out.print(f"[bold]bench[/] {bench.run_id} on {bench.node} ({bench.device})", highlight=False)
    for p in bench.probes:
        out.print(
            f"\n[bold]{p.probe}[/]: {p.status}" + (f" — {p.reason}" if p.reason else ""),
            highlight=False,
        )
        for m in p.measurements:
            out.print(
                f"  {m.name:<34} {m.value:>12.3f} {m.unit:<7} {_context(m)}",
                highlight=False,
                markup=False,
            )
        for note in p.notes:
            out.print(f"  [dim]note: {note}[/]", highlight=False)
    if results:
        out.print("\n[bold]judgements[/]")
        for r in sorted(results, key=lambda r: (STATUS_ORDER[r.status], r.check_id)):
            subj = f" [{r.subject}]" if r.subject else ""
            out.print(
                f"  {r.status.value:<5} {r.check_id}{subj}: {r.message}",
                highlight=False,
                markup=False,
            )


def _bench(
    probes: list[str],
    *,
    device: Device,
    quick: bool,
    ib_peer: str | None,
    pull_image: str | None,
    workdir: Path | None,
    kb_dir: Path | None,
    runs_dir: Path | None,
    save: bool,
    fmt: Fmt,
    fail_on: FailOn,
) -> None:
    from clustergrade.bench.judge import judge, to_results
    from clustergrade.bench.runner import run_bench, save_bench
    from clustergrade.kb.loader import load as load_kb
    from clustergrade.runs import default_runs_dir

    try:
        kb = load_kb(kb_dir)
    except Exception as exc:  # the loader's own error types vary; all mean "unusable KB"
        err.print(f"[bold red]error:[/] knowledge base: {exc}")
        raise typer.Exit(3) from exc
    try:
        bench = run_bench(
            probes,
            device=device.value,
            quick=quick,
            workdir=workdir,
            ib_peer=ib_peer,
            pull_image=pull_image,
            progress=_progress,
        )
    except KeyboardInterrupt:
        err.print("interrupted")
        raise typer.Exit(130) from None
    results = to_results(bench, judge(bench, kb))
    if save:
        run_dir = (runs_dir or default_runs_dir()) / bench.run_id
        path = save_bench(run_dir, bench, results)
        err.print(f"[dim]saved {path}[/]", highlight=False)
    if fmt is Fmt.JSON:
        doc = {
            "bench": bench.model_dump(mode="json", by_alias=True),
            "results": [r.model_dump(mode="json") for r in results],
        }
        print(json.dumps(doc, indent=1))
    else:
        _render_text(bench, results)
    if any(r.status in _threshold(fail_on) for r in results):
        raise typer.Exit(1)


@app.callback()
def bench_default(ctx: typer.Context) -> None:
    """Run the default suite, or one probe: bench gemm|memory|nccl|ib|storage|lifecycle|all."""
    if ctx.invoked_subcommand is None:
        from clustergrade.bench.runner import DEFAULT_SUITE

        _bench(
            list(DEFAULT_SUITE),
            device=Device.AUTO,
            quick=False,
            ib_peer=None,
            pull_image=None,
            workdir=None,
            kb_dir=None,
            runs_dir=None,
            save=True,
            fmt=Fmt.TEXT,
            fail_on=FailOn.FAIL,
        )


_HELP = {
    "gemm": "GEMM TFLOPS per dtype (fp32, tf32, bf16, fp16, fp8) on square and LLM shapes.",
    "memory": "Device copy/triad bandwidth, pinned host<->device, GPU<->GPU.",
    "nccl": "Collectives (all_reduce, all_gather, reduce_scatter, all_to_all, broadcast): algbw/busbw; nccl-tests when installed.",
    "ib": "RDMA write bandwidth per HCA (perftest ib_write_bw against --ib-peer).",
    "storage": "fio, or a built-in sequential/random/metadata test, on --workdir.",
    "lifecycle": "Time to import torch, make a venv and pip-install a wheel, pull an image.",
    "all": "The default suite.",
}


def _register(name: str) -> None:
    def command(
        device: DeviceOpt = Device.AUTO,
        quick: QuickOpt = False,
        ib_peer: IbPeerOpt = None,
        pull_image: PullOpt = None,
        workdir: WorkdirOpt = None,
        kb: KbOpt = None,
        runs_dir: RunsOpt = None,
        save: SaveOpt = True,
        fmt: FmtOpt = Fmt.TEXT,
        fail_on: FailOpt = FailOn.FAIL,
    ) -> None:
        from clustergrade.bench.runner import DEFAULT_SUITE

        probes = list(DEFAULT_SUITE) if name == "all" else [name]
        _bench(
            probes,
            device=device,
            quick=quick,
            ib_peer=ib_peer,
            pull_image=pull_image,
            workdir=workdir,
            kb_dir=kb,
            runs_dir=runs_dir,
            save=save,
            fmt=fmt,
            fail_on=fail_on,
        )

    command.__doc__ = _HELP[name]
    app.command(name)(command)


for _name in (*PROBES, "all"):
    _register(_name)
