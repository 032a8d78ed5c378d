"""The infiniband collector and its parsers, on the real trees in
tests/fixtures/infiniband/ and on hostile variants derived from them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clustergrade.collect.network import (
    IbParseError,
    parse_counter,
    parse_pkey,
    parse_rate,
    parse_state,
)
from clustergrade.facts.network import InfinibandFacts
from clustergrade.facts.node import NodeFacts
from clustergrade.seam import PathInfo
from tests.helpers import judge, replay_facts
from tests.network.ib_tree import IB_FIXTURES, ib_facts, mapping

IB = "/sys/class/infiniband"
SCENARIOS = sorted(p.name for p in IB_FIXTURES.iterdir() if (p / "root").is_dir())


def _ib(f: NodeFacts) -> InfinibandFacts:
    assert f.infiniband is not None, f.collectors
    return f.infiniband


# -- parsers, on values seen in real captures --------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("400 Gb/sec (4X NDR)", (400.0, "4X", "NDR")),  # DeepEP#17
        ("200 Gb/sec (4X HDR)", (200.0, "4X", "HDR")),  # nccl#1412
        ("25 Gb/sec (1X EDR)", (25.0, "1X", "EDR")),  # procfs fixture
        ("10 Gb/sec (4X)", (10.0, "4X", None)),  # node_exporter fixture, nccl#489
        ("400 Gb/sec", (400.0, None, None)),  # nccl-1591-ndr (converted)
        ("2.5 Gb/sec (1X SDR)\n", (2.5, "1X", "SDR")),
    ],
)
def test_parse_rate(text: str, want: tuple[float, str | None, str | None]) -> None:
    assert parse_rate(text) == want


def test_parse_state_and_pkey_and_counter() -> None:
    assert parse_state("4: ACTIVE") == (4, "ACTIVE")
    assert parse_state("5: LinkUp") == (5, "LinkUp")
    assert parse_state("3: Disabled\n") == (3, "Disabled")
    assert parse_pkey("0x800b\n") == 0x800B
    assert parse_pkey("0x7fff") == 0x7FFF
    assert parse_counter("4294967295\n") == 4294967295
    assert parse_counter("N/A (no PMA)") is None
    for bad in ("", "ACTIVE", "4 ACTIVE"):
        with pytest.raises(IbParseError):
            parse_state(bad)
    for bad in ("", "fast", "Gb/sec"):
        with pytest.raises(IbParseError):
            parse_rate(bad)
    for bad in ("0x10000", "ffff", "", "0x"):
        with pytest.raises(IbParseError):
            parse_pkey(bad)
    with pytest.raises(IbParseError):
        parse_counter("-1")


@given(st.text(max_size=80))
def test_parsers_raise_only_typed_errors(text: str) -> None:
    for parse in (parse_state, parse_rate, parse_pkey, parse_counter):
        try:
            parse(text)
        except IbParseError:
            pass


# -- the collector on the real trees --------------------------------------------


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_scenario_collects_cleanly(name: str) -> None:
    f = ib_facts(name)
    assert f.errors == [], f.errors
    ib = _ib(f)
    assert ib.present and ib.devices
    assert all(p.state and p.rate_gbps for d in ib.devices for p in d.ports)


def test_procfs_tree() -> None:
    ib = _ib(ib_facts("procfs-mlx"))
    by = {d.name: d for d in ib.devices}
    assert by["mlx4_0"].hca_type == "MT4099"
    assert [p.port for p in by["mlx4_0"].ports] == [1, 2]
    # The archive's link_layer for port 2 has a trailing blank line.
    assert by["mlx4_0"].ports[1].link_layer == "InfiniBand"
    mlx5 = by["mlx5_0"]
    assert mlx5.fw_ver == "14.28.2006"
    assert mlx5.node_guid == "0a7f:bc12:45ef:d23b"
    port = mlx5.ports[0]
    assert (port.rate_gbps, port.width, port.speed) == (25.0, "1X", "EDR")
    assert port.hw_counters["req_cqe_error"] == 3481
    assert port.counters["symbol_error"] == 0
    assert port.pkeys is None
    assert ib.umad == [] and ib.verbs_present is False


def test_counters_without_pma_are_none() -> None:
    ib = _ib(ib_facts("node-exporter-ib"))
    i40 = next(d for d in ib.devices if d.name == "i40iw0")
    assert set(i40.ports[0].counters.values()) == {None}
    mlx4 = next(d for d in ib.devices if d.name == "mlx4_0")
    assert "symbol_error" not in mlx4.ports[0].counters
    assert mlx4.ports[0].counters["port_xmit_discards"] == 5


def test_full_pkey_table_is_read() -> None:
    """Derived: mlx5_0/1 of procfs-mlx given a 128-entry table holding the Azure
    keys at indexes 0 and 1 and 0x0000 elsewhere, plus a full key at index 127."""
    base = f"{IB}/mlx5_0/ports/1/pkeys"
    files = {f"{base}/{i}": "0x0000\n" for i in range(128)}
    files |= {f"{base}/0": "0x800b\n", f"{base}/1": "0x7fff\n", f"{base}/127": "0x8001\n"}
    port = _ib(ib_facts("procfs-mlx", files=files)).devices[1].ports[0]
    assert port.pkeys == ["0x800b", "0x7fff", "0x8001"]
    assert port.pkey_table_size == 128


def test_pci_address_vf_and_netdevs() -> None:
    """Derived: nccl-1591-ndr given a device link, physfn (a VF), sriov_numvfs
    and a netdev, the layout /sys has on an SR-IOV ConnectX-7."""
    hca = f"{IB}/mlx5_5"
    m = mapping("nccl-1591-ndr")
    m["dirs"][hca] = sorted([*m["dirs"][hca], "device"])
    m["dirs"][f"{hca}/device/net"] = ["ibp26s0v1"]
    m["files"][f"{hca}/device/sriov_numvfs"] = "0\n"
    m["stats"][f"{hca}/device"] = PathInfo(
        f"{hca}/device", exists=True, is_symlink=True, target="../../../0000:1a:00.1"
    )
    m["stats"][f"{hca}/device/physfn"] = PathInfo(f"{hca}/device/physfn", exists=True)
    f = replay_facts(["infiniband"], **m)
    assert f.errors == []
    d = _ib(f).devices[0]
    assert (d.pci_address, d.is_vf, d.sriov_numvfs, d.netdevs) == (
        "0000:1a:00.1",
        True,
        0,
        ["ibp26s0v1"],
    )


def test_no_infiniband_is_a_fact_not_an_error() -> None:
    f = replay_facts(["infiniband"], dirs={IB: None, "/dev/infiniband": None})
    assert f.errors == []
    ib = _ib(f)
    assert not ib.present and ib.devices == []
    for cid in (
        "isolation.ib-default-pkey-full",
        "isolation.ib-multiple-full-pkeys",
        "isolation.umad-open",
        "network.ib-port-down",
        "network.ib-rate-consistent",
        "network.ib-link-layer-consistent",
        "network.ib-error-counters",
    ):
        results = judge(cid, f)
        assert {r.status.value for r in results} == {"SKIP"}, cid
        assert all("no InfiniBand/RoCE devices" in r.message for r in results), cid
    assert {r.status.value for r in judge("version.mlnx-firmware", f)} == {"SKIP"}


# -- hostile variants, derived from real files ----------------------------------


@pytest.mark.parametrize(
    ("rel", "content"),
    [
        ("mlx4_0/ports/1/rate", b"40 Gb/se"),  # truncated
        ("mlx4_0/ports/1/rate", b"40 Gb/sec (4X \xff\xfeQDR)"),  # invalid UTF-8
        ("mlx4_0/ports/1/state", b""),  # empty
        ("mlx4_0/ports/1/phys_state", b"5: LinkUp" * 100_000),  # huge, no separator
        ("mlx4_0/ports/1/counters/symbol_error", b"\x00\x01"),
        ("mlx5_0/ports/1/hw_counters/out_of_buffer", b"-7"),
    ],
)
def test_hostile_values_become_errors_not_crashes(rel: str, content: bytes) -> None:
    f = ib_facts("procfs-mlx", files={f"{IB}/{rel}": content})
    assert f.collectors["infiniband"].status == "ok"
    assert f.infiniband is not None
    assert f.errors and all(e.collector == "infiniband" for e in f.errors)


def test_unreadable_listing_is_an_error() -> None:
    m = mapping("procfs-mlx")
    del m["dirs"][f"{IB}/mlx4_0/ports"]  # not recorded -> the seam answers an error
    f = replay_facts(["infiniband"], **m)
    assert f.infiniband is not None
    assert any("mlx4_0/ports" in e.message for e in f.errors)


def test_umad_access_as_this_user() -> None:
    """Derived: node-exporter-ib given /dev/infiniband/umad0 opened up to every
    user (mode 0666) and issm0 left root-only (0600)."""
    m = mapping("node-exporter-ib")
    m["dirs"]["/dev/infiniband"] = ["issm0", "rdma_cm", "umad0", "uverbs0"]
    m["stats"]["/dev/infiniband/umad0"] = PathInfo(
        "/dev/infiniband/umad0", exists=True, mode=0o020666, uid=0, readable=True, writable=True
    )
    m["stats"]["/dev/infiniband/issm0"] = PathInfo(
        "/dev/infiniband/issm0", exists=True, mode=0o020600, uid=0
    )
    f = replay_facts(["infiniband"], **m)
    ib = _ib(f)
    assert [n.path for n in ib.umad] == ["/dev/infiniband/umad0"]
    assert [n.path for n in ib.issm] == ["/dev/infiniband/issm0"]
    results = {r.subject: r.status.value for r in judge("isolation.umad-open", f)}
    assert results == {"/dev/infiniband/umad0": "FAIL", "/dev/infiniband/issm0": "PASS"}
