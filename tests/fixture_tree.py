"""Captures stored as a file tree plus a manifest, and their replay.

A capture folder holds ``root/`` (every file the collectors read, at its path
on the node) and ``manifest.json`` (what a tree cannot hold: directory
listings, stats with mode, owner and access answers, symlink targets, files
known to be absent, command results).  :class:`FixtureTree` binds a fixture
folder and the sections its captures hold; ``capture()`` writes one from a
live host, ``mapping()`` turns one back into ``ReplayHost.from_mapping``
arguments and ``tree_facts()`` replays it through the collectors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clustergrade.collect.runner import collect_node
from clustergrade.facts.node import NodeFacts
from clustergrade.seam import CommandResult, Host, PathInfo, RecordingHost
from tests.helpers import replay_facts


def stat_info(path: str, s: dict[str, Any]) -> PathInfo:
    return PathInfo(
        path,
        exists=s["exists"],
        mode=s.get("mode", 0o040555 if s.get("is_dir") else (0o100444 if s["exists"] else None)),
        uid=s.get("uid"),
        gid=s.get("gid"),
        is_dir=s.get("is_dir", False),
        is_char_device=s.get("is_char_device", False),
        is_symlink=s.get("is_symlink", False),
        readable=s.get("readable", s["exists"]),
        writable=s.get("writable", False),
        target=s.get("target"),
    )


@dataclass(frozen=True)
class FixtureTree:
    """A folder of tree captures and the sections they were captured for."""

    base: Path
    sections: list[str]

    def capture(self, host: Host, out: Path, sections: list[str] | None = None) -> None:
        """Run the collectors on ``host`` and save every answer under ``out``."""
        rec_host = RecordingHost(host)
        collect_node(rec_host, sections or self.sections)
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
                p: None if d.entries is None else list(d.entries)
                for p, d in sorted(rec.dirs.items())
            },
            "stats": {
                p: {
                    "exists": s.exists,
                    "mode": s.mode,
                    "uid": s.uid,
                    "gid": s.gid,
                    "is_dir": s.is_dir,
                    "is_char_device": s.is_char_device,
                    "is_symlink": s.is_symlink,
                    "readable": s.readable,
                    "writable": s.writable,
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

    def mapping(self, name: str) -> dict[str, Any]:
        """``ReplayHost.from_mapping`` keyword arguments for the capture ``name``."""
        base = self.base / name
        manifest = json.loads((base / "manifest.json").read_text())
        root = base / "root"
        files: dict[str, bytes | str | None] = {}
        if root.is_dir():
            for f in sorted(root.rglob("*")):
                if f.is_file():
                    files["/" + f.relative_to(root).as_posix()] = f.read_bytes()
        stats = {p: stat_info(p, s) for p, s in manifest.get("stats", {}).items()}
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
            "dirs": dict(manifest.get("dirs", {})),
            "stats": stats,
            "commands": commands,
            "missing_files": manifest.get("absent", []),
        }

    def tree_facts(
        self, name: str, sections: list[str] | None = None, **override: Any
    ) -> NodeFacts:
        """Replay capture ``name``; ``override`` entries are merged over the capture's
        (a file given in ``files`` exists, whatever the capture said)."""
        m = self.mapping(name)
        for key, value in override.items():
            if isinstance(value, dict) and isinstance(m.get(key), dict):
                m[key] = {**m[key], **value}
            elif isinstance(value, list) and isinstance(m.get(key), list):
                m[key] = [*m[key], *value]
            else:
                m[key] = value
        m["missing_files"] = [p for p in m["missing_files"] if p not in m["files"]]
        return replay_facts(sections or self.sections, **m)
