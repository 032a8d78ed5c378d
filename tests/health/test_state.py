"""The state file: an Xid is reported once, a new one is reported, a new boot
starts afresh, and a broken state file never breaks the check."""

from __future__ import annotations

import io
import json
from pathlib import Path

from clustergrade.health.cli import health_main
from clustergrade.health.evaluate import HealthOptions, run_health
from clustergrade.health.state import HealthState, load_state, save_state, state_path
from tests.health.nodes import node, xid79_log, xid79_then_xid48_log


def npd(
    tmp_path: Path, dmesg: bytes | None = None, boot_id: bytes | None = None
) -> tuple[int, str]:
    out = io.StringIO()
    kw = {} if boot_id is None else {"boot_id": boot_id}
    code = health_main(
        HealthOptions(mode="npd", state_dir=tmp_path),
        node(dmesg=dmesg, **kw),  # type: ignore[arg-type]
        out=out,
    )
    return code, out.getvalue().strip()


def test_same_xid_is_not_reported_twice_and_a_new_one_is(tmp_path: Path) -> None:
    assert npd(tmp_path, xid79_log()) == (1, "Xid 79 on GPU 0000:91:00: RESTART_BM (+3 more)")
    # The same log a minute later: nothing new.
    assert npd(tmp_path, xid79_log()) == (0, "OK")
    # Xid 48 (double-bit ECC) arrives; Xid 79 and the SXids stay old news.
    code, msg = npd(tmp_path, xid79_then_xid48_log())
    assert code == 1
    assert msg == "Xid 48 on GPU 0000:07:00: WORKFLOW"
    assert npd(tmp_path, xid79_then_xid48_log()) == (0, "OK")


def test_a_new_boot_reports_the_log_again(tmp_path: Path) -> None:
    assert npd(tmp_path, xid79_log())[0] == 1
    assert npd(tmp_path, xid79_log())[0] == 0
    # Derived boot id (the CI VM's with its last digit changed): a reboot.
    other = b"06f9b05d-3179-4f8f-95ee-a26d5c3e598f\n"
    assert npd(tmp_path, xid79_log(), boot_id=other)[0] == 1


def test_modes_keep_separate_state(tmp_path: Path) -> None:
    assert npd(tmp_path, xid79_log())[0] == 1
    out = io.StringIO()
    code = health_main(
        HealthOptions(mode="slurm", state_dir=tmp_path), node(dmesg=xid79_log()), out=out
    )
    assert code == 1, "Slurm's check must not miss an Xid that NPD's check saw first"


def test_state_file_round_trip(tmp_path: Path) -> None:
    report = run_health(
        HealthOptions(mode="json", state_dir=tmp_path), node(dmesg=xid79_log()), now=1000.0
    )
    assert report.state_file is not None
    state, why = load_state(Path(report.state_file))
    assert why is None and state is not None
    assert state.boot_id == "06f9b05d-3179-4f8f-95ee-a26d5c3e598e"
    assert "79@0000:91:00" in state.xids
    assert state.counters["pcie_replay|00000000:01:00.0"].value == 0
    assert Path(report.state_file).name == "gpu-node-01.json-state.json"


def test_corrupt_state_is_a_first_check(tmp_path: Path) -> None:
    path = state_path(tmp_path, "gpu-node-01", "npd")
    for junk in (b"", b"{not json", b'{"schema": "other"}', b"\xff\xfe" * 1000, b"[" * 100_000):
        path.write_bytes(junk)
        assert npd(tmp_path, xid79_log())[0] == 1
    state, why = load_state(path)
    assert state is not None and why is None


def test_huge_state_file_is_ignored(tmp_path: Path) -> None:
    path = state_path(tmp_path, "gpu-node-01", "json")
    path.write_bytes(b" " * (5 * 1024 * 1024))
    report = run_health(HealthOptions(mode="json", state_dir=tmp_path), node())
    assert any("too large" in n for n in report.notes)


def test_unwritable_state_dir_warns_but_judges(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    report = run_health(HealthOptions(mode="json", state_dir=blocker / "state"), node())
    assert report.verdict == "healthy"
    assert [i.status.value for i in report.items if i.check == "health.state"] == ["WARN"]


def test_no_state_reads_and_writes_nothing(tmp_path: Path) -> None:
    report = run_health(HealthOptions(use_state=False, state_dir=tmp_path), node(dmesg=xid79_log()))
    assert report.verdict == "unhealthy"
    assert report.state_file is None
    assert list(tmp_path.iterdir()) == []


def test_save_is_atomic(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    save_state(path, HealthState(hostname="n", checked_at=1.0))
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]
    assert json.loads(path.read_text())["schema"] == "clustergrade.health-state/1"
