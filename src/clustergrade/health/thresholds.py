"""The error-counter rate thresholds (``kb/data/thresholds.yaml``)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, HttpUrl, ValidationError, model_validator

#: The counters the health check reads; each threshold names one.
CounterKind = Literal["pcie_replay", "nvlink_crc", "ib_symbol_error", "ib_link_downed"]

FILE_NAME = "thresholds.yaml"


class ThresholdsError(Exception):
    """The thresholds file cannot be used; the message names file and reason."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ThresholdSource(_Model):
    url: HttpUrl
    #: What the source says, in our words.
    says: str


class Threshold(_Model):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    counter: CounterKind
    title: str
    #: Unhealthy when the counter rose by more than this per ``per_s`` seconds.
    limit: float = Field(ge=0)
    per_s: float = Field(gt=0)
    unit: str
    sources: list[ThresholdSource] = Field(min_length=1)

    def rate(self, delta: float, elapsed_s: float) -> float:
        """The rise scaled to ``per_s``; an interval shorter than ``per_s``
        counts as ``per_s`` so that a short gap cannot inflate a few errors."""
        return delta / max(elapsed_s, self.per_s) * self.per_s


class Thresholds(_Model):
    schema_: Literal["clustergrade.health.thresholds/1"] = Field(alias="schema")
    retrieved: date
    thresholds: list[Threshold] = Field(min_length=1)
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="after")
    def _one_per_counter(self) -> Thresholds:
        seen: set[str] = set()
        for t in self.thresholds:
            if t.counter in seen:
                raise ValueError(f"counter {t.counter} has more than one threshold")
            seen.add(t.counter)
        return self

    def for_counter(self, counter: str) -> Threshold | None:
        for t in self.thresholds:
            if t.counter == counter:
                return t
        return None


def shipped_path() -> Path:
    from clustergrade.kb.loader import shipped_dir

    return shipped_dir() / FILE_NAME


def load_thresholds(path: Path | None = None) -> Thresholds:
    """The thresholds in ``path`` (default: the shipped file); raise
    :class:`ThresholdsError`."""
    p = path or shipped_path()
    try:
        data: Any = yaml.safe_load(p.read_bytes())
    except OSError as exc:
        raise ThresholdsError(f"{p}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise ThresholdsError(f"{p}: not valid YAML: {exc}") from exc
    try:
        return Thresholds.model_validate(data)
    except ValidationError as exc:
        lines = [f"{p}: does not match Thresholds:"]
        for e in exc.errors()[:20]:
            lines.append(f"  {'.'.join(str(x) for x in e['loc'])}: {e['msg']}")
        raise ThresholdsError("\n".join(lines)) from exc
