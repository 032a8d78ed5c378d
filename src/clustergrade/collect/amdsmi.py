"""Parse ``amd-smi version`` and ``amd-smi static --json`` (pure).

amd-smi's JSON has changed shape across ROCm releases (a bare list of GPUs,
or ``{"gpu_data": [...]}``; sizes as ``{"value": .., "unit": ..}`` or as
"196592 MB" strings), so the parser looks for what it knows and ignores the
rest.  Anything unreadable raises :class:`AmdSmiParseError` and nothing else.
"""

from __future__ import annotations

import json
import re
from typing import Any

from clustergrade.facts.gpu import AmdGpu

MAX_GPUS = 256
_MISSING = {"", "n/a", "na", "none", "unknown", "not supported"}
_TOOL = re.compile(r"AMDSMI Tool:\s*([^\s|]+)")
_ROCM = re.compile(r"ROCm version:\s*([^\s|]+)")
_AMDGPU = re.compile(r"amdgpu version:\s*([^\s|]+)")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?\s*$", re.IGNORECASE)
_UNIT_MIB = {
    "b": 1 / (1024 * 1024),
    "kb": 1000 / (1024 * 1024),
    "kib": 1 / 1024,
    "mb": 1.0,  # amd-smi prints MB for MiB-sized VRAM (196592 MB on a 192 GiB MI300X)
    "mib": 1.0,
    "gb": 1024.0,
    "gib": 1024.0,
    "tb": 1024.0 * 1024,
    "tib": 1024.0 * 1024,
}


class AmdSmiParseError(ValueError):
    """amd-smi output that could not be read."""


def _clean(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return None if text.lower() in _MISSING else text[:200]


def parse_amd_smi_version(text: str) -> dict[str, str | None]:
    """Tool, ROCm and amdgpu driver versions from ``amd-smi version``'s line.

    "N/A" (a ROCm version amd-smi could not find) is None.
    """

    def grab(rx: re.Pattern[str]) -> str | None:
        m = rx.search(text)
        return None if m is None else _clean(m.group(1))

    return {"tool": grab(_TOOL), "rocm": grab(_ROCM), "amdgpu": grab(_AMDGPU)}


def _mib(size: Any) -> int | None:
    value: Any
    if isinstance(size, dict):
        value, unit = size.get("value"), str(size.get("unit") or "MB")
    else:
        text = _clean(size)
        if text is None:
            return None
        m = _SIZE.match(text)
        if m is None:
            return None
        value, unit = m.group(1), m.group(2) or "MB"
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    factor = _UNIT_MIB.get(unit.lower())
    if factor is None or number != number or number < 0 or number > 1e15:
        return None
    return int(number * factor)


def _get(d: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


def parse_amd_smi_static(text: str) -> tuple[list[AmdGpu], str | None]:
    """(GPUs, driver version) from ``amd-smi static --json``."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise AmdSmiParseError(f"not JSON: {type(exc).__name__}") from None
    if isinstance(data, dict):
        data = data.get("gpu_data", data.get("gpus"))
    if not isinstance(data, list):
        raise AmdSmiParseError("no list of GPUs in amd-smi static output")
    gpus: list[AmdGpu] = []
    driver: str | None = None
    for pos, entry in enumerate(data[:MAX_GPUS]):
        if not isinstance(entry, dict):
            continue
        raw_index = entry.get("gpu", pos)
        index = raw_index if isinstance(raw_index, int) and 0 <= raw_index < 2**31 else pos
        vbios = _get(entry, "vbios", "version") or _get(entry, "ifwi", "version")
        vram = _get(entry, "vram", "size")
        if vram is None:
            vram = _get(entry, "vram", "vram_size")
        drv = _get(entry, "driver", "version") or _get(entry, "driver", "driver_version")
        driver = driver or _clean(drv)
        gpus.append(
            AmdGpu(
                index=index,
                model=_clean(_get(entry, "asic", "market_name")),
                vbios=_clean(vbios),
                pci_bus_id=_clean(_get(entry, "bus", "bdf")),
                serial=_clean(_get(entry, "asic", "asic_serial")),
                memory_total_mib=_mib(vram),
            )
        )
    return gpus, driver
