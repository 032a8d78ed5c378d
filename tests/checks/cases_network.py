"""Check cases for the network area, built by replaying the sysfs trees in
tests/fixtures/infiniband/ (see PROVENANCE.md there) through the infiniband
collector."""

from __future__ import annotations

from clustergrade.facts.node import NodeFacts
from clustergrade.results import Status
from tests.helpers import Case, replay_facts
from tests.network.ib_tree import ib_facts, mapping, path_info

PROCFS = "procfs-mlx (prometheus/procfs sysfs fixture: mlx4_0 2x QDR, mlx5_0 1x EDR)"
NODEEXP = "node-exporter-ib (prometheus/node_exporter sysfs fixture: i40iw0, mlx4_0)"
HDR = "nccl-1412-hdr (ibstatus in NVIDIA/nccl#1412: 3 rails 200 Gb/s HDR)"
DISABLED = "nccl-489-disabled (ibstatus in NVIDIA/nccl#489: mlx5_1 DOWN/Disabled)"
ROCE = "deepep-17-roce (ibstatus in deepseek-ai/DeepEP#17: RoCE, 200 + 2x 400 Gb/s)"
NDR = "nccl-1591-ndr (ibstat in NVIDIA/nccl#1591: CX-7 MT4129 fw 28.41.1000, 400 Gb/s)"
IB = "/sys/class/infiniband"
#: Real P_Key table of an Azure HPC VM (Microsoft's setup-mpi documentation):
#: full member of tenant partition 0x000b, limited member of the default one.
AZURE_PKEYS = {"0": "0x800b\n", "1": "0x7fff\n"}


def pkeys(hca: str, port: int, keys: dict[str, str], name: str = "procfs-mlx") -> NodeFacts:
    base = f"{IB}/{hca}/ports/{port}/pkeys"
    return ib_facts(name, files={f"{base}/{i}": v for i, v in keys.items()})


def no_ib() -> NodeFacts:
    return replay_facts(["infiniband"], dirs={IB: None, "/dev/infiniband": None})


def umad_facts(mode: int, readable: bool, writable: bool) -> NodeFacts:
    m = mapping("node-exporter-ib")
    m["stats"]["/dev/infiniband/umad0"] = path_info(
        "/dev/infiniband/umad0",
        {
            "mode": 0o020000 | mode,
            "uid": 0,
            "gid": 0,
            "is_char_device": True,
            "readable": readable,
            "writable": writable,
        },
    )
    m["dirs"]["/dev/infiniband"] = ["umad0"]
    return replay_facts(["infiniband"], **m)


CASES: list[Case] = [
    # isolation.ib-default-pkey-full
    Case(
        "isolation.ib-default-pkey-full",
        Status.PASS,
        lambda: pkeys("mlx5_0", 1, AZURE_PKEYS),
        PROCFS + "; changed: mlx5_0/1 given the Azure HPC P_Key table 0x800b, 0x7fff",
        subject="mlx5_0/1",
    ),
    Case(
        "isolation.ib-default-pkey-full",
        Status.FAIL,
        lambda: pkeys("mlx5_0", 1, {"0": "0xffff\n", "1": "0x0000\n"}),
        PROCFS + "; changed: mlx5_0/1 given P_Key table 0xffff, 0x0000 (full default member)",
        subject="mlx5_0/1",
    ),
    Case("isolation.ib-default-pkey-full", Status.SKIP, no_ib, "no /sys/class/infiniband"),
    Case(
        "isolation.ib-default-pkey-full",
        Status.SKIP,
        lambda: ib_facts("deepep-17-roce"),
        ROCE + ": Ethernet link layer",
        subject="mlx5_1/1",
    ),
    # isolation.ib-multiple-full-pkeys
    Case(
        "isolation.ib-multiple-full-pkeys",
        Status.PASS,
        lambda: pkeys("mlx5_0", 1, AZURE_PKEYS),
        PROCFS + "; changed: mlx5_0/1 given the Azure HPC P_Key table 0x800b, 0x7fff",
    ),
    Case(
        "isolation.ib-multiple-full-pkeys",
        Status.WARN,
        lambda: pkeys("mlx5_0", 1, {**AZURE_PKEYS, "2": "0xf001\n"}),
        PROCFS + "; changed: mlx5_0/1 given 0x800b, 0x7fff and a second full key 0xf001",
    ),
    Case("isolation.ib-multiple-full-pkeys", Status.SKIP, no_ib, "no /sys/class/infiniband"),
    # isolation.umad-open
    Case(
        "isolation.umad-open",
        Status.PASS,
        lambda: umad_facts(0o600, False, False),
        NODEEXP + "; changed: /dev/infiniband/umad0 added, mode 0600 root, not openable",
    ),
    Case(
        "isolation.umad-open",
        Status.FAIL,
        lambda: umad_facts(0o666, True, True),
        NODEEXP + "; changed: /dev/infiniband/umad0 added, mode 0666, openable by this user",
    ),
    Case("isolation.umad-open", Status.SKIP, no_ib, "no /sys/class/infiniband"),
    # network.ib-port-down
    Case("network.ib-port-down", Status.PASS, lambda: ib_facts("node-exporter-ib"), NODEEXP),
    Case("network.ib-port-down", Status.PASS, lambda: ib_facts("nccl-1412-hdr"), HDR),
    Case(
        "network.ib-port-down",
        Status.SKIP,
        lambda: ib_facts("nccl-489-disabled"),
        DISABLED,
        subject="mlx5_1/1",
    ),
    Case(
        "network.ib-port-down",
        Status.FAIL,
        lambda: ib_facts("node-exporter-ib", files={f"{IB}/mlx4_0/ports/2/state": "2: INIT\n"}),
        NODEEXP + "; changed: mlx4_0/2 state 2: INIT (LinkUp, no SM)",
        subject="mlx4_0/2",
    ),
    Case(
        "network.ib-port-down",
        Status.FAIL,
        lambda: ib_facts("procfs-mlx"),
        PROCFS + ": mlx5_0/1 phys_state is '4: ACTIVE' (4 is not LinkUp)",
        subject="mlx5_0/1",
    ),
    Case(
        "network.ib-port-down",
        Status.SKIP,
        lambda: ib_facts(
            "node-exporter-ib",
            files={
                f"{IB}/mlx4_0/ports/2/state": "1: DOWN\n",
                f"{IB}/mlx4_0/ports/2/phys_state": "3: Disabled\n",
            },
        ),
        NODEEXP + "; changed: mlx4_0/2 DOWN / Disabled",
        subject="mlx4_0/2",
    ),
    # network.ib-rate-consistent
    Case(
        "network.ib-rate-consistent",
        Status.PASS,
        lambda: ib_facts("procfs-mlx"),
        PROCFS,
        subject="MT4099",
    ),
    Case(
        "network.ib-rate-consistent",
        Status.FAIL,
        lambda: ib_facts("procfs-mlx", files={f"{IB}/mlx4_0/ports/2/rate": "20 Gb/sec (4X DDR)\n"}),
        PROCFS + "; changed: mlx4_0/2 rate 20 Gb/sec (4X DDR), trained down",
        subject="MT4099",
    ),
    Case("network.ib-rate-consistent", Status.PASS, lambda: ib_facts("nccl-1412-hdr"), HDR),
    Case(
        "network.ib-rate-consistent",
        Status.FAIL,
        lambda: ib_facts("deepep-17-roce"),
        ROCE + ": mlx5_0 at 200 beside two 400 Gb/s rails (HCA type not captured)",
    ),
    # network.ib-link-layer-consistent
    Case("network.ib-link-layer-consistent", Status.PASS, lambda: ib_facts("deepep-17-roce"), ROCE),
    Case("network.ib-link-layer-consistent", Status.PASS, lambda: ib_facts("procfs-mlx"), PROCFS),
    Case(
        "network.ib-link-layer-consistent",
        Status.WARN,
        lambda: ib_facts("procfs-mlx", files={f"{IB}/mlx4_0/ports/2/link_layer": "Ethernet\n"}),
        PROCFS + "; changed: mlx4_0/2 link_layer Ethernet",
        subject="MT4099",
    ),
    # network.ib-error-counters
    Case("network.ib-error-counters", Status.PASS, lambda: ib_facts("procfs-mlx"), PROCFS),
    Case(
        "network.ib-error-counters",
        Status.WARN,
        lambda: ib_facts(
            "procfs-mlx", files={f"{IB}/mlx4_0/ports/1/counters/symbol_error": "1245\n"}
        ),
        PROCFS + "; changed: mlx4_0/1 symbol_error 1245",
        subject="mlx4_0/1",
    ),
    Case(
        "network.ib-error-counters",
        Status.SKIP,
        lambda: ib_facts("node-exporter-ib"),
        NODEEXP + ": i40iw0 counters are 'N/A (no PMA)'",
        subject="i40iw0/1",
    ),
    # version.mlnx-firmware (KB rule components/mlnx-firmware.yaml)
    Case(
        "version.mlnx-firmware",
        Status.FAIL,
        lambda: ib_facts("nccl-1591-ndr"),
        NDR + ": 28.41.1000 is below 28.43.3608 (CVE-2025-23256)",
        subject="mlx5_5",
    ),
    Case(
        "version.mlnx-firmware",
        Status.FAIL,
        lambda: ib_facts("procfs-mlx"),
        PROCFS + ": mlx5_0 ConnectX-4 Lx fw 14.28.2006 < 14.32.1908",
        subject="mlx5_0",
    ),
    Case(
        "version.mlnx-firmware",
        Status.PASS,
        lambda: ib_facts("procfs-mlx", files={f"{IB}/mlx5_0/fw_ver": "14.32.1908\n"}),
        PROCFS + "; changed: mlx5_0 fw_ver 14.32.1908",
        subject="mlx5_0",
    ),
]
