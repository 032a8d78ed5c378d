"""Parsers for public machine-readable advisory feeds (NVIDIA CSAF, OSV).

Each parser turns one saved document into :class:`FeedAdvisory` items for the
components the knowledge base knows; :mod:`clustergrade.kb.update` merges them.
Parsers are pure: bytes in, advisories out, :class:`FeedError` for anything
that does not fit, so an update can refuse the whole batch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime

from clustergrade.kb.model import Cvss, Range


class FeedError(Exception):
    """A feed document that cannot be used; the message names the file."""


@dataclass(frozen=True)
class FeedAdvisory:
    component: str
    id: str
    title: str
    published: date | None
    ranges: tuple[Range, ...]
    sources: tuple[str, ...]
    origin: str
    aliases: tuple[str, ...] = ()
    cvss: Cvss | None = None
    condition: str | None = None
    #: Product/package names in the document that map to no component.
    unmatched: tuple[str, ...] = field(default=())


def parse_date(text: object) -> date | None:
    """An RFC 3339 timestamp or date; None for missing or the zero date Go tools write."""
    if not isinstance(text, str) or not text:
        return None
    try:
        d = datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError:
        try:
            d = date.fromisoformat(text[:10])
        except ValueError:
            return None
    return None if d.year < 1990 else d


_CVE = re.compile(r"^CVE-\d{4}-\d{4,}$")


def pick_id(own: str, aliases: list[str]) -> tuple[str, tuple[str, ...]]:
    """The knowledge base keys advisories by CVE where one exists."""
    names = [own, *aliases]
    cves = [n for n in names if _CVE.match(n)]
    primary = cves[0] if cves else own
    return primary, tuple(n for n in names if n != primary)


_W = {
    "AV": {"N": 0.85, "A": 0.62, "L": 0.55, "P": 0.2},
    "AC": {"L": 0.77, "H": 0.44},
    "UI": {"N": 0.85, "R": 0.62},
    "C": {"H": 0.56, "L": 0.22, "N": 0.0},
    "I": {"H": 0.56, "L": 0.22, "N": 0.0},
    "A": {"H": 0.56, "L": 0.22, "N": 0.0},
}


def _roundup(x: float) -> float:
    i = round(x * 100000)
    return i / 100000.0 if i % 10000 == 0 else (i // 10000 + 1) / 10.0


def cvss3_score(vector: str) -> float | None:
    """Base score of a CVSS 3.0/3.1 vector (FIRST specification formula); None
    when the vector is incomplete or not v3 (v4 needs the full lookup tables)."""
    parts = vector.split("/")
    if not parts or parts[0] not in ("CVSS:3.0", "CVSS:3.1"):
        return None
    m = dict(p.split(":", 1) for p in parts[1:] if ":" in p)
    try:
        scope_changed = m["S"] == "C"
        pr = {"N": 0.85, "L": 0.68 if scope_changed else 0.62, "H": 0.5 if scope_changed else 0.27}[
            m["PR"]
        ]
        av, ac, ui = _W["AV"][m["AV"]], _W["AC"][m["AC"]], _W["UI"][m["UI"]]
        c, i, a = _W["C"][m["C"]], _W["I"][m["I"]], _W["A"][m["A"]]
    except KeyError:
        return None
    iss = 1 - (1 - c) * (1 - i) * (1 - a)
    if scope_changed:
        impact = 7.52 * (iss - 0.029) - 3.25 * (iss - 0.02) ** 15
    else:
        impact = 6.42 * iss
    exploit = 8.22 * av * ac * pr * ui
    if impact <= 0:
        return 0.0
    raw = 1.08 * (impact + exploit) if scope_changed else impact + exploit
    return _roundup(min(raw, 10.0))


__all__ = ["FeedAdvisory", "FeedError", "cvss3_score", "parse_date", "pick_id"]
