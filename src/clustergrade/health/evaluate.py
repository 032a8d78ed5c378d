"""Run one passive health check: collect the few sections it needs, judge
them with the audit's checks plus the health-specific ones, and compute the
next state.  Pure apart from the host seam and the state file."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from clustergrade.collect.gpu import NVIDIA_SMI
from clustergrade.collect.runner import collect_node
from clustergrade.engine import evaluate_node
from clustergrade.facts.kernel_log import KernelLogFacts
from clustergrade.facts.node import NodeFacts
from clustergrade.health.counters import (
    CounterApi,
    CounterReading,
    from_infiniband,
    from_nvidia_smi_xml,
    from_nvml,
    load_pynvml_counters,
)
from clustergrade.health.report import HealthItem, HealthReport
from clustergrade.health.state import (
    CounterState,
    HealthState,
    SeenLog,
    default_state_dir,
    load_state,
    save_state,
    state_path,
)
from clustergrade.health.thresholds import Thresholds, load_thresholds
from clustergrade.kb.model import KnowledgeBase
from clustergrade.results import Status
from clustergrade.seam import Host, LocalHost, RecordingHost

#: Only what a per-minute check needs: no package lists, no security probes.
SECTIONS = ("nvidia", "kernel_log", "infiniband", "pci")

#: Audit checks reused as they are; their ids are the health output's ids.
REUSED_CHECKS = (
    "gpu.driver-loaded",
    "gpu.ecc-uncorrectable",
    "gpu.row-remap-pending",
    "gpu.row-remap-failure",
    "gpu.retired-pages-pending",
    "gpu.nvlink-down",
    "gpu.pcie-link-degraded",
    "gpu.clocks-hw-throttle",
    "gpu.fabric-state",
    "pci.link-degraded",
    "network.ib-port-down",
    "network.ib-rate-consistent",
)
#: An audit WARNs about a pending remap or retirement (it is fixed by the next
#: reset); a scheduler should not place work on the GPU until that reset.
ESCALATE_WARN = frozenset({"gpu.row-remap-pending", "gpu.retired-pages-pending"})
#: sysfs gives no link width for some functions (SR-IOV VFs, some VMs); that
#: is not a reason to call a node's health unknown every minute.
ERROR_AS_SKIP = frozenset({"pci.link-degraded"})

CHECK_GPU_COUNT = "health.gpu-count"
CHECK_XID = "health.xid-new"
CHECK_SXID = "health.sxid-new"
CHECK_COUNTERS = "health.error-rate"
CHECK_MOUNTS = "health.mounts"
CHECK_STATE = "health.state"

BOOT_ID = "/proc/sys/kernel/random/boot_id"
MOUNTS = "/proc/self/mounts"

NvmlCounters = Callable[[], "CounterApi | None"]


@dataclass(frozen=True)
class HealthOptions:
    mode: str = "slurm"
    expect_gpus: int | None = None
    #: A Slurm node's Gres string ("gpu:h100:8"); its GPU count is expected.
    gres: str | None = None
    require_mounts: tuple[str, ...] = ()
    state_dir: Path | None = None
    use_state: bool = True
    textfile_dir: Path | None = None
    drain: bool = False
    node_name: str | None = None
    kb_dir: Path | None = None
    thresholds_path: Path | None = None


@dataclass
class _Seen:
    xids: dict[str, SeenLog] = field(default_factory=dict)
    sxids: dict[str, SeenLog] = field(default_factory=dict)
    fallen: dict[str, SeenLog] = field(default_factory=dict)


# --------------------------------------------------------------------------
# Small pure parsers
# --------------------------------------------------------------------------

_GRES_GPU = re.compile(r"(?:^|,)\s*gpu(?::[^:,()\s]+)?:(\d{1,4})(?=$|[,(\s])")


def gres_gpu_count(gres: str) -> int | None:
    """GPUs in a Slurm Gres string (``gpu:8``, ``gpu:h100:8(S:0-1)``,
    ``gpu:a100:4,gpu:t4:2``); None when it names no GPU."""
    counts = [int(m.group(1)) for m in _GRES_GPU.finditer(gres[:4096])]
    return sum(counts) if counts else None


def _unescape_mount(field_: str) -> str:
    # /proc/mounts writes space, tab, newline and backslash as octal escapes.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field_)


def mount_points(text: str) -> set[str]:
    """Mount points in /proc/self/mounts text; never raises."""
    out: set[str] = set()
    for line in text.splitlines()[:100_000]:
        parts = line.split()
        if len(parts) >= 2:
            out.add(_norm(_unescape_mount(parts[1])))
    return out


def _norm(path: str) -> str:
    return path.rstrip("/") or "/"


# --------------------------------------------------------------------------
# Health-specific judgements
# --------------------------------------------------------------------------


def judge_gpu_count(facts: NodeFacts, expected: int | None, source: str) -> HealthItem:
    if expected is None:
        return HealthItem(
            CHECK_GPU_COUNT, Status.SKIP, "no expected GPU count (--expect-gpus or --gres)"
        )
    nv = facts.nvidia
    if nv is None:
        return HealthItem(
            CHECK_GPU_COUNT,
            Status.ERROR,
            facts.section_problem("nvidia") or "nvidia facts missing",
        )
    if not nv.driver_loaded:
        return HealthItem(
            CHECK_GPU_COUNT,
            Status.FAIL,
            f"NVIDIA driver not loaded: 0 of {expected} GPUs usable",
            short=f"0/{expected} GPUs: NVIDIA driver not loaded",
        )
    seen = nv.gpu_count if nv.gpu_count is not None else (len(nv.gpus) if nv.gpus else None)
    how = f"reported by {nv.source}"
    if seen is None and facts.pci is not None:
        seen = len(facts.pci.of_kind("nvidia-gpu"))
        how = "on the PCI bus (the driver gave no count)"
    if seen is None:
        return HealthItem(CHECK_GPU_COUNT, Status.ERROR, "GPU count not reported")
    if seen < expected:
        return HealthItem(
            CHECK_GPU_COUNT,
            Status.FAIL,
            f"{seen} GPUs {how}, {expected} expected ({source})",
            short=f"{seen}/{expected} GPUs present",
        )
    if seen > expected:
        return HealthItem(
            CHECK_GPU_COUNT, Status.WARN, f"{seen} GPUs {how}, only {expected} expected ({source})"
        )
    return HealthItem(CHECK_GPU_COUNT, Status.PASS, f"{seen} GPUs {how}, as expected ({source})")


def _new_count(count: int, last_seen: str | None, prev: SeenLog | None) -> int:
    """How many of ``count`` lines are new since ``prev``.  The log is a
    window (journal line cap, rotated syslog), so a count can also shrink; a
    later ``last_seen`` then still means something new arrived."""
    if prev is None:
        return count
    if count > prev.count:
        return count - prev.count
    if last_seen is not None and last_seen != prev.last_seen:
        return 1
    return 0


def judge_kernel_log(
    log: KernelLogFacts | None,
    problem: str | None,
    prev: HealthState | None,
    kb: KnowledgeBase,
) -> tuple[list[HealthItem], _Seen]:
    """New Xids, SXids and fallen-off-the-bus notices since ``prev``."""
    from clustergrade.checks.kernel_log import _action_text

    keep = _Seen(
        dict(prev.xids) if prev else {},
        dict(prev.sxids) if prev else {},
        dict(prev.fallen_off_bus) if prev else {},
    )
    if log is None or not log.readable:
        why = problem if log is None else (log.unreadable_reason or "kernel log not readable")
        why = why or "kernel_log facts missing"
        return [
            HealthItem(CHECK_XID, Status.ERROR, why, short=f"kernel log: {why}"[:80]),
            HealthItem(CHECK_SXID, Status.ERROR, why),
        ], keep
    seen = _Seen()
    xid_items: list[HealthItem] = []
    for x in log.xids:
        key = f"{x.code}@{x.bus_id or '?'}"
        seen.xids[key] = SeenLog(count=x.count, last_seen=x.last_seen)
        new = _new_count(x.count, x.last_seen, prev.xids.get(key) if prev else None)
        if not new:
            continue
        entry = kb.xid(x.code)
        level = entry.severity if entry is not None else kb.xids.default_severity
        if level == "info":
            continue
        meaning = entry.meaning if entry is not None else "not in the Xid catalogue"
        action = entry.action if entry is not None else None
        where = f"GPU {x.bus_id}" if x.bus_id else "an unnamed GPU"
        when = f" (last {x.last_seen})" if x.last_seen else ""
        xid_items.append(
            HealthItem(
                CHECK_XID,
                Status.FAIL if level == "critical" else Status.WARN,
                f"new Xid {x.code} ({meaning}) x{new} on {where}{when}; "
                f"NVIDIA action: {_action_text(action)}",
                subject=where,
                short=f"Xid {x.code} on {where}: {action or 'see catalogue'}",
            )
        )
    xid79 = {x.bus_id for x in log.xids if x.code == 79}
    for f in log.fallen_off_bus:
        key = f.bus_id or "?"
        seen.fallen[key] = SeenLog(count=f.count, last_seen=f.first_seen)
        new = _new_count(f.count, f.first_seen, prev.fallen_off_bus.get(key) if prev else None)
        if new and f.bus_id not in xid79:
            where = f"GPU {f.bus_id}" if f.bus_id else "a GPU"
            xid_items.append(
                HealthItem(
                    CHECK_XID,
                    Status.FAIL,
                    f"{where} has fallen off the bus; reboot the node",
                    subject=where,
                    short=f"{where} fell off the bus",
                )
            )
    sxid_items: list[HealthItem] = []
    for s in log.sxids:
        key = f"{s.code}@{s.bus_id or s.device or '?'}"
        seen.sxids[key] = SeenLog(count=s.lines, last_seen=s.last_seen)
        p = prev.sxids.get(key) if prev else None
        new = _new_count(s.lines, s.last_seen, p)
        if not new:
            continue
        where = f"{s.device or 'NVSwitch'} {s.bus_id or ''}".strip()
        # A Fatal label among the new lines cannot be told apart from an old
        # one; any Fatal line in a summary that grew counts.
        fatal = s.fatal > 0
        sxid_items.append(
            HealthItem(
                CHECK_SXID,
                Status.FAIL if fatal else Status.WARN,
                f"new SXid {s.code} on {where} ({'Fatal' if fatal else 'Non-fatal'}): {s.sample}",
                subject=where,
                short=f"SXid {s.code} on {where}{' fatal' if fatal else ''}",
            )
        )
    span = f"{log.lines} lines from {log.source_detail or log.source or 'kernel log'}"
    if not xid_items:
        first = " (first check: the whole log counted)" if prev is None else ""
        xid_items.append(HealthItem(CHECK_XID, Status.PASS, f"no new Xid in {span}{first}"))
    if not sxid_items:
        sxid_items.append(HealthItem(CHECK_SXID, Status.PASS, f"no new SXid in {span}"))
    return xid_items + sxid_items, seen


def judge_counters(
    readings: Iterable[CounterReading],
    prev: dict[str, CounterState],
    now: float,
    thresholds: Thresholds,
) -> tuple[list[HealthItem], dict[str, CounterState]]:
    """Rates of the error counters against the thresholds."""
    items: list[HealthItem] = []
    nxt: dict[str, CounterState] = {}
    judged: dict[str, int] = {}
    baseline: dict[str, int] = {}
    for r in readings:
        nxt[r.key] = CounterState(value=r.value, at=now)
        th = thresholds.for_counter(r.kind)
        if th is None:
            continue
        p = prev.get(r.key)
        if p is None or r.value < p.value or now <= p.at:
            baseline[r.kind] = baseline.get(r.kind, 0) + 1
            continue
        judged[r.kind] = judged.get(r.kind, 0) + 1
        rate = th.rate(r.value - p.value, now - p.at)
        if rate > th.limit:
            items.append(
                HealthItem(
                    CHECK_COUNTERS,
                    Status.FAIL,
                    f"{th.title}: {rate:.1f} {th.unit} over the last {now - p.at:.0f}s "
                    f"({p.value} -> {r.value}), limit {th.limit:g} {th.unit}",
                    subject=r.subject,
                    short=f"{r.kind} {rate:.0f} {th.unit} on {r.subject}",
                )
            )
    if not items:
        if judged:
            parts = ", ".join(f"{n} {k}" for k, n in sorted(judged.items()))
            items.append(HealthItem(CHECK_COUNTERS, Status.PASS, f"within limits: {parts}"))
        elif baseline:
            items.append(
                HealthItem(
                    CHECK_COUNTERS,
                    Status.SKIP,
                    f"first reading of {sum(baseline.values())} counter(s); rates from the next check",
                )
            )
        else:
            items.append(HealthItem(CHECK_COUNTERS, Status.SKIP, "no error counters readable"))
    return items, nxt


def judge_mounts(
    required: Iterable[str], mounts_text: str | None, why: str | None
) -> list[HealthItem]:
    req = [_norm(m) for m in required]
    if not req:
        return [HealthItem(CHECK_MOUNTS, Status.SKIP, "no --require-mount given")]
    if mounts_text is None:
        return [HealthItem(CHECK_MOUNTS, Status.ERROR, f"cannot read {MOUNTS}: {why}")]
    have = mount_points(mounts_text)
    out: list[HealthItem] = []
    for m in req:
        if m in have:
            out.append(HealthItem(CHECK_MOUNTS, Status.PASS, "mounted", subject=m))
        else:
            out.append(
                HealthItem(
                    CHECK_MOUNTS, Status.FAIL, "not mounted", subject=m, short=f"{m} not mounted"
                )
            )
    return out


def _reused(facts: NodeFacts, kb: KnowledgeBase) -> list[HealthItem]:
    from clustergrade.checks.registry import registered

    specs = registered(kb)
    out: list[HealthItem] = []
    chosen = {}
    for cid in REUSED_CHECKS:
        if cid in specs:
            chosen[cid] = specs[cid]
        else:
            out.append(HealthItem(cid, Status.ERROR, "check not in this build's catalogue"))
    for r in evaluate_node(facts, kb, chosen):
        status = r.status
        if status is Status.WARN and r.check_id in ESCALATE_WARN:
            status = Status.FAIL
        elif status is Status.ERROR and r.check_id in ERROR_AS_SKIP:
            status = Status.SKIP
        out.append(HealthItem(r.check_id, status, r.message, subject=r.subject))
    return out


# --------------------------------------------------------------------------
# The whole check
# --------------------------------------------------------------------------


def _is_local(host: Host) -> bool:
    # NVML describes only the machine this process runs on (see collect.gpu).
    return type(host) is LocalHost and getattr(host, "_root", None) == Path("/")


def _read(host: Host, path: str) -> tuple[str | None, str | None]:
    res = host.read(path)
    return (res.text, None) if res.content is not None else (None, res.error)


def run_health(
    opts: HealthOptions,
    host: Host | None = None,
    *,
    now: float | None = None,
    nvml: NvmlCounters = load_pynvml_counters,
) -> HealthReport:
    """One health check of ``host`` (default: this machine).

    Raises only for an unusable knowledge base or thresholds file; the
    caller turns that into an "unknown" verdict.
    """
    from clustergrade.kb.loader import load

    t0 = time.monotonic()
    host = host or LocalHost()
    checked_at = time.time() if now is None else now
    kb = load(opts.kb_dir)
    thresholds = load_thresholds(opts.thresholds_path)

    api = nvml() if _is_local(host) else None
    # Off-machine (or without NVML) the replay counters come from the
    # nvidia-smi document the collector fetches: keep it instead of running
    # nvidia-smi, which takes seconds on a big node, a second time.
    recorder = RecordingHost(host) if api is None else None
    facts = collect_node(recorder or host, SECTIONS, source="health")
    report = HealthReport(hostname=facts.hostname, checked_at=checked_at)

    boot_text, _ = _read(host, BOOT_ID)
    boot_id = boot_text.strip()[:64] if boot_text else None

    prev: HealthState | None = None
    path: Path | None = None
    if opts.use_state:
        path = state_path(opts.state_dir or default_state_dir(), facts.hostname, opts.mode)
        report.state_file = str(path)
        prev, note = load_state(path)
        if note:
            report.notes.append(note)
        if prev is not None and prev.boot_id != boot_id and None not in (prev.boot_id, boot_id):
            report.notes.append(
                "new boot since the last check: kernel log and counters start afresh"
            )
            prev = None
        if prev is None:
            report.notes.append("first check with this state: every error in the log is new")

    expected = opts.expect_gpus
    source = "--expect-gpus"
    if expected is None and opts.gres:
        expected = gres_gpu_count(opts.gres)
        source = f"Gres {opts.gres[:60]}"
    report.items.append(judge_gpu_count(facts, expected, source))
    report.items.extend(_reused(facts, kb))

    log_items, seen = judge_kernel_log(
        facts.kernel_log, facts.section_problem("kernel_log"), prev, kb
    )
    report.items.extend(log_items)

    readings = from_infiniband(facts.infiniband)
    if api is not None:
        gpu_readings, why = from_nvml(api)
        # Without a driver NVML cannot start; that is no news on a CPU node.
        if why and facts.nvidia is not None and facts.nvidia.driver_loaded:
            report.notes.append(why)
        readings.extend(gpu_readings)
    elif recorder is not None:
        smi = recorder.recording.commands.get(tuple(NVIDIA_SMI))
        if smi is not None and smi.ran:
            readings.extend(from_nvidia_smi_xml(smi.stdout))
    report.counters = readings
    counter_items, counters = judge_counters(
        readings, prev.counters if prev else {}, checked_at, thresholds
    )
    report.items.extend(counter_items)

    mounts_text, why = _read(host, MOUNTS) if opts.require_mounts else (None, None)
    report.items.extend(judge_mounts(opts.require_mounts, mounts_text, why))

    if path is not None:
        nxt = HealthState(
            hostname=facts.hostname,
            boot_id=boot_id,
            checked_at=checked_at,
            xids=seen.xids,
            sxids=seen.sxids,
            fallen_off_bus=seen.fallen,
            counters=counters,
        )
        try:
            save_state(path, nxt)
        except OSError as exc:
            report.items.append(
                HealthItem(
                    CHECK_STATE,
                    Status.WARN,
                    f"cannot write {path} ({exc.strerror or exc}): the next check will "
                    "report these errors again and cannot compute rates",
                )
            )
    report.duration_s = round(time.monotonic() - t0, 4)
    return report
