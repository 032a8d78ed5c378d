"""Saved snapshots: a corrupt or foreign file is a clear error, never a grade."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clustergrade.audit import snapshot_of
from clustergrade.facts.node import NodeFacts, Target
from clustergrade.runs import RunError, load_snapshot, save_snapshot


def _snap() -> Path:
    node = NodeFacts(hostname="n1", collected_at=datetime(2026, 11, 1, tzinfo=UTC))
    return node  # type: ignore[return-value]


def test_round_trip(tmp_path: Path) -> None:
    snap = snapshot_of([_snap()], Target(kind="local", name="n1"))  # type: ignore[list-item]
    path = save_snapshot(tmp_path, snap)
    assert load_snapshot(path) == snap
    assert json.loads(path.read_text())["schema"] == "clustergrade.facts/1"


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"", "not JSON"),
        (b'{"schema": "clustergrade.facts/1", "nodes": [', "not JSON"),
        (b"[1, 2]", "not a clustergrade facts snapshot"),
        (b'{"schema": "something-else/9"}', "not a clustergrade facts snapshot"),
        (b'{"schema": "clustergrade.facts/1", "nodes": "x"}', "invalid snapshot"),
        (b"\xff\xfe\x00garbage", "not JSON"),
    ],
)
def test_corrupt_snapshots(tmp_path: Path, content: bytes, match: str) -> None:
    p = tmp_path / "facts.json"
    p.write_bytes(content)
    with pytest.raises(RunError, match=match):
        load_snapshot(p)


def test_unknown_fields_are_rejected(tmp_path: Path) -> None:
    snap = snapshot_of([_snap()], Target(kind="local", name="n1"))  # type: ignore[list-item]
    data = json.loads(snap.model_dump_json(by_alias=True))
    data["nodes"][0]["gpus_invented"] = 8
    p = tmp_path / "facts.json"
    p.write_text(json.dumps(data))
    with pytest.raises(RunError, match="invalid snapshot"):
        load_snapshot(p)


def test_runs_list_names_bench_runs(tmp_path: Path) -> None:
    from clustergrade.runs import list_runs

    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / "bench.json").write_text("{}")
    (tmp_path / "r2").mkdir()
    entries = {e.id: e.problem for e in list_runs(tmp_path)}
    assert "bench run" in (entries["r1"] or "")
    assert "interrupted" in (entries["r2"] or "")
