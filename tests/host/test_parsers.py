"""Host parsers on real captures, derived hostile variants and random text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clustergrade.collect.host import (
    HostParseError,
    kernels_from_listings,
    parse_cgroup_hints,
    parse_cpuinfo,
    parse_cpulist,
    parse_meminfo,
    parse_os_release,
    parse_taint,
)
from clustergrade.collect.pci import classify, parse_link_speed, parse_link_width, parse_numa_node
from tests.helpers import fixture_bytes

CI = "host/ci-vm/root"


def text(rel: str) -> str:
    return fixture_bytes(rel).decode()


def test_os_release_ci_vm() -> None:
    rel = parse_os_release(text(f"{CI}/etc/os-release"))
    assert rel["ID"] == "debian"
    assert rel["VERSION_ID"] == "12"
    assert rel["VERSION_CODENAME"] == "bookworm"
    assert rel["PRETTY_NAME"] == "Debian GNU/Linux 12 (bookworm)"


def test_os_release_quotes_and_junk() -> None:
    rel = parse_os_release('# c\nID=\'rhel\'\nbad line\nlower=x\nNAME="A \\"B\\""\n')
    assert rel == {"ID": "rhel", "NAME": 'A "B"'}


def test_cpuinfo_ci_vm() -> None:
    info = parse_cpuinfo(text(f"{CI}/proc/cpuinfo"))
    assert info.threads == 2
    assert info.vendor == "AuthenticAMD"
    assert "hypervisor" in info.flags


def test_cpuinfo_truncated_is_partial() -> None:
    full = text(f"{CI}/proc/cpuinfo")
    info = parse_cpuinfo(full[: len(full) // 3])
    assert info.threads in (0, 1)


def test_meminfo_ci_vm_and_node_format() -> None:
    mem = parse_meminfo(text(f"{CI}/proc/meminfo"))
    assert mem["MemTotal"] == 24683568
    assert mem["SwapTotal"] == 0
    node = parse_meminfo(text("host/node-exporter/root/sys/devices/system/node/node1/meminfo"))
    assert node["MemTotal"] == 134217728
    assert node["HugePages_Total"] == 0


def test_cpulist() -> None:
    assert parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpulist("") == []
    assert parse_cpulist("3-1,x,-,5") == [5]


def test_taint() -> None:
    assert parse_taint("0\n") == (0, [])
    assert parse_taint("4609") == (4609, ["P", "W", "O"])
    with pytest.raises(HostParseError):
        parse_taint("garbage")


def test_cgroup_hints() -> None:
    assert parse_cgroup_hints(text(f"{CI}/proc/1/cgroup")) == []
    assert parse_cgroup_hints("0::/kubepods/besteffort/pod1/abc\n") == ["cgroup:kubepods"]


def test_kernels_from_listings() -> None:
    ks = kernels_from_listings(
        ["vmlinuz-6.8.0-90-generic", "vmlinuz-0-rescue-abc", "config-6.8.0-90-generic"],
        ["6.8.0-90-generic", "6.8.0-85-generic", "extra"],
    )
    assert [(k.release, k.sources) for k in ks] == [
        ("6.8.0-85-generic", ["/lib/modules"]),
        ("6.8.0-90-generic", ["/boot", "/lib/modules"]),
    ]


def test_pci_helpers() -> None:
    assert classify("0x10de", "0x030200") == "nvidia-gpu"
    assert classify("0x10de", "0x068000") == "nvidia-nvswitch"
    assert classify("0x1002", "0x120000") == "amd-gpu"
    assert classify("0x15b3", "0x020700") == "mellanox-nic"
    assert classify("0x144d", "0x010802") == "nvme"
    assert classify("0x1af4", "0x020000") is None
    assert parse_link_speed("16.0 GT/s PCIe") == 16.0
    assert parse_link_speed("Unknown") is None
    assert parse_link_width("16\n") == 16
    assert parse_link_width("255") is None
    assert parse_numa_node("-1") is None
    assert parse_numa_node("3\n") == 3


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_parsers_total_on_random_text(s: str) -> None:
    parse_os_release(s)
    parse_meminfo(s)
    parse_cpulist(s)
    parse_cpuinfo(s)
    parse_cgroup_hints(s)
    parse_link_speed(s)
    parse_link_width(s)
    parse_numa_node(s)
    classify(s, s)
    kernels_from_listings(s.split(), s.split())
    try:
        parse_taint(s)
    except HostParseError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=1500))
def test_parsers_total_on_invalid_utf8(data: bytes) -> None:
    s = (fixture_bytes(f"{CI}/proc/cpuinfo")[:400] + data).decode("utf-8", errors="replace")
    parse_cpuinfo(s)
    parse_meminfo(s)
