"""Parse ``nvidia-smi -q -x`` (pure).

The XML comes from a program on an audited node, so it is treated as hostile:
it is parsed with defusedxml (no entity expansion, no external references),
with a bound on the number of GPUs, and whatever parsed before a truncation or
an encoding error is kept.  The result always carries the facts it could read
and, when something went wrong, a :class:`NvsmiXmlError` saying what; nothing
else is ever raised.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from clustergrade.facts.gpu import (
    Clocks,
    EccCounts,
    Fabric,
    NvidiaGpu,
    PcieLink,
    RetiredPages,
    RowRemap,
)

#: More GPUs than any node has: the rest of a runaway document is ignored.
MAX_GPUS = 256
_CHUNK = 64 * 1024
#: Values nvidia-smi prints for "no reading".
_MISSING = {
    "",
    "n/a",
    "[n/a]",
    "not supported",
    "[not supported]",
    "unknown error",
    "[unknown error]",
    "unknown",
    "none",
    "insufficient permissions",
    "[insufficient permissions]",
    "not available",
    "gpu requires reset",
    "[gpu requires reset]",
}
_NUM = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")


class NvsmiXmlError(ValueError):
    """The XML could not be read completely; the result holds what could."""


@dataclass
class NvsmiParse:
    driver_version: str | None = None
    cuda_version: str | None = None
    attached_gpus: int | None = None
    gpus: list[NvidiaGpu] = field(default_factory=list)
    error: NvsmiXmlError | None = None
    #: True when the document root was reached and closed.
    complete: bool = False


class _Builder:
    """A tree builder that keeps the partial tree when parsing stops early
    (ElementTree's own builder drops it)."""

    def __init__(self) -> None:
        self.root: ET.Element | None = None
        self._stack: list[ET.Element] = []
        self._text: list[str] = []
        self.closed = False

    def _flush(self) -> None:
        if self._text and self._stack:
            el = self._stack[-1]
            joined = "".join(self._text)
            if len(el):
                last = el[-1]
                last.tail = (last.tail or "") + joined
            else:
                el.text = (el.text or "") + joined
        self._text = []

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        self._flush()
        el = ET.Element(tag, dict(attrs))
        if self._stack:
            self._stack[-1].append(el)
        elif self.root is None:
            self.root = el
        self._stack.append(el)

    def end(self, tag: str) -> None:
        self._flush()
        if self._stack:
            self._stack.pop()
            if not self._stack:
                self.closed = True

    def data(self, text: str) -> None:
        # Cap text per element so a hostile document cannot grow one string
        # without bound.
        if sum(len(t) for t in self._text) < 65536:
            self._text.append(text)

    def close(self) -> ET.Element | None:
        self._flush()
        return self.root


def _tree(data: bytes) -> tuple[ET.Element | None, bool, NvsmiXmlError | None]:
    """Parse as far as possible: (root or None, closed, error)."""
    error: NvsmiXmlError | None = None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Replace the bad bytes and go on: one mangled serial must not lose
        # every other reading.
        text = data.decode("utf-8", errors="replace")
        error = NvsmiXmlError(f"invalid UTF-8 at byte {exc.start}; replaced")
    # The declaration may name another encoding; the text is already decoded.
    text = re.sub(r"^\s*<\?xml[^>]*\?>", "", text, count=1)
    builder = _Builder()
    parser = DefusedXMLParser(target=builder)
    try:
        for i in range(0, len(text), _CHUNK):
            parser.feed(text[i : i + _CHUNK])
        parser.close()
    except ET.ParseError as exc:
        error = NvsmiXmlError(f"malformed XML: {exc}")
    except DefusedXmlException as exc:
        error = NvsmiXmlError(f"forbidden XML construct: {type(exc).__name__}")
    except (ValueError, RecursionError, MemoryError) as exc:
        error = NvsmiXmlError(f"unreadable XML: {type(exc).__name__}")
    return builder.close(), builder.closed, error


def _text(el: ET.Element | None, path: str) -> str | None:
    if el is None:
        return None
    found = el.find(path)
    if found is None or found.text is None:
        return None
    value = " ".join(found.text.split())
    return None if value.lower() in _MISSING else value


def _num(el: ET.Element | None, path: str) -> float | None:
    value = _text(el, path)
    if value is None:
        return None
    m = _NUM.match(value)
    return float(m.group(1)) if m else None


def _int(el: ET.Element | None, path: str) -> int | None:
    value = _num(el, path)
    if value is None or value != value or abs(value) > 2**62:
        return None
    return int(value)


def _flag(el: ET.Element | None, path: str) -> bool | None:
    value = _text(el, path)
    if value is None:
        return None
    low = value.lower()
    if low in ("enabled", "yes", "active", "on", "true"):
        return True
    if low in ("disabled", "no", "not active", "off", "false"):
        return False
    return None


def _sum(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _ecc_side(side: ET.Element | None) -> tuple[int | None, int | None]:
    """(correctable, uncorrectable) of one <volatile>/<aggregate> block.

    Ampere-era drivers split SRAM and DRAM (and, from 550, SRAM uncorrectable
    into parity and SEC-DED); older ones count single and double bit totals.
    """
    if side is None:
        return None, None
    corr = _sum(
        [
            _int(side, "sram_correctable"),
            _int(side, "dram_correctable"),
            _int(side, "single_bit/total"),
        ]
    )
    unc = _sum(
        [
            _int(side, "sram_uncorrectable"),
            _int(side, "sram_uncorrectable_parity"),
            _int(side, "sram_uncorrectable_secded"),
            _int(side, "dram_uncorrectable"),
            _int(side, "double_bit/total"),
        ]
    )
    return corr, unc


def _throttle(gpu: ET.Element) -> list[str] | None:
    block = gpu.find("clocks_event_reasons")
    prefix = "clocks_event_reason_"
    if block is None:
        block = gpu.find("clocks_throttle_reasons")
        prefix = "clocks_throttle_reason_"
    if block is None:
        return None
    active: list[str] = []
    seen = False
    for child in block:
        if not child.tag.startswith(prefix):
            continue
        state = _flag(block, child.tag)
        if state is None:
            continue
        seen = True
        if state:
            active.append(child.tag[len(prefix) :])
    return active if seen else None


def _gpu(index: int, gpu: ET.Element) -> NvidiaGpu:
    volatile = gpu.find("ecc_errors/volatile")
    aggregate = gpu.find("ecc_errors/aggregate")
    v_corr, v_unc = _ecc_side(volatile)
    a_corr, a_unc = _ecc_side(aggregate)
    rp = gpu.find("retired_pages")
    rr = gpu.find("remapped_rows")
    pcie = gpu.find("pci/pci_gpu_link_info")
    power = gpu.find("gpu_power_readings")
    if power is None:
        power = gpu.find("power_readings")
    limit = _num(power, "current_power_limit")
    if limit is None:
        limit = _num(power, "enforced_power_limit")
    fabric = gpu.find("fabric")
    return NvidiaGpu(
        index=index,
        name=_text(gpu, "product_name"),
        serial=_text(gpu, "serial"),
        uuid=_text(gpu, "uuid"),
        vbios=_text(gpu, "vbios_version"),
        pci_bus_id=_text(gpu, "pci/pci_bus_id") or gpu.get("id"),
        minor_number=_int(gpu, "minor_number"),
        memory_total_mib=_int(gpu, "fb_memory_usage/total"),
        ecc_current=_flag(gpu, "ecc_mode/current_ecc"),
        ecc_pending=_flag(gpu, "ecc_mode/pending_ecc"),
        ecc=EccCounts(
            volatile_correctable=v_corr,
            volatile_uncorrectable=v_unc,
            aggregate_correctable=a_corr,
            aggregate_uncorrectable=a_unc,
        ),
        retired_pages=RetiredPages(
            single_bit=_int(rp, "multiple_single_bit_retirement/retired_count"),
            double_bit=_int(rp, "double_bit_retirement/retired_count"),
            pending=_flag(rp, "pending_retirement"),
        ),
        row_remap=RowRemap(
            correctable=_int(rr, "remapped_row_corr"),
            uncorrectable=_int(rr, "remapped_row_unc"),
            pending=_flag(rr, "remapped_row_pending"),
            failure=_flag(rr, "remapped_row_failure"),
        ),
        clocks=Clocks(
            sm_mhz=_int(gpu, "clocks/sm_clock"),
            sm_max_mhz=_int(gpu, "max_clocks/sm_clock"),
            mem_mhz=_int(gpu, "clocks/mem_clock"),
            mem_max_mhz=_int(gpu, "max_clocks/mem_clock"),
        ),
        throttle_reasons=_throttle(gpu),
        pcie=PcieLink(
            gen_current=_int(pcie, "pcie_gen/current_link_gen"),
            gen_max=_int(pcie, "pcie_gen/max_link_gen"),
            width_current=_int(pcie, "link_widths/current_link_width"),
            width_max=_int(pcie, "link_widths/max_link_width"),
        ),
        nvlinks=None,
        mig_current=_flag(gpu, "mig_mode/current_mig"),
        mig_pending=_flag(gpu, "mig_mode/pending_mig"),
        persistence_mode=_flag(gpu, "persistence_mode"),
        fabric=Fabric(
            state=_text(fabric, "state"),
            status=_text(fabric, "status"),
            clique_id=_text(fabric, "cliqueId") or _text(fabric, "clique_id"),
            cluster_uuid=_text(fabric, "clusterUuid") or _text(fabric, "cluster_uuid"),
        ),
        performance_state=_text(gpu, "performance_state"),
        utilization_pct=_int(gpu, "utilization/gpu_util"),
        temperature_c=_num(gpu, "temperature/gpu_temp"),
        power_draw_w=_num(power, "power_draw"),
        power_limit_w=limit,
    )


def parse_nvidia_smi_xml(data: bytes) -> NvsmiParse:
    """The facts in one ``nvidia-smi -q -x`` document; never raises."""
    out = NvsmiParse()
    if not data.strip():
        out.error = NvsmiXmlError("empty output")
        return out
    root, closed, error = _tree(data)
    if root is None:
        out.error = error or NvsmiXmlError("empty output")
        return out
    if root.tag != "nvidia_smi_log":
        out.error = NvsmiXmlError(f"not an nvidia-smi log (root element <{root.tag[:40]}>)")
        return out
    out.driver_version = _text(root, "driver_version")
    out.cuda_version = _text(root, "cuda_version")
    out.attached_gpus = _int(root, "attached_gpus")
    elements = root.findall("gpu")
    if len(elements) > MAX_GPUS:
        error = error or NvsmiXmlError(
            f"{len(elements)} <gpu> elements; only the first {MAX_GPUS} were read"
        )
        elements = elements[:MAX_GPUS]
    for i, el in enumerate(elements):
        try:
            out.gpus.append(_gpu(i, el))
        except ValueError as exc:
            # A value that passes the text filters but not the model (pydantic
            # ValidationError is a ValueError): drop that GPU, keep the rest.
            error = error or NvsmiXmlError(f"GPU {i}: unreadable values ({type(exc).__name__})")
    out.complete = closed and error is None
    if error is None and not closed:
        error = NvsmiXmlError("document ended before </nvidia_smi_log>")
    out.error = error
    return out
