"""Terminal views: a rich one for a terminal and a plain one for pipes.

Verbosity: 0 one line per result (SKIPs counted, not listed); -v adds SKIP
rows and expected values; -vv adds remediation, advisories and references;
-vvv adds rationale and evidence.
"""

from __future__ import annotations

from collections import defaultdict

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from clustergrade.report.model import CheckInfo, Report
from clustergrade.results import Result, Status

_STYLE = {
    Status.PASS: "green",
    Status.WARN: "yellow",
    Status.FAIL: "bold red",
    Status.SKIP: "dim",
    Status.ERROR: "magenta",
}


def _shown(report: Report, verbosity: int) -> list[Result]:
    return [r for r in report.results if verbosity >= 1 or r.status is not Status.SKIP]


def _header(report: Report) -> str:
    c = report.summary.counts
    t = report.run.target
    return (
        f"clustergrade {report.tool.version} — {t.kind} {t.name} — {report.summary.nodes} node(s), "
        f"{report.summary.checks} checks ({report.summary.applicable_checks} applicable) — "
        f"PASS {c[Status.PASS]}  WARN {c[Status.WARN]}  FAIL {c[Status.FAIL]}  "
        f"ERROR {c[Status.ERROR]}  SKIP {c[Status.SKIP]}"
    )


def _footer(report: Report) -> list[str]:
    lines = [
        f"knowledge base {report.kb.date} ({report.kb.digest}, {report.kb.age_days} days old); "
        f"report schema clustergrade.report/1; run {report.run.id}"
    ]
    if report.run.interrupted:
        lines.append("INTERRUPTED: the results cover only what was collected before Ctrl-C.")
    for s in report.spread:
        parts = [f"{len(nodes)} on {value}" for value, nodes in s.values.items()]
        lines.append(f"spread {s.check_id}: " + "; ".join(parts))
    for ne in report.collection:
        if ne.failure:
            lines.append(f"{ne.node}: collection failed: {ne.failure}")
        for e in ne.errors[:20]:
            lines.append(f"{ne.node}: {e.collector}: {e.message}")
        if len(ne.errors) > 20:
            lines.append(f"{ne.node}: … {len(ne.errors) - 20} more collector errors (see JSON)")
    return lines


def _details(r: Result, info: CheckInfo | None, verbosity: int) -> list[str]:
    out = []
    if verbosity >= 1 and (r.observed is not None or r.expected is not None):
        out.append(
            f"observed: {r.observed if r.observed is not None else '—'}   "
            f"expected: {r.expected if r.expected is not None else '—'}"
        )
    if verbosity >= 2 and info is not None:
        if r.status in (Status.FAIL, Status.WARN, Status.ERROR):
            out.append(f"fix: {info.remediation}")
        if r.advisories:
            out.append("advisories: " + ", ".join(r.advisories))
        if info.references:
            out.append("references: " + " ".join(info.references[:5]))
    if verbosity >= 3:
        if info is not None:
            out.append(f"why: {info.rationale}")
        if r.evidence:
            out.append("evidence: " + ", ".join(f"{k}={v}" for k, v in r.evidence.items()))
    return out


def _fleet_lines(report: Report, verbosity: int) -> list[str]:
    """One block per check and status across nodes: "FAIL on 3/64 nodes"."""
    nodes = report.summary.nodes
    groups: dict[tuple[str, Status], list[Result]] = defaultdict(list)
    order: list[tuple[str, Status]] = []
    for r in _shown(report, verbosity):
        key = (r.check_id, r.status)
        if key not in groups:
            order.append(key)
        groups[key].append(r)
    lines = []
    for cid, status in order:
        rs = groups[(cid, status)]
        where = sorted({r.node for r in rs})
        scope = (
            "cluster"
            if all(n.startswith("cluster:") for n in where)
            else f"{len(where)}/{nodes} nodes"
        )
        lines.append(f"{status.value:<5} {cid}  on {scope}")
        by_msg: dict[str, list[str]] = defaultdict(list)
        for r in rs:
            by_msg[(f"[{r.subject}] " if r.subject else "") + r.message].append(r.node)
        shown = list(by_msg.items())
        for msg, ns in shown[: 3 if verbosity == 0 else len(shown)]:
            names = ", ".join(sorted(set(ns))[:8]) + (" …" if len(set(ns)) > 8 else "")
            lines.append(f"      {msg}  ({names})" if scope != "cluster" else f"      {msg}")
        if verbosity == 0 and len(shown) > 3:
            lines.append(f"      … {len(shown) - 3} more distinct findings (-v lists them)")
    return lines


def render_plain(report: Report, verbosity: int = 0) -> str:
    info = {c.id: c for c in report.checks}
    multi = report.summary.nodes > 1
    lines = [_header(report), ""]
    if multi and verbosity < 2:
        lines.extend(_fleet_lines(report, verbosity))
        skipped = report.summary.counts[Status.SKIP]
        if verbosity == 0 and skipped:
            lines.append(f"({skipped} SKIP rows hidden; -v shows them with their reasons)")
        lines.append("")
        lines.extend(_footer(report))
        return "\n".join(lines) + "\n"
    for r in _shown(report, verbosity):
        where = f"{r.node}  " if multi else ""
        subj = f" [{r.subject}]" if r.subject else ""
        lines.append(f"{r.status.value:<5} {r.check_id}{subj}  {where}{r.message}")
        lines.extend("      " + d for d in _details(r, info.get(r.check_id), verbosity))
    skipped = report.summary.counts[Status.SKIP]
    if verbosity == 0 and skipped:
        lines.append(f"({skipped} SKIP rows hidden; -v shows them with their reasons)")
    lines.append("")
    lines.extend(_footer(report))
    return "\n".join(lines) + "\n"


def render_rich(report: Report, console: Console, verbosity: int = 0) -> None:
    info = {c.id: c for c in report.checks}
    multi = report.summary.nodes > 1
    if multi and verbosity < 2:
        body = Text()
        for line in render_plain(report, verbosity).splitlines():
            status = line[:5].strip()
            style = _STYLE.get(Status(status)) if status in Status.__members__ else None
            body.append(line + "\n", style=style or ("dim" if line.startswith(" ") else None))
        console.print(Panel(body))
        return
    table = Table(show_header=True, header_style="bold", expand=True, show_lines=verbosity >= 2)
    table.add_column("Status", no_wrap=True)
    table.add_column("Check", overflow="fold")
    if multi:
        table.add_column("Node", overflow="fold")
    table.add_column("Finding", overflow="fold", ratio=3)
    by_crit: dict[str, list[Result]] = defaultdict(list)
    for r in _shown(report, verbosity):
        by_crit[r.criterion.value].append(r)
    for crit in sorted(by_crit):
        table.add_row(Text(crit, style="bold cyan"), "", *([""] if multi else []), "")
        for r in by_crit[crit]:
            body = Text(r.message)
            for d in _details(r, info.get(r.check_id), verbosity):
                body.append("\n" + d, style="dim")
            check = r.check_id + (f" [{r.subject}]" if r.subject else "")
            row: list[Text | str] = [Text(r.status.value, style=_STYLE[r.status]), check]
            if multi:
                row.append(r.node)
            table.add_row(*row, body)
    footer = Text("\n".join(_footer(report)), style="dim")
    skipped = report.summary.counts[Status.SKIP]
    hint = (
        Text(f"{skipped} SKIP rows hidden; -v shows them with their reasons", style="dim")
        if verbosity == 0 and skipped
        else Text("")
    )
    console.print(Panel(Group(Text(_header(report), style="bold"), table, hint, footer)))
