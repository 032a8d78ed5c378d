"""Renderers by name.  Each takes a Report and returns text; none scores or
judges."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from clustergrade.report import html, junit, sarif, text
from clustergrade.report.model import Report


class Format(StrEnum):
    TEXT = "text"
    JSON = "json"
    JUNIT = "junit"
    SARIF = "sarif"
    HTML = "html"


def _json(report: Report, verbosity: int = 0) -> str:
    return report.model_dump_json(indent=2, by_alias=True) + "\n"


RENDERERS: dict[Format, Callable[[Report, int], str]] = {
    Format.TEXT: text.render_plain,
    Format.JSON: _json,
    Format.JUNIT: junit.render,
    Format.SARIF: sarif.render,
    Format.HTML: html.render,
}

#: File suffix per format, for the copies saved in a run directory.
SUFFIX = {
    Format.TEXT: "txt",
    Format.JSON: "json",
    Format.JUNIT: "junit.xml",
    Format.SARIF: "sarif",
    Format.HTML: "html",
}


def render(report: Report, fmt: Format, verbosity: int = 0) -> str:
    return RENDERERS[fmt](report, verbosity)
