"""The one engine that runs every version rule in the knowledge base.

Each KB component becomes a check ``version.<component>``.  What the node runs
is read by an *observer* registered in code (the facts' shape is code, the
rules are data); observers live next to their area's checks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from clustergrade.checks.registry import CheckMeta, CheckSpec
from clustergrade.kb.model import Advisory, Component, KnowledgeBase, Range
from clustergrade.results import Finding, Severity, Status, errored, failed, passed, skipped, warned
from clustergrade.versions import Version, parse

if TYPE_CHECKING:
    from clustergrade.facts.node import NodeFacts


@dataclass(frozen=True)
class Observed:
    """One installed instance of a component on a node."""

    version: str | None
    installed: bool = True
    subject: str | None = None
    #: Where the version was read ("nvidia-smi", "/proc/driver/nvidia/version").
    source: str | None = None


ObserverFunc = Callable[["NodeFacts"], Iterable[Observed]]


@dataclass(frozen=True)
class ObserverSpec:
    component: str
    needs: tuple[str, ...]
    func: ObserverFunc
    profiles: tuple[str, ...]


_OBSERVERS: dict[str, ObserverSpec] = {}


def observer(
    component: str, *, needs: Iterable[str], profiles: Iterable[str] = ("versions", "security")
) -> Callable[[ObserverFunc], ObserverFunc]:
    """Register how to read ``component``'s installed version(s) from facts."""

    def deco(func: ObserverFunc) -> ObserverFunc:
        if component in _OBSERVERS and _OBSERVERS[component].func is not func:
            raise ValueError(f"observer for {component!r} registered twice")
        _OBSERVERS[component] = ObserverSpec(component, tuple(needs), func, tuple(profiles))
        return func

    return deco


def observers() -> dict[str, ObserverSpec]:
    import clustergrade.checks.builtin  # noqa: F401

    return dict(_OBSERVERS)


def version_checks(kb: KnowledgeBase) -> list[CheckSpec]:
    obs = observers()
    specs = []
    for name, comp in sorted(kb.components.items()):
        o = obs.get(name)
        if o is None:
            # Known to the KB but read by no collector yet (e.g. cluster-level
            # components): listed by `kb show`, not a check that cannot run.
            continue
        refs = sorted({str(s) for a in comp.advisories for s in a.sources})
        worst = max((a.cvss.score for a in comp.advisories if a.cvss), default=None)
        meta = CheckMeta(
            id=f"version.{name}",
            title=f"{comp.title} has every known security fix",
            criterion=comp.criterion,
            severity=Severity.from_cvss(worst) if comp.advisories else Severity.MEDIUM,
            rationale=(
                f"{len(comp.advisories)} advisories in the knowledge base affect {comp.title}; "
                "a node below the fixed version in its release line is exposed to them."
            ),
            remediation=comp.remediation,
            references=tuple(refs),
            needs=o.needs,
            profiles=o.profiles,
            source=f"components/{name}.yaml",
        )
        specs.append(CheckSpec(meta, _make_func(comp, o)))
    return specs


def _make_func(
    comp: Component, o: ObserverSpec
) -> Callable[[NodeFacts, KnowledgeBase], list[Finding]]:
    def run(node: NodeFacts, kb: KnowledgeBase) -> list[Finding]:
        seen = list(o.func(node))
        if not seen:
            return [skipped(f"{comp.title} not installed")]
        today = node.collected_at.date()
        return [judge(comp, ob, today, kb.meta.grace_days) for ob in seen]

    return run


def _in_range(v: Version, r: Range, scheme: str) -> bool:
    if r.families is not None and (v.family is None or v.family not in r.families):
        return False
    if r.introduced != "0":
        lo = parse(scheme, r.introduced)
        if lo is None or v < lo:
            return False
    if r.fixed is not None:
        hi = parse(scheme, r.fixed)
        return hi is not None and v < hi
    if r.last_affected is not None:
        last = parse(scheme, r.last_affected)
        return last is not None and v <= last
    return True


def _backported(v: Version, adv: Advisory, scheme: str) -> bool:
    """A distro package carrying the fix on an older upstream.

    Only the backport's own lineage counts: ``0.5.15-2+deb12u1`` covers
    ``0.5.15-2+deb12u2`` but not Ubuntu's unpatched ``0.5.15-4``, although
    dpkg orders the latter higher.
    """
    base, _, rev = v.text.partition("-")
    for b in adv.backports:
        b_base, _, b_rev = b.partition("-")
        lineage = re.sub(r"[0-9.]+$", "", b_rev)
        if b_base != base or not lineage or not rev.startswith(lineage):
            continue
        bv = parse(scheme, b)
        if bv is not None and v >= bv:
            return True
    return False


def affecting(comp: Component, v: Version) -> list[tuple[Advisory, Range]]:
    """Advisories (with the matching range) that affect version ``v``."""
    out = []
    for adv in comp.advisories:
        for r in adv.affected:
            if _in_range(v, r, comp.scheme) and not _backported(v, adv, comp.scheme):
                out.append((adv, r))
                break
    return out


def judge(comp: Component, ob: Observed, today: date, grace_days: int) -> Finding:
    """Judge one observed version against the component's rules."""
    base_evidence: dict[str, object] = {"source": ob.source} if ob.source else {}
    kw: dict[str, Any] = {"subject": ob.subject, "evidence": base_evidence}
    if not ob.installed:
        return skipped(f"{comp.title} not installed", **kw)
    v = parse(comp.scheme, ob.version)
    if v is None:
        return errored(
            f"cannot judge {comp.title} version {ob.version!r}: not a {comp.scheme} version",
            observed=ob.version,
            **kw,
        )
    lines = comp.lines
    if lines is not None and v.line is not None and v.line in lines.unsupported:
        return failed(
            f"{comp.title} {v} is on line {v.line}, which is out of support: presumed "
            f"vulnerable to every later advisory",
            observed=v.text,
            expected=f"a supported line ({', '.join(lines.supported)})",
            **kw,
        )
    hits = affecting(comp, v)
    if hits:
        fixes = sorted(
            {r.fixed for _, r in hits if r.fixed is not None},
            key=lambda t: parse(comp.scheme, t) or v,
        )
        worst = max((a.cvss.score for a, _ in hits if a.cvss), default=None)
        ids = [a.id for a, _ in hits]
        ends = [(a.fix_available or a.published) + timedelta(days=grace_days) for a, _ in hits]
        in_grace = all(today < end for end in ends)
        conditions = [f"{a.id}: {a.condition}" for a, _ in hits if a.condition]
        evidence: dict[str, object] = dict(base_evidence)
        if conditions:
            evidence["conditions"] = conditions
        msg = (
            f"{comp.title} {v} is affected by {', '.join(ids)}"
            + (f" (worst CVSS {worst})" if worst is not None else "")
            + (f"; fixed in {fixes[-1]}" if fixes else "; no fix on this line")
        )
        make = warned if in_grace else failed
        if in_grace:
            msg += f" (within the {grace_days}-day grace period)"
        return make(
            msg,
            observed=v.text,
            expected=f">= {fixes[-1]}" if fixes else "a line with a fix",
            subject=ob.subject,
            evidence=evidence,
            advisories=ids,
            severity=Severity.from_cvss(worst),
        )
    if lines is not None and lines.supported and v.line not in lines.supported:
        return warned(
            f"{comp.title} {v} is on line {v.line}, which the knowledge base does not list "
            "as supported",
            observed=v.text,
            expected=f"one of {', '.join(lines.supported)}",
            **kw,
        )
    pm = comp.policy_minimum
    if pm is not None:
        floor = parse(comp.scheme, pm.version)
        if floor is not None and v < floor:
            return warned(
                f"{comp.title} {v} is below the recommended minimum {pm.version}: {pm.reason}",
                observed=v.text,
                expected=f">= {pm.version}",
                **kw,
            )
    return passed(
        f"{comp.title} {v} has the fixes for all {len(comp.advisories)} known advisories",
        observed=v.text,
        expected="no known advisory",
        **kw,
    )


__all__ = ["Observed", "Status", "affecting", "judge", "observer", "observers", "version_checks"]
