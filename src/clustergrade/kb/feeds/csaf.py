"""NVIDIA PSIRT CSAF 2.0 documents (github.com/NVIDIA/product-security).

NVIDIA writes no machine ranges: the affected versions are prose inside the
product names ("All versions up to and including 1.17.7 (CDI mode only for
versions prior to 1.17.5)", "all driver versions prior to 580.159.03"), and
the driver branch sits in the platform branch ("Linux(R580)").  So ranges are
read with regular expressions and keyed by (product, platform).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from clustergrade.kb.feeds import FeedAdvisory, FeedError, parse_date
from clustergrade.kb.model import Cvss, Range

#: CSAF product names -> knowledge-base component.  Unknown products are
#: reported, not guessed.
PRODUCTS: dict[str, str] = {
    "nvidia container toolkit": "nvidia-container-toolkit",
    "nvidia gpu operator": "gpu-operator",
    "nvidia kubernetes device plugin": "k8s-device-plugin",
    "tesla": "nvidia-driver",
    "nvidia data center gpu manager": "dcgm",
    "nvidia dcgm": "dcgm",
    "dcgm": "dcgm",
    "nvidia dcgm exporter": "dcgm-exporter",
    "dcgm exporter": "dcgm-exporter",
    "nvidia cuda toolkit": "cuda-toolkit",
}

_VER = r"(\d+(?:[._]\d+)*(?:-[0-9A-Za-z.]+)?)"
_PRIOR = re.compile(r"(?:prior to|before|earlier than|lower than)\s+v?" + _VER, re.I)
_UPTO = re.compile(r"(?:up to and including|through|<=)\s+v?" + _VER, re.I)
_PLAIN = re.compile(r"^v?" + _VER + r"$")
_BRANCH = re.compile(r"\bR(\d{3})\b")
_PARENS = re.compile(r"\(([^()]*)\)")


@dataclass(frozen=True)
class _Product:
    product: str
    platform: str | None
    text: str


def _norm_version(v: str) -> str:
    return v.replace("_", ".")


def _walk(node: dict[str, Any], ctx: dict[str, str], out: dict[str, _Product]) -> None:
    cat = node.get("category")
    name = node.get("name")
    here = dict(ctx)
    if isinstance(name, str):
        if cat == "product_name":
            here["product"] = name
        elif cat in ("platform", "architecture"):
            here["platform"] = name
        elif cat == "product_version" and "product" not in here:
            here["product_version_of"] = name
    prod = node.get("product")
    if isinstance(prod, dict):
        pid, pname = prod.get("product_id"), prod.get("name")
        if not isinstance(pid, str) or not isinstance(pname, str):
            raise ValueError("product without product_id/name")
        product = (
            (here.get("product_version_of") if cat == "product_version" else None)
            or here.get("product")
            or pname
        )
        out[pid] = _Product(product, here.get("platform"), pname)
    for child in node.get("branches", []) or []:
        if not isinstance(child, dict):
            raise ValueError("branch is not an object")
        _walk(child, here, out)


def _bounds(text: str) -> tuple[str | None, str | None, str | None, str | None]:
    """(fixed, last_affected, plain version, condition) from a product's version prose."""
    conditions = _PARENS.findall(text)
    outside = _PARENS.sub(" ", text).strip()
    condition = "; ".join(c.strip() for c in conditions if c.strip()) or None
    if m := _PRIOR.search(outside):
        return _norm_version(m[1]), None, None, condition
    if m := _UPTO.search(outside):
        return None, _norm_version(m[1]), None, condition
    if m := _PLAIN.match(outside):
        return None, None, _norm_version(m[1]), condition
    return None, None, None, condition


def _line(platform: str | None) -> str | None:
    if platform and (m := _BRANCH.search(platform)):
        return m[1]
    return None


def _cvss(vuln: dict[str, Any], pids: set[str]) -> Cvss | None:
    best: Cvss | None = None
    for s in vuln.get("scores", []) or []:
        v3 = s.get("cvss_v3") if isinstance(s, dict) else None
        if not isinstance(v3, dict) or not pids & set(s.get("products", []) or []):
            continue
        score, version = v3.get("baseScore"), str(v3.get("version", "3.1"))
        if not isinstance(score, int | float) or version not in ("3.0", "3.1"):
            continue
        c = Cvss(score=float(score), version=version, vector=v3.get("vectorString"))
        if best is None or c.score > best.score:
            best = c
    return best


def parse_csaf(raw: bytes, origin: str) -> list[FeedAdvisory]:
    """Advisories for known components in one CSAF document; FeedError if it
    is not a CSAF document this parser can read completely."""
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FeedError(f"{origin}: not valid JSON: {exc}") from exc
    try:
        return _parse(doc, origin)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise FeedError(f"{origin}: not a CSAF document this parser understands: {exc!r}") from exc


def _parse(doc: Any, origin: str) -> list[FeedAdvisory]:
    if not isinstance(doc, dict) or not str(doc["document"]["csaf_version"]).startswith("2."):
        raise ValueError("no document.csaf_version 2.x")
    meta = doc["document"]
    tracking = meta["tracking"]
    bulletin = str(tracking["id"])
    title = str(meta["title"])
    doc_date = parse_date(tracking.get("initial_release_date"))
    products: dict[str, _Product] = {}
    for b in doc["product_tree"]["branches"]:
        _walk(b, {}, products)
    refs = [
        r["url"]
        for r in meta.get("references", []) or []
        if isinstance(r, dict) and isinstance(r.get("url"), str)
    ]
    out: list[FeedAdvisory] = []
    unmatched: set[str] = set()
    for vuln in doc["vulnerabilities"]:
        cve = str(vuln["cve"])
        status = vuln["product_status"]
        affected_ids = list(status.get("known_affected", []) or [])
        fixed_ids = list(status.get("fixed", []) or [])
        fixed_at: dict[tuple[str, str | None], str] = {}
        for pid in fixed_ids:
            p = products[pid]
            comp = PRODUCTS.get(p.product.lower())
            fx, _, plain, _ = _bounds(p.text)
            if comp and (plain or fx):
                fixed_at[(comp, _line(p.platform))] = plain or fx or ""
        per_comp: dict[str, list[tuple[Range, str | None, str]]] = {}
        for pid in affected_ids:
            p = products[pid]
            comp = PRODUCTS.get(p.product.lower())
            if comp is None:
                unmatched.add(p.product)
                continue
            line = _line(p.platform)
            fixed, last, plain, condition = _bounds(p.text)
            if fixed is None and last is None and plain is None:
                raise ValueError(f"cannot read a version range from {p.text!r} ({pid})")
            introduced = line or "0"
            if fixed is None and (comp, line) in fixed_at:
                fixed, last = fixed_at[(comp, line)], None
            if fixed is None and last is None:
                last = plain
            per_comp.setdefault(comp, []).append(
                (Range(introduced=introduced, fixed=fixed, last_affected=last), condition, pid)
            )
        summary = next(
            (
                n["text"]
                for n in vuln.get("notes", []) or []
                if isinstance(n, dict) and n.get("category") == "summary"
            ),
            title,
        )
        published = parse_date(vuln.get("release_date")) or doc_date
        sources = (
            f"https://nvidia.custhelp.com/app/answers/detail/a_id/{bulletin}",
            f"https://www.cve.org/CVERecord?id={cve}",
            *refs,
        )
        for comp, rows in sorted(per_comp.items()):
            conds = sorted({c for _, c, _ in rows if c})
            out.append(
                FeedAdvisory(
                    component=comp,
                    id=cve,
                    title=_short(str(summary)),
                    published=published,
                    ranges=tuple(r for r, _, _ in rows),
                    sources=sources,
                    origin=origin,
                    aliases=(f"NVIDIA-{bulletin}",),
                    cvss=_cvss(vuln, {pid for _, _, pid in rows}),
                    condition="; ".join(conds) or None,
                    unmatched=tuple(sorted(unmatched)),
                )
            )
    return out


def _short(text: str, limit: int = 200) -> str:
    text = re.sub(r"<[^>]+>", " ", text)
    text = " ".join(text.split())
    first = text.split(". ")[0].rstrip(".")
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def is_csaf(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("document"), dict)
        and ("csaf_version" in doc["document"])
    )


__all__ = ["PRODUCTS", "is_csaf", "parse_csaf"]
