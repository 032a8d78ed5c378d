"""`kb update` from saved feeds: merge, refuse, never go backwards, atomic."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest
import yaml

from clustergrade.kb.loader import load_dir, shipped_dir
from clustergrade.kb.model import KnowledgeBase
from clustergrade.kb.update import UpdateError, update

FEEDS = Path(__file__).parent.parent / "fixtures" / "feeds"


@pytest.fixture
def current(tmp_path: Path) -> KnowledgeBase:
    src = tmp_path / "current"
    shutil.copytree(shipped_dir(), src)
    return load_dir(src)


def _feeds(tmp_path: Path, *names: str) -> Path:
    d = tmp_path / "feeds"
    d.mkdir(exist_ok=True)
    for n in names:
        src = FEEDS / n
        shutil.copy(src, d / src.name)
        side = src.with_name(src.name + ".sha256")
        if side.exists():
            shutil.copy(side, d / side.name)
    return d


def _drop(kb_dir: Path, comp: str, adv_id: str) -> KnowledgeBase:
    path = kb_dir / "components" / f"{comp}.yaml"
    data = yaml.safe_load(path.read_text())
    data["advisories"] = [a for a in data["advisories"] if a["id"] != adv_id]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_dir(kb_dir)


def _set_fixed(kb_dir: Path, comp: str, adv_id: str, fixed: list[str]) -> KnowledgeBase:
    path = kb_dir / "components" / f"{comp}.yaml"
    data = yaml.safe_load(path.read_text())
    for a in data["advisories"]:
        if a["id"] == adv_id:
            for r, f in zip(a["affected"], fixed, strict=True):
                r["fixed"] = f
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_dir(kb_dir)


def test_update_adds_an_advisory_from_csaf(tmp_path: Path, current: KnowledgeBase) -> None:
    base = _drop(Path(current.origin), "nvidia-container-toolkit", "CVE-2025-23266")
    dest = tmp_path / "out"
    report = update(_feeds(tmp_path, "nvidia/5659.json"), dest, base)
    assert "nvidia-container-toolkit: CVE-2025-23266 (5659.json)" in report.added
    kb = load_dir(dest)
    adv = next(
        a for a in kb.components["nvidia-container-toolkit"].advisories if a.id == "CVE-2025-23266"
    )
    assert adv.affected[0].fixed == "1.17.8"
    assert adv.published == date(2025, 7, 15)
    assert adv.cvss is not None and adv.cvss.score == 9.0
    assert "CDI mode" in (adv.condition or "")
    # Nothing newer than the edition came in: the date stays.
    assert kb.meta.date == base.meta.date
    assert not report.rejected


def test_update_with_unchanged_facts_changes_nothing(
    tmp_path: Path, current: KnowledgeBase
) -> None:
    dest = tmp_path / "out"
    report = update(
        _feeds(tmp_path, "nvidia/5659.json", "osv/GHSA-xr7r-f8xq-vfvv.json"), dest, current
    )
    assert not report.modified and not report.rejected
    for name in current.components:
        assert (dest / "components" / f"{name}.yaml").read_bytes() == (
            Path(current.origin) / "components" / f"{name}.yaml"
        ).read_bytes()


def test_osv_raises_runc_minimums(tmp_path: Path, current: KnowledgeBase) -> None:
    base = _set_fixed(
        Path(current.origin), "runc", "CVE-2025-52565", ["1.2.7", "1.3.2", "1.4.0-rc.2"]
    )
    dest = tmp_path / "out"
    report = update(_feeds(tmp_path, "osv/GHSA-qw9x-cqr3-wc7r.json"), dest, base)
    kb = load_dir(dest)
    adv = next(a for a in kb.components["runc"].advisories if a.id == "CVE-2025-52565")
    assert [r.fixed for r in adv.affected] == ["1.2.8", "1.3.3", "1.4.0-rc.3"]
    assert len(report.changed) == 3


def test_minimum_never_moves_backwards(tmp_path: Path, current: KnowledgeBase) -> None:
    # A later edition already says 1.1.13 (hypothetical): the feed's 1.1.12 is refused.
    base = _set_fixed(Path(current.origin), "runc", "CVE-2024-21626", ["1.1.13"])
    dest = tmp_path / "out"
    report = update(_feeds(tmp_path, "osv/GHSA-xr7r-f8xq-vfvv.json"), dest, base)
    assert any("CVE-2024-21626" in r and "backwards" in r for r in report.rejected)
    kb = load_dir(dest)
    adv = next(a for a in kb.components["runc"].advisories if a.id == "CVE-2024-21626")
    assert adv.affected[0].fixed == "1.1.13"


def test_date_moves_forward_with_new_facts(tmp_path: Path, current: KnowledgeBase) -> None:
    origin = Path(current.origin)
    meta = yaml.safe_load((origin / "meta.yaml").read_text())
    meta["date"] = "2025-01-01"
    (origin / "meta.yaml").write_text(yaml.safe_dump(meta))
    old = _drop(origin, "runc", "CVE-2025-52565")
    report = update(_feeds(tmp_path, "osv/GHSA-qw9x-cqr3-wc7r.json"), tmp_path / "out", old)
    assert report.new_date == date(2025, 11, 5)
    assert load_dir(tmp_path / "out").meta.date == date(2025, 11, 5)


def test_corrupt_feed_fails_closed(tmp_path: Path, current: KnowledgeBase) -> None:
    feeds = _feeds(tmp_path, "osv/GHSA-xr7r-f8xq-vfvv.json")
    raw = (FEEDS / "osv" / "GHSA-qw9x-cqr3-wc7r.json").read_bytes()
    (feeds / "GHSA-qw9x-cqr3-wc7r.json").write_bytes(raw[: len(raw) // 2])  # derived: truncated
    dest = tmp_path / "out"
    with pytest.raises(UpdateError, match="GHSA-qw9x-cqr3-wc7r.json"):
        update(feeds, dest, current)
    assert not dest.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def test_checksum_mismatch_fails_closed(tmp_path: Path, current: KnowledgeBase) -> None:
    feeds = _feeds(tmp_path, "nvidia/5659.json")
    doc = (feeds / "5659.json").read_bytes().replace(b"1_17_8", b"1_17_9")  # derived: tampered
    (feeds / "5659.json").write_bytes(doc)
    with pytest.raises(UpdateError, match="sha256"):
        update(feeds, tmp_path / "out", current)


def test_unknown_document_fails_closed(tmp_path: Path, current: KnowledgeBase) -> None:
    feeds = _feeds(tmp_path)
    (feeds / "thing.json").write_text(json.dumps({"hello": "world"}))
    with pytest.raises(UpdateError, match="thing.json"):
        update(feeds, tmp_path / "out", current)


def test_version_that_does_not_fit_the_scheme_fails_closed(
    tmp_path: Path, current: KnowledgeBase
) -> None:
    base = _drop(Path(current.origin), "runc", "CVE-2024-21626")
    rec = json.loads((FEEDS / "osv" / "GHSA-xr7r-f8xq-vfvv.json").read_bytes())
    rec["affected"][0]["ranges"][0]["events"][1]["fixed"] = "one.one.twelve"  # derived
    feeds = _feeds(tmp_path)
    (feeds / "rec.json").write_text(json.dumps(rec))
    with pytest.raises(UpdateError, match="rec.json"):
        update(feeds, tmp_path / "out", base)


def test_failed_update_leaves_dest_unchanged(tmp_path: Path, current: KnowledgeBase) -> None:
    dest = tmp_path / "out"
    update(_feeds(tmp_path, "nvidia/5659.json"), dest, current)
    before = {p.relative_to(dest): p.read_bytes() for p in dest.rglob("*") if p.is_file()}
    feeds = tmp_path / "feeds"
    (feeds / "broken.json").write_bytes(b"{not json")
    with pytest.raises(UpdateError):
        update(feeds, dest, current)
    after = {p.relative_to(dest): p.read_bytes() for p in dest.rglob("*") if p.is_file()}
    assert before == after


def test_cve_json5_beside_csaf_is_skipped(tmp_path: Path, current: KnowledgeBase) -> None:
    feeds = _feeds(tmp_path, "nvidia/5659.json")
    # Shape of NVIDIA's per-CVE JSON 5 files (dataType marker only).
    (feeds / "CVE-2025-23266.json").write_text(
        json.dumps({"dataType": "CVE_RECORD", "dataVersion": "5.1"})
    )
    report = update(feeds, tmp_path / "out", current)
    assert any("CVE JSON 5" in s for s in report.skipped)


def test_dump_yaml_round_trips_every_shipped_component() -> None:
    from clustergrade.kb.model import Component
    from clustergrade.kb.update import dump_yaml

    for comp in load_dir(shipped_dir()).components.values():
        assert Component.model_validate(yaml.safe_load(dump_yaml(comp))) == comp
