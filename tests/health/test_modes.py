"""A fatal Xid makes the node unhealthy in every output mode; a clean node is
healthy in every mode.  Nodes are replayed from real captures (nodes.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from clustergrade.health.cli import health_main
from clustergrade.health.evaluate import HealthOptions
from clustergrade.health.output import NPD_MAX, TEXTFILE_NAME
from tests.health.nodes import node, xid79_log

MODES = ("slurm", "npd", "prometheus", "json")


def run(mode: str, tmp_path: Path, dmesg: bytes | None = None, **kw: object) -> tuple[int, str]:
    out = io.StringIO()
    opts = HealthOptions(
        mode=mode,
        state_dir=tmp_path / "state",
        textfile_dir=tmp_path / "textfile" if mode == "prometheus" else None,
        **kw,  # type: ignore[arg-type]
    )
    code = health_main(opts, node(dmesg=dmesg), out=out, err=io.StringIO())
    return code, out.getvalue()


def textfile(tmp_path: Path) -> str:
    return (tmp_path / "textfile" / TEXTFILE_NAME).read_text()


@pytest.mark.parametrize("mode", MODES)
def test_fatal_xid_is_unhealthy_in_every_mode(mode: str, tmp_path: Path) -> None:
    code, text = run(mode, tmp_path, dmesg=xid79_log())
    assert code == 1
    if mode == "slurm":
        first = text.splitlines()[0]
        assert first.startswith("clustergrade health: UNHEALTHY: Xid 79 on GPU 0000:91:00")
        assert "RESTART_BM" in first
        assert "FAIL health.xid-new [GPU 0000:91:00]" in text
    elif mode == "npd":
        lines = text.splitlines()
        assert len(lines) == 1
        assert len(lines[0]) <= NPD_MAX
        assert lines[0].startswith("Xid 79 on GPU 0000:91:00: RESTART_BM")
    elif mode == "prometheus":
        assert text == ""
        prom = textfile(tmp_path)
        assert 'clustergrade_health_ok{node="gpu-node-01"} 0' in prom
        assert (
            'clustergrade_health_check_status{node="gpu-node-01",check="health.xid-new"} 2' in prom
        )
        assert 'check="health.sxid-new"} 2' in prom
    else:
        doc = json.loads(text)
        assert doc["verdict"] == "unhealthy"
        assert doc["checks"]["health.xid-new"] == "FAIL"
        assert doc["headline"].startswith("Xid 79 on GPU 0000:91:00")
        xid = [i for i in doc["items"] if i["check"] == "health.xid-new"]
        assert "GPU has fallen off the bus" in xid[0]["message"]


@pytest.mark.parametrize("mode", MODES)
def test_clean_node_is_healthy_in_every_mode(mode: str, tmp_path: Path) -> None:
    code, text = run(mode, tmp_path, expect_gpus=4, require_mounts=("/", "/proc"))
    assert code == 0, text
    if mode == "slurm":
        assert text.startswith("clustergrade health: HEALTHY")
    elif mode == "npd":
        assert text == "OK\n"
    elif mode == "prometheus":
        prom = textfile(tmp_path)
        assert 'clustergrade_health_ok{node="gpu-node-01"} 1' in prom
        assert 'check="health.gpu-count"} 0' in prom
        assert 'check="health.mounts"} 0' in prom
        assert (
            'clustergrade_health_error_counter{node="gpu-node-01",counter="pcie_replay",subject="GPU 0"} 0'
            in prom
        )
    else:
        doc = json.loads(text)
        assert doc["verdict"] == "healthy"
        assert doc["checks"]["gpu.driver-loaded"] == "PASS"
        assert doc["checks"]["health.gpu-count"] == "PASS"


def test_prometheus_without_textfile_dir_prints(tmp_path: Path) -> None:
    out = io.StringIO()
    code = health_main(
        HealthOptions(mode="prometheus", use_state=False), node(), out=out, err=io.StringIO()
    )
    assert code == 0
    assert "# TYPE clustergrade_health_ok gauge" in out.getvalue()


def test_textfile_is_replaced_atomically(tmp_path: Path) -> None:
    run("prometheus", tmp_path, dmesg=xid79_log())
    run("prometheus", tmp_path)
    files = sorted(p.name for p in (tmp_path / "textfile").iterdir())
    assert files == [TEXTFILE_NAME]


def test_unwritable_textfile_dir_exit_3(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    out, err = io.StringIO(), io.StringIO()
    code = health_main(
        HealthOptions(mode="prometheus", use_state=False, textfile_dir=blocker / "sub"),
        node(),
        out=out,
        err=err,
    )
    assert code == 3
    assert "cannot write" in err.getvalue()


def test_missing_gpu_against_gres(tmp_path: Path) -> None:
    code, text = run("npd", tmp_path, gres="gpu:a100:8(S:0-1)")
    assert code == 1
    assert text == "4/8 GPUs present\n"


def test_missing_mount(tmp_path: Path) -> None:
    code, text = run("slurm", tmp_path, require_mounts=("/", "/lustre/scratch/"))
    assert code == 1
    assert "/lustre/scratch not mounted" in text.splitlines()[0]


A100 = "nvidia/a100-sxm4-80gb-mig.xml"


def _a100(old: bytes, new: bytes) -> bytes:
    from tests.helpers import fixture_bytes

    xml = fixture_bytes(A100)
    assert xml.count(old) == 1
    return xml.replace(old, new)


@pytest.mark.parametrize(
    ("old", "new", "check", "words"),
    [
        # Derived from the real A100 capture, one element changed each.
        (
            b"<clocks_event_reason_hw_thermal_slowdown>Not Active<",
            b"<clocks_event_reason_hw_thermal_slowdown>Active<",
            "gpu.clocks-hw-throttle",
            "hw_thermal_slowdown",
        ),
        (
            b"<current_link_width>16x<",
            b"<current_link_width>8x<",
            "gpu.pcie-link-degraded",
            "x8",
        ),
        (
            b"<remapped_rows>N/A</remapped_rows>",
            b"<remapped_rows><remapped_row_corr>0</remapped_row_corr>"
            b"<remapped_row_unc>1</remapped_row_unc><remapped_row_pending>Yes</remapped_row_pending>"
            b"<remapped_row_failure>No</remapped_row_failure></remapped_rows>",
            "gpu.row-remap-pending",
            "pending",
        ),
    ],
)
def test_reused_checks_make_the_node_unhealthy(
    old: bytes, new: bytes, check: str, words: str, tmp_path: Path
) -> None:
    from clustergrade.health.evaluate import run_health

    report = run_health(HealthOptions(use_state=False), node(smi=_a100(old, new)))
    assert report.verdict == "unhealthy", [i.line() for i in report.items]
    assert report.problems[0].check == check
    assert words in report.problems[0].message
