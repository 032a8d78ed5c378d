"""Capture archives round-trip byte for byte and hostile archives are refused."""

from __future__ import annotations

import io
import sys
import tarfile
from pathlib import Path

import pytest

from clustergrade.capture import CaptureError, load, save
from clustergrade.seam import LocalHost, RecordingHost, ReplayHost


def _record() -> RecordingHost:
    rec = RecordingHost(LocalHost())
    rec.run([sys.executable, "-c", "import sys; sys.stdout.buffer.write(bytes(range(256)))"])
    rec.run(["/nonexistent/tool"])
    rec.read("/proc/self/status")
    rec.read("/nonexistent/file")
    rec.listdir("/proc/self")
    rec.stat("/proc/self/status")
    return rec


def test_round_trip(tmp_path: Path) -> None:
    rec = _record()
    path = save(rec.recording, tmp_path / "c.tar.gz")
    back = load(path)
    assert back.hostname == rec.recording.hostname
    assert back.commands == rec.recording.commands
    assert back.files == rec.recording.files
    assert back.dirs == rec.recording.dirs
    assert back.stats == rec.recording.stats
    replay = ReplayHost(back)
    assert replay.run(["/nonexistent/tool"]).not_found


def test_empty_file_stays_empty_not_absent(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    rec = RecordingHost(LocalHost())
    rec.read(str(empty))
    back = load(save(rec.recording, tmp_path / "c.tar.gz"))
    assert back.files[str(empty)].content == b""


def test_truncated_archive_is_refused(tmp_path: Path) -> None:
    path = save(_record().recording, tmp_path / "c.tar.gz")
    data = path.read_bytes()
    bad = tmp_path / "trunc.tar.gz"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(CaptureError):
        load(bad)


@pytest.mark.parametrize("content", [b"", b"not a tarball at all", b"\x1f\x8b\x08garbage"])
def test_garbage_is_refused(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(content)
    with pytest.raises(CaptureError):
        load(bad)


def _tar_with(tmp_path: Path, members: dict[str, bytes]) -> Path:
    p = tmp_path / "x.tar.gz"
    with tarfile.open(p, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return p


def test_path_traversal_member_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="unsafe"):
        load(_tar_with(tmp_path, {"../evil": b"x", "manifest.json": b"{}"}))


def test_manifest_missing_or_invalid(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="no manifest"):
        load(_tar_with(tmp_path, {"other": b"x"}))
    with pytest.raises(CaptureError, match="invalid manifest"):
        load(_tar_with(tmp_path, {"manifest.json": b'{"format": 3}'}))


def test_manifest_naming_missing_blob(tmp_path: Path) -> None:
    manifest = (
        b'{"format":"clustergrade-capture/1","hostname":"h","created_at":"2026-01-01T00:00:00Z",'
        b'"tool_version":"0","commands":[{"argv":["x"],"returncode":0,"stdout":"blobs/nope"}]}'
    )
    with pytest.raises(CaptureError, match="missing blob"):
        load(_tar_with(tmp_path, {"manifest.json": manifest}))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="no such file"):
        load(tmp_path / "absent.tar.gz")
