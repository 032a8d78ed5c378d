"""Pure helpers for PCI sysfs values: classifying a function and reading link
attributes.  Nothing here touches the node."""

from __future__ import annotations

import re

NVIDIA = "0x10de"
AMD = "0x1002"
MELLANOX = "0x15b3"

_HEX_RE = re.compile(r"^0x[0-9a-f]{1,8}$")
_SPEED_RE = re.compile(r"^\s*([0-9]{1,3}(?:\.[0-9]{1,3})?)\s*GT/s")
_ADDRESS_RE = re.compile(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def is_pci_address(name: str) -> bool:
    """True for a sysfs PCI function name like ``0000:3b:00.0``."""
    return bool(_ADDRESS_RE.match(name.lower()))


def norm_hex(value: str | None) -> str | None:
    """A sysfs id ("0x10de\\n") as lower-case "0x10de", or None if it is not one."""
    if value is None:
        return None
    v = value.strip().lower()
    return v if _HEX_RE.match(v) else None


def classify(vendor: str | None, pci_class: str | None) -> str | None:
    """The kind of device checks ask about, from vendor id and class code.

    Class codes are 24-bit (base, sub, prog-if): 0x0300 VGA, 0x0302 3D
    controller, 0x0380 other display, 0x1200 processing accelerator, 0x0200
    Ethernet, 0x0207 InfiniBand, 0x0680 other bridge (NVSwitch), 0x010802 NVMe.
    """
    if vendor is None or pci_class is None:
        return None
    prefix = pci_class[2:6] if pci_class.startswith("0x") else pci_class[:4]
    if vendor == NVIDIA and prefix in ("0300", "0302"):
        return "nvidia-gpu"
    if vendor == NVIDIA and prefix == "0680":
        return "nvidia-nvswitch"
    if vendor == AMD and prefix in ("0300", "0380", "1200"):
        return "amd-gpu"
    if vendor == MELLANOX and prefix in ("0200", "0207"):
        return "mellanox-nic"
    if pci_class.lower().startswith("0x010802"):
        return "nvme"
    return None


def parse_link_speed(value: str | None) -> float | None:
    """GT/s from "16.0 GT/s PCIe" (or older "5 GT/s"); None for "Unknown" or junk."""
    if value is None:
        return None
    m = _SPEED_RE.match(value)
    return float(m.group(1)) if m else None


def parse_link_width(value: str | None) -> int | None:
    """Lanes from a sysfs width ("16"); None when absent or not a small number.

    Some bridges print 255 for "not reported"; that is not a width.
    """
    if value is None:
        return None
    v = value.strip()
    if not re.fullmatch(r"[0-9]{1,3}", v):
        return None
    n = int(v)
    return n if n <= 64 else None


def parse_numa_node(value: str | None) -> int | None:
    """The device's NUMA node; -1 (no affinity) and junk give None."""
    if value is None:
        return None
    v = value.strip()
    if not re.fullmatch(r"[0-9]{1,4}", v):
        return None
    return int(v)
