"""InfiniBand fixtures stored as directory trees, and their replay.

A scenario folder ``tests/fixtures/infiniband/<name>/`` holds ``root/`` (the
files at their paths on the node) and optionally ``manifest.json`` for what a
tree cannot hold: symlink targets and device-node metadata (``stats``) and
directory listings that differ from the tree (``dirs``, null = absent).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clustergrade.facts.node import NodeFacts
from clustergrade.seam import PathInfo
from tests.helpers import FIXTURES, replay_facts

IB_FIXTURES = FIXTURES / "infiniband"


def path_info(path: str, s: dict[str, Any]) -> PathInfo:
    return PathInfo(
        path,
        exists=s.get("exists", True),
        mode=s.get("mode"),
        uid=s.get("uid"),
        gid=s.get("gid"),
        is_dir=s.get("is_dir", False),
        is_char_device=s.get("is_char_device", False),
        is_symlink=s.get("target") is not None,
        readable=s.get("readable", False),
        writable=s.get("writable", False),
        target=s.get("target"),
    )


def tree_mapping(root: Path, manifest: dict[str, Any] | None = None) -> dict[str, Any]:
    """``ReplayHost.from_mapping`` keyword arguments for a tree under ``root``.

    Every directory in the tree is listed with its children; the places the
    collector looks at that the tree lacks (/sys/class/infiniband,
    /dev/infiniband, /sys/class/infiniband_verbs) are recorded as absent, so a
    replay answers "missing" for them instead of "not recorded".
    """
    manifest = manifest or {}
    files: dict[str, bytes | str | None] = {}
    dirs: dict[str, list[str] | None] = {
        "/sys/class/infiniband": None,
        "/dev/infiniband": None,
    }
    if root.is_dir():
        for f in sorted(root.rglob("*")):
            rel = "/" + f.relative_to(root).as_posix()
            if f.is_file():
                files[rel] = f.read_bytes()
            elif f.is_dir():
                dirs[rel] = sorted(c.name for c in f.iterdir())
    extra_entries: dict[str, list[str]] = {}
    stats = {"/sys/class/infiniband_verbs": PathInfo("/sys/class/infiniband_verbs", exists=False)}
    for path, s in manifest.get("stats", {}).items():
        stats[path] = path_info(path, s)
        parent, _, name = path.rpartition("/")
        if s.get("exists", True):
            extra_entries.setdefault(parent, []).append(name)
    for parent, names in extra_entries.items():
        dirs[parent] = sorted({*(dirs.get(parent) or []), *names})
    for path, entries in manifest.get("dirs", {}).items():
        dirs[path] = entries
    return {"files": files, "dirs": dirs, "stats": stats}


def mapping(name: str) -> dict[str, Any]:
    base = IB_FIXTURES / name
    manifest_path = base / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    m = tree_mapping(base / "root", manifest)
    m["hostname"] = manifest.get("hostname", name)
    return m


def ib_facts(name: str, files: Mapping[str, str | bytes] | None = None, **extra: Any) -> NodeFacts:
    """Replay scenario ``name`` through the infiniband collector; ``files``
    replaces or adds file contents (listing new ones in their directory)."""
    m = mapping(name)
    for path, content in (files or {}).items():
        m["files"][path] = content
        parent, _, leaf = path.rpartition("/")
        while parent:
            listing = m["dirs"].get(parent) or []
            if leaf not in listing:
                m["dirs"][parent] = sorted([*listing, leaf])
            parent, _, leaf = parent.rpartition("/")
            if parent == "":
                break
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(m.get(key), dict):
            m[key] = {**m[key], **value}
        else:
            m[key] = value
    return replay_facts(["infiniband"], **m)
