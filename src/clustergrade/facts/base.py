"""Base model for every facts section.

Facts are pydantic models because a saved snapshot is a trust boundary: it is
read back on another day, maybe from another machine, and a corrupt or foreign
file must fail with a clear error instead of producing a wrong grade.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class FactModel(BaseModel):
    """Frozen, strict base for facts; unknown keys are rejected on load."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class CollectorError(FactModel):
    """Something a collector could not find out, and why."""

    collector: str
    message: str
    argv: list[str] | None = None
    path: str | None = None


class Tool(FactModel):
    """An installed program or library and its version as reported.

    ``version`` is the raw string the tool printed; schemes parse it at
    judgement time so a snapshot never loses what was actually seen.
    """

    name: str
    installed: bool
    version: str | None = None
    path: str | None = None
    source: str | None = None
