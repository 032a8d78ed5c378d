"""Check cases for the host area, built by replaying tests/fixtures/host/
captures (see PROVENANCE.md there) through the host collectors."""

from __future__ import annotations

from typing import Any

from clustergrade.facts.node import NodeFacts
from clustergrade.results import Status
from tests.helpers import Case
from tests.host.fixture_tree import tree_facts

CI = "ci-vm capture (Debian 12 VM, no GPU)"
RUNNING = "6.18.44-fc-v1098"


def ci(**override: Any) -> NodeFacts:
    return tree_facts("ci-vm", **override)


def ci_with_files(files: dict[str, str]) -> NodeFacts:
    return ci(files=files)


def gpu_node(**mem: object) -> NodeFacts:
    """ci-vm with its PCI section replaced by the a100-derived capture's."""
    base = ci()
    pci = tree_facts("a100-derived", ["pci"]).pci
    memory = base.memory
    assert memory is not None
    return base.model_copy(update={"pci": pci, "memory": memory.model_copy(update=mem)})


def a100(**files: str) -> NodeFacts:
    prefix = "/sys/bus/pci/devices/0000:01:00.0/"
    return tree_facts("a100-derived", ["pci"], files={prefix + k: v for k, v in files.items()})


def cpu_changed(**update: object) -> NodeFacts:
    base = ci()
    cpu = base.cpu
    assert cpu is not None
    return base.model_copy(update={"cpu": cpu.model_copy(update=update)})


def os_changed(**update: object) -> NodeFacts:
    base = ci()
    os_ = base.os
    assert os_ is not None
    return base.model_copy(update={"os": os_.model_copy(update=update)})


def numa_node1_kb(kb: int) -> NodeFacts:
    f = tree_facts("node-exporter", ["memory"])
    mem = f.memory
    assert mem is not None
    nodes = [
        n.model_copy(update={"mem_total_kb": kb}) if n.node == 1 else n for n in mem.numa_nodes
    ]
    return f.model_copy(update={"memory": mem.model_copy(update={"numa_nodes": nodes})})


CASES: list[Case] = [
    # host.kernel-reboot-pending
    Case("host.kernel-reboot-pending", Status.SKIP, ci, CI + ": /boot is empty"),
    Case(
        "host.kernel-reboot-pending",
        Status.PASS,
        lambda: ci(dirs={"/boot": [f"vmlinuz-{RUNNING}", "vmlinuz-6.18.40-fc-v1098"]}),
        CI + "; changed: /boot lists the running kernel and an older one",
    ),
    Case(
        "host.kernel-reboot-pending",
        Status.WARN,
        lambda: ci(dirs={"/boot": [f"vmlinuz-{RUNNING}", "vmlinuz-6.18.50-fc-v1098"]}),
        CI + "; changed: /boot lists a newer 6.18.50 image beside the running one",
    ),
    # host.kernel-tainted
    Case("host.kernel-tainted", Status.PASS, ci, CI + ": tainted=0"),
    Case(
        "host.kernel-tainted",
        Status.PASS,
        lambda: ci_with_files({"/proc/sys/kernel/tainted": "12289\n"}),
        CI + "; changed: tainted=12289 (P, O, E: what the NVIDIA module sets)",
    ),
    Case(
        "host.kernel-tainted",
        Status.WARN,
        lambda: ci_with_files({"/proc/sys/kernel/tainted": "4609\n"}),
        CI + "; changed: tainted=4609 (P, W, O: a kernel warning fired)",
    ),
    # host.unprivileged-userns
    Case(
        "host.unprivileged-userns",
        Status.WARN,
        ci,
        CI + ": max_user_namespaces=96362, no restricting knob",
    ),
    Case(
        "host.unprivileged-userns",
        Status.PASS,
        lambda: ci_with_files({"/proc/sys/kernel/unprivileged_userns_clone": "0\n"}),
        CI + "; changed: kernel.unprivileged_userns_clone=0 present",
    ),
    Case(
        "host.unprivileged-userns",
        Status.PASS,
        lambda: ci_with_files({"/proc/sys/user/max_user_namespaces": "0\n"}),
        CI + "; changed: user.max_user_namespaces=0",
    ),
    # host.swap
    Case("host.swap", Status.SKIP, ci, CI + ": no GPU, not a GPU node"),
    Case("host.swap", Status.PASS, gpu_node, CI + " (SwapTotal 0) with PCI from a100-derived"),
    Case(
        "host.swap",
        Status.WARN,
        lambda: gpu_node(swap_total_kb=8388608),
        CI + " with PCI from a100-derived; changed: swap_total_kb=8388608",
    ),
    # host.cpu-governor
    Case("host.cpu-governor", Status.SKIP, ci, CI + ": hypervisor flag, no cpufreq"),
    Case(
        "host.cpu-governor",
        Status.PASS,
        lambda: cpu_changed(hypervisor=False, cpufreq_present=True, governors={"performance": 2}),
        CI + "; changed: bare metal with both CPUs on performance",
    ),
    Case(
        "host.cpu-governor",
        Status.WARN,
        lambda: cpu_changed(hypervisor=False, cpufreq_present=True, governors={"powersave": 2}),
        CI + "; changed: bare metal with both CPUs on powersave",
    ),
    # host.numa-balanced
    Case("host.numa-balanced", Status.SKIP, ci, CI + ": one NUMA node"),
    Case(
        "host.numa-balanced",
        Status.PASS,
        lambda: tree_facts("node-exporter", ["memory"]),
        "node-exporter capture: two nodes of ~128 GiB",
    ),
    Case(
        "host.numa-balanced",
        Status.WARN,
        lambda: numa_node1_kb(33554432),
        "node-exporter capture; changed: node1 MemTotal 32 GiB",
    ),
    # host.os-supported
    Case("host.os-supported", Status.PASS, ci, CI + ": Debian 12, LTS until 2028-06-30"),
    Case(
        "host.os-supported",
        Status.WARN,
        lambda: os_changed(
            version_id="11",
            version_codename="bullseye",
            pretty_name="Debian GNU/Linux 11 (bullseye)",
        ),
        CI + "; changed: os-release says Debian 11 (LTS ended 2026-08-31)",
    ),
    Case(
        "host.os-supported",
        Status.WARN,
        lambda: os_changed(
            id="ubuntu",
            version_id="20.04",
            version_codename="focal",
            pretty_name="Ubuntu 20.04.6 LTS",
        ),
        CI + "; changed: os-release says Ubuntu 20.04",
    ),
    # pci.link-degraded
    Case("pci.link-degraded", Status.SKIP, ci, CI + ": no GPU or NIC"),
    Case("pci.link-degraded", Status.PASS, a100, "a100-derived: x16 at 16.0 GT/s"),
    Case(
        "pci.link-degraded",
        Status.FAIL,
        lambda: a100(current_link_width="8\n"),
        "a100-derived; changed: current_link_width 8",
    ),
    Case(
        "pci.link-degraded",
        Status.WARN,
        lambda: a100(current_link_speed="2.5 GT/s PCIe\n"),
        "a100-derived; changed: current_link_speed 2.5 GT/s (idle downshift)",
    ),
    Case(
        "pci.link-degraded",
        Status.WARN,
        lambda: tree_facts("rtx-a4000-lspci-derived", ["pci"]),
        "rtx-a4000-lspci-derived: LnkSta 2.5GT/s (downgraded) of LnkCap 16GT/s, x16 of x16",
    ),
]
