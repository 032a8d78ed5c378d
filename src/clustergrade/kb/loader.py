"""Load and validate a knowledge-base directory.

Layout::

    meta.yaml               edition date, staleness and grace period
    gpus.yaml               GPU model expectations
    xid.yaml                XID catalogue
    components/<name>.yaml  one component's advisories and line policy

A file that does not validate fails the whole load with the file and the
reason: a half-loaded knowledge base would silently pass what it cannot judge.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from clustergrade.kb.model import Component, GpuCatalog, KnowledgeBase, Meta, XidCatalog


class KBError(Exception):
    """A knowledge base that cannot be used; the message names file and reason."""


def shipped_dir() -> Path:
    return Path(str(resources.files("clustergrade.kb") / "data"))


def user_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return Path(base) / "clustergrade" / "kb"


def _read_yaml(path: Path) -> tuple[Any, bytes]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise KBError(f"{path}: {exc.strerror or exc}") from exc
    try:
        return yaml.safe_load(raw), raw
    except yaml.YAMLError as exc:
        raise KBError(f"{path}: not valid YAML: {exc}") from exc


def _validate(model: Any, path: Path, data: Any) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        lines = [f"{path}: does not match {model.__name__}:"]
        for err in exc.errors()[:20]:
            loc = ".".join(str(p) for p in err["loc"])
            lines.append(f"  {loc}: {err['msg']}")
        raise KBError("\n".join(lines)) from exc


def load_dir(directory: Path) -> KnowledgeBase:
    """Load the knowledge base in ``directory``; raise :class:`KBError`."""
    if not directory.is_dir():
        raise KBError(f"{directory}: not a knowledge-base directory")
    digest = hashlib.sha256()
    parts: dict[str, Any] = {}
    for name, model in (("meta", Meta), ("gpus", GpuCatalog), ("xid", XidCatalog)):
        path = directory / f"{name}.yaml"
        data, raw = _read_yaml(path)
        digest.update(name.encode() + b"\0" + raw)
        parts[name] = _validate(model, path, data)
    components: dict[str, Component] = {}
    comp_dir = directory / "components"
    for path in sorted(comp_dir.glob("*.yaml")) if comp_dir.is_dir() else []:
        data, raw = _read_yaml(path)
        digest.update(path.name.encode() + b"\0" + raw)
        comp = _validate(Component, path, data)
        if comp.component != path.stem:
            raise KBError(f"{path}: component {comp.component!r} must match its file name")
        components[comp.component] = comp
    return KnowledgeBase(
        meta=parts["meta"],
        components=components,
        gpus=parts["gpus"],
        xids=parts["xid"],
        digest=digest.hexdigest()[:16],
        origin=str(directory),
    )


@lru_cache(maxsize=4)
def _load_cached(directory: str) -> KnowledgeBase:
    return load_dir(Path(directory))


def load(directory: Path | None = None) -> KnowledgeBase:
    """The knowledge base to judge with: ``directory`` if given, else the one
    ``kb update`` wrote (when it is at least as new as the shipped one), else
    the shipped one."""
    if directory is not None:
        return _load_cached(str(directory))
    shipped = _load_cached(str(shipped_dir()))
    updated = user_dir()
    if (updated / "meta.yaml").is_file():
        newer = _load_cached(str(updated))
        if newer.meta.date >= shipped.meta.date:
            return newer
    return shipped
