"""The command seam on the real machine: typed outcomes, never exceptions."""

from __future__ import annotations

import os
import sys
import time

import pytest

from clustergrade import seam
from clustergrade.seam import NOT_RECORDED, LocalHost, RecordingHost, ReplayHost


def test_runs_argv_and_captures_output() -> None:
    res = LocalHost().run(
        [sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr)"]
    )
    assert res.ok and res.returncode == 0
    assert res.text.strip() == "out"
    assert res.err_text.strip() == "err"
    assert res.duration_s > 0


def test_nonzero_exit_is_a_result() -> None:
    res = LocalHost().run([sys.executable, "-c", "raise SystemExit(7)"])
    assert res.returncode == 7 and not res.ok and res.ran
    assert "exit status 7" in res.describe()


def test_missing_binary_is_not_found() -> None:
    res = LocalHost().run(["/nonexistent/definitely-not-a-tool", "--version"])
    assert res.not_found and res.returncode is None and not res.ran
    assert "command not found" in res.describe()


def test_timeout_kills_the_whole_process_group() -> None:
    # The child spawns a grandchild that would keep the pipe open for 30 s.
    code = (
        "import subprocess, sys, time;"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']);"
        "time.sleep(30)"
    )
    t0 = time.monotonic()
    res = LocalHost().run([sys.executable, "-c", code], timeout=1.0)
    assert res.timed_out and not res.ok
    assert time.monotonic() - t0 < 6
    assert "timed out" in res.describe()


def test_output_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seam, "MAX_OUTPUT_BYTES", 1000)
    res = LocalHost().run([sys.executable, "-c", "print('x' * 100000)"])
    assert res.truncated and len(res.stdout) == 1000


def test_shell_strings_are_refused() -> None:
    with pytest.raises(TypeError):
        LocalHost().run("echo hi")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        LocalHost().run([])


def test_commands_run_in_the_c_locale() -> None:
    res = LocalHost().run([sys.executable, "-c", "import os; print(os.environ['LC_ALL'])"])
    assert res.text.strip() == "C"


def test_root_relocates_files_not_commands(tmp_path: os.PathLike[str]) -> None:
    from pathlib import Path

    root = Path(tmp_path)
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "proc/sys/kernel/osrelease").write_text("6.8.0-test\n")
    host = LocalHost(root)
    assert host.read("/proc/sys/kernel/osrelease").text == "6.8.0-test\n"
    assert host.listdir("/proc/sys").entries == ("kernel",)
    assert host.stat("/proc/sys/kernel").is_dir
    missing = host.read("/proc/nope")
    assert missing.missing and missing.content is None
    assert host.stat("/nope").exists is False


def test_read_is_bounded(tmp_path: os.PathLike[str]) -> None:
    from pathlib import Path

    p = Path(tmp_path) / "big"
    p.write_bytes(b"a" * 5000)
    res = LocalHost().read(str(p), limit=100)
    assert res.truncated and res.content == b"a" * 100


def test_unreadable_file_is_an_error_not_missing(tmp_path: os.PathLike[str]) -> None:
    from pathlib import Path

    d = Path(tmp_path) / "dir"
    d.mkdir()
    res = LocalHost().read(str(d))
    assert res.content is None and not res.missing and res.error


def test_recording_replays_identically() -> None:
    rec = RecordingHost(LocalHost())
    a = rec.run([sys.executable, "-c", "print(42)"])
    f = rec.read("/proc/self/status")
    replay = ReplayHost(rec.recording)
    assert replay.run([sys.executable, "-c", "print(42)"]) == a
    assert replay.read("/proc/self/status") == f
    # Not asked during recording: an error, never "absent".
    other = replay.run(["nvidia-smi"])
    assert other.error == NOT_RECORDED and not other.not_found
    assert replay.read("/etc/hostname").error == NOT_RECORDED
    assert not replay.read("/etc/hostname").missing


def test_procfs_sysctls_are_readable() -> None:
    # /proc/sys handlers refuse a single multi-megabyte read(); the seam must
    # read in small chunks.
    res = LocalHost().read("/proc/sys/kernel/osrelease")
    assert res.content is not None and res.content.strip(), res.error
