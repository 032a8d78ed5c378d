"""Attestations: dated, sourced statements about what an audit cannot see
(certifications, SLA, support, prices, partnerships, measured test results).

Each one says who vouches for it: ``tester`` (someone outside the provider
checked the document or ran the test) or ``provider`` (the provider says so).
The formula never scores a provider's word as met (docs/attestations.md)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from clustergrade.rate.model import AttestField, FieldType

ATTEST_SCHEMA = "clustergrade.attestations/1"


class AttestError(ValueError):
    """An attestation file that cannot be used, with every problem listed."""

    def __init__(self, where: str, problems: list[str]) -> None:
        self.where = where
        self.problems = problems
        super().__init__(f"{where}: " + "; ".join(problems))


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AttestSource(_Model):
    url: str | None = Field(None, pattern=r"^https?://\S+$")
    #: A document that is not public: title, date, where it is kept.
    document: str | None = Field(None, min_length=3)

    @model_validator(mode="after")
    def _one(self) -> AttestSource:
        if self.url is None and self.document is None:
            raise ValueError("a source needs a url or a document")
        return self


class Attestation(_Model):
    field: str
    value: bool | int | float | str
    verified_by: Literal["tester", "provider"]
    #: Who verified it (required for tester-verified items).
    tester: str | None = None
    source: AttestSource
    date: date
    note: str | None = None

    @model_validator(mode="after")
    def _tester_named(self) -> Attestation:
        if self.verified_by == "tester" and not self.tester:
            raise ValueError("a tester-verified attestation names the tester")
        return self


class AttestationFile(_Model):
    schema_: Literal["clustergrade.attestations/1"] = Field(alias="schema")
    provider: str = Field(min_length=1)
    cluster: str | None = None
    #: True for examples and tests: such a file must never feed a published rating.
    test_data: bool = False
    attestations: list[Attestation]

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class _NoDuplicates(yaml.SafeLoader):
    """SafeLoader that refuses a repeated key instead of keeping the last one
    (a silently overridden value would be invented evidence)."""


def _mapping(loader: _NoDuplicates, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_NoDuplicates.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def _value_problem(a: Attestation, spec: AttestField) -> str | None:
    v = a.value
    if spec.type is FieldType.BOOL and not isinstance(v, bool):
        return f"expects true or false, got {v!r}"
    if spec.type is FieldType.NUMBER and (isinstance(v, bool) or not isinstance(v, int | float)):
        return f"expects a number{f' in {spec.unit}' if spec.unit else ''}, got {v!r}"
    if spec.type is FieldType.STRING:
        if not isinstance(v, str):
            return f"expects text, got {v!r}"
        if spec.choices is not None and v not in spec.choices:
            return f"expects one of {spec.choices}, got {v!r}"
    return None


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(file)"


def parse_attestations(
    text: str, fields: dict[str, AttestField], where: str = "<attestations>"
) -> AttestationFile:
    """Validate ``text`` (YAML) against the schema and the field catalogue."""
    try:
        raw = yaml.load(text, Loader=_NoDuplicates)
    except yaml.YAMLError as exc:
        raise AttestError(where, [f"not valid YAML: {exc}"]) from exc
    if not isinstance(raw, dict):
        raise AttestError(where, ["expected a mapping with schema, provider, attestations"])
    try:
        doc = AttestationFile.model_validate(raw)
    except ValidationError as exc:
        raise AttestError(
            where, [f"{_loc(tuple(e['loc']))}: {e['msg']}" for e in exc.errors()]
        ) from exc
    problems = []
    for i, a in enumerate(doc.attestations):
        spec = fields.get(a.field)
        if spec is None:
            problems.append(f"attestations[{i}].field: unknown field {a.field!r}")
            continue
        p = _value_problem(a, spec)
        if p is not None:
            problems.append(f"attestations[{i}].value ({a.field}): {p}")
    if problems:
        raise AttestError(where, problems)
    return doc


def load_attestations(path: Path, fields: dict[str, AttestField]) -> AttestationFile:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AttestError(str(path), [f"cannot read: {exc}"]) from exc
    return parse_attestations(text, fields, where=str(path))
