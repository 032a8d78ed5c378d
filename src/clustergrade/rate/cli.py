"""``clustergrade rate``: a rating from one saved audit report plus an
attestation file.  Wired into the main CLI with
``app.add_typer(rate_app, name="rate")``."""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    help="Rate a provider from audit evidence and attestations.", no_args_is_help=True
)

EXIT_ERROR = 3


@app.callback()
def _group() -> None:
    """Rate a provider from audit evidence and attestations."""


def _die(msg: str) -> None:
    sys.stderr.write(f"error: {msg}\n")
    raise typer.Exit(EXIT_ERROR)


@app.command("explain")
def explain_cmd(
    report: Annotated[Path, typer.Option("--report", help="A saved audit report.json.")],
    attest: Annotated[Path | None, typer.Option("--attest", help="Attestation YAML.")] = None,
    profile: Annotated[
        str, typer.Option("--profile", "-p", help="balanced, pretraining, inference, rl.")
    ] = "balanced",
    as_of: Annotated[
        str | None, typer.Option(help="Rating date (YYYY-MM-DD); default: the audit's date.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The rating as canonical JSON.")] = False,
) -> None:
    """Compute the rating and say why it is this tier and not the next one."""
    from clustergrade.rate.attest import AttestError, load_attestations
    from clustergrade.rate.score import (
        explain,
        input_from,
        load_criteria,
        load_rules,
        rate,
        rating_json,
    )
    from clustergrade.runs import RunError, load_report

    try:
        rep = load_report(report)
    except RunError as exc:
        _die(str(exc))
        return
    att = None
    if attest is not None:
        try:
            att = load_attestations(attest, load_criteria().fields)
        except AttestError as exc:
            sys.stderr.write(f"error: {exc.where}:\n" + "".join(f"  - {p}\n" for p in exc.problems))
            raise typer.Exit(EXIT_ERROR) from exc
    try:
        day = date.fromisoformat(as_of) if as_of else None
        r = rate(input_from(rep, att, day), profile=profile)
    except ValueError as exc:
        _die(str(exc))
        return
    sys.stdout.write(rating_json(r) if as_json else explain(r, load_rules()))
