"""The knowledge base's schema: typed, dated data with a source for every entry.

Files live in ``kb/data/`` (shipped) or in a directory given with ``--kb`` /
written by ``kb update``.  Each file names its schema; :mod:`loader` validates
every file and refuses the whole knowledge base when one is malformed.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, field_validator, model_validator

from clustergrade.results import Criterion
from clustergrade.versions import SCHEMES, is_valid


class KBModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Confidence = Literal["H", "M", "L"]


class Cvss(KBModel):
    score: float = Field(ge=0, le=10)
    version: Literal["2.0", "3.0", "3.1", "4.0"] = "3.1"
    vector: str | None = None
    source: str | None = None


class Range(KBModel):
    """OSV-style: affected when ``introduced <= v < fixed`` (or
    ``<= last_affected``).  ``introduced: "0"`` means from the beginning."""

    introduced: str = "0"
    fixed: str | None = None
    last_affected: str | None = None
    #: mlnxfw only: restrict the range to these device families (e.g. 12 for
    #: ConnectX-4, whose rows are written without a train).
    families: list[int] | None = None

    @model_validator(mode="after")
    def _one_end(self) -> Range:
        if self.fixed is not None and self.last_affected is not None:
            raise ValueError("a range has either 'fixed' or 'last_affected', not both")
        return self


class Advisory(KBModel):
    id: str = Field(
        pattern=r"^(CVE-\d{4}-\d{4,}|GHSA-[a-z0-9-]+|[A-Z][A-Za-z0-9]*-[A-Za-z0-9.-]+)$"
    )
    aliases: list[str] = []
    title: str = Field(min_length=3)
    published: date
    cvss: Cvss | None = None
    kev: bool = False
    affected: list[Range] = Field(min_length=1)
    #: Distro packages carrying the fix on an older upstream (dpkg/rpm scheme):
    #: an installed version with the same upstream that is at least this one is
    #: fixed.
    backports: list[str] = []
    #: What version alone cannot decide ("CDI mode only", "not with crun").
    condition: str | None = None
    #: When the fix could first be installed (for the grace period); defaults
    #: to ``published``.
    fix_available: date | None = None
    sources: list[HttpUrl] = Field(min_length=1)
    confidence: Confidence = "H"


class LinePolicy(KBModel):
    """Release lines (driver branches, Slurm releases, firmware trains)."""

    supported: list[str] = []
    #: Lines known and out of support: any version on them is presumed vulnerable.
    unsupported: list[str] = []
    note: str | None = None
    sources: list[HttpUrl] = []
    as_of: date | None = None


class PolicyMinimum(KBModel):
    """A minimum that is policy, not a CVE fix (e.g. the ClusterMAX table's
    CUDA >= 13.1): below it is a WARN."""

    version: str
    reason: str
    sources: list[HttpUrl] = Field(min_length=1)


class Component(KBModel):
    schema_: Literal["clustergrade.kb.component/1"] = Field(alias="schema")
    component: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    scheme: str
    criterion: Criterion = Criterion.SECURITY
    retrieved: date
    remediation: str
    lines: LinePolicy | None = None
    policy_minimum: PolicyMinimum | None = None
    advisories: list[Advisory] = []

    @field_validator("scheme")
    @classmethod
    def _scheme(cls, v: str) -> str:
        if v not in SCHEMES:
            raise ValueError(f"unknown scheme {v!r}; known: {', '.join(SCHEMES)}")
        return v

    @model_validator(mode="after")
    def _versions_parse(self) -> Component:
        bad: list[str] = []
        for adv in self.advisories:
            for r in adv.affected:
                for v in (r.fixed, r.last_affected):
                    if v is not None and not is_valid(self.scheme, v):
                        bad.append(f"{adv.id}: {v!r}")
                if r.introduced != "0" and not is_valid(self.scheme, r.introduced):
                    bad.append(f"{adv.id}: introduced {r.introduced!r}")
            for b in adv.backports:
                if not is_valid(self.scheme, b):
                    bad.append(f"{adv.id}: backport {b!r}")
        if self.policy_minimum and not is_valid(self.scheme, self.policy_minimum.version):
            bad.append(f"policy_minimum {self.policy_minimum.version!r}")
        if bad:
            raise ValueError(f"versions that do not parse as {self.scheme}: {'; '.join(bad)}")
        return self

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class GpuModel(KBModel):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    vendor: Literal["nvidia", "amd"]
    #: Substrings (case-insensitive) of the product name NVML/amd-smi report.
    match: list[str] = Field(min_length=1)
    architecture: str
    memory_gb: float = Field(gt=0)
    hbm_bandwidth_tbs: float = Field(gt=0)
    #: Dense peak TFLOPS per dtype (no sparsity).
    peak_tflops: dict[str, float]
    #: Reference achieved TFLOPS per dtype, with the source in ``sources``.
    achieved_tflops: dict[str, float] = {}
    achieved_hbm_tbs: float | None = None
    scaleup_gbs: float | None = None
    pcie_gen: int | None = None
    pcie_width: int | None = None
    #: Generation of this model relative to "H100 or newer" gates.
    hopper_or_newer: bool
    sources: list[HttpUrl] = Field(min_length=1)


class GpuCatalog(KBModel):
    schema_: Literal["clustergrade.kb.gpus/1"] = Field(alias="schema")
    retrieved: date
    gpus: list[GpuModel]
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


XidAction = Literal[
    "IGNORE",
    "RESTART_APP",
    "RESET_GPU",
    "RESTART_BM",
    "WORKFLOW",
    "CHECK_MECHANICALS",
    "FOLLOW_ROOT",
    "CONTACT_SUPPORT",
]


class Xid(KBModel):
    code: int = Field(ge=0)
    meaning: str
    action: XidAction
    severity: Literal["critical", "warning", "info"]
    note: str | None = None


class XidCatalog(KBModel):
    schema_: Literal["clustergrade.kb.xid/1"] = Field(alias="schema")
    retrieved: date
    sources: list[HttpUrl] = Field(min_length=1)
    #: Severity for a code the catalogue does not list.
    default_severity: Literal["critical", "warning"] = "critical"
    xids: list[Xid]
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Meta(KBModel):
    schema_: Literal["clustergrade.kb/1"] = Field(alias="schema")
    #: The edition date: the newest source this knowledge base reflects.
    date: date
    #: Older than this and the audit warns that the knowledge base is stale.
    max_age_days: int = Field(ge=1)
    #: Days after a fix is available before a missing fix is a FAIL (a WARN
    #: until then).
    grace_days: int = Field(ge=0)
    notes: str | None = None
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class KnowledgeBase(KBModel):
    meta: Meta
    components: dict[str, Component]
    gpus: GpuCatalog
    xids: XidCatalog
    #: Digest of every file's bytes: which exact knowledge base judged a run.
    digest: str
    origin: str

    def component(self, name: str) -> Component | None:
        return self.components.get(name)

    def gpu_model(self, product_name: str) -> GpuModel | None:
        name = product_name.lower()
        best: GpuModel | None = None
        best_len = 0
        for g in self.gpus.gpus:
            for m in g.match:
                if m.lower() in name and len(m) > best_len:
                    best, best_len = g, len(m)
        return best

    def xid(self, code: int) -> Xid | None:
        for x in self.xids.xids:
            if x.code == code:
                return x
        return None
