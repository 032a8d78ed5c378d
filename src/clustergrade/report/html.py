"""A self-contained HTML report: inline CSS and script, no network needed to
view it, every string autoescaped by Jinja2."""

from __future__ import annotations

from typing import TYPE_CHECKING

from clustergrade.report.model import Report
from clustergrade.results import Status

if TYPE_CHECKING:
    from jinja2 import Environment

_ENV: Environment | None = None


def _env() -> Environment:
    # Imported here: only the HTML view needs Jinja2, and the audit path stays light.
    from jinja2 import Environment, PackageLoader, select_autoescape

    global _ENV
    if _ENV is None:
        _ENV = Environment(
            loader=PackageLoader("clustergrade.report", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )
    return _ENV


def render(report: Report, verbosity: int = 0) -> str:
    info = {c.id: c for c in report.checks}
    return (
        _env()
        .get_template("report.html.j2")
        .render(r=report, info=info, Status=Status, statuses=list(Status))
    )
