"""The published JSON schemas of the report and the facts snapshot."""

from __future__ import annotations

from typing import Any

from clustergrade.facts.node import Snapshot
from clustergrade.report.model import Report


def report_schema() -> dict[str, Any]:
    schema = Report.model_json_schema(by_alias=True, mode="serialization")
    schema["$id"] = "clustergrade.report/1"
    return schema


def facts_schema() -> dict[str, Any]:
    schema = Snapshot.model_json_schema(by_alias=True, mode="serialization")
    schema["$id"] = "clustergrade.facts/1"
    return schema
