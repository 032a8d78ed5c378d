"""``kb update``: merge saved public feeds into a knowledge base, fail-closed.

Reads NVIDIA CSAF documents and OSV records from a directory (a checkout of
NVIDIA/product-security, a folder of OSV JSON), turns them into advisories for
the components the knowledge base knows, merges them and writes a complete
knowledge-base directory.  Rules:

* Any document that does not parse, or whose ``.sha256`` does not match,
  aborts the whole update: a partial update would silently judge with half the
  facts.  Nothing is written.
* A minimum never moves backwards: an incoming fixed version lower than the
  one already recorded for the same advisory and release line is rejected and
  reported; the recorded one stays.
* The merged result is validated with the model and loaded back from a temp
  directory before it replaces ``dest`` with a rename.

No network here: fetching is the caller's business, tests use saved files.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from clustergrade.kb.feeds import FeedAdvisory, FeedError
from clustergrade.kb.feeds.csaf import is_csaf, parse_csaf
from clustergrade.kb.feeds.osv import is_osv, parse_osv
from clustergrade.kb.loader import KBError, load_dir
from clustergrade.kb.model import Advisory, Component, KnowledgeBase, Range
from clustergrade.versions import Version, parse


class UpdateError(Exception):
    """The update was refused; nothing was written.  The message names the file."""


@dataclass
class UpdateReport:
    dest: Path
    documents: list[str] = field(default_factory=list)
    #: Files read but not used, with the reason (CVE JSON 5 records, no known product).
    skipped: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    #: Incoming data refused (a minimum that would move backwards, an advisory without a date).
    rejected: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    old_date: date | None = None
    new_date: date | None = None

    @property
    def modified(self) -> bool:
        return bool(self.added or self.changed)


# ---------------------------------------------------------------- reading feeds


def _verify_sha256(path: Path, raw: bytes) -> None:
    side = path.with_name(path.name + ".sha256")
    if not side.is_file():
        return
    try:
        want = side.read_text(encoding="ascii").split()[0].lower()
    except (OSError, UnicodeDecodeError, IndexError) as exc:
        raise UpdateError(f"{side}: unreadable checksum file: {exc}") from exc
    got = hashlib.sha256(raw).hexdigest()
    if got != want:
        raise UpdateError(f"{path}: sha256 {got} does not match {side.name} ({want})")


def read_feeds(source_dir: Path) -> tuple[list[FeedAdvisory], list[str], list[str]]:
    """(advisories, documents used, files skipped with reason); UpdateError on
    the first file that cannot be used."""
    if not source_dir.is_dir():
        raise UpdateError(f"{source_dir}: not a directory of feed files")
    advisories: list[FeedAdvisory] = []
    used: list[str] = []
    skipped: list[str] = []
    for path in sorted(source_dir.rglob("*.json")):
        rel = str(path.relative_to(source_dir))
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise UpdateError(f"{path}: {exc.strerror or exc}") from exc
        _verify_sha256(path, raw)
        try:
            doc: Any = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UpdateError(f"{path}: not valid JSON: {exc}") from exc
        try:
            if is_csaf(doc):
                found = parse_csaf(raw, rel)
            elif is_osv(doc):
                found = parse_osv(raw, rel)
            elif isinstance(doc, dict) and doc.get("dataType") == "CVE_RECORD":
                # NVIDIA ships a CVE JSON 5 copy beside each CSAF document; the
                # CSAF one carries the same facts with product keys.
                skipped.append(f"{rel}: CVE JSON 5 record (the bulletin's CSAF is used)")
                continue
            else:
                raise UpdateError(f"{path}: neither a CSAF document nor an OSV record")
        except FeedError as exc:
            raise UpdateError(str(exc)) from exc
        used.append(rel)
        if not found:
            skipped.append(f"{rel}: no product the knowledge base tracks")
        advisories.extend(found)
    return advisories, used, skipped


# ---------------------------------------------------------------- merging


def _end(r: Range, scheme: str) -> tuple[Version, int] | None:
    """A comparable upper end: a fix, or just above the last affected version."""
    if r.fixed is not None:
        v = parse(scheme, r.fixed)
        return (v, 0) if v is not None else None
    if r.last_affected is not None:
        v = parse(scheme, r.last_affected)
        return (v, 1) if v is not None else None
    return None


def _line_key(r: Range, scheme: str) -> tuple[str | None, tuple[int, ...] | None]:
    for text in (r.fixed, r.last_affected, r.introduced if r.introduced != "0" else None):
        if text is not None and (v := parse(scheme, text)) is not None:
            return v.line, tuple(r.families) if r.families else None
    return None, tuple(r.families) if r.families else None


def _describe(r: Range) -> str:
    end = f"< {r.fixed}" if r.fixed else f"<= {r.last_affected}" if r.last_affected else "open"
    return f"{r.introduced} .. {end}"


def _find(comp: Component, fa: FeedAdvisory) -> int | None:
    names = {fa.id, *fa.aliases}
    for i, a in enumerate(comp.advisories):
        if a.id in names or names & set(a.aliases):
            return i
    return None


def _merge_ranges(
    comp: Component, current: Advisory, fa: FeedAdvisory, report: UpdateReport
) -> list[Range]:
    ranges = list(current.affected)
    for new in fa.ranges:
        key = _line_key(new, comp.scheme)
        same = [i for i, r in enumerate(ranges) if _line_key(r, comp.scheme) == key]
        where = f"{comp.component}: {current.id} line {key[0]}"
        if not same:
            ranges.append(new)
            report.changed.append(f"{where}: new range {_describe(new)} ({fa.origin})")
            continue
        i = same[0]
        old_end, new_end = _end(ranges[i], comp.scheme), _end(new, comp.scheme)
        if new_end is None:
            report.rejected.append(
                f"{where}: open-ended incoming range from {fa.origin} ignored; "
                f"keeping {_describe(ranges[i])}"
            )
            continue
        if old_end is not None and new_end < old_end:
            report.rejected.append(
                f"{where}: {fa.origin} says {_describe(new)}, below the recorded "
                f"{_describe(ranges[i])}; a minimum never moves backwards"
            )
            continue
        if old_end is None or new_end > old_end:
            merged = ranges[i].model_copy(
                update={"fixed": new.fixed, "last_affected": new.last_affected}
            )
            report.changed.append(
                f"{where}: {_describe(ranges[i])} -> {_describe(merged)} ({fa.origin})"
            )
            ranges[i] = merged
    return ranges


def _new_advisory(fa: FeedAdvisory) -> Advisory:
    assert fa.published is not None
    return Advisory(
        id=fa.id,
        aliases=list(fa.aliases),
        title=fa.title,
        published=fa.published,
        cvss=fa.cvss,
        affected=list(fa.ranges),
        condition=fa.condition,
        sources=list(fa.sources),
        confidence="H",
    )


def merge(
    current: KnowledgeBase, incoming: list[FeedAdvisory], report: UpdateReport
) -> dict[str, Component]:
    """The components after merging ``incoming``; only changed ones are returned."""
    work: dict[str, Component] = dict(current.components)
    touched: set[str] = set()
    for fa in incoming:
        comp = work.get(fa.component)
        if comp is None:
            report.skipped.append(
                f"{fa.origin}: {fa.id} for {fa.component}, not in this knowledge base"
            )
            continue
        idx = _find(comp, fa)
        advisories = list(comp.advisories)
        if idx is None:
            if fa.published is None:
                report.rejected.append(
                    f"{fa.component}: {fa.id} from {fa.origin} has no publication date; not added"
                )
                continue
            advisories.append(_new_advisory(fa))
            report.added.append(f"{fa.component}: {fa.id} ({fa.origin})")
        else:
            cur = advisories[idx]
            before = len(report.changed)
            ranges = _merge_ranges(comp, cur, fa, report)
            if len(report.changed) == before:
                continue
            aliases = list(dict.fromkeys([*cur.aliases, *(a for a in fa.aliases if a != cur.id)]))
            advisories[idx] = cur.model_copy(update={"affected": ranges, "aliases": aliases})
        try:
            # Validate through the model: a version that does not parse under the
            # component's scheme refuses the update.
            work[fa.component] = Component.model_validate(
                {
                    **comp.model_dump(by_alias=True),
                    "advisories": [a.model_dump() for a in advisories],
                }
            )
        except ValidationError as exc:
            raise UpdateError(
                f"{fa.origin}: merging {fa.id} into {fa.component} gives an invalid component: {exc}"
            ) from exc
        touched.add(fa.component)
    return {k: work[k] for k in sorted(touched)}


# ---------------------------------------------------------------- writing


class _NoAliasDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _clean(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {
            k: _clean(v)
            for k, v in obj.items()
            if v is not None and v != [] and not (k == "kev" and v is False)
        }
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def dump_yaml(model: Component | Any) -> str:
    """The YAML text the knowledge base stores for ``model`` (stable key order)."""
    data = _clean(model.model_dump(mode="json", by_alias=True))
    return yaml.dump(data, Dumper=_NoAliasDumper, sort_keys=False, allow_unicode=True, width=100)


def _write_kb(
    current: KnowledgeBase, changed: dict[str, Component], new_date: date, out: Path
) -> None:
    origin = Path(current.origin)
    (out / "components").mkdir(parents=True)
    meta = current.meta.model_copy(update={"date": new_date})
    (out / "meta.yaml").write_text(dump_yaml(meta), encoding="utf-8")
    for name, model in (("gpus.yaml", current.gpus), ("xid.yaml", current.xids)):
        src = origin / name
        if src.is_file():
            shutil.copyfile(src, out / name)
        else:
            (out / name).write_text(dump_yaml(model), encoding="utf-8")
    for name, comp in current.components.items():
        target = out / "components" / f"{name}.yaml"
        if name in changed:
            c = changed[name].model_copy(update={"retrieved": max(new_date, comp.retrieved)})
            target.write_text(dump_yaml(c), encoding="utf-8")
        elif (origin / "components" / f"{name}.yaml").is_file():
            shutil.copyfile(origin / "components" / f"{name}.yaml", target)
        else:
            target.write_text(dump_yaml(comp), encoding="utf-8")


def _replace_dir(tmp: Path, dest: Path) -> None:
    old: Path | None = None
    if dest.exists():
        old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
        if old.exists():
            shutil.rmtree(old)
        os.rename(dest, old)
    try:
        os.rename(tmp, dest)
    except OSError:
        if old is not None:
            os.rename(old, dest)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def update(source_dir: Path, dest: Path, current: KnowledgeBase) -> UpdateReport:
    """Merge the feeds saved in ``source_dir`` into ``current`` and write the
    result to ``dest``; raise :class:`UpdateError` (nothing written) when any
    feed file or the merged result is unusable."""
    report = UpdateReport(dest=dest, old_date=current.meta.date)
    incoming, report.documents, report.skipped = read_feeds(source_dir)
    report.unmatched = sorted({u for fa in incoming for u in fa.unmatched})
    changed = merge(current, incoming, report)
    newest = max(
        (fa.published for fa in incoming if fa.published is not None and changed.get(fa.component)),
        default=current.meta.date,
    )
    report.new_date = max(current.meta.date, newest)
    dest = dest.absolute()
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        build = tmp / "kb"
        _write_kb(current, changed, report.new_date, build)
        try:
            load_dir(build)
        except KBError as exc:
            raise UpdateError(f"the merged knowledge base does not load: {exc}") from exc
        _replace_dir(build, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report


__all__ = ["UpdateError", "UpdateReport", "dump_yaml", "merge", "read_feeds", "update"]
