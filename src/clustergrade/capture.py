"""Capture archives: a node's raw answers, saved so they can be judged elsewhere.

An archive is a gzip'd tar holding ``manifest.json`` and one blob per command
output or file.  Blobs keep raw bytes, so a capture is readable with ``tar``
and replays byte for byte.  Loading validates the manifest against a pydantic
model (a capture is a trust boundary: it may come from another machine) and
refuses unsafe member names.
"""

from __future__ import annotations

import io
import json
import tarfile
import time
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clustergrade import __version__
from clustergrade.seam import CommandResult, DirListing, FileResult, PathInfo, Recording

FORMAT = "clustergrade-capture/1"
MAX_MEMBER_BYTES = 64 * 1024 * 1024


class CaptureError(Exception):
    """A capture archive that cannot be read; the message says why."""


class _Cmd(BaseModel):
    model_config = ConfigDict(extra="forbid")
    argv: list[str] = Field(min_length=1)
    returncode: int | None
    duration_s: float = 0.0
    timed_out: bool = False
    not_found: bool = False
    error: str | None = None
    truncated: bool = False
    stdout: str | None = None
    stderr: str | None = None


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    error: str | None = None
    missing: bool = False
    truncated: bool = False
    blob: str | None = None


class _Dir(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    entries: list[str] | None
    error: str | None = None


class _Stat(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    exists: bool
    mode: int | None = None
    uid: int | None = None
    gid: int | None = None
    is_dir: bool = False
    is_char_device: bool = False
    is_symlink: bool = False
    readable: bool = False
    writable: bool = False
    target: str | None = None
    error: str | None = None


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: str
    hostname: str
    created_at: datetime
    tool_version: str
    commands: list[_Cmd] = []
    files: list[_File] = []
    dirs: list[_Dir] = []
    stats: list[_Stat] = []


def save(recording: Recording, path: Path) -> Path:
    """Write ``recording`` as a capture archive at ``path``."""
    blobs: dict[str, bytes] = {}

    def blob(kind: str, n: int, data: bytes) -> str | None:
        if not data:
            return None
        name = f"blobs/{kind}-{n:04d}"
        blobs[name] = data
        return name

    cmds = [
        _Cmd(
            argv=list(c.argv),
            returncode=c.returncode,
            duration_s=c.duration_s,
            timed_out=c.timed_out,
            not_found=c.not_found,
            error=c.error,
            truncated=c.truncated,
            stdout=blob("out", i, c.stdout),
            stderr=blob("err", i, c.stderr),
        )
        for i, c in enumerate(recording.commands.values())
    ]
    files = [
        _File(
            path=f.path,
            error=f.error,
            missing=f.missing,
            truncated=f.truncated,
            blob=blob("file", i, f.content) if f.content is not None else None,
        )
        for i, f in enumerate(recording.files.values())
    ]
    # An empty file is content, not absence: keep a marker blob name for it.
    for i, f in enumerate(recording.files.values()):
        if f.content == b"":
            name = f"blobs/file-{i:04d}"
            blobs[name] = b""
            files[i].blob = name
    manifest = Manifest(
        format=FORMAT,
        hostname=recording.hostname,
        created_at=datetime.now(UTC),
        tool_version=__version__,
        commands=cmds,
        files=files,
        dirs=[
            _Dir(path=d.path, entries=None if d.entries is None else list(d.entries), error=d.error)
            for d in recording.dirs.values()
        ],
        stats=[
            _Stat(**{k: getattr(s, k) for k in _Stat.model_fields})
            for s in recording.stats.values()
        ],
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    with tarfile.open(tmp, "w:gz") as tar:
        _add(tar, "manifest.json", manifest.model_dump_json(indent=1).encode())
        for name, data in blobs.items():
            _add(tar, name, data)
    tmp.replace(path)
    return path


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(time.time())
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def load(path: Path) -> Recording:
    """Read a capture archive; raise :class:`CaptureError` with the reason."""
    try:
        tar = tarfile.open(path, "r:*")
    except FileNotFoundError as exc:
        raise CaptureError(f"{path}: no such file") from exc
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise CaptureError(f"{path}: not a readable capture archive ({exc})") from exc
    with tar:
        members: dict[str, bytes] = {}
        try:
            for m in tar:
                if not m.isfile():
                    continue
                if m.name.startswith("/") or ".." in m.name.split("/"):
                    raise CaptureError(f"{path}: unsafe member name {m.name!r}")
                if m.size > MAX_MEMBER_BYTES:
                    raise CaptureError(f"{path}: member {m.name} is larger than allowed")
                fh = tar.extractfile(m)
                if fh is not None:
                    members[m.name] = fh.read()
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise CaptureError(f"{path}: truncated or corrupt archive ({exc})") from exc
    raw = members.get("manifest.json")
    if raw is None:
        raise CaptureError(f"{path}: no manifest.json inside")
    try:
        manifest = Manifest.model_validate(json.loads(raw))
    except (ValueError, ValidationError) as exc:
        raise CaptureError(f"{path}: invalid manifest: {exc}") from exc
    if manifest.format != FORMAT:
        raise CaptureError(f"{path}: unsupported capture format {manifest.format!r}")

    def data(name: str | None) -> bytes:
        if name is None:
            return b""
        if name not in members:
            raise CaptureError(f"{path}: manifest names missing blob {name}")
        return members[name]

    rec = Recording(hostname=manifest.hostname)
    for c in manifest.commands:
        argv = tuple(c.argv)
        rec.commands[argv] = CommandResult(
            argv,
            c.returncode,
            stdout=data(c.stdout),
            stderr=data(c.stderr),
            duration_s=c.duration_s,
            timed_out=c.timed_out,
            not_found=c.not_found,
            error=c.error,
            truncated=c.truncated,
        )
    for f in manifest.files:
        rec.files[f.path] = FileResult(
            f.path,
            data(f.blob) if f.blob is not None else None,
            error=f.error,
            truncated=f.truncated,
            missing=f.missing,
        )
    for d in manifest.dirs:
        rec.dirs[d.path] = DirListing(
            d.path, None if d.entries is None else tuple(d.entries), error=d.error
        )
    for s in manifest.stats:
        rec.stats[s.path] = PathInfo(**s.model_dump())
    return rec
