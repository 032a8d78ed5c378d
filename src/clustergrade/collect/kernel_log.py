"""Collector: the kernel log's GPU (Xid), NVSwitch (SXid), PCIe AER and
machine-check lines.

Sources, first readable one wins: ``journalctl -k`` (the current boot from the
journal), ``dmesg`` (the ring buffer; refused to non-root users when
``kernel.dmesg_restrict=1``), then the syslog files.  A source that is absent,
empty or refused is a fact recorded in ``attempts``; only a failure of the
seam itself (timeout, OS error) is a collector error.

:func:`parse_kernel_log` is pure and total: any text, however hostile, gives a
:class:`ParsedLog`, with memory bounded by the caps below.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from clustergrade.collect.base import CollectContext, collector
from clustergrade.facts.kernel_log import (
    AerCounts,
    FallenOffBus,
    KernelLogFacts,
    SourceAttempt,
    SxidSummary,
    XidEvent,
    XidSummary,
)
from clustergrade.seam import CommandResult

JOURNALCTL_ARGV = ("journalctl", "-k", "-o", "short-iso", "--no-pager", "-n", "50000")
DMESG_ARGV = ("dmesg", "--time-format", "iso")
LOG_FILES = ("/var/log/kern.log", "/var/log/syslog", "/var/log/messages")
DMESG_RESTRICT = "/proc/sys/kernel/dmesg_restrict"
COMMAND_TIMEOUT_S = 20.0
#: Syslog files can be gigabytes; the seam returns the first this-many bytes.
FILE_LIMIT = 8 * 1024 * 1024

#: Caps that bound the facts whatever the log holds.
MAX_LINES = 400_000
MAX_LINE_CHARS = 4096
MAX_MESSAGE_CHARS = 300
EVENTS_PER_CODE = 20
MAX_SUMMARIES = 512
MAX_PROCESSES = 8
MAX_DEVICES = 32

_BUS = r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?"
_XID_RE = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<bus>" + _BUS + r")[^)]{0,64}\):\s*(?P<code>\d{1,6})\b,?\s?"
    r"(?P<rest>.*)"
)
_SXID_RE = re.compile(
    r"(?P<dev>nvidia-nvswitch\d{0,4}): SXid \((?:PCI:)?(?P<bus>" + _BUS + r")[^)]{0,64}\):\s*"
    r"(?P<code>\d{1,6})\b,?\s?(?P<rest>.*)"
)
_PID_RE = re.compile(r"\bpid=(?:'?<unknown>'?|(?P<pid>\d{1,10}))")
_NAME_RE = re.compile(r"\bname=(?P<name>[^,\s]{1,64})")
_FELL_RE = re.compile(r"NVRM: GPU (?P<bus>" + _BUS + r"): GPU has fallen off the bus")
_THE_GPU_RE = re.compile(r"NVRM: The NVIDIA GPU (?P<bus>" + _BUS + r")\s*$")
_FELL_TAIL = "fallen off the bus and is not responding to commands"
_CRASH_DUMP = "NVRM: A GPU crash dump has been created"
_AER_RE = re.compile(
    r"(?:(?P<dev>" + _BUS + r"):\s+)?(?:AER:\s+)?PCIe Bus Error: severity="
    r"(?P<sev>Corrected|Uncorrected \(Non-Fatal\)|Uncorrected \(Fatal\)|Uncorrectable)"
)
# Only error reports: "mce:" alone also prints benign boot lines (bank counts,
# thermal monitoring).
_MCE_RE = re.compile(r"\[Hardware Error\]|Machine check events logged")

_ISO = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?"
_PREFIXES = (
    # dmesg --decode ("kern  :err   : ") comes before any clock.
    re.compile(r"^[a-z]{2,8}\s*:[a-z]{2,8}\s*:\s(?P<ts>" + _ISO + r")"),
    re.compile(r"^(?P<ts>" + _ISO + r")"),
    re.compile(r"^\[(?P<ts>[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\]"),
    re.compile(r"^\[\s*(?P<ts>\d{1,10}\.\d{1,9})\]"),
    # syslog: "Dec  2 10:43:35 host kernel: [240314.528856] ..." (no year).
    re.compile(r"^(?P<ts>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d)\s"),
)


def _timestamp(line: str) -> str | None:
    for rx in _PREFIXES:
        m = rx.match(line)
        if m:
            return m.group("ts")
    return None


def _clip(text: str, n: int = MAX_MESSAGE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= n else text[: n - 1] + "…"


def _iter_lines(text: str) -> Iterator[str]:
    """Lines without materialising a list of them (the input can be megabytes)."""
    start = 0
    n = len(text)
    while start < n:
        end = text.find("\n", start)
        if end < 0:
            end = n
        yield text[start:end]
        start = end + 1


@dataclass
class _XidAcc:
    code: int
    bus: str | None
    count: int = 0
    first: str | None = None
    last: str | None = None
    processes: list[str] = field(default_factory=list)
    sample: str = ""


@dataclass
class _SxidAcc:
    code: int
    bus: str | None
    device: str | None
    lines: int = 0
    fatal: int = 0
    nonfatal: int = 0
    first: str | None = None
    last: str | None = None
    sample: str = ""


@dataclass
class _FellAcc:
    count: int = 0
    first: str | None = None


@dataclass
class ParsedLog:
    """What :func:`parse_kernel_log` found in one source's text."""

    lines: int = 0
    truncated: bool = False
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    xids: list[XidSummary] = field(default_factory=list)
    xid_events: list[XidEvent] = field(default_factory=list)
    sxids: list[SxidSummary] = field(default_factory=list)
    fallen_off_bus: list[FallenOffBus] = field(default_factory=list)
    gpu_crash_dumps: int = 0
    aer: AerCounts = field(default_factory=AerCounts)
    mce_lines: int = 0


def parse_kernel_log(text: str) -> ParsedLog:
    """Parse kernel-log text in any of the formats the sources print
    (journalctl short-iso, dmesg iso/ctime/raw, syslog).  Never raises."""
    out = ParsedLog()
    xids: dict[tuple[int, str | None], _XidAcc] = {}
    events: dict[int, list[XidEvent]] = {}
    sxids: dict[tuple[int, str | None], _SxidAcc] = {}
    fell: dict[str | None, _FellAcc] = {}
    aer_corr = aer_nonfatal = aer_fatal = 0
    aer_devices: list[str] = []
    aer_sample: str | None = None
    #: Bus of a "The NVIDIA GPU <bus>" line whose "fallen off the bus" tail
    #: arrives on a following line, and how many lines remain to see it.
    pending_bus: str | None = None
    pending_ts: str | None = None
    pending_left = 0

    for raw in _iter_lines(text):
        if out.lines >= MAX_LINES:
            out.truncated = True
            break
        out.lines += 1
        line = raw[:MAX_LINE_CHARS].rstrip("\r")
        ts = _timestamp(line)
        if ts is not None:
            if out.first_timestamp is None:
                out.first_timestamp = ts
            out.last_timestamp = ts

        if "NVRM" in line:
            m = _XID_RE.search(line)
            if m:
                code = int(m.group("code"))
                bus = m.group("bus")
                rest = m.group("rest")
                pm = _PID_RE.search(rest)
                nm = _NAME_RE.search(rest)
                pid = int(pm.group("pid")) if pm and pm.group("pid") else None
                name = nm.group("name") if nm else None
                if name is not None and "unknown" in name:
                    name = None
                key = (code, bus)
                acc = xids.get(key)
                if acc is None and len(xids) < MAX_SUMMARIES:
                    acc = xids[key] = _XidAcc(code, bus)
                if acc is not None:
                    acc.count += 1
                    acc.first = acc.first or ts
                    acc.last = ts or acc.last
                    acc.sample = _clip(rest)
                    if name and name not in acc.processes and len(acc.processes) < MAX_PROCESSES:
                        acc.processes.append(name)
                if code in events or len(events) < MAX_SUMMARIES:
                    bucket = events.setdefault(code, [])
                    bucket.append(
                        XidEvent(
                            code=code,
                            bus_id=bus,
                            timestamp=ts,
                            pid=pid,
                            process=name,
                            message=_clip(rest),
                        )
                    )
                    if len(bucket) > EVENTS_PER_CODE:
                        del bucket[0]
                continue
            fm = _FELL_RE.search(line)
            if fm:
                _note_fell(fell, fm.group("bus"), ts)
                continue
            tm = _THE_GPU_RE.search(line)
            if tm:
                pending_bus, pending_ts, pending_left = tm.group("bus"), ts, 3
                continue
            if _CRASH_DUMP in line:
                out.gpu_crash_dumps += 1
                continue
            if pending_left > 0 and _FELL_TAIL in line:
                _note_fell(fell, pending_bus, pending_ts)
                pending_left = 0
                continue
        if pending_left > 0:
            pending_left -= 1

        if "SXid" in line:
            m = _SXID_RE.search(line)
            if m:
                code = int(m.group("code"))
                bus = m.group("bus")
                rest = m.group("rest")
                skey = (code, bus)
                sacc = sxids.get(skey)
                if sacc is None and len(sxids) < MAX_SUMMARIES:
                    sacc = sxids[skey] = _SxidAcc(code, bus, m.group("dev"))
                if sacc is not None:
                    sacc.lines += 1
                    label = rest.split(",", 1)[0].strip().lower()
                    if label == "fatal":
                        sacc.fatal += 1
                        sacc.sample = _clip(rest)
                    elif label in ("non-fatal", "nonfatal"):
                        sacc.nonfatal += 1
                        sacc.sample = _clip(rest)
                    elif not sacc.sample:
                        sacc.sample = _clip(rest)
                    sacc.first = sacc.first or ts
                    sacc.last = ts or sacc.last
                continue

        if "PCIe Bus Error" in line:
            am = _AER_RE.search(line)
            if am:
                sev = am.group("sev")
                if sev == "Corrected":
                    aer_corr += 1
                else:
                    if sev == "Uncorrected (Fatal)":
                        aer_fatal += 1
                    else:
                        aer_nonfatal += 1
                    dev = am.group("dev")
                    if dev and dev not in aer_devices and len(aer_devices) < MAX_DEVICES:
                        aer_devices.append(dev)
                    aer_sample = _clip(line)
                continue

        if ("Hardware Error" in line or "Machine check" in line) and _MCE_RE.search(line):
            out.mce_lines += 1

    out.xids = [
        XidSummary(
            code=a.code,
            bus_id=a.bus,
            count=a.count,
            first_seen=a.first,
            last_seen=a.last,
            processes=a.processes,
            sample=a.sample,
        )
        for a in sorted(xids.values(), key=lambda a: (a.code, a.bus or ""))
    ]
    out.xid_events = [e for code in sorted(events) for e in events[code]]
    out.sxids = [
        SxidSummary(
            code=s.code,
            bus_id=s.bus,
            device=s.device,
            lines=s.lines,
            fatal=s.fatal,
            nonfatal=s.nonfatal,
            first_seen=s.first,
            last_seen=s.last,
            sample=s.sample,
        )
        for s in sorted(sxids.values(), key=lambda s: (s.code, s.bus or ""))
    ]
    out.fallen_off_bus = [
        FallenOffBus(bus_id=bus, count=f.count, first_seen=f.first)
        for bus, f in sorted(fell.items(), key=lambda kv: kv[0] or "")
    ]
    out.aer = AerCounts(
        corrected=aer_corr,
        uncorrected_nonfatal=aer_nonfatal,
        uncorrected_fatal=aer_fatal,
        uncorrected_devices=aer_devices,
        sample=aer_sample,
    )
    return out


def _note_fell(fell: dict[str | None, _FellAcc], bus: str | None, ts: str | None) -> None:
    # The bus is printed as 0000:91:00.0 here but 0000:91:00 in Xid lines;
    # the function-less form lets the two be matched.
    key = bus[:-2] if bus and re.search(r"\.[0-7]$", bus) else bus
    if key not in fell and len(fell) >= MAX_DEVICES:
        return
    fell.setdefault(key, _FellAcc(first=ts)).count += 1


# --------------------------------------------------------------------------
# Collector
# --------------------------------------------------------------------------

_DENIED_HINTS = ("operation not permitted", "permission denied", "insufficient permissions")


def _denied(res: CommandResult) -> bool:
    text = (res.err_text + "\n" + res.text).lower()
    return any(h in text for h in _DENIED_HINTS)


def _has_entries(text: str) -> bool:
    """False for journalctl's "-- No entries --" and other marker-only output."""
    for line in _iter_lines(text):
        s = line.strip()
        if s and not (s.startswith("-- ") and s.endswith(" --")) and s != "-- No entries --":
            return True
    return False


def _first_line(text: str) -> str | None:
    for line in _iter_lines(text):
        if line.strip():
            return _clip(line, 200)
    return None


def _restrict(ctx: CollectContext) -> int | None:
    res = ctx.read(DMESG_RESTRICT)
    if res.content is None:
        return None
    try:
        return int(res.content.decode("ascii", errors="replace").strip())
    except ValueError:
        return None


def _try_command(
    ctx: CollectContext, source: str, argv: tuple[str, ...], attempts: list[SourceAttempt]
) -> str | None:
    detail = " ".join(argv)
    res = ctx.run(argv, timeout=COMMAND_TIMEOUT_S)
    src = "journalctl" if source == "journalctl" else "dmesg"
    if res.not_found:
        attempts.append(SourceAttempt(source=src, detail=detail, outcome="not_installed"))
        return None
    if not res.ran:
        # A timeout or a failure of the seam: nothing is known about this source.
        ctx.error(res.describe(), argv=list(argv))
        attempts.append(
            SourceAttempt(source=src, detail=detail, outcome="failed", message=res.describe())
        )
        return None
    if res.returncode != 0:
        outcome = "denied" if _denied(res) else "failed"
        attempts.append(
            SourceAttempt(
                source=src,
                detail=detail,
                outcome=outcome,
                message=_first_line(res.err_text) or _first_line(res.text),
            )
        )
        return None
    if not _has_entries(res.text):
        # journalctl exits 0 with no kernel entries when the journal is
        # volatile/empty or the user may not read the system journal.
        attempts.append(
            SourceAttempt(
                source=src,
                detail=detail,
                outcome="empty",
                message=_first_line(res.err_text) or _first_line(res.text),
            )
        )
        return None
    if res.truncated:
        attempts.append(
            SourceAttempt(source=src, detail=detail, outcome="used", message="output truncated")
        )
    else:
        attempts.append(SourceAttempt(source=src, detail=detail, outcome="used"))
    return res.text


def _try_file(ctx: CollectContext, path: str, attempts: list[SourceAttempt]) -> str | None:
    res = ctx.read(path, FILE_LIMIT)
    if res.missing:
        attempts.append(SourceAttempt(source="file", detail=path, outcome="missing"))
        return None
    if res.content is None:
        low = (res.error or "").lower()
        outcome = "denied" if "permission" in low or "not permitted" in low else "failed"
        if outcome == "failed":
            ctx.error(f"cannot read {path}: {res.error}", path=path)
        attempts.append(
            SourceAttempt(source="file", detail=path, outcome=outcome, message=res.error)
        )
        return None
    text = res.text or ""
    if not _has_entries(text):
        attempts.append(SourceAttempt(source="file", detail=path, outcome="empty"))
        return None
    attempts.append(
        SourceAttempt(
            source="file",
            detail=path,
            outcome="used",
            message="only the first bytes were read" if res.truncated else None,
        )
    )
    return text


def _unreadable_reason(attempts: list[SourceAttempt], restrict: int | None) -> str:
    if any(a.outcome == "denied" for a in attempts):
        why = "dmesg_restrict" if restrict is None else f"dmesg_restrict={restrict}"
        return f"kernel log not readable by this user ({why})"
    tried = "; ".join(f"{a.detail}: {a.message or a.outcome}" for a in attempts)
    return f"no kernel log source could be read ({tried})"


@collector("kernel_log")
def collect_kernel_log(ctx: CollectContext) -> KernelLogFacts:
    attempts: list[SourceAttempt] = []
    restrict = _restrict(ctx)
    text: str | None = None
    source: str | None = None
    detail: str | None = None
    truncated = False

    for name, argv in (("journalctl", JOURNALCTL_ARGV), ("dmesg", DMESG_ARGV)):
        text = _try_command(ctx, name, argv, attempts)
        if text is not None:
            source, detail = name, " ".join(argv)
            truncated = attempts[-1].message == "output truncated"
            break
    if text is None:
        for path in LOG_FILES:
            text = _try_file(ctx, path, attempts)
            if text is not None:
                source, detail = "file", path
                truncated = attempts[-1].message is not None
                break

    if text is None or source is None:
        return KernelLogFacts(
            readable=False,
            unreadable_reason=_unreadable_reason(attempts, restrict),
            attempts=attempts,
            dmesg_restrict=restrict,
        )
    parsed = parse_kernel_log(text)
    return KernelLogFacts(
        readable=True,
        source="journalctl" if source == "journalctl" else "dmesg" if source == "dmesg" else "file",
        source_detail=detail,
        attempts=attempts,
        dmesg_restrict=restrict,
        lines=parsed.lines,
        truncated=truncated or parsed.truncated,
        first_timestamp=parsed.first_timestamp,
        last_timestamp=parsed.last_timestamp,
        xids=parsed.xids,
        xid_events=parsed.xid_events,
        sxids=parsed.sxids,
        fallen_off_bus=parsed.fallen_off_bus,
        gpu_crash_dumps=parsed.gpu_crash_dumps,
        aer=parsed.aer,
        mce_lines=parsed.mce_lines,
    )
