"""OSV records (GitHub Advisory Database, Go vulnerability database).

Ranges are OSV ``events``; a record's ``affected`` entry may repeat the same
package once per release line (runc's 1.2 / 1.3 / 1.4 rows).  The Go database
puts versions that are not Go module versions (GPU Operator's ``25.3.2``) in
``ecosystem_specific.custom_ranges``; those win when present.
"""

from __future__ import annotations

import json
from typing import Any

from clustergrade.kb.feeds import FeedAdvisory, FeedError, cvss3_score, parse_date, pick_id
from clustergrade.kb.model import Cvss, Range

#: Go module paths -> knowledge-base component.
PACKAGES: dict[str, str] = {
    "github.com/opencontainers/runc": "runc",
    "github.com/containerd/containerd": "containerd",
    "github.com/containerd/containerd/v2": "containerd",
    "github.com/NVIDIA/nvidia-container-toolkit": "nvidia-container-toolkit",
    "github.com/NVIDIA/gpu-operator": "gpu-operator",
    "github.com/NVIDIA/k8s-device-plugin": "k8s-device-plugin",
    "github.com/docker/docker": "docker",
    "github.com/moby/moby": "docker",
    "k8s.io/ingress-nginx": "ingress-nginx",
}


def _ranges(entry: dict[str, Any]) -> list[Range]:
    custom = (entry.get("ecosystem_specific") or {}).get("custom_ranges")
    source = custom if custom else entry.get("ranges", []) or []
    out: list[Range] = []
    for r in source:
        if not isinstance(r, dict):
            raise ValueError("range is not an object")
        if r.get("type") not in ("SEMVER", "ECOSYSTEM"):
            continue
        introduced: str | None = None
        for ev in r["events"]:
            if "introduced" in ev:
                introduced = str(ev["introduced"])
            elif "fixed" in ev:
                out.append(Range(introduced=introduced or "0", fixed=str(ev["fixed"])))
                introduced = None
            elif "last_affected" in ev:
                out.append(
                    Range(introduced=introduced or "0", last_affected=str(ev["last_affected"]))
                )
                introduced = None
        if introduced is not None:
            # Affected from `introduced` on with no fix: an open range.
            out.append(Range(introduced=introduced))
    return out


def _cvss(record: dict[str, Any]) -> Cvss | None:
    for s in record.get("severity", []) or []:
        if isinstance(s, dict) and s.get("type") == "CVSS_V3" and isinstance(s.get("score"), str):
            vector = s["score"]
            score = cvss3_score(vector)
            if score is not None:
                version = "3.0" if vector.startswith("CVSS:3.0") else "3.1"
                return Cvss(score=score, version=version, vector=vector, source="OSV")
    return None


def parse_osv(raw: bytes, origin: str) -> list[FeedAdvisory]:
    """Advisories for known components in one OSV record; FeedError if the
    record is not OSV this parser can read completely."""
    try:
        rec = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FeedError(f"{origin}: not valid JSON: {exc}") from exc
    try:
        return _parse(rec, origin)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise FeedError(f"{origin}: not an OSV record this parser understands: {exc!r}") from exc


def _parse(rec: Any, origin: str) -> list[FeedAdvisory]:
    if not is_osv(rec):
        raise ValueError("no OSV id/affected")
    own = str(rec["id"])
    aliases = [str(a) for a in rec.get("aliases", []) or []]
    primary, others = pick_id(own, aliases)
    published = parse_date(rec.get("published")) or parse_date(rec.get("modified"))
    title = str(rec.get("summary") or rec.get("details") or own).strip().splitlines()[0][:200]
    refs = [
        r["url"]
        for r in rec.get("references", []) or []
        if isinstance(r, dict) and r.get("type") == "ADVISORY" and isinstance(r.get("url"), str)
    ]
    sources = (f"https://osv.dev/vulnerability/{own}", *refs)
    per_comp: dict[str, list[Range]] = {}
    unmatched: set[str] = set()
    for entry in rec["affected"]:
        name = str(entry["package"]["name"])
        comp = PACKAGES.get(name)
        if comp is None:
            unmatched.add(name)
            continue
        per_comp.setdefault(comp, []).extend(_ranges(entry))
    return [
        FeedAdvisory(
            component=comp,
            id=primary,
            title=title if len(title) >= 3 else own,
            published=published,
            ranges=tuple(ranges),
            sources=sources,
            origin=origin,
            aliases=others,
            cvss=_cvss(rec),
            unmatched=tuple(sorted(unmatched)),
        )
        for comp, ranges in sorted(per_comp.items())
        if ranges
    ]


def is_osv(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("id"), str) and "affected" in doc


__all__ = ["PACKAGES", "is_osv", "parse_osv"]
