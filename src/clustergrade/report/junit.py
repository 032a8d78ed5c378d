"""JUnit XML: one testsuite per node, one testcase per result.

FAIL -> <failure>, ERROR -> <error>, SKIP -> <skipped>; WARN passes with the
warning in <system-out> and a ``status`` property, because JUnit has no warn
state and CI gates decide on warnings with ``--fail-on warn`` instead.
"""

from __future__ import annotations

from collections import defaultdict
from xml.etree.ElementTree import Element, SubElement, indent, tostring

from clustergrade.report.model import Report
from clustergrade.results import Result, Status


def _name(r: Result) -> str:
    return f"{r.check_id}[{r.subject}]" if r.subject else r.check_id


def _detail(r: Result) -> str:
    parts = [r.message]
    if r.observed is not None:
        parts.append(f"observed: {r.observed}")
    if r.expected is not None:
        parts.append(f"expected: {r.expected}")
    if r.advisories:
        parts.append("advisories: " + ", ".join(r.advisories))
    return "\n".join(parts)


def render(report: Report, verbosity: int = 0) -> str:
    by_node: dict[str, list[Result]] = defaultdict(list)
    for r in report.results:
        by_node[r.node].append(r)
    root = Element(
        "testsuites",
        name=f"clustergrade {report.run.id}",
        tests=str(len(report.results)),
        failures=str(report.summary.counts[Status.FAIL]),
        errors=str(report.summary.counts[Status.ERROR]),
        skipped=str(report.summary.counts[Status.SKIP]),
        time=f"{report.run.duration_s:.3f}",
    )
    for node in sorted(by_node):
        rs = by_node[node]
        suite = SubElement(
            root,
            "testsuite",
            name=node,
            tests=str(len(rs)),
            failures=str(sum(r.status is Status.FAIL for r in rs)),
            errors=str(sum(r.status is Status.ERROR for r in rs)),
            skipped=str(sum(r.status is Status.SKIP for r in rs)),
            timestamp=report.run.started_at.isoformat(),
        )
        props = SubElement(suite, "properties")
        for k, v in (
            ("tool_version", report.tool.version),
            ("kb_date", report.kb.date),
            ("kb_digest", report.kb.digest),
            ("schema", "clustergrade.report/1"),
        ):
            SubElement(props, "property", name=k, value=v)
        for r in rs:
            case = SubElement(suite, "testcase", classname=r.criterion.value, name=_name(r))
            cprops = SubElement(case, "properties")
            SubElement(cprops, "property", name="status", value=r.status.value)
            SubElement(cprops, "property", name="severity", value=r.severity.value)
            if r.status is Status.FAIL:
                el = SubElement(case, "failure", message=r.message[:500], type=r.severity.value)
                el.text = _detail(r)
            elif r.status is Status.ERROR:
                el = SubElement(case, "error", message=r.message[:500], type="could-not-tell")
                el.text = _detail(r)
            elif r.status is Status.SKIP:
                SubElement(case, "skipped", message=r.message[:500])
            elif r.status is Status.WARN:
                out = SubElement(case, "system-out")
                out.text = "WARN: " + _detail(r)
    indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(root, encoding="unicode") + "\n"
