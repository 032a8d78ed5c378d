"""The one way clustergrade touches a node: run an argv, read a file, list a
directory, stat a path.

Collectors see only the :class:`Host` protocol.  :class:`LocalHost` talks to the
machine it runs on (optionally under another root directory for /sys, /proc,
/etc and /dev, like node_exporter's path flags); :class:`RecordingHost` wraps
another host and keeps every answer so that a run can be saved as a capture;
:class:`ReplayHost` answers from such a capture, so the same collectors run on
live nodes, on captures made elsewhere and in tests.

Commands are argument lists with a timeout, never shell strings.  A missing
binary, a timeout and an OS error are typed outcomes, never exceptions.
"""

from __future__ import annotations

import os
import signal
import stat as statmod
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

#: Output beyond this many bytes per stream is dropped and flagged as truncated,
#: so a hostile or runaway command cannot blow the audit's memory bound.
MAX_OUTPUT_BYTES = 8 * 1024 * 1024
#: Default cap for a single file read.
MAX_FILE_BYTES = 4 * 1024 * 1024

NOT_RECORDED = "not recorded in capture"

#: Commands run with a fixed, minimal locale so their output parses the same way
#: everywhere.
_ENV_OVERRIDES = {"LC_ALL": "C", "LANG": "C"}


@dataclass(frozen=True)
class CommandResult:
    """What running one argv produced."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: bytes = b""
    stderr: bytes = b""
    duration_s: float = 0.0
    timed_out: bool = False
    not_found: bool = False
    error: str | None = None
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def ran(self) -> bool:
        """True when the program started and exited on its own."""
        return self.returncode is not None and not self.timed_out

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def err_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")

    def describe(self) -> str:
        """A one-line account of a command that did not succeed."""
        cmd = " ".join(self.argv)
        if self.not_found:
            return f"{cmd}: command not found"
        if self.timed_out:
            return f"{cmd}: timed out after {self.duration_s:.1f}s"
        if self.error:
            return f"{cmd}: {self.error}"
        tail = self.err_text.strip().splitlines()[-1:] or self.text.strip().splitlines()[-1:]
        detail = f": {tail[0][:200]}" if tail else ""
        return f"{cmd}: exit status {self.returncode}{detail}"


@dataclass(frozen=True)
class FileResult:
    """What reading one file produced; ``content`` is None when it could not be read."""

    path: str
    content: bytes | None
    error: str | None = None
    truncated: bool = False
    missing: bool = False

    @property
    def text(self) -> str | None:
        if self.content is None:
            return None
        return self.content.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class PathInfo:
    """The metadata of one path, as the audit's user sees it."""

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

    @property
    def perms(self) -> int | None:
        return None if self.mode is None else statmod.S_IMODE(self.mode)

    @property
    def world_writable(self) -> bool:
        return self.perms is not None and bool(self.perms & 0o002)

    @property
    def world_readable(self) -> bool:
        return self.perms is not None and bool(self.perms & 0o004)


@dataclass(frozen=True)
class DirListing:
    path: str
    entries: tuple[str, ...] | None
    error: str | None = None


class Host(Protocol):
    """The seam every collector uses; see the module docstring."""

    @property
    def name(self) -> str: ...

    def run(self, argv: Sequence[str], timeout: float = 10.0) -> CommandResult: ...

    def read(self, path: str, limit: int = MAX_FILE_BYTES) -> FileResult: ...

    def listdir(self, path: str) -> DirListing: ...

    def stat(self, path: str) -> PathInfo: ...


def _describe_oserror(exc: OSError) -> str:
    return exc.strerror or exc.__class__.__name__


class LocalHost:
    """The machine clustergrade runs on.

    ``root`` relocates file reads, listings and stats (not commands), so a
    mounted image of another node's /sys, /proc, /etc and /dev can be read.
    """

    def __init__(self, root: str | os.PathLike[str] = "/", name: str | None = None) -> None:
        self._root = Path(root)
        self._name = name or os.uname().nodename

    @property
    def name(self) -> str:
        return self._name

    def _path(self, path: str) -> Path:
        if self._root == Path("/"):
            return Path(path)
        return self._root / path.lstrip("/")

    def run(self, argv: Sequence[str], timeout: float = 10.0) -> CommandResult:
        if isinstance(argv, (str, bytes)):
            raise TypeError("argv must be a list of arguments, never a shell string")
        args = tuple(argv)
        if not args or any(not isinstance(a, str) for a in args):
            raise TypeError("argv must be a non-empty sequence of str")
        env = {**os.environ, **_ENV_OVERRIDES}
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                # A session of its own, so a timeout kills the whole process
                # group (children that hold the pipes open included).
                start_new_session=True,
            )
        except FileNotFoundError:
            return CommandResult(args, None, not_found=True, duration_s=time.monotonic() - start)
        except OSError as exc:
            return CommandResult(
                args, None, error=_describe_oserror(exc), duration_s=time.monotonic() - start
            )
        out, err, truncated = _bounded_communicate(proc, timeout)
        duration = time.monotonic() - start
        if out is None:
            return CommandResult(
                args, None, stdout=b"", stderr=b"", duration_s=duration, timed_out=True
            )
        return CommandResult(
            args,
            proc.returncode,
            stdout=out,
            stderr=err or b"",
            duration_s=duration,
            truncated=truncated,
        )

    def read(self, path: str, limit: int = MAX_FILE_BYTES) -> FileResult:
        p = self._path(path)
        try:
            with open(p, "rb") as fh:
                # Small reads: procfs/sysfs handlers refuse one huge read()
                # (ENOMEM on /proc/sys), and most files are a line long.
                chunks: list[bytes] = []
                got = 0
                while got <= limit:
                    block = fh.read(min(65536, limit + 1 - got))
                    if not block:
                        break
                    chunks.append(block)
                    got += len(block)
                data = b"".join(chunks)
        except FileNotFoundError:
            return FileResult(path, None, error="no such file", missing=True)
        except IsADirectoryError:
            return FileResult(path, None, error="is a directory")
        except OSError as exc:
            return FileResult(path, None, error=_describe_oserror(exc))
        if len(data) > limit:
            return FileResult(path, data[:limit], truncated=True)
        return FileResult(path, data)

    def listdir(self, path: str) -> DirListing:
        try:
            return DirListing(path, tuple(sorted(os.listdir(self._path(path)))))
        except OSError as exc:
            return DirListing(path, None, error=_describe_oserror(exc))

    def stat(self, path: str) -> PathInfo:
        p = self._path(path)
        try:
            lst = os.lstat(p)
        except OSError as exc:
            missing = isinstance(exc, FileNotFoundError)
            return PathInfo(path, exists=False, error=None if missing else _describe_oserror(exc))
        target = None
        st = lst
        if statmod.S_ISLNK(lst.st_mode):
            try:
                target = os.readlink(p)
                st = os.stat(p)
            except OSError:
                st = lst
        return PathInfo(
            path,
            exists=True,
            mode=st.st_mode,
            uid=st.st_uid,
            gid=st.st_gid,
            is_dir=statmod.S_ISDIR(st.st_mode),
            is_char_device=statmod.S_ISCHR(st.st_mode),
            is_symlink=statmod.S_ISLNK(lst.st_mode),
            readable=os.access(p, os.R_OK),
            writable=os.access(p, os.W_OK),
            target=target,
        )


def _bounded_communicate(
    proc: subprocess.Popen[bytes], timeout: float
) -> tuple[bytes | None, bytes | None, bool]:
    """Read both pipes up to MAX_OUTPUT_BYTES each; kill the group on timeout.

    Returns (None, None, False) on timeout.
    """
    chunks: dict[str, list[bytes]] = {"out": [], "err": []}
    sizes = {"out": 0, "err": 0}
    truncated = {"out": False, "err": False}

    def pump(key: str, stream: object) -> None:
        reader = getattr(stream, "read1", None) or getattr(stream, "read")  # noqa: B009
        while True:
            block = reader(65536)
            if not block:
                return
            room = MAX_OUTPUT_BYTES - sizes[key]
            if room > 0:
                chunks[key].append(block[:room])
                sizes[key] += min(len(block), room)
            if len(block) > room:
                truncated[key] = True

    threads = [
        threading.Thread(target=pump, args=("out", proc.stdout), daemon=True),
        threading.Thread(target=pump, args=("err", proc.stderr), daemon=True),
    ]
    for t in threads:
        t.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        for t in threads:
            t.join(timeout=1.0)
        return None, None, False
    for t in threads:
        t.join(timeout=2.0)
    if any(t.is_alive() for t in threads):
        # A grandchild kept the pipe open after the main process exited.
        _kill_group(proc)
        for t in threads:
            t.join(timeout=1.0)
    return b"".join(chunks["out"]), b"".join(chunks["err"]), truncated["out"] or truncated["err"]


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=2.0)
    except subprocess.TimeoutExpired:
        pass


# --------------------------------------------------------------------------
# Recording and replay
# --------------------------------------------------------------------------


@dataclass
class Recording:
    """Everything a host answered, in the order asked."""

    hostname: str
    commands: dict[tuple[str, ...], CommandResult] = field(default_factory=dict)
    files: dict[str, FileResult] = field(default_factory=dict)
    dirs: dict[str, DirListing] = field(default_factory=dict)
    stats: dict[str, PathInfo] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class RecordingHost:
    """Passes every call to ``inner`` and keeps the answer."""

    def __init__(self, inner: Host) -> None:
        self._inner = inner
        self.recording = Recording(hostname=inner.name)

    @property
    def name(self) -> str:
        return self._inner.name

    def run(self, argv: Sequence[str], timeout: float = 10.0) -> CommandResult:
        res = self._inner.run(argv, timeout)
        with self.recording._lock:
            self.recording.commands[tuple(argv)] = res
        return res

    def read(self, path: str, limit: int = MAX_FILE_BYTES) -> FileResult:
        res = self._inner.read(path, limit)
        with self.recording._lock:
            self.recording.files[path] = res
        return res

    def listdir(self, path: str) -> DirListing:
        res = self._inner.listdir(path)
        with self.recording._lock:
            self.recording.dirs[path] = res
        return res

    def stat(self, path: str) -> PathInfo:
        res = self._inner.stat(path)
        with self.recording._lock:
            self.recording.stats[path] = res
        return res


class ReplayHost:
    """Answers from a :class:`Recording`.

    A request the capture does not hold is answered as an error
    (:data:`NOT_RECORDED`), never as "absent": not knowing is not the same as
    knowing that a thing is missing.
    """

    def __init__(self, recording: Recording) -> None:
        self.recording = recording

    @classmethod
    def from_mapping(
        cls,
        hostname: str = "replay",
        commands: Mapping[Sequence[str], bytes | str | CommandResult] | None = None,
        files: Mapping[str, bytes | str | None] | None = None,
        dirs: Mapping[str, Sequence[str] | None] | None = None,
        stats: Mapping[str, PathInfo] | None = None,
        missing_commands: Sequence[Sequence[str]] = (),
        missing_files: Sequence[str] = (),
    ) -> ReplayHost:
        """Build a replay host from plain values (tests, fixtures).

        A ``files`` value of None means "the file does not exist"; a ``dirs``
        value of None means "no such directory".  ``missing_commands`` are
        answered as "command not found".
        """
        rec = Recording(hostname=hostname)
        for argv, out in (commands or {}).items():
            key = tuple(argv)
            if isinstance(out, CommandResult):
                rec.commands[key] = out
            else:
                data = out.encode() if isinstance(out, str) else out
                rec.commands[key] = CommandResult(key, 0, stdout=data)
        for argv in missing_commands:
            rec.commands[tuple(argv)] = CommandResult(tuple(argv), None, not_found=True)
        for path, content in (files or {}).items():
            if content is None:
                rec.files[path] = FileResult(path, None, error="no such file", missing=True)
            else:
                data = content.encode() if isinstance(content, str) else content
                rec.files[path] = FileResult(path, data)
        for path in missing_files:
            rec.files[path] = FileResult(path, None, error="no such file", missing=True)
        for path, entries in (dirs or {}).items():
            rec.dirs[path] = DirListing(
                path,
                None if entries is None else tuple(entries),
                error="no such file" if entries is None else None,
            )
        for path, info in (stats or {}).items():
            rec.stats[path] = info
        return cls(rec)

    @property
    def name(self) -> str:
        return self.recording.hostname

    def run(self, argv: Sequence[str], timeout: float = 10.0) -> CommandResult:
        key = tuple(argv)
        found = self.recording.commands.get(key)
        if found is None:
            return CommandResult(key, None, error=NOT_RECORDED)
        return found

    def read(self, path: str, limit: int = MAX_FILE_BYTES) -> FileResult:
        found = self.recording.files.get(path)
        if found is None:
            return FileResult(path, None, error=NOT_RECORDED)
        if found.content is not None and len(found.content) > limit:
            return FileResult(path, found.content[:limit], truncated=True)
        return found

    def listdir(self, path: str) -> DirListing:
        found = self.recording.dirs.get(path)
        if found is None:
            return DirListing(path, None, error=NOT_RECORDED)
        return found

    def stat(self, path: str) -> PathInfo:
        found = self.recording.stats.get(path)
        if found is None:
            # A replay built from files alone still knows those files exist.
            f = self.recording.files.get(path)
            if f is not None and f.content is not None:
                return PathInfo(path, exists=True, mode=0o100444, readable=True)
            if f is not None and f.missing:
                return PathInfo(path, exists=False)
            d = self.recording.dirs.get(path)
            if d is not None and d.entries is not None:
                return PathInfo(path, exists=True, mode=0o040555, is_dir=True, readable=True)
            return PathInfo(path, exists=False, error=NOT_RECORDED)
        return found
