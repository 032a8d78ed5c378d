"""Hostile or missing inputs never crash the check: they give a verdict, and
whatever could not be found out is "unknown" (npd exit 2), never healthy."""

from __future__ import annotations

import io
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustergrade.collect.kernel_log import DMESG_ARGV, JOURNALCTL_ARGV
from clustergrade.health.cli import health_main
from clustergrade.health.evaluate import HealthOptions, gres_gpu_count, mount_points
from clustergrade.health.output import NPD_MAX
from clustergrade.seam import CommandResult
from tests.health.nodes import node, xid79_log
from tests.helpers import fixture_bytes


def npd(host: object, **kw: object) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    opts = HealthOptions(mode="npd", use_state=False, **kw)  # type: ignore[arg-type]
    code = health_main(opts, host, out=out, err=err)  # type: ignore[arg-type]
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and len(lines[0]) <= NPD_MAX, out.getvalue()
    return code, lines[0]


def test_kernel_log_not_recorded_is_unknown() -> None:
    host = node(
        commands={DMESG_ARGV: CommandResult(DMESG_ARGV, None, error="not recorded in capture")}
    )
    code, msg = npd(host)
    assert code == 2
    assert msg.startswith("unknown: ")


def test_restricted_dmesg_is_unknown() -> None:
    from tests.kernel_log.replay import ci_vm_restricted_dmesg

    host = node(commands={DMESG_ARGV: ci_vm_restricted_dmesg()})
    code, msg = npd(host)
    # No syslog file is recorded either: nothing can be known about Xids.
    assert code == 2, msg


def test_derived_xml_variants_do_not_crash() -> None:
    for name in (
        "derived-a100-truncated.xml",
        "derived-empty.xml",
        "derived-p100-invalid-utf8.xml",
    ):
        code, _ = npd(node(smi=fixture_bytes("nvidia/" + name)))
        assert code in (0, 1, 2)


def test_broken_thresholds_file_is_unknown(tmp_path: Path) -> None:
    bad = tmp_path / "t.yaml"
    bad.write_bytes(b"\xff\xfe garbage")
    code, msg = npd(node(dmesg=xid79_log()), thresholds_path=bad)
    assert code == 2
    assert msg.startswith("unknown: health check failed")


def test_broken_kb_is_unknown(tmp_path: Path) -> None:
    code, _ = npd(node(), kb_dir=tmp_path / "no-kb")
    assert code == 2


def test_journal_timeout_falls_back() -> None:
    host = node(commands={JOURNALCTL_ARGV: CommandResult(JOURNALCTL_ARGV, None, timed_out=True)})
    code, _ = npd(host)
    assert code in (0, 2)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dmesg=st.binary(max_size=2000), smi=st.binary(max_size=2000))
def test_random_bytes_never_crash(dmesg: bytes, smi: bytes) -> None:
    code, _ = npd(node(dmesg=dmesg, smi=smi))
    assert code in (0, 1, 2)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tail=st.binary(max_size=400))
def test_real_log_with_hostile_tail(tail: bytes) -> None:
    code, msg = npd(node(dmesg=xid79_log() + tail))
    # The real Xid 79 is still seen whatever follows it.
    assert code == 1, msg


@given(st.text(max_size=300))
def test_parsers_are_total(text: str) -> None:
    gres_gpu_count(text)
    mount_points(text)


def test_gres() -> None:
    assert gres_gpu_count("gpu:8") == 8
    assert gres_gpu_count("gpu:h100:8(S:0-1)") == 8
    assert gres_gpu_count("gpu:a100:4,gpu:t4:2,nic:1") == 6
    assert gres_gpu_count("(null)") is None
    assert gres_gpu_count("mps:100") is None


def test_mount_points_real_and_escaped() -> None:
    from tests.health.nodes import PROC_MOUNTS

    have = mount_points(PROC_MOUNTS.decode())
    assert {"/", "/proc", "/sys", "/dev/shm"} <= have
    # /proc/mounts writes a space in a mount point as \040.
    assert "/mnt/my data" in mount_points("server:/x /mnt/my\\040data nfs rw 0 0\n")
