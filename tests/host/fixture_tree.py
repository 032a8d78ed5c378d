"""Host captures stored as a directory tree plus a manifest, and their replay.

A capture folder holds ``root/`` (every file the collectors read, at its path
on the node) and ``manifest.json`` (what a tree cannot hold: directory
listings, symlink targets, files known to be absent, command results).
``capture()`` writes one from a live host; ``mapping()`` turns one back into
``ReplayHost.from_mapping`` arguments for ``tests.helpers.replay_facts``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clustergrade.collect.runner import collect_node
from clustergrade.facts.node import NodeFacts
from clustergrade.seam import CommandResult, Host, PathInfo, RecordingHost
from tests.helpers import FIXTURES, replay_facts

HOST_SECTIONS = ["os", "kernel", "cpu", "memory", "pci"]


def capture(host: Host, out: Path, sections: list[str] | None = None) -> None:
    """Run the host collectors on ``host`` and save every answer under ``out``."""
    rec_host = RecordingHost(host)
    collect_node(rec_host, sections or HOST_SECTIONS)
    rec = rec_host.recording
    root = out / "root"
    absent: list[str] = []
    file_errors: dict[str, str] = {}
    for path, res in sorted(rec.files.items()):
        if res.content is not None:
            dest = root / path.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(res.content)
        elif res.missing:
            absent.append(path)
        else:
            file_errors[path] = res.error or "unreadable"
    manifest: dict[str, Any] = {
        "hostname": rec.hostname,
        "dirs": {
            p: None if d.entries is None else list(d.entries) for p, d in sorted(rec.dirs.items())
        },
        "stats": {
            p: {
                "exists": s.exists,
                "is_dir": s.is_dir,
                "is_symlink": s.is_symlink,
                "target": s.target,
            }
            for p, s in sorted(rec.stats.items())
        },
        "absent": absent,
        "file_errors": file_errors,
        "commands": [
            {
                "argv": list(argv),
                "returncode": c.returncode,
                "stdout": c.text,
                "stderr": c.err_text,
                "not_found": c.not_found,
            }
            for argv, c in rec.commands.items()
        ],
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def mapping(name: str) -> dict[str, Any]:
    """``ReplayHost.from_mapping`` keyword arguments for the capture ``name``."""
    base = FIXTURES / "host" / name
    manifest = json.loads((base / "manifest.json").read_text())
    root = base / "root"
    files: dict[str, bytes | str | None] = {}
    if root.is_dir():
        for f in sorted(root.rglob("*")):
            if f.is_file():
                files["/" + f.relative_to(root).as_posix()] = f.read_bytes()
    dirs: dict[str, list[str] | None] = dict(manifest.get("dirs", {}))
    stats = {
        p: PathInfo(
            p,
            exists=s["exists"],
            is_dir=s.get("is_dir", False),
            is_symlink=s.get("is_symlink", False),
            target=s.get("target"),
            mode=0o040555 if s.get("is_dir") else (0o100444 if s["exists"] else None),
            readable=s["exists"],
        )
        for p, s in manifest.get("stats", {}).items()
    }
    commands: dict[tuple[str, ...], CommandResult] = {}
    for c in manifest.get("commands", []):
        argv = tuple(c["argv"])
        commands[argv] = CommandResult(
            argv,
            c.get("returncode"),
            stdout=c.get("stdout", "").encode(),
            stderr=c.get("stderr", "").encode(),
            not_found=c.get("not_found", False),
        )
    return {
        "hostname": manifest.get("hostname", name),
        "files": files,
        "dirs": dirs,
        "stats": stats,
        "commands": commands,
        "missing_files": manifest.get("absent", []),
    }


def tree_facts(name: str, sections: list[str] | None = None, **override: Any) -> NodeFacts:
    """Replay capture ``name`` through the collectors; ``override`` replaces
    mapping entries (e.g. ``files={...}`` merged over the capture's)."""
    m = mapping(name)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(m.get(key), dict):
            m[key] = {**m[key], **value}
        elif isinstance(value, list) and isinstance(m.get(key), list):
            m[key] = [*m[key], *value]
        else:
            m[key] = value
    # A file supplied by an override exists, whatever the capture said.
    m["missing_files"] = [p for p in m["missing_files"] if p not in m["files"]]
    return replay_facts(sections or HOST_SECTIONS, **m)


if __name__ == "__main__":  # pragma: no cover - run by hand to (re)capture
    import argparse

    from clustergrade.seam import LocalHost

    ap = argparse.ArgumentParser(description="capture this machine's host facts as a fixture")
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    capture(LocalHost(), args.out)
