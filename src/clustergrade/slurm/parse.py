"""Pure parsers of Slurm command output.  Each tolerates junk: unparseable
lines are skipped and counted, never raised."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_KV_ONE_LINE = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_:/.]*)=")


@dataclass(frozen=True)
class Parsed:
    """Records parsed from output, plus how many lines could not be read."""

    records: list[dict[str, str]]
    skipped_lines: int = 0
    notes: list[str] = field(default_factory=list)


def parse_show_config(text: str) -> Parsed:
    """`scontrol show config`: ``Key = value`` lines, in several sections."""
    record: dict[str, str] = {}
    skipped = 0
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        # An empty value ("PowerPlugin             =") loses its trailing space to rstrip.
        if " = " in line or line.endswith(" ="):
            key, _, value = (line + " ").partition(" = ")
            key = key.strip()
            if key and " " not in key:
                record.setdefault(key, value.strip())
                continue
        if line.endswith(":") or line.startswith(("Configuration data", "Slurmctld(", "Cgroup ")):
            continue
        skipped += 1
    return Parsed([record] if record else [], skipped)


def parse_one_line_records(text: str) -> Parsed:
    """`scontrol -o show node|partition|job`: one record per line of
    ``Key=value`` tokens; a value runs until the next ``Key=`` (values such
    as ``OS=Linux 6.1.0 #1 SMP`` and ``Reason=Not responding [slurm@...]``
    contain spaces)."""
    records = []
    skipped = 0
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        matches = list(_KV_ONE_LINE.finditer(line))
        if not matches or matches[0].start() > 0:
            skipped += 1
            continue
        rec: dict[str, str] = {}
        for i, m in enumerate(matches):
            end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
            rec[m.group(1)] = line[m.end() : end].strip()
        records.append(rec)
    return Parsed(records, skipped)


def parse_mpi_list(text: str) -> list[str]:
    """`srun --mpi=list`: plugin names ("none", "pmi2", "pmix", "pmix_v4"),
    with or without the ``srun:``/``mpi/`` prefixes some versions print."""
    names: dict[str, None] = {}
    for raw in text.splitlines():
        line = raw.strip().removeprefix("srun:").strip()
        if not line or "plugin types" in line.lower():
            continue
        if ":" in line:
            line = line.split(":", 1)[1]
        for token in re.split(r"[\s,]+", line):
            token = token.removeprefix("mpi/")
            if re.fullmatch(r"[a-z][a-z0-9_.-]*", token):
                names.setdefault(token, None)
    return list(names)


def split_gres(gres: str) -> list[tuple[str, str | None, int]]:
    """``gpu:h100:4(S:0-1),gpu:a100:2`` -> [("gpu", "h100", 4), ("gpu", "a100", 2)]."""
    out = []
    for part in re.split(r",(?![^()]*\))", gres or ""):
        part = re.sub(r"\(.*?\)", "", part).strip()
        if not part or part in ("(null)", "N/A"):
            continue
        bits = part.split(":")
        name = bits[0]
        count = 1
        typ: str | None = None
        if len(bits) >= 2 and bits[-1].isdigit():
            count = int(bits[-1])
            typ = bits[1] if len(bits) >= 3 else None
        elif len(bits) >= 2:
            typ = bits[1]
        out.append((name, typ, count))
    return out


def split_states(state: str) -> list[str]:
    """``IDLE+DRAIN`` / ``DOWN*+NOT_RESPONDING`` -> ["IDLE", "DRAIN"] etc.;
    the trailing '*' (not responding) becomes NOT_RESPONDING."""
    out = []
    for s in re.split(r"[+]", state or ""):
        s = s.strip()
        if not s:
            continue
        if s.endswith("*"):
            out.append(s.rstrip("*").upper())
            out.append("NOT_RESPONDING")
        else:
            out.append(s.upper())
    seen: dict[str, None] = {}
    for s in out:
        seen.setdefault(s, None)
    return list(seen)
